"""Charts built from a dataset: bars, scaling lines, time series, latency exceedance, ratio heat."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from iolab.analysis.stats import summarize
from iolab.errors import ReportError
from iolab.model import DIRECTIONS
from iolab.report import directions, summary
from iolab.report.cells import UNITS, case_value, format_value, shown_in
from iolab.report.charts import Axis, Chart, Series, slug
from iolab.report.data import DataCase, Dataset
from iolab.report.views import sweep_axes
from iolab.units import MICROSECONDS, format_size, latency_unit

PERCENTILE_KEYS = {"p50": "50", "p90": "90", "p99": "99", "p99.9": "99.9", "p99.99": "99.99"}
SCALING_FIELDS = sweep_axes.SCALING_FIELDS
SIZE_FIELDS = sweep_axes.SIZE_FIELDS
FIELD_AXES = {
    "numjobs": ("numjobs", "jobs"),
    "iodepth": ("iodepth", "I/Os in flight per job"),
    "bs": ("block size", "bytes"),
    "rwmixread": ("rwmixread", "% reads"),
}


def capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def unique_id(name: str, taken: set[str]) -> str:
    out, number = name, 2
    while out in taken:
        out, number = f"{name}-{number}", number + 1
    taken.add(out)
    return out


# ---------------------------------------------------------------- values


def y_axis(metric: str, unit: tuple[str, float] | None = None) -> Axis:
    if metric == "iops":
        return Axis("I/O rate", "IOPS", start_at_zero=True)
    if metric == "bw":
        return Axis("throughput", "MB/s = 10⁶ bytes/s", start_at_zero=True)
    name = "mean" if metric == "lat" else metric
    return Axis(f"{name} completion latency", (unit or MICROSECONDS)[0], start_at_zero=True)


def case_metric(case: DataCase, metric: str, part: str = "") -> float | None:
    """IOPS, MB/s (of one direction, `part` "read" or "write"), or a latency in ns: the
    I/O-weighted mean, or a percentile of the slower direction (for mixed workloads)."""
    if metric in ("iops", "bw"):
        return case_value(case, metric, part)
    if case.status != "ok" or not case.metrics:
        return None
    parts = list(case.metrics.values())
    if metric == "lat":
        pairs = [(m.iops, m.lat_mean_ns) for m in parts if m.lat_mean_ns is not None]
        total = sum(w for w, _ in pairs)
        return sum(w * v for w, v in pairs) / total if total else None
    key = PERCENTILE_KEYS[metric]
    found = [m.percentiles_ns[key] for m in parts if key in m.percentiles_ns]
    return max(found) if found else None


def median_point(
    cases: Sequence[DataCase], metric: str, scale: float = 1.0, part: str = ""
) -> tuple[float | None, float | None, str]:
    """(median, half-width, label) of the repetitions in `cases` (of one direction, `part`),
    divided by `scale`."""
    values = [v / scale for c in cases if (v := case_metric(c, metric, part)) is not None]
    if not values:
        return None, None, "failed" if cases else ""
    found = summarize(values)
    shown = "iops" if metric == "iops" else "bw"
    half = found.half_width
    if half is not None and half > abs(found.median):  # no useful interval: no error bar
        half = None
    return found.median, half, format_value(found.median, shown)


def _series(
    name: str,
    xs: Sequence[Any],
    points: Sequence[tuple[float | None, float | None, str]],
    labelled: bool = True,
    color: int | None = None,
) -> Series:
    """A line or bar series from (median, half-width, label) points; labels shown on bars."""
    return Series(
        name,
        tuple(xs),
        tuple(p[0] for p in points),
        tuple(p[1] for p in points),
        tuple(p[2] for p in points) if labelled else (),
        color=color,
    )


def setup_colors(data: Dataset) -> dict[str, int]:
    """One palette index per set-up, in report order: a set-up's colour on every chart."""
    return {label: index for index, label in enumerate(data.labels)}


def _scale(metric: str, cases: Sequence[DataCase]) -> tuple[Axis, float]:
    """The y axis for a metric, and what to divide case_metric by (IOPS and MB/s: nothing)."""
    if metric in ("iops", "bw"):
        return y_axis(metric), 1.0
    unit = latency_unit([v for c in cases if (v := case_metric(c, metric)) is not None])
    return y_axis(metric, unit), unit[1]


# ---------------------------------------------------------------- bars (study A)


