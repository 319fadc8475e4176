"""Time series charts (study B's per-second IOPS): IOPS, MB/s and completion latency over a
case's run, one colour per set-up, repetitions as lighter lines around their median, the
warm-up shaded; a lasting change of speed (analysis.levels) is named as a step, not shaded as
settling. Where the telemetry read the drives' temperature, a small panel of it follows
(`temp_figure`), in °C on the same clock."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from iolab.analysis import levels, timeseries
from iolab.model import JSONObject, Sample
from iolab.report import summary
from iolab.report.cells import MB
from iolab.report.charts import Axis, Chart, Region, Series, slug
from iolab.report.data import Dataset
from iolab.report.views import temp_figure
from iolab.report.views.figures import capital, setup_colors, unique_id, y_axis
from iolab.units import latency_unit, parse_seconds

SERIES_METRICS = (("iops", "iops"), ("bw", "bw"), ("lat", "lat"))
Points = list[tuple[float, float]]


def time_series(data: Dataset) -> list[Chart]:
    """Per-interval IOPS, MB/s and mean latency over each case's run: one colour per set-up,
    its repetitions as thin light lines under their median; the warm-up shaded (fio's
    ramp_time before 0, then the settling the series show; a set-up whose case changed speed
    for good part way through is not judged settling: its step is named instead)."""
    charts, taken = [], set[str]()
    by_workload: dict[str, list[tuple[str, str, int]]] = {}
    for key in data.samples:
        by_workload.setdefault(key[1], []).append(key)
    order = {label: i for i, label in enumerate(data.labels)}
    note = summary.charted_note(data.charted, len(data.workloads()), "Time series")
    for workload in data.workloads():
        keys = sorted(by_workload.get(workload, []), key=lambda k: (order.get(k[0], 0), k[2]))
        if not keys:
            continue
        aligned = {key: _aligned(data.samples[key]) for key in keys}
        steps = _steps(data, keys)
        options = data.first(workload).options
        for kind, metric in SERIES_METRICS:
            runs: dict[str, list[Points]] = {}
            for key in keys:
                if aligned[key][0].get(kind):
                    runs.setdefault(key[0], []).append(aligned[key][0][kind])
            if not any(len(points) > 1 for rs in runs.values() for points in rs):
                continue  # one interval or none: no line to draw
            dropped = sum(1 for key in keys if kind in aligned[key][1])
            about = _TimeNotes(options, note, dropped, steps)
            charts.append(_time_chart(workload, metric, runs, about, setup_colors(data), taken))
        heat = temp_figure.panel(data, workload, setup_colors(data), taken)
        charts += [heat] if heat is not None else []
    return charts


@dataclass(frozen=True)
class _TimeNotes:
    """What a time chart's caption says besides its data."""

    options: JSONObject
    note: str
    dropped: int
    steps: tuple[_Stepped, ...] = ()  # the set-ups whose cases changed speed part way


@dataclass(frozen=True)
class _Stepped:
    """A set-up's cases of one workload that changed speed for good part way through: the
    first such repetition's step, and how many of its repetitions had one."""

    label: str
    step: levels.SpeedStep
    count: int
    repetitions: int


def _steps(data: Dataset, keys: Sequence[tuple[str, str, int]]) -> tuple[_Stepped, ...]:
    """Each set-up's step among its repetitions of the workload, as its cells' warnings say."""
    found: dict[str, list[levels.SpeedStep]] = {}
    repetitions: dict[str, int] = {}
    for key in keys:
        repetitions[key[0]] = repetitions.get(key[0], 0) + 1
        step = data.steps.get(key)
        if step is not None:
            found.setdefault(key[0], []).append(step)
    return tuple(_Stepped(k, v[0], len(v), repetitions[k]) for k, v in found.items())


