"""The drives' temperature over a case, as its own small panel under the time series: where
the telemetry read a device's own sensor (hwmon) each second, one line per set-up and drive,
in °C, on the time series' clock (0: the start of fio's measurement)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from iolab.model.telemetry import Telemetry
from iolab.report.charts import Axis, Chart, Series, slug
from iolab.report.data import Dataset, SeriesKey
from iolab.report.views.figures import unique_id

METRIC = "temp_c"


def panel(data: Dataset, workload: str, colors: Mapping[str, int], taken: set[str]) -> Chart | None:
    """The workload's drive temperatures (each set-up's first repetition that has them);
    None where no case of it read a sensor."""
    firsts: dict[str, SeriesKey] = {}
    for key in sorted(data.telemetry, key=lambda k: k[2]):
        if key[1] == workload and key[0] not in firsts and _hot(data.telemetry[key]):
            firsts[key[0]] = key
    series = [
        line
        for label in data.labels
        if label in firsts
        for line in _lines(label, data.telemetry[firsts[label]], colors, len(data.labels))
    ]
    if not series:
        return None
    return _chart(workload, series, taken)


def _hot(seen: Telemetry) -> bool:
    return any(p.metric == METRIC for p in seen.points)


def _zero_ms(seen: Telemetry) -> int:
    """Where the time series' 0 lies in the samples' time: fio's measured window's start,
    else past its start-up and ramp."""
    return seen.window_ms[0] if seen.window_ms is not None else seen.skip_ms


def _lines(label: str, seen: Telemetry, colors: Mapping[str, int], count: int) -> list[Series]:
    zero = _zero_ms(seen)
    base = colors.get(label, 0)
    found = [d for d in seen.devices if seen.series(d, METRIC)]
    return [
        Series(
            f"{label}: {device}" if len(found) > 1 or len(colors) > 1 else device,
            tuple((t - zero) / 1000 for t, _ in points),
            tuple(v for _, v in points),
            color=base + count * n,  # a set-up's second drive: the next colour round
        )
        for n, device in enumerate(found)
        if (points := seen.series(device, METRIC))
    ]


def _chart(workload: str, series: Sequence[Series], taken: set[str]) -> Chart:
    return Chart(
        unique_id(f"timeseries-{slug(workload)}-temperature", taken),
        "line",
        f"Drive temperature over time: {workload}",
        Axis("time since the start of measurement", "s"),
        Axis("drive temperature", "°C"),
        tuple(series),
        (),
        "The drive's own sensor (hwmon: an NVMe drive's composite temperature, a SATA "
        "drive's), read once a second beside fio; one repetition per set-up, on the clock of "
        "the charts above (before 0: fio's start-up and ramp_time).",
        panel=True,
    )
