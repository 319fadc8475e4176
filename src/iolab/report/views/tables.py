"""The report's other tables: latency percentiles and the recorded environment."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from iolab.model import DIRECTIONS, Direction, DirectionMetrics
from iolab.model.facts import SetupFacts, TargetFacts
from iolab.report import summary
from iolab.report.cells import Cell, Row, Table, stat_cell
from iolab.report.data import DataCase, Dataset, SetupInfo
from iolab.report.views.env_view import options_text, plain, raid_text
from iolab.units import MICROSECONDS, MILLISECONDS, LatencyUnit, human_bytes

Statistic = Callable[[DirectionMetrics], float | None]
LATENCY_COLUMNS: tuple[tuple[str, Statistic], ...] = (
    ("mean", lambda m: m.lat_mean_ns),
    ("p50", lambda m: m.percentiles_ns.get("50")),
    ("p90", lambda m: m.percentiles_ns.get("90")),
    ("p99", lambda m: m.percentiles_ns.get("99")),
    ("p99.9", lambda m: m.percentiles_ns.get("99.9")),
    ("p99.99", lambda m: m.percentiles_ns.get("99.99")),
    ("max", lambda m: m.lat_max_ns),
)


PERCENTILE_COLUMNS = frozenset({"p50", "p90", "p99", "p99.9", "p99.99"})
AT_MOST = "≤"


def _latency(case: DataCase, direction: Direction, name: str, statistic: Statistic) -> Latency:
    """One statistic of one case and direction, in ns; a percentile above the case's maximum
    (fio's percentiles are the upper edges of its histogram bins) is clamped to the maximum,
    and says so."""
    m = case.metrics.get(direction)
    if case.status != "ok" or m is None:
        return None, False
    value = statistic(m)
    if value is not None and name in PERCENTILE_COLUMNS and m.lat_max_ns and value > m.lat_max_ns:
        return m.lat_max_ns, True
    return value, False


Latency = tuple[float | None, bool]


COLUMN_UNITS: tuple[LatencyUnit, ...] = (
    ("ns", 1.0),
    MICROSECONDS,
    MILLISECONDS,
    ("s", 1e9),
)


def column_unit(values_ns: Sequence[float]) -> LatencyUnit:
    """The unit of one table column: the largest of ns, µs, ms and s in which the column's
    median (of its non-zero values) is at least 1, so that it reads 1-999 (s past that)."""
    finite = [v for v in values_ns if v > 0]
    if not finite:
        return MICROSECONDS
    typical = statistics.median(finite)
    return next((u for u in reversed(COLUMN_UNITS) if typical >= u[1]), COLUMN_UNITS[0])


def row_unit(values: Mapping[str, Sequence[float]]) -> LatencyUnit:
    """The unit of one table row: the one its largest figure (the largest median of its mean
    and percentiles; the maximum, often one outlier, reads in it too) reads 1-999 in."""
    medians = [statistics.median(v) for name, v in values.items() if v and name != "max"]
    return column_unit(
        [max(medians)] if medians else [v for found in values.values() for v in found]
    )


def _format(value: float) -> str:
    """A latency in its row's unit; a non-zero value below 1 keeps two significant digits
    rather than reading 0.04 (42 µs in a row of ms) or 0.00."""
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:,.1f}"
    if value == 0 or value >= 0.1:
        return f"{value:.2f}"
    return f"{value:.{1 - math.floor(math.log10(value))}f}"


def latency_table(data: Dataset, baseline: str | None = None) -> Table | None:
    """Completion latency per workload, set-up and direction: mean, percentiles and max, each
    the median of the repetitions (± its 95% interval); each row in one unit (ns, µs, ms or s,
    see row_unit), named once in its "unit" column.
    Past summary.LATENCY_WORKLOADS workloads, the ends of the ranking only."""
    names, left_out = data.workloads(), ""
    if len(names) > summary.LATENCY_WORKLOADS:
        ref = summary.reference(data.labels, baseline or data.runs[0].baseline)
        top, bottom = summary.ends(
            summary.ranked(data.cases, data.labels, ref), summary.LATENCY_ENDS
        )
        names = top + bottom
        told = summary.about(len(top), len(bottom), len(data.workloads()), data.labels, ref)
        left_out = f"{told}; every case's percentiles are in `iolab export`."
    entries = []
    for workload in names:
        for label in data.labels:
            cases = data.cell(label, workload)
            for direction in DIRECTIONS:
                found = {
                    name: [_latency(c, direction, name, stat) for c in cases]
                    for name, stat in LATENCY_COLUMNS
                }
                values = {k: [v for v, _ in pairs if v is not None] for k, pairs in found.items()}
                clamped = {k for k, pairs in found.items() if any(c for _, c in pairs)}
                if values["p50"] or values["mean"]:
                    entries.append((workload, label, direction, values, clamped))
    if not entries:
        return None
    rows, units = [], set()
    for workload, label, direction, values, clamped in entries:
        unit = row_unit(values)
        units.add(unit)
        cells = tuple(_cell(values[name], unit, name in clamped) for name, _ in LATENCY_COLUMNS)
        rows.append(Row(workload, cells, (label, direction, unit[0])))
    shown = [u[0] for u in COLUMN_UNITS if u in units]
    notes = []
    if any(clamped for *_, clamped in entries):
        notes.append(
            f"{AT_MOST}: fio put this percentile above the largest latency it measured (its "
            "percentiles are the upper edges of histogram bins, up to about 3% wide) in at "
            "least one repetition; shown as that maximum."
        )
    return Table(
        f"Completion latency ({', '.join(shown[:-1])}{' and ' if shown[:-1] else ''}{shown[-1]})",
        "workload",
        tuple(name for name, _ in LATENCY_COLUMNS),
        tuple(rows),
        tuple(notes),
        name="latency",
        stub_headers=("setup", "direction", "unit"),
        column_header="statistic",
        column_keys=tuple(name for name, _ in LATENCY_COLUMNS),
        left_out=left_out,
    )


def _cell(values: Sequence[float], unit: tuple[str, float], clamped: bool = False) -> Cell:
    if not values:
        return Cell(None, unit[0], "—")
    cell = stat_cell([v / unit[1] for v in values], unit[0], "lat", _format)
    if clamped:
        return replace(cell, text=f"{AT_MOST} {cell.text}", flags=(*cell.flags, "clamped"))
    return cell


# ---------------------------------------------------------------- environment

HOST_FACTS: tuple[tuple[str, str], ...] = (
    ("host", "hostname"),
    ("CPU", "cpu_model"),
    ("CPU threads", "threads"),
    ("memory", "memory_bytes"),
    ("virtualised", "virtualized"),
    ("kernel", "kernel"),
    ("distribution", "distro"),
    ("fio", "fio_version"),
)
TargetFact = Callable[[TargetFacts], Any]
SETUP_FACTS: tuple[tuple[str, TargetFact], ...] = (
    ("target", lambda t: t.path),
    ("filesystem", lambda t: t.filesystem and t.filesystem.fstype),
    ("mount options", lambda t: t.filesystem and t.filesystem.options),
    ("device", lambda t: t.device and t.device.path),
    ("model", lambda t: t.device and t.device.model),
    ("firmware", lambda t: t.device and t.device.firmware),
    ("transport", lambda t: t.device and t.device.transport),
    ("rotational", lambda t: t.device and t.device.rotational),
    ("scheduler", lambda t: t.device and t.device.scheduler),
    ("write cache", lambda t: t.device and t.device.write_cache),
    ("RAID", lambda t: raid_text(t.raid)),
)


def _setup_facts(setup: SetupInfo) -> SetupFacts:
    return setup.facts


def _layout(setup: SetupInfo) -> str:
    """How a set-up's layout was asked for: its options, over its devices."""
    devices = setup.devices
    over = f" over {', '.join(devices)}" if devices else ""
    return f"{options_text(setup.definition)}{over}".strip() or "—"


def _text(key: str, value: Any) -> str:
    if key == "memory_bytes" and isinstance(value, int | float):
        return human_bytes(value)
    return plain(value)


def environment_table(data: Dataset) -> Table:
    """The host and target facts recorded with each set-up, set-ups as columns."""
    runs = {run.id: run for run in data.runs}
    rows = []
    for name, key in HOST_FACTS:
        texts = [_text(key, runs[s.run_id].environment.get(key)) for s in data.setups]
        rows.append(Row(name, tuple(Cell(None, "", t) for t in texts)))
    targets = [_setup_facts(s).target for s in data.setups]
    for name, fact in SETUP_FACTS:
        texts = [_text(name, fact(t) if t else None) for t in targets]
        rows.append(Row(name, tuple(Cell(None, "", t) for t in texts)))
    texts = [_layout(s) for s in data.setups]
    rows.append(Row("layout", tuple(Cell(None, "", t) for t in texts)))
    return Table(
        "Environment",
        "fact",
        data.labels,
        tuple(rows),
        notes=_differing(rows),
        name="environment",
        column_header="setup",
    )


def _differing(rows: list[Row]) -> tuple[str, ...]:
    """One note naming the facts whose values are not the same for every set-up."""
    if not rows or len(rows[0].cells) < 2:
        return ()
    differ = [row.label for row in rows if len({cell.text for cell in row.cells}) > 1]
    if not differ:
        return ("Every fact shown is the same for all set-ups.",)
    return (f"Differs between set-ups: {', '.join(differ)}.",)
