"""Charts built from a dataset: bars, scaling lines, time series, latency exceedance, ratio heat."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from iolab.analysis import latency, timeseries
from iolab.analysis.stats import metric_for, summarize
from iolab.errors import ReportError
from iolab.model import DIRECTIONS, Sample
from iolab.report.charts import Axis, Chart, Region, Series, slug
from iolab.report.data import Case, Dataset
from iolab.report.model import MB, UNITS, Table, case_value, format_value
from iolab.units import format_size, parse_size

PERCENTILE_KEYS = {"p50": "50", "p90": "90", "p99": "99", "p99.9": "99.9", "p99.99": "99.99"}
SCALING_FIELDS = ("numjobs", "iodepth", "bs", "rwmixread")
SIZE_FIELDS = frozenset({"bs", "size", "filesize"})
FIELD_AXES = {
    "numjobs": ("numjobs", "jobs"),
    "iodepth": ("iodepth", "I/Os in flight per job"),
    "bs": ("block size", "bytes"),
    "rwmixread": ("rwmixread", "% reads"),
}
IGNORED_FIELDS = frozenset({"name"})


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _unique(name: str, taken: set[str]) -> str:
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
    return Axis(f"{name} completion latency", (unit or latency.MICROSECONDS)[0], start_at_zero=True)


def case_metric(case: Case, metric: str) -> float | None:
    """IOPS, MB/s, or a latency in ns: the I/O-weighted mean, or a percentile of the slower
    direction (for mixed workloads)."""
    if metric in ("iops", "bw"):
        return case_value(case, metric)
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


def _points(
    cases: Sequence[Case], metric: str, scale: float = 1.0
) -> tuple[float | None, float | None, str]:
    """(median, half-width, label) of the repetitions in `cases`, divided by `scale`."""
    values = [v / scale for c in cases if (v := case_metric(c, metric)) is not None]
    if not values:
        return None, None, "failed" if cases else ""
    summary = summarize(values)
    shown = "iops" if metric == "iops" else "bw"
    return summary.median, summary.half_width, format_value(summary.median, shown)


def _series(
    name: str,
    xs: Sequence[Any],
    points: Sequence[tuple[float | None, float | None, str]],
    labelled: bool = True,
) -> Series:
    """A line or bar series from (median, half-width, label) points; labels shown on bars."""
    return Series(
        name,
        tuple(xs),
        tuple(p[0] for p in points),
        tuple(p[1] for p in points),
        tuple(p[2] for p in points) if labelled else (),
    )


def _scale(metric: str, cases: Sequence[Case]) -> tuple[Axis, float]:
    """The y axis for a metric, and what to divide case_metric by (IOPS and MB/s: nothing)."""
    if metric in ("iops", "bw"):
        return y_axis(metric), 1.0
    unit = latency.unit_for([v for c in cases if (v := case_metric(c, metric)) is not None])
    return y_axis(metric, unit), unit[1]


# ---------------------------------------------------------------- bars (study A)


def bars(data: Dataset, metric: str = "auto") -> list[Chart]:
    """Per workload, set-ups side by side, values on the bars; one chart per unit."""
    by_metric: dict[str, list[str]] = {}
    for workload in data.workloads():
        first = next(c for c in data.cases if c.workload == workload)
        by_metric.setdefault(metric_for(first.options, metric), []).append(workload)
    charts = []
    for chosen, workloads in by_metric.items():
        series = [
            _series(label, workloads, [_points(data.cell(label, w), chosen) for w in workloads])
            for label in data.labels
        ]
        charts.append(
            Chart(
                f"bars-{chosen}",
                "bar",
                f"{UNITS[chosen]} per workload",
                Axis("workload"),
                y_axis(chosen),
                tuple(series),
                caption=_repetition_caption(data),
            )
        )
    return charts


def _repetition_caption(data: Dataset) -> str:
    if any(c.repetition > 1 for c in data.cases):
        return "Median of the repetitions; error bars show the 95% confidence interval."
    return ""


# ---------------------------------------------------------------- scaling lines (study D)


def _varying(cases: Sequence[Case]) -> dict[str, list[Any]]:
    """Workload fields whose values differ between cases, with their distinct values."""
    keys = sorted({k for c in cases for k in c.options} - IGNORED_FIELDS)
    out: dict[str, list[Any]] = {}
    for key in keys:
        values: list[Any] = []
        for case in cases:
            value = case.options.get(key)
            if value not in values:
                values.append(value)
        if len(values) > 1:
            out[key] = values
    return out


def _number(field: str, value: Any) -> float | None:
    try:
        if field in SIZE_FIELDS:
            return float(parse_size(value))
        return float(value) if not isinstance(value, bool) else None
    except (TypeError, ValueError):
        return None


def sweep_field(data: Dataset) -> str | None:
    """The field a scaling chart puts on x: the first of numjobs, iodepth, bs, rwmixread (then
    any other numeric field) that the run sweeps."""
    varying = _varying(data.cases)
    numeric = [
        f
        for f, values in varying.items()
        if all(_number(f, v) is not None for v in values if v is not None)
    ]
    for field in (*SCALING_FIELDS, *sorted(numeric)):
        if field in numeric:
            return field
    return None


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
    ok = [c for c in data.cases if field in c.options and _number(field, c.options[field])]
    if not ok:
        raise ReportError(
            f"--x {field}: no stored case has a numeric {field!r}; "
            f"swept fields: {', '.join(_varying(data.cases)) or 'none'}"
        )
    values = {_number(field, c.options[field]) for c in ok}
    if x is not None and len(values) < 2:
        swept = [f for f in _varying(data.cases) if f != field]
        raise ReportError(
            f"--x {field}: the runs do not sweep it (every case has {field}="
            f"{ok[0].options[field]}); swept fields: {', '.join(swept) or 'none'}"
        )
    metric = y if y != "auto" else ("bw" if field == "bs" else metric_for(ok[0].options, "auto"))
    rest_keys = [k for k in _varying(ok) if k != field]
    groups: dict[str, list[Case]] = {}
    for case in ok:
        rest = " ".join(f"{k}={case.options.get(k)}" for k in rest_keys) or "all"
        groups.setdefault(rest, []).append(case)
    groups = {
        rest: cases
        for rest, cases in groups.items()
        if len({_number(field, c.options[field]) for c in cases}) > 1
    }
    per_pattern = lines == "pattern" or (lines == "auto" and len(data.labels) == 1)
    axis, scale = _scale(metric, ok)
    xs = sorted({v for c in ok if (v := _number(field, c.options[field])) is not None})
    charts, taken = [], set[str]()
    outer = data.labels if per_pattern else tuple(groups)
    for chart_key in outer:
        series = []
        inner = tuple(groups) if per_pattern else data.labels
        for line in inner:
            setup, rest = (chart_key, line) if per_pattern else (line, chart_key)
            cases = [c for c in groups[rest] if c.setup == setup]
            if not cases:
                continue
            points = [
                _points([c for c in cases if _number(field, c.options[field]) == v], metric, scale)
                for v in xs
            ]
            series.append(_series(line, xs, points, labelled=False))
        about = f"{chart_key}" if chart_key != "all" else "all workloads"
        charts.append(
            Chart(
                _unique(f"scaling-{slug(field)}-{slug(about)}", taken),
                "line",
                f"{_capital(axis.title)} vs {field}: {about} (one line per "
                f"{'pattern' if per_pattern else 'set-up'})",
                _x_axis(field, xs),
                axis,
                tuple(series),
                caption=_repetition_caption(data),
            )
        )
    return charts


# ---------------------------------------------------------------- time series (study B)

SERIES_METRICS = (("iops", "iops"), ("bw", "bw"), ("lat", "lat"))


def time_series(data: Dataset) -> list[Chart]:
    """Per-interval IOPS, MB/s and mean latency over each case's run, the warm-up shaded."""
    charts, taken = [], set[str]()
    for workload in data.workloads():
        keys = [k for k in data.samples if k[1] == workload]
        if not keys:
            continue
        options = next(c.options for c in data.cases if c.workload == workload)
        for kind, metric in SERIES_METRICS:
            lines = {_series_name(data, k): _merge(data.samples[k], kind) for k in keys}
            lines = {name: points for name, points in lines.items() if points}
            if not lines:
                continue
            charts.append(_time_chart(workload, metric, lines, options, taken))
    return charts


