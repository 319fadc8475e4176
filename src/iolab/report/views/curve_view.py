"""Peak searches and latency-versus-load curves (workloads with `method = "peak"` or
`"curve"`): per set-up and workload, the points the search tried with the winner and its 95%
interval, the curve's points with what was asked and delivered, and a chart of latency
(p50, p99, p99.9) against delivered IOPS, from what the run recorded with each set-up."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from iolab.analysis import latency, peak
from iolab.model import Curve, CurvePoint, PeakRecord
from iolab.report.cells import Cell, Row, Table, format_value
from iolab.report.charts import Axis, Chart, Region, Series, slug
from iolab.report.data import Dataset

PERCENTILES = (("p50", "p50_ns"), ("p99", "p99_ns"), ("p99.9", "p999_ns"))


def searches(data: Dataset) -> list[tuple[str, str, PeakRecord]]:
    """(set-up label, workload, what its search recorded), in set-up then plan order."""
    return [
        (setup.label, base, found)
        for setup in data.setups
        for base, found in setup.searches.items()
    ]


def _percentile(point: CurvePoint, key: str) -> float | None:
    value: float | None = getattr(point, key)
    return value


def blocks(data: Dataset) -> list[Table | Chart]:
    """Every search's table, every curve's table, then one chart per curved workload."""
    found = searches(data)
    out: list[Table | Chart] = []
    for label, base, search in found:
        out.append(search_table(label, base, search))
        if search.curve is not None:
            out.append(curve_table(label, base, search.curve))
    bases = list(dict.fromkeys(base for _, base, search in found if search.curve is not None))
    for base in bases:
        out += curve_charts(
            base, [(label, s.curve) for label, b, s in found if b == base and s.curve is not None]
        )
    return out


def search_table(label: str, base: str, search: PeakRecord) -> Table:
    metric = search.metric
    unit, scale = ("IOPS", 1.0) if metric == "iops" else ("MB/s", 1e6)
    winner = search.winner
    at = None if winner is None else (winner.numjobs, winner.iodepth)
    rows = []
    for number, point in enumerate(search.points, start=1):
        value = point.value
        shown = value / scale if value is not None else None
        cell = Cell(shown, unit, "failed" if shown is None else format_value(shown, metric))
        mark = "winner" if (point.numjobs, point.iodepth) == at else ""
        rows.append(Row(str(number), (cell,), (str(point.numjobs), str(point.iodepth), mark)))
    return Table(
        title=f"Peak search: {label}, {base}",
        row_header="step",
        columns=(unit,),
        rows=tuple(rows),
        notes=(*peak.said(label, base, search), *_more_notes(label, base, search)),
        name=f"peak-{slug(label)}-{slug(base)}",
        stub_headers=("numjobs", "iodepth", "winner"),
        column_header="metric",
        column_keys=(metric,),
    )


def _more_notes(label: str, base: str, search: PeakRecord) -> list[str]:
    numjobs, iodepth = search.bounds
    notes = [
        f"Bounds numjobs {'-'.join(map(str, numjobs))}, iodepth "
        f"{'-'.join(map(str, iodepth))}; a step counts when it beats the "
        f"best so far by more than {search.margin:.0%}; the winner is the highest figure "
        "measured, then measured again for its 95% interval (Student's t)."
    ]
    if search.drift is not None:
        notes.append(peak.drift_line(label, base, search.drift, search.margin))
    return notes


def _load(point: CurvePoint) -> str:
    return "peak" if point.load_pct is None else f"{point.load_pct}%"


def _unit(curve: Curve) -> tuple[str, float]:
    """The latency unit of a curve's table (and ns per unit): the one its values read best in."""
    values = [
        v for p in curve.points for _, key in PERCENTILES if (v := _percentile(p, key)) is not None
    ]  # fmt: skip
    return latency.unit_for(values)


def slo_note(curve: Curve) -> str | None:
    """The table's note on the curve's latency target, in the table's unit; None without one."""
    if curve.slo is None:
        return None
    return peak.slo_said(curve.slo, *_unit(curve))


def curve_table(label: str, base: str, curve: Curve) -> Table:
    found = peak.curve_knee(curve)
    points = list(curve.points)
    unit, per = _unit(curve)
    rows = []
    for index, point in enumerate(points):
        asked = point.asked_iops
        cells = [
            Cell(asked, "IOPS", "unthrottled" if asked is None else f"{asked:,.0f}"),
            Cell(point.delivered_iops if point.ok else None, "IOPS",
                 f"{point.delivered_iops:,.0f}" if point.ok else "failed"),
            *(_latency_cell(_percentile(point, key), unit, per) for _, key in PERCENTILES),
        ]  # fmt: skip
        flags = [] if point.delivered else ["not delivered"]
        if index == found.index:
            flags.append("knee")
        if curve.slo is not None and curve.slo.iops and point.workload == curve.slo.workload:
            flags.append("slo")
        rows.append(Row(_load(point), tuple(cells), (", ".join(flags),)))
    said = _knee_said(curve, found)
    return Table(
        title=f"Latency against load: {label}, {base}",
        row_header="load",
        columns=("asked (IOPS)", "delivered (IOPS)",
                 *(f"{name} ({unit})" for name, _ in PERCENTILES)),
        rows=tuple(rows),
        notes=(
            f"Loads are shares of the peak's {curve.peak_iops:,.0f} IOPS, held by fio's "
            "rate_iops (per job); latency is completion latency, the slower direction's.",
            f"not delivered: under {curve.delivered_share:.0%} of the rate asked.",
            said,
            *([note] if (note := slo_note(curve)) is not None else []),
        ),
        name=f"curve-{slug(label)}-{slug(base)}",
        stub_headers=("flags",),
        column_header="statistic",
        column_keys=("asked", "delivered", *(name for name, _ in PERCENTILES)),
    )  # fmt: skip