def bars(data: Dataset, metric: str = "auto", baseline: str | None = None) -> list[Chart]:
    """Per workload, set-ups side by side, values on the bars; one chart per unit. Past
    summary.BAR_WORKLOADS workloads, the ends of the ranking only (see report.summary)."""
    names = data.workloads()
    caption = repetition_caption(data)
    about = ""
    if len(names) > summary.BAR_WORKLOADS:
        ref = summary.reference(data.labels, baseline)
        top, bottom = summary.ends(summary.ranked(data.cases, data.labels, ref), summary.BAR_ENDS)
        names = top + bottom
        about = f" ({len(names)} of {len(data.workloads()):,})"
        told = summary.about(len(top), len(bottom), len(data.workloads()), data.labels, ref)
        caption = (
            f"{told[0].upper()}{told[1:]}; the others are in the results table's CSV. {caption}"
        )
    by_metric: dict[str, list[str]] = {}
    for workload in names:
        by_metric.setdefault(shown_in(data.first(workload), metric), []).append(workload)
    colors = setup_colors(data)
    charts = []
    for chosen, workloads in by_metric.items():
        bars_of = [(w, part) for w in workloads for part in _bar_parts(data, w)]
        names, shared = shortened(workloads)
        shown = dict(zip(workloads, names, strict=True))
        xs = [f"{shown[w]} ({part})" if part else shown[w] for w, part in bars_of]
        series = [
            _series(
                label,
                xs,
                [median_point(data.cell(label, w), chosen, part=part) for w, part in bars_of],
                color=colors[label],
            )
            for label in data.labels
        ]
        charts.append(
            Chart(
                f"bars-{chosen}",
                "bar",
                f"{UNITS[chosen]} per workload{about}",
                Axis(f"workload (all: {shared})" if shared else "workload"),
                y_axis(chosen),
                tuple(series),
                caption=caption.strip(),
            )
        )
    return charts


def _bar_parts(data: Dataset, workload: str) -> tuple[str, ...]:
    """A mixed workload's bars: its read and its write, as fio measured them ("": one bar)."""
    parts = directions.parts(c for s in data.labels for c in data.cell(s, workload))
    return tuple(p for p in parts if p != directions.TOTAL) or ("",)


def shortened(names: Sequence[str]) -> tuple[list[str], str]:
    """Long workload names less the words every one of them has ("mix bs=4k iodepth=1" ->
    "iodepth=1"), and those words; names short enough, or that would clash, stay whole."""
    words = [name.split() for name in names]
    if len(names) < 2 or max(len(name) for name in names) <= 24:
        return list(names), ""
    common = [w for w in words[0] if all(w in other for other in words[1:])]
    short = [" ".join(w for w in split if w not in common) for split in words]
    if not common or len(set(short)) < len(short) or not all(short):
        return list(names), ""
    return short, " ".join(common)


def repetition_caption(data: Dataset) -> str:
    if any(c.repetition > 1 for c in data.cases):
        return (
            "Median of the repetitions; error bars show the 95% confidence interval, none "
            "where the repetitions spread wider than the figure (no useful interval)."
        )
    return ""


# ---------------------------------------------------------------- scaling lines (study D)


def _varying(cases: Sequence[DataCase]) -> dict[str, list[Any]]:
    """Workload axes whose values differ between cases (sweep_axes), with their values."""
    return sweep_axes.varying(cases)


_number = sweep_axes.number


def _swept(data: Dataset) -> list[DataCase]:
    """The cases scaling charts draw: not a peak search's or a load curve's points (their
    numjobs, iodepth and rate are the method's choice; the peak section charts them)."""
    return [c for c in data.cases if "method" not in c.options]


def sweep_field(data: Dataset) -> str | None:
    """The field a scaling chart puts on x: the first of numjobs, iodepth, bs, rwmixread (then
    any other numeric field) that the run sweeps."""
    fields = swept_fields(data)
    return fields[0] if fields else None


def swept_fields(data: Dataset) -> list[str]:
    """The numeric fields the runs sweep, which `report --x` may name: numjobs, iodepth, bs,
    rwmixread first, then any other, by name."""
    varying = _varying(_swept(data))
    numeric = [
        f
        for f, values in varying.items()
        if all(_number(f, v) is not None for v in values if v is not None)
    ]
    return [f for f in SCALING_FIELDS if f in numeric] + sorted(set(numeric) - {*SCALING_FIELDS})


def _x_axis(field: str, values: Sequence[float]) -> Axis:
    title, unit = FIELD_AXES.get(field, (field, "value"))
    positive = [v for v in values if v > 0]
    wide = bool(positive) and max(positive) / min(positive) >= 16
    if field in SIZE_FIELDS or (field in ("numjobs", "iodepth") and wide):
        ticks = tuple((v, format_size(v) if field in SIZE_FIELDS else f"{v:g}") for v in values)
        return Axis(title, unit, log=True, base=2, ticks=ticks)
    return Axis(title, unit, ticks=tuple((v, f"{v:g}") for v in values))