def _aligned(samples: Sequence[Sample]) -> tuple[dict[str, Points], set[str]]:
    """One case's IOPS, MB/s and latency at the interval ends all three have (fio may log one
    more or one fewer interval of some), and the metrics left out because their times do not
    match the others' (fio's latency log under ramp_time)."""
    merged = {kind: _merge(samples, kind) for kind, _ in SERIES_METRICS}
    present = {kind: points for kind, points in merged.items() if points}
    if not present:
        return {}, set()
    times = {kind: {t for t, _ in points} for kind, points in present.items()}
    rates = [k for k in ("iops", "bw") if k in times]
    base = set.intersection(*(times[k] for k in rates)) if rates else times["lat"]
    dropped: set[str] = set()
    if "lat" in times and rates:
        both = base & times["lat"]
        if len(both) >= max(2, len(base) // 2):
            base = both
        else:
            dropped.add("lat")
    kept = {
        kind: [(t, v) for t, v in points if t in base]
        for kind, points in present.items()
        if kind not in dropped
    }
    return kept, dropped


def _merge(samples: Sequence[Sample], kind: str) -> Points:
    """One value per interval: IOPS and bandwidth added over directions; latency averaged over
    them, weighted by each direction's IOPS in that interval where it is known."""
    slots: dict[int, list[tuple[str, float]]] = {}
    weights: dict[tuple[int, str], float] = {}
    for sample in samples:
        if sample.metric == kind:
            slots.setdefault(sample.time_ms, []).append((sample.direction, sample.value))
        elif kind == "lat" and sample.metric == "iops":
            weights[(sample.time_ms, sample.direction)] = sample.value
    out = []
    for time_ms, values in sorted(slots.items()):
        if kind != "lat":
            value = sum(v for _, v in values)
        else:
            w = [weights.get((time_ms, d)) for d, _ in values]
            total = sum(x for x in w if x)
            if all(x is not None for x in w) and total > 0:
                value = sum((x or 0.0) * v for x, (_, v) in zip(w, values, strict=True)) / total
            else:
                value = sum(v for _, v in values) / len(values)
        out.append((time_ms / 1000, value))
    return out


def _median_line(runs: Sequence[Points]) -> Points:
    """The median of the repetitions at each interval end they all have."""
    common = set.intersection(*({t for t, _ in r} for r in runs))
    values: dict[float, list[float]] = {}
    for run in runs:
        for t, v in run:
            if t in common:
                values.setdefault(t, []).append(v)
    return [(t, statistics.median(vs)) for t, vs in sorted(values.items())]


def _ramp_seconds(options: JSONObject) -> float:
    try:
        return float(parse_seconds(options.get("ramp_time", 0)))
    except ValueError:
        return 0.0


def _time_chart(
    workload: str,
    metric: str,
    runs: Mapping[str, list[Points]],
    about: _TimeNotes,
    colors: Mapping[str, int],
    taken: set[str],
) -> Chart:
    scale = {"iops": 1.0, "bw": float(MB)}.get(metric)
    if scale is None:
        unit = latency_unit([v for rs in runs.values() for r in rs for _, v in r])
        axis, scale = y_axis("lat", unit), unit[1]
    else:
        axis = y_axis(metric)
    repeated = any(len(rs) > 1 for rs in runs.values())
    series: list[Series] = []
    mains: dict[str, Points] = {}
    for label, rs in runs.items():
        main = _median_line(rs) if len(rs) > 1 else rs[0]
        mains[label] = main
        if len(rs) > 1:
            series += [
                Series(
                    f"{label} #{number}",
                    tuple(t for t, _ in r),
                    tuple(v / scale for _, v in r),
                    color=colors.get(label),
                    faint=True,
                )
                for number, r in enumerate(rs, 1)
            ]
        name = f"{label} (median of {len(rs)})" if len(rs) > 1 else label
        series.append(
            Series(
                name,
                tuple(t for t, _ in main),
                tuple(v / scale for _, v in main),
                color=colors.get(label),
            )
        )
    options = about.options
    ramp = _ramp_seconds(options)
    stepped = {s.label for s in about.steps}
    few = [label for label, pts in mains.items() if len(pts) < SETTLING_POINTS]
    ends = {
        label: _warmup_end(pts)
        for label, pts in mains.items()
        if label not in few and label not in stepped
    }
    settled = [e for e in ends.values() if e is not None and e > 0]
    regions: list[Region] = []
    words = [f"fio's averages over {options.get('log_avg_msec', '?')} ms intervals."]
    if repeated:
        words.append("Thin light lines: each repetition; the bold line is their median.")
    if ramp > 0:
        regions.append(Region(-ramp, 0.0, "ramp_time (not measured)", tone=0.25))
        words.append(
            f"Shaded before 0: fio's ramp_time, {ramp:g} s run before measuring (no samples)."
        )
    if about.steps:
        regions += [_step_region(s) for s in about.steps]
        words.append(_step_words(about.steps, settled))
    elif settled:
        regions.append(Region(0.0, max(settled), "settling"))
        words.append(
            f"Shaded from 0 to {max(settled):g} s: settling, until every line stays within ±10% "
            "of its later median."
        )
    unsettled = [label for label, end in ends.items() if end is None]
    if unsettled:
        words.append(f"Never settled within ±10%: {', '.join(unsettled)}.")
    if few:
        words.append(
            f"Too few points to judge settling (under {SETTLING_POINTS} intervals): "
            f"{', '.join(few)}."
        )
    if about.dropped:
        words.append(
            f"fio logged the latency of {about.dropped} case(s) at other times than their "
            f"IOPS{' (it does under ramp_time)' if ramp > 0 else ''}; left out."
        )
    if about.note:
        words.append(about.note)
    last = max((t for rs in runs.values() for r in rs for t, _ in r), default=1.0)
    x = Axis(
        "time since the start of measurement",
        "s",
        start_at_zero=ramp == 0,
        span=(-ramp, last * 1.02) if ramp > 0 else None,
    )
    return Chart(
        unique_id(f"timeseries-{slug(workload)}-{metric}", taken),
        "line",
        f"{capital(axis.title)} over time: {workload}",
        x,
        axis,
        tuple(series),
        tuple(regions),
        " ".join(words),
    )


SETTLING_POINTS = 5  # a series with fewer logged intervals is not judged settled or not


def _step_region(stepped: _Stepped) -> Region:
    """The interval in which a set-up's speed changed, marked (not shaded as settling)."""
    step = stepped.step
    return Region(step.at_s, step.at_s + step.interval_s, f"step: {stepped.label}", tone=0.3)


def _step_words(steps: Sequence[_Stepped], settled: Sequence[float]) -> str:
    """The caption's sentence on the steps: which set-up, from what to what, when, and what
    had moved by then; and the others' settling, said but not shaded."""
    said = []
    for stepped in steps:
        some = (
            f" (in {stepped.count} of its {stepped.repetitions} repetitions; the first shown)"
            if stepped.repetitions > 1
            else ""
        )
        said.append(f"{stepped.label} {stepped.step.words}{some}")
    others = (
        f" The other lines settled by {max(settled):g} s (within ±10% of their later median)."
        if settled
        else ""
    )
    return (
        f"A step, not settling: {'; '.join(said)}, and held the new speed to the end; the "
        f"figure is the mean of both speeds (warning {levels.CODE}). Marked: the interval "
        f"of the step.{others}"
    )


def _warmup_end(points: Sequence[tuple[float, float]]) -> float | None:
    """When the series settles (0.0: from its first sample); None if it never does."""
    start = timeseries.settled_from([v for _, v in points])
    if start is None:
        return None
    return points[start][0] if start > 0 else 0.0
