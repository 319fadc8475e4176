"""The depth x jobs heat map, as bench-fio users know it: IOPS, and p99 completion latency,
over iodepth (columns) x numjobs (rows), one map per set-up and pattern of a run that sweeps
both, each cell the median of its repetitions.

A map is drawn only where both axes have at least 2 values (else the scaling lines say it
all); a cell no case measured stays empty. A cell whose cases carry warnings is marked ⚑,
and the caption names the warnings, as the results table's cells do.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence

from iolab.fio.options import workload_axis
from iolab.model import FioValue
from iolab.report.cells import WARNED, format_value
from iolab.report.charts import Axis, Chart, HeatColors, Series, plain_number, slug
from iolab.report.data import DataCase, Dataset
from iolab.report.views.figures import case_metric
from iolab.units import latency_unit

AXES = ("iodepth", "numjobs")  # columns, rows
LEAST = 2  # values each axis needs for a map
IGNORED = frozenset({"name", *AXES})
Cell = tuple[int, int]  # (numjobs, iodepth)
MOST_MAPS = 8  # heat maps drawn unasked (two per set-up and pattern: IOPS and p99)


def swept(data: Dataset) -> int:
    """How many set-up and pattern pairs sweep both iodepth and numjobs over 2 values or more
    (each gets two maps: IOPS and p99)."""
    return sum(1 for cases in _groups(data).values() if _both(cases))


def few(count: int) -> bool:
    """Maps enough to draw and few enough to draw unasked: at most MOST_MAPS (a big run's
    hundreds of patterns would bury the report; --charts heatmap draws them all)."""
    return 0 < 2 * count <= MOST_MAPS


def _both(cases: Sequence[DataCase]) -> bool:
    return all(len({_at(c)[i] for c in cases}) >= LEAST for i in (0, 1))


def charts(data: Dataset) -> list[Chart]:
    """Per set-up and pattern that sweeps iodepth and numjobs (each over 2 values or more),
    an IOPS map and a p99 latency map; none where no case has a figure."""
    out: list[Chart] = []
    for (setup, pattern), cases in _groups(data).items():
        if not _both(cases):
            continue
        depths = sorted({_at(c)[1] for c in cases})
        jobs = sorted({_at(c)[0] for c in cases})
        for metric in ("iops", "p99"):
            chart = _map(setup, pattern, cases, metric, (jobs, depths))
            if chart is not None:
                out.append(chart)
    return out


def _whole(value: FioValue | None) -> int | None:
    """A whole iodepth or numjobs (fio takes "4" as 4); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    text = str(value).strip() if value is not None else ""
    return int(text) if text.isdigit() else None


def _at(case: DataCase) -> Cell:
    jobs, depth = _whole(case.options.get("numjobs", 1)), _whole(case.options.get("iodepth", 1))
    assert jobs is not None and depth is not None
    return jobs, depth


def _groups(data: Dataset) -> dict[tuple[str, str], list[DataCase]]:
    """The cases of each set-up and pattern (the workload's other fields), in report order;
    a peak search's or load curve's points are left out (the method chose their depth)."""
    cases = [
        c
        for c in data.cases
        if "method" not in c.options
        and all(_whole(c.options.get(a, 1)) is not None for a in AXES)
        and any(a in c.options for a in AXES)
    ]
    # the options that make a pattern, never a file or log name (an import's differ per file)
    keys = sorted(k for k in {k for c in cases for k in c.options} - IGNORED if workload_axis(k))
    varying = [k for k in keys if len({str(c.options.get(k)) for c in cases}) > 1]
    out: dict[tuple[str, str], list[DataCase]] = {}
    for label in data.labels:
        for case in (c for c in cases if c.setup == label):
            rest = " ".join(f"{k}={case.options.get(k)}" for k in varying)
            out.setdefault((label, rest), []).append(case)
    return {(setup, _pattern(group, rest)): group for (setup, rest), group in out.items()}


def _pattern(cases: Sequence[DataCase], rest: str) -> str:
    """A group's name: its workload's name less the swept depth and jobs, else its fields."""
    swept = "|".join(AXES)
    names = {re.sub(rf"\s*\b(?:{swept})=\S+", "", c.workload).strip() for c in cases}
    name = names.pop() if len(names) == 1 else ""
    return name or rest or "every workload"


def _map(
    setup: str,
    pattern: str,
    cases: Sequence[DataCase],
    metric: str,
    axes: tuple[list[int], list[int]],
) -> Chart | None:
    jobs, depths = axes
    figures = {
        cell: [v for c in cases if _at(c) == cell and (v := case_metric(c, metric)) is not None]
        for cell in ((j, d) for j in jobs for d in depths)
    }
    medians = {cell: statistics.median(values) for cell, values in figures.items() if values}
    if not medians:
        return None
    unit = ("IOPS", 1.0) if metric == "iops" else latency_unit(list(medians.values()))
    warned = {cell: _codes([c for c in cases if _at(c) == cell]) for cell in medians}
    columns = tuple(plain_number(d) for d in depths)
    rows = tuple(
        Series(
            plain_number(j),
            columns,
            tuple(_scaled(medians.get((j, d)), unit[1]) for d in depths),
            labels=tuple(
                _label(medians.get((j, d)), unit[1], metric, warned.get((j, d))) for d in depths
            ),
        )
        for j in jobs
    )
    measure = "IOPS" if metric == "iops" else "p99 latency"
    colors: HeatColors = "rising" if metric == "iops" else "falling"
    scale = (
        Axis("I/O rate", "IOPS") if metric == "iops" else Axis("p99 completion latency", unit[0])
    )
    return Chart(
        f"heat-{slug(setup)}-{slug(pattern)}-{slug(metric)}",
        "heat",
        f"{measure} over iodepth × numjobs: {pattern} on {setup}",
        Axis("iodepth", "I/Os in flight per job"),
        Axis("numjobs", "jobs"),
        rows,
        caption=_caption(metric, cases, warned),
        scale=scale,
        colors=colors,
    )


def _scaled(value: float | None, divisor: float) -> float | None:
    return None if value is None else value / divisor


def _label(value: float | None, divisor: float, metric: str, codes: tuple[str, ...] | None) -> str:
    if value is None:
        return ""
    text = format_value(value / divisor, "iops" if metric == "iops" else "lat")
    return f"{text} {WARNED}" if codes else text


def _codes(cases: Sequence[DataCase]) -> tuple[str, ...]:
    """The codes of the warnings a cell's cases carry (a note for the reader is none)."""
    return tuple(dict.fromkeys(w.code for c in cases for w in c.warnings if not w.note))


def _caption(metric: str, cases: Sequence[DataCase], warned: dict[Cell, tuple[str, ...]]) -> str:
    each = "the median of its repetitions'" if any(c.repetition > 1 for c in cases) else "its"
    what = (
        f"Each cell: {each} IOPS; darker is faster."
        if metric == "iops"
        else f"Each cell: {each} p99 completion latency (a mixed workload's slower direction); "
        "darker is slower."
    )
    codes = dict.fromkeys(code for found in warned.values() for code in found)
    if not codes:
        return what
    return f"{what} {WARNED}: the figure rests on cases with warnings ({', '.join(codes)})."