def scaling(
    data: Dataset, x: str | None = None, y: str = "auto", lines: str = "auto"
) -> list[Chart]:
    """A metric against a swept field: one chart per pattern with a line per set-up, or (lines
    = "pattern", the default with one set-up) one chart per set-up with a line per pattern."""
    field = x or sweep_field(data)
    if field is None:
        return []
    cases = _swept(data)
    ok = [c for c in cases if field in c.options and _number(field, c.options[field]) is not None]
    if not ok:
        left = (
            " (a peak search's points are charted in its own section)"
            if len(cases) < len(data.cases)
            else ""
        )
        raise ReportError(
            f"--x {field}: no stored case has a numeric {field!r}{left}; "
            f"swept fields: {', '.join(_varying(cases)) or 'none'}"
        )
    values = {_number(field, c.options[field]) for c in ok}
    if x is not None and len(values) < 2:
        swept = [f for f in _varying(cases) if f != field]
        raise ReportError(
            f"--x {field}: the runs do not sweep it (every case has {field}="
            f"{ok[0].options[field]}); swept fields: {', '.join(swept) or 'none'}"
        )
    metric = y if y != "auto" else ("bw" if field == "bs" else shown_in(ok[0], "auto"))
    groups = _patterns(ok, field)
    if not groups:  # no pattern has two values of the field: nothing to draw a line through
        return []
    per_pattern = lines == "pattern" or (lines == "auto" and len(data.labels) == 1)
    axis, scale = _scale(metric, ok)
    if len(groups) > summary.SCALING_CHARTS and not (per_pattern and len(data.labels) > 1):
        return _per_field(data, ok, metric, (axis, scale), len(groups))
    xs = sorted({v for c in ok if (v := _number(field, c.options[field])) is not None})
    charts, taken = [], set[str]()
    outer = data.labels if per_pattern else tuple(groups)
    colors = setup_colors(data)
    for chart_key in outer:
        series = []
        inner = tuple(groups) if per_pattern else data.labels
        for line in inner:
            setup, rest = (chart_key, line) if per_pattern else (line, chart_key)
            cases = [c for c in groups[rest] if c.setup == setup]
            if not cases:
                continue
            points = [
                median_point(
                    [c for c in cases if _number(field, c.options[field]) == v], metric, scale
                )
                for v in xs
            ]
            if all(value is None for value, _, _ in points):
                continue  # every case of the line failed: no line without a point
            color = None if per_pattern else colors[line]
            name = _group_name(groups[line], field, line) if per_pattern else line
            series.append(_series(name, xs, points, labelled=False, color=color))
        if not series:  # a set-up with no sweep of its own (or none measured): no empty chart
            continue
        about = chart_key if per_pattern else _group_name(groups[chart_key], field, chart_key)
        charts.append(
            Chart(
                unique_id(f"scaling-{slug(field)}-{slug(about)}", taken),
                "line",
                f"{capital(axis.title)} vs {field}: {about} (one line per "
                f"{'pattern' if per_pattern else 'set-up'})",
                _x_axis(field, xs),
                axis,
                tuple(series),
                caption=repetition_caption(data),
            )
        )
    return charts


def _patterns(ok: Sequence[DataCase], field: str) -> dict[str, list[DataCase]]:
    """The cases as patterns a line is drawn through (two values of the field or more), each
    named by the other fields that differ between the patterns drawn: a field that varies
    only in patterns with no line (a sequential job beside a random sweep) is not named."""
    groups = _grouped(ok, [k for k in _varying(ok) if k != field])
    drawn = [
        case
        for cases in groups.values()
        if len({_number(field, c.options[field]) for c in cases}) > 1
        for case in cases
    ]
    return _grouped(drawn, [k for k in _varying(drawn) if k != field])


def _grouped(cases: Sequence[DataCase], keys: Sequence[str]) -> dict[str, list[DataCase]]:
    groups: dict[str, list[DataCase]] = {}
    for case in cases:
        rest = " ".join(f"{k}={case.options.get(k)}" for k in keys) or "all"
        groups.setdefault(rest, []).append(case)
    return groups


