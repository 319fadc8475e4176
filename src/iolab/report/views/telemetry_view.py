"""The CPUs and devices while each case ran (runner.telemetry): a table of each case's means
over its measured window, and per workload a chart of the CPUs' busy share and the busiest
device's utilisation over time. Cases on fio servers have no telemetry and are left out."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace

from iolab.analysis.scaling import Point
from iolab.model import JSONObject
from iolab.model.telemetry import CPU, Telemetry
from iolab.report.cells import UNITS, Cell, Row, Table, case_value, shown_in
from iolab.report.charts import Axis, Chart, Series, slug
from iolab.report.data import DataCase, Dataset, SeriesKey
from iolab.report.views.figures import setup_colors, unique_id

STRIPED = frozenset({"0", "raid0", "10", "raid10", "striped"})

COLUMNS = (
    ("CPU busy", CPU, "busy", "%"),
    ("fio", CPU, "fio", "%"),
    ("iowait", CPU, "iowait", "%"),
    ("softirq", CPU, "softirq", "%"),
    ("steal", CPU, "steal", "%"),
    ("util", "", "util", "%"),
    ("queue", "", "queue", ""),
    ("r await", "", "r_await_ms", "ms"),
    ("w await", "", "w_await_ms", "ms"),
    ("dev IOPS", "", "iops", "IOPS"),
)
TEMPERATURE = ("temp", "", "temp_c", "°C")  # a column where a device's sensor was read
CAPTION = (
    "Means over each case's measured window, sampled once a second: the CPUs the jobs may "
    "use (busy = all but idle and iowait; fio = fio's own share), and each device of the "
    "set-up, as iostat figures them from /proc/diskstats (util = time busy; queue = I/Os in "
    "flight)."
)


def _keys(data: Dataset) -> list[SeriesKey]:
    order = {label: i for i, label in enumerate(data.labels)}
    places = {w: i for i, w in enumerate(data.workloads())}
    return sorted(data.telemetry, key=lambda k: (places.get(k[1], 0), order.get(k[0], 0), k[2]))


def table(data: Dataset) -> Table | None:
    """One row per case and device (the CPU figures on each of its rows)."""
    hot = any(p.metric == "temp_c" for seen in data.telemetry.values() for p in seen.points)
    columns = (*COLUMNS, TEMPERATURE) if hot else COLUMNS
    rows = [row for key in _keys(data) for row in _rows(key, data.telemetry[key], columns)]
    if not rows:
        return None
    return Table(
        "CPU and devices while each case ran",
        "case",
        tuple(f"{name} ({unit})" if unit else name for name, _, _, unit in columns),
        tuple(rows),
        (CAPTION,),
        name="telemetry",
        stub_headers=("device",),
        column_header="figure",
        column_keys=tuple(
            f"{'cpu' if source else 'dev'}_{metric}" for _, source, metric, _ in columns
        ),
    )


def _rows(
    key: SeriesKey, seen: Telemetry, columns: Sequence[tuple[str, str, str, str]]
) -> list[Row]:
    label = f"{key[0]} · {key[1]} #{key[2]}"
    devices = seen.devices or ("",)
    return [
        Row(
            label,
            tuple(
                _cell(seen, source or device, metric, unit) for _, source, metric, unit in columns
            ),
            (device or "–",),
        )
        for device in devices
    ]


def _cell(seen: Telemetry, source: str, metric: str, unit: str) -> Cell:
    value = seen.mean(source, metric) if source else None
    if value is None:
        return Cell(None, unit, "–")
    digits = 2 if metric.endswith("await_ms") or metric == "queue" else 0
    return Cell(value, unit, f"{value:,.{digits}f}")


def charts(data: Dataset) -> list[Chart]:
    """Per workload: the CPUs' busy share and the busiest device's utilisation over time,
    one colour per set-up (its first repetition with telemetry)."""
    found: list[Chart] = []
    taken: set[str] = set()
    colors = setup_colors(data)
    firsts: dict[tuple[str, str], SeriesKey] = {}
    for key in _keys(data):
        firsts.setdefault((key[1], key[0]), key)
    by_workload: dict[str, list[SeriesKey]] = {}  # each workload's, once (not a scan a workload)
    for (workload, _), key in firsts.items():
        by_workload.setdefault(workload, []).append(key)
    for workload in data.workloads():
        keys = by_workload.get(workload, [])
        series = [s for key in keys for s in _series(key, data.telemetry[key], colors)]
        if any(len(s.x) > 1 for s in series):
            found.append(_chart(workload, series, taken))
    return found


def _series(key: SeriesKey, seen: Telemetry, colors: dict[str, int]) -> list[Series]:
    out = []
    cpu = seen.series(CPU, "busy")
    if cpu:
        out.append(_line(f"{key[0]}: CPU busy", cpu, colors.get(key[0])))
    top = seen.busiest()
    if top is not None:
        util = seen.series(top[0], "util")
        shade = colors.get(key[0], 0) + len(colors)  # the device: the next colour along
        out.append(_line(f"{key[0]}: {top[0]} util", util, shade))
    return out


def _line(
    name: str, points: Sequence[tuple[int, float]], color: int | None, faint: bool = False
) -> Series:
    return Series(
        name,
        tuple(t / 1000 for t, _ in points),
        tuple(v for _, v in points),
        color=color,
        faint=faint,
    )


def _chart(workload: str, series: Sequence[Series], taken: set[str]) -> Chart:
    return Chart(
        unique_id(f"telemetry-{slug(workload)}", taken),
        "line",
        f"CPU busy and device utilisation over time: {workload}",
        Axis("time since the case started", "s", start_at_zero=True),
        Axis("share of the time busy", "%", start_at_zero=True, span=(0.0, 105.0)),
        tuple(series),
        (),
        "Sampled once a second beside fio: the CPUs the jobs may use (busy = all but idle "
        "and iowait), and the set-up's busiest device (util = the share of the second it had "
        "I/O in flight). One repetition per set-up.",
    )


def blocks(data: Dataset, over_time: bool = True) -> tuple[Table | Chart, ...]:
    """The "CPU and devices" section, when any case has telemetry: the table, and the charts
    over time where `over_time`."""
    found = table(data)
    if found is None:
        return ()
    return (found, *charts(data)) if over_time else (found,)


def scaling_points(data: Dataset) -> list[Point]:
    """The report's cases as analysis.scaling reads them for flat-scaling, with their
    telemetry; each case in the unit its workload's tables use (MB/s for large blocks, else
    IOPS)."""
    definitions = {s.label: s.definition for s in data.setups}
    counted = {label: devices_of(d) for label, d in definitions.items()}  # once a set-up
    points = []
    for c in data.cases:
        metric = shown_in(c)
        value = case_value(c, metric)
        if c.status != "ok" or value is None:
            continue
        devices, family = counted.get(c.setup) or devices_of({})
        points.append(
            Point(
                c.setup,
                c.workload,
                c.options,
                value,
                data.telemetry.get(_key(c)),
                devices,
                family,
                frozenset(w.code for w in c.warnings),
                UNITS[metric],
                data.axes(c),
            )
        )
    return points + single_devices(points, definitions)  # the 1 of a device-count sweep


# what set-ups of one device-count sweep differ in
SWEPT_KEYS = frozenset({"name", "devices", "device_count", "factors"})


def devices_of(definition: JSONObject) -> tuple[int | None, str]:
    """A striped set-up's device count and its family (its definition but its name and
    devices), so that set-ups alike but for their device count make a device_count sweep.
    Mirrors and parity levels are left out: more devices there are not meant to add IOPS."""
    devices = definition.get("devices")
    if not isinstance(devices, list) or str(definition.get("level")) not in STRIPED:
        return None, ""
    rest = {k: v for k, v in definition.items() if k not in SWEPT_KEYS}
    return len(devices), json.dumps(rest, sort_keys=True, default=str)


# what a striped set-up and a single device of the same family may differ in (their factors
# name what they were swept over, so the factors differ too)
RAID_KEYS = frozenset(
    {
        "name",
        "devices",
        "device_count",
        "factors",
        "raid",
        "level",
        "chunk",
        "metadata",
        "md_layout",
    }
)


def single_device(definition: JSONObject) -> bool:
    """A set-up on one device, with no RAID or a RAID tool's one-device form (the btrfs
    "single" a `device_count = [1, 2, 4]` sweep makes of its 1): the first point of a
    device-count sweep."""
    devices = definition.get("devices")
    one = isinstance(devices, list) and len(devices) == 1
    return one and (definition.get("raid") == "none" or definition.get("level") == "single")


def base_of(definition: JSONObject) -> str:
    """A set-up's definition without its RAID and devices: what a single device shares with
    the striped set-ups of its family."""
    rest = {k: v for k, v in definition.items() if k not in RAID_KEYS}
    return json.dumps(rest, sort_keys=True, default=str)


def single_devices(points: Sequence[Point], definitions: Mapping[str, JSONObject]) -> list[Point]:
    """A single device as the 1-device point of each striped family it shares everything but
    RAID and devices with (btrfs RAID0 of 2 and 4 beside one device with the same filesystem
    and options)."""
    bases = {setup: base_of(d) for setup, d in definitions.items()}  # once each
    families = {p.family: bases.get(p.setup, "") for p in points if p.family}
    out = []
    for point in points:
        if point.family or not single_device(definitions.get(point.setup, {})):
            continue
        base = bases[point.setup]
        out += [
            replace(point, devices=1, family=family)
            for family, theirs in families.items()
            if theirs == base
        ]
    return out


def _key(case: DataCase) -> SeriesKey:
    return (case.setup, case.workload, case.repetition)