def _knee_said(curve: Curve, found: peak.Knee) -> str:
    """Where the knee is, and the noise it was judged against (see analysis.peak)."""
    factor = f"{curve.knee_factor:g}x"
    noise = (
        f"p99 scatters about ±{found.noise:.0%} a point (each point is one run), so a rise "
        f"counts past {factor} plus twice that, and only if the later points stay above {factor}"
    )
    if found.index is None:
        return (
            f"No knee within the noise: p99 does not rise past {factor} its lowest-load value "
            f"for good up to the peak; {noise}."
        )
    point = curve.points[found.index]
    return (
        f"Knee: {_load(point)} ({point.delivered_iops:,.0f} IOPS), the last load before p99 "
        f"exceeds {factor} its value at the lowest load for good; {noise}."
    )


def _latency_cell(value: float | None, unit: str, per: float) -> Cell:
    if value is None:
        return Cell(None, unit, "—")
    shown = value / per
    text = f"{shown:,.0f}" if shown >= 100 else f"{shown:,.1f}" if shown >= 10 else f"{shown:.2f}"
    return Cell(shown, unit, text)


def curve_charts(base: str, curves: Sequence[tuple[str, Curve]]) -> list[Chart]:
    """Latency against delivered IOPS: one set-up's p50, p99 and p99.9 on one chart; with
    several set-ups, one chart per percentile and one line per set-up."""
    values = [
        v for _, c in curves for p in c.points for _, key in PERCENTILES
        if p.ok and (v := _percentile(p, key)) is not None
    ]  # fmt: skip
    unit, per = latency.unit_for(values)

    def line(name: str, curve: Curve, key: str) -> Series:
        ok = sorted((p for p in curve.points if p.ok), key=_delivered)
        return Series(name, tuple(_delivered(p) for p in ok),
                      tuple(None if (v := _percentile(p, key)) is None else v / per
                            for p in ok))  # fmt: skip

    x = Axis("delivered I/O rate", "IOPS", start_at_zero=True)
    if len(curves) == 1:
        label, search = curves[0]
        return [
            Chart(
                name=f"curve-{slug(label)}-{slug(base)}",
                kind="line",
                title=f"Latency against load: {base}, {label}",
                x=x,
                y=Axis("completion latency", unit, start_at_zero=True),
                series=tuple(line(name, search, key) for name, key in PERCENTILES),
                regions=(*_past_knee(search), *_within(search)),
                caption=_caption(label, search),
            )
        ]
    return [
        Chart(
            name=f"curve-{slug(base)}-{slug(name)}",
            kind="line",
            title=f"{name} latency against load: {base}",
            x=x,
            y=Axis(f"{name} completion latency", unit, start_at_zero=True),
            series=tuple(line(label, search, key) for label, search in curves),
            caption=" ".join(_caption(label, search) for label, search in curves),
        )
        for name, key in PERCENTILES
    ]


def _delivered(point: CurvePoint) -> float:
    return point.delivered_iops


def _within(curve: Curve) -> tuple[Region, ...]:
    """The latency target's answer: up to the most IOPS within it, lightly shaded."""
    found = curve.slo
    if found is None or not found.iops:
        return ()
    most = statistics.median(found.iops)
    return (Region(0.0, most, f"within {found.target}: up to {most:,.0f} IOPS", tone=0.08),)


def _past_knee(curve: Curve) -> tuple[Region, ...]:
    """Shaded only past a knee found beyond the noise."""
    knee = peak.curve_knee(curve).index
    if knee is None:
        return ()
    ok = [_delivered(p) for p in curve.points if p.ok]
    start = _delivered(curve.points[knee])
    return (Region(start, max(ok), "past the knee"),) if max(ok) > start else ()


def _caption(label: str, curve: Curve) -> str:
    found = peak.curve_knee(curve)
    noise = f"p99 noise ±{found.noise:.0%} a point"
    if found.index is None:
        return (
            f"{label}: no knee within the noise up to the peak ({curve.peak_iops:,.0f} "
            f"IOPS; {noise})."
        )
    point = curve.points[found.index]
    return (
        f"{label}: knee at {_delivered(point):,.0f} IOPS ({_load(point)}), peak "
        f"{curve.peak_iops:,.0f} IOPS; {noise}."
    )