def _group_name(cases: Sequence[DataCase], field: str, rest: str) -> str:
    """What a group of a sweep is called: its workload's name without the swept field (one
    name for the group), else the other fields' values; never "all workloads" over one."""
    names = {re.sub(rf"\s*\b{re.escape(field)}=\S+", "", c.workload).strip() for c in cases}
    name = names.pop() if len(names) == 1 else ""
    if rest == "all":
        return name or "every workload"
    if not name or name in rest.split():
        return rest
    return name if all(sweep_axes.said(part, name) for part in rest.split()) else f"{name} ({rest})"


def _per_field(
    data: Dataset, ok: Sequence[DataCase], metric: str, scaled: tuple[Axis, float], groups: int
) -> list[Chart]:
    """Too many combinations for a chart each: one chart per swept numeric field, each point
    the geometric mean, per set-up, of the medians of every workload point with that value;
    reads and writes never on one line (sweep_axes.means)."""
    cells: dict[tuple[str, str], list[float]] = {}
    for case in ok:
        value = case_metric(case, metric)
        if value is not None and value > 0:
            cells.setdefault((case.setup, case.workload), []).append(value / scaled[1])
    return sweep_axes.means(data, ok, cells, (scaled[0], _x_axis), groups)


# ---------------------------------------------------------------- latency exceedance


def exceedance(data: Dataset) -> list[Chart]:
    """1 - CDF of completion latency from the json+ histograms, log on both axes with plain
    ticks; one chart per workload and direction, one line per set-up (repetitions pooled)."""
    charts, taken = [], set[str]()
    colors = setup_colors(data)
    note = summary.charted_note(data.charted, len(data.workloads()), "Exceedance curves")
    for workload in data.workloads():
        for direction in DIRECTIONS:
            curves = {
                label: found
                for label in data.labels
                if (found := data.exceedances.get((label, workload, direction)))
            }
            curves = {label: pts for label, pts in curves.items() if pts}
            if not curves:
                continue
            unit = latency_unit([v for pts in curves.values() for v, _ in pts])
            series = tuple(
                Series(
                    label,
                    tuple(v / unit[1] for v, _ in pts),
                    tuple(p * 100 for _, p in pts),
                    color=colors[label],
                )
                for label, pts in curves.items()
            )
            xs = [v for s in series for v in s.x if isinstance(v, float) and v > 0]
            ys = [v for s in series for v in s.y if v is not None and v > 0]
            charts.append(
                Chart(
                    unique_id(f"latency-{slug(workload)}-{direction}", taken),
                    "line",
                    f"Latency exceedance: {workload}, {direction}s",
                    Axis("completion latency", unit[0], log=True, ticks=log_ticks(xs)),
                    Axis("I/Os slower than this", "%", log=True, ticks=_share_ticks(ys)),
                    series,
                    caption=(
                        "From fio's json+ latency histograms, repetitions pooled. Read a "
                        "percentile where a line crosses its share: 1% slower is p99. "
                        f"{note}"
                    ).strip(),
                )
            )
    return charts


def _plain(value: float) -> str:
    """A tick as people write it: 20, 1,000, 0.5 (never 2e1)."""
    if value >= 1000:
        return f"{value:,.0f}"
    return f"{value:g}"


def log_ticks(values: Sequence[float]) -> tuple[tuple[float, str], ...]:
    """Ticks for a log axis over `values`: powers of ten, with 2 and 5 times them when the
    range spans under three decades; labelled as plain numbers."""
    positive = [v for v in values if v > 0]
    if not positive:
        return ()
    low, high = min(positive), max(positive)
    steps = (1.0,) if high / low >= 1000 else (1.0, 2.0, 5.0)
    out = []
    for power in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1):
        for step in steps:
            tick = step * 10.0**power
            if low / 1.0001 <= tick <= high * 1.0001:
                out.append((tick, _plain(round(tick, 12))))
    if len(out) < 2:
        out = [(low, _plain(float(f"{low:.2g}"))), (high, _plain(float(f"{high:.2g}")))]
    return tuple(out)


PERCENT_TICKS = (
    (100.0, "100%"),
    (50.0, "50%"),
    (10.0, "10% (p90)"),
    (1.0, "1% (p99)"),
    (0.1, "0.1% (p99.9)"),
    (0.01, "0.01% (p99.99)"),
    (0.001, "0.001%"),
    (0.0001, "0.0001%"),
)


def _share_ticks(values: Sequence[float]) -> tuple[tuple[float, str], ...]:
    """Ticks for the share of I/Os slower, in percent, named by the percentile they read."""
    if not values:
        return ()
    low = min(values)
    return tuple((v, text) for v, text in PERCENT_TICKS if v >= low / 1.5)


# ---------------------------------------------------------------- ratio heat (study E)
