"""The striping chart: a metric against the number of devices a set-up stripes over, one
line per workload of each family of set-ups alike but for their devices (btrfs RAID0 of 2
and 4 beside the one device with the same filesystem and options: analysis.scaling's
device-count sweeps, found once where the run is derived: report.run.device_sweeps).
`report --x device_count` draws it; a report whose runs sweep no workload field but do sweep
the device count draws it on its own."""

from __future__ import annotations

from collections.abc import Sequence

from iolab.analysis import scaling
from iolab.report.cells import shown_in
from iolab.report.charts import Axis, Chart, Series, slug
from iolab.report.data import DataCase, Dataset
from iolab.report.views import figures

FIELD = "device_count"
AXIS = Axis("devices", "count")
DeviceSweep = dict[int, list[scaling.Point]]  # by device count, the points (set-up, workload)


def charts(data: Dataset, sweeps: Sequence[DeviceSweep], y: str = "auto") -> list[Chart]:
    """One chart per workload swept over the device count, a line per family."""
    by_workload: dict[str, list[DeviceSweep]] = {}
    for sweep in sweeps:
        first = sweep[min(sweep)][0]
        by_workload.setdefault(first.workload, []).append(sweep)
    out, taken = [], set[str]()
    for workload, found in by_workload.items():
        cases = data.cell(found[0][min(found[0])][0].setup, workload)
        metric = y if y != "auto" else shown_in(cases[0], "auto")
        series = tuple(_line(data, sweep, metric) for sweep in found)
        counts = sorted({n for sweep in found for n in sweep})
        scale = figures.y_axis(metric)
        out.append(
            Chart(
                figures.unique_id(f"scaling-{FIELD}-{slug(workload)}", taken),
                "line",
                f"{scale.title[0].upper()}{scale.title[1:]} vs devices: {workload}",
                Axis(AXIS.title, AXIS.unit, ticks=tuple((float(n), f"{n}") for n in counts)),
                scale,
                series,
                caption=_caption(data),
            )
        )
    return out


def _line(data: Dataset, sweep: DeviceSweep, metric: str) -> Series:
    """A family's line: at each device count, its set-up's cases (median, 95% half-width)."""
    counts = sorted(sweep)
    points = []
    for n in counts:
        point = sweep[n][0]
        cases: Sequence[DataCase] = data.cell(point.setup, point.workload)
        points.append(figures.median_point(cases, metric))
    name = " / ".join(dict.fromkeys(sweep[n][0].setup for n in counts))
    return Series(
        name,
        tuple(float(n) for n in counts),
        tuple(p[0] for p in points),
        tuple(p[1] for p in points),
    )


def _caption(data: Dataset) -> str:
    said = figures.repetition_caption(data)
    return f"Each point: the set-up of that many devices. {said}".strip()
