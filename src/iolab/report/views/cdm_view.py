"""CrystalDiskMark's own view, for runs of its presets (or any run whose workloads are all
named as its tests are: "SEQ1M Q8T1", "RND4K Q1T1", ... with rw read and write).

CrystalDiskMark shows one grid: a row per test, Read and Write columns, in MB/s, each the best
of its passes. iolab shows that, and beside each figure the median of the passes ± the
half-width of its 95% interval (the figure the rest of the report uses), with a bar chart of
the same figures. A set-up named "here" (the presets' own) is named by the folder it ran in.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from iolab.report.cells import Cell, Row, Table, cell_values, format_value, stat_cell
from iolab.report.charts import Axis, Chart, Series
from iolab.report.data import Dataset, SetupInfo
from iolab.report.views.figures import log_ticks

LOG_FROM = 10.0  # bars that span this factor or more are drawn on a log scale
TEST = re.compile(r"^(SEQ|RND)(\d+)([KM]) Q(\d+)T(\d+)$")
DIRECTIONS = {"read": "Read", "randread": "Read", "write": "Write", "randwrite": "Write"}
SIDES = ("Read", "Write")
Tests = dict[str, dict[str, str]]  # test -> Read/Write -> workload


def tests(data: Dataset) -> Tests | None:
    """The CrystalDiskMark tests of the runs, each with its read and write workloads; None
    unless every workload is one."""
    found: Tests = {}
    for workload in data.workloads():
        options = data.first(workload).options
        test = re.sub(r"\s*\brw=\S+", "", workload).strip()
        side = DIRECTIONS.get(str(options.get("rw", "")))
        if side is None or not TEST.match(test):
            return None
        found.setdefault(test, {})[side] = workload
    return found or None


def name(setup: SetupInfo) -> str:
    """A set-up's name, or for the presets' "here" the folder it ran in."""
    if setup.name != "here":
        return setup.label
    target = setup.facts.target
    if target is None:
        return setup.label
    folder = str(Path(target.path).parent)
    return setup.label.replace("here", folder) if setup.label != "here" else folder


def _values(data: Dataset, label: str, workload: str | None) -> list[float]:
    if workload is None:
        return []
    return cell_values(data.cell(label, workload), "bw")[0]


def table(data: Dataset) -> Table | None:
    """The grid: a row per test (and set-up), the best pass in MB/s and the median beside it."""
    found = tests(data)
    if found is None:
        return None
    several = len(data.setups) > 1
    rows, passes = [], set()
    for test, sides in found.items():
        for setup in data.setups:
            cells: list[Cell] = []
            for side in SIDES:
                values = _values(data, setup.label, sides.get(side))
                passes.add(len(values))
                if not values:
                    cells += [Cell(None, "MB/s", "—"), Cell(None, "MB/s", "—")]
                    continue
                best = max(values)
                cells += [
                    Cell(best, "MB/s", format_value(best, "bw")),
                    stat_cell(values, "MB/s", "bw", runs="passes"),
                ]
            rows.append(Row(test, tuple(cells), (name(setup),) if several else ()))
    most = max(passes, default=0)
    notes = (
        f"As CrystalDiskMark shows it: MB/s (10⁶ bytes/s), the best of {most} "
        f"pass{'' if most == 1 else 'es'}; beside "
        "it the median of the passes ± the half-width of its 95% interval (Student's t), or in "
        "words where that interval is wider than the median.",
        *(f"set-up {name(s)}: {_where(s)}" for s in data.setups if s.name == "here"),
    )
    return Table(
        "CrystalDiskMark",
        "test",
        ("Read (MB/s)", "Read median", "Write (MB/s)", "Write median"),
        tuple(rows),
        notes,
        name="crystaldiskmark",
        stub_headers=("setup",) if several else (),
        column_header="figure",
        column_keys=("read best", "read median", "write best", "write median"),
    )


def _where(setup: SetupInfo) -> str:
    target = setup.facts.target
    fs = target.filesystem if target else None
    return f"{fs.fstype} on {fs.source}" if fs else "the current folder"


def bars(data: Dataset) -> list[Chart]:
    """The grid's best passes as bars: Read and Write side by side per test (one set-up), or
    one chart per side with the set-ups side by side."""
    found = tests(data)
    if found is None:
        return []
    names = list(found)

    def series(label: str, side: str, shown: str, color: int | None) -> Series:
        best = [max(v) if (v := _values(data, label, found[t].get(side))) else None for t in names]
        text = tuple(format_value(b, "bw") if b is not None else "" for b in best)
        return Series(shown, tuple(names), tuple(best), labels=text, color=color)

    x = Axis("CrystalDiskMark test")
    if len(data.setups) == 1:
        label = data.setups[0].label
        pair = tuple(series(label, side, side, i) for i, side in enumerate(SIDES))
        title = f"CrystalDiskMark: {name(data.setups[0])}"
        y, caption = _y_axis(pair)
        return [Chart("crystaldiskmark", "bar", title, x, y, pair, caption=caption, legend="")]
    charts = []
    for side in SIDES:
        bars = tuple(series(s.label, side, name(s), i) for i, s in enumerate(data.setups))
        y, caption = _y_axis(bars)
        title = f"CrystalDiskMark: {side}"
        charts.append(
            Chart(f"crystaldiskmark-{side.lower()}", "bar", title, x, y, bars, caption=caption)
        )
    return charts


def _y_axis(bars: tuple[Series, ...]) -> tuple[Axis, str]:
    """MB/s from 0, or on a log scale (plain ticks) when the bars span a factor of 10 or more,
    as random 4K beside sequential 1M does: linear, the small bars vanish."""
    caption = "The best of the passes, as CrystalDiskMark shows it (the table has the medians)."
    values = [v for s in bars for v in s.y if v is not None and v > 0]
    if not values or max(values) < LOG_FROM * min(values):
        return Axis("throughput, best pass", "MB/s = 10⁶ bytes/s", start_at_zero=True), caption
    floor = 10.0 ** math.floor(math.log10(min(values)))  # bars rise from the decade below
    top = max(values) * 2.5  # room for the labels above the bars
    axis = Axis(
        "throughput, best pass",
        "MB/s = 10⁶ bytes/s",
        log=True,
        ticks=log_ticks([floor, *values]),
        span=(floor, top),
    )
    spread = max(values) / min(values)
    return axis, f"{caption} Log scale: the figures span a factor of {spread:,.0f}."