def _series_name(data: Dataset, key: tuple[str, str, int]) -> str:
    repeated = any(k[2] > 1 for k in data.samples if k[1] == key[1])
    return f"{key[0]} #{key[2]}" if repeated else key[0]


def _merge(samples: Sequence[Sample], kind: str) -> list[tuple[float, float]]:
    """One value per interval: IOPS and bandwidth added over directions, latency averaged."""
    slots: dict[int, list[float]] = {}
    for sample in samples:
        if sample.metric == kind:
            slots.setdefault(sample.time_ms, []).append(sample.value)
    out = []
    for time_ms, values in sorted(slots.items()):
        value = sum(values) / len(values) if kind == "lat" else sum(values)
        out.append((time_ms / 1000, value))
    return out


def _time_chart(
    workload: str,
    metric: str,
    lines: Mapping[str, list[tuple[float, float]]],
    options: Mapping[str, Any],
    taken: set[str],
) -> Chart:
    scale = {"iops": 1.0, "bw": float(MB)}.get(metric)
    if scale is None:
        unit = latency.unit_for([v for points in lines.values() for _, v in points])
        axis, scale = y_axis("lat", unit), unit[1]
    else:
        axis = y_axis(metric)
    series = tuple(
        Series(name, tuple(t for t, _ in pts), tuple(v / scale for _, v in pts))
        for name, pts in lines.items()
    )
    ends = {name: _warmup_end(pts) for name, pts in lines.items()}
    found = [e for e in ends.values() if e is not None and e > 0]
    regions = (Region(0.0, max(found), "warm-up"),) if found else ()
    caption = (
        f"fio's averages over {options.get('log_avg_msec', '?')} ms intervals. The shaded "
        "warm-up lasts until every series stays within ±10% of its later median."
    )
    unsettled = [name for name, end in ends.items() if end is None]
    if unsettled:
        caption += f" Never settled within ±10%: {', '.join(unsettled)}."
    if options.get("ramp_time"):
        caption += f" fio ran {options['ramp_time']} s of ramp_time before the first interval."
    return Chart(
        _unique(f"timeseries-{slug(workload)}-{metric}", taken),
        "line",
        f"{_capital(axis.title)} over time: {workload}",
        Axis("time since the start of measurement", "s", start_at_zero=True),
        axis,
        series,
        regions,
        caption,
    )


def _warmup_end(points: Sequence[tuple[float, float]]) -> float | None:
    """When the series settles (0.0: from its first sample); None if it never does."""
    start = timeseries.settled_from([v for _, v in points])
    if start is None:
        return None
    return points[start][0] if start > 0 else 0.0


# ---------------------------------------------------------------- latency exceedance


def exceedance(data: Dataset) -> list[Chart]:
    """1 - CDF of completion latency from the json+ histograms, log on both axes; one chart
    per workload and direction, one line per set-up (repetitions pooled)."""
    charts, taken = [], set[str]()
    for workload in data.workloads():
        for direction in DIRECTIONS:
            curves = {
                label: latency.exceedance(bins)
                for label in data.labels
                if (bins := data.histograms.get((label, workload, direction)))
            }
            curves = {label: pts for label, pts in curves.items() if pts}
            if not curves:
                continue
            unit = latency.unit_for([v for pts in curves.values() for v, _ in pts])
            series = tuple(
                Series(label, tuple(v / unit[1] for v, _ in pts), tuple(p for _, p in pts))
                for label, pts in curves.items()
            )
            charts.append(
                Chart(
                    _unique(f"latency-{slug(workload)}-{direction}", taken),
                    "line",
                    f"Latency exceedance: {workload}, {direction}s",
                    Axis("completion latency", unit[0], log=True),
                    Axis("share of I/Os slower, 1 − CDF", "fraction", log=True),
                    series,
                    caption="From fio's json+ latency histograms, repetitions pooled.",
                )
            )
    return charts


# ---------------------------------------------------------------- ratio heat (study E)


def heat(table: Table, title: str) -> Chart | None:
    """The percentages in a table (cells with a heat value) as a heat table diverging at 100%."""
    columns = [
        i for i in range(len(table.columns)) if any(r.cells[i].heat is not None for r in table.rows)
    ]
    rows = [r for r in table.rows if any(r.cells[i].heat is not None for i in columns)]
    if not rows or not columns:
        return None
    x = tuple(table.keys[i] for i in columns)
    series = tuple(
        Series(
            " · ".join((row.label, *row.stubs[:-1])) if len(row.stubs) > 1 else row.label,
            x,
            tuple(row.cells[i].heat for i in columns),
            labels=tuple(row.cells[i].text for i in columns),
        )
        for row in rows
    )
    return Chart(
        "ratio-heat",
        "heat",
        title,
        Axis(table.column_header),
        Axis(table.row_header),
        series,
        caption="Blue: above the reference; red: below; white: the same (100%).",
        scale=Axis("share of the reference", "%"),
        center=100.0,
    )
