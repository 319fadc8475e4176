"""Peak searches and latency-versus-load curves (workloads with `method = "peak"` or
`"curve"`): per set-up and workload, the points the search tried with the winner and its 95%
interval, the curve's points with what was asked and delivered, and a chart of latency
(p50, p99, p99.9) against delivered IOPS, from what the run recorded with each set-up. Each
point's figures are marked ⚑ with its cases' warnings, as the results table's cells are; the
peak, the knee and the latency target's answer with those of the points they rest on, as the
judged run found them (analysis.peak's Verdict, one per search: report.judged)."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence

from iolab.analysis.peak import Knee, Verdict
from iolab.model import Curve, CurvePoint, PeakRecord
from iolab.report.cells import Cell, Row, Table, format_value, warned
from iolab.report.charts import Axis, Chart, Guide, Region, Series, slug
from iolab.report.data import Dataset
from iolab.store import CaseRow
from iolab.units import latency_unit

PERCENTILES = (("p50", "p50_ns"), ("p99", "p99_ns"), ("p99.9", "p999_ns"))
Cases = Callable[[str], Sequence[CaseRow]]  # a workload's stored cases on the set-up


def no_cases(workload: str) -> Sequence[CaseRow]:
    """Where no stored case is at hand: nothing to mark."""
    return ()


def cases_of(data: Dataset, label: str) -> Cases:
    """A set-up's stored cases, by workload."""
    return lambda workload: data.cell(label, workload)


def _first(cases: Sequence[CaseRow]) -> list[CaseRow]:
    """A search point's first run: the one its figure is."""
    return [case for case in cases if case.repetition == 1]


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


def blocks(data: Dataset, verdicts: Sequence[Verdict]) -> list[Table | Chart]:
    """Every search's table, every curve's table, then one chart per curved workload."""
    out: list[Table | Chart] = []
    cases = {label: cases_of(data, label) for label in data.labels}
    for found in verdicts:
        out.append(search_table(found, cases[found.setup]))
        if found.found.curve is not None:
            out.append(curve_table(found, cases[found.setup]))
    curved = [found for found in verdicts if found.found.curve is not None]
    for base in dict.fromkeys(found.base for found in curved):
        out += curve_charts(base, [found for found in curved if found.base == base])
    return out


def search_table(verdict: Verdict, cases: Cases = no_cases) -> Table:
    label, base, search = verdict.setup, verdict.base, verdict.found
    metric = search.metric
    unit, scale = ("IOPS", 1.0) if metric == "iops" else ("MB/s", 1e6)
    winner = search.winner
    at = None if winner is None else (winner.numjobs, winner.iodepth)
    rows = []
    for number, point in enumerate(search.points, start=1):
        value = point.value
        shown = value / scale if value is not None else None
        cell = Cell(shown, unit, "failed" if shown is None else format_value(shown, metric))
        cell = warned(cell, _first(cases(point.workload)))
        mark = "winner" if (point.numjobs, point.iodepth) == at else ""
        rows.append(Row(str(number), (cell,), (str(point.numjobs), str(point.iodepth), mark)))
    return Table(
        title=f"Peak search: {label}, {base}",
        row_header="step",
        columns=(unit,),
        rows=tuple(rows),
        notes=(*verdict.said, *_more_notes(verdict)),
        name=f"peak-{slug(label)}-{slug(base)}",
        stub_headers=("numjobs", "iodepth", "winner"),
        column_header="metric",
        column_keys=(metric,),
    )


def _more_notes(verdict: Verdict) -> list[str]:
    search = verdict.found
    numjobs, iodepth = search.bounds
    notes = [
        f"Bounds numjobs {'-'.join(map(str, numjobs))}, iodepth "
        f"{'-'.join(map(str, iodepth))}; a step counts when it beats the "
        f"best so far by more than {search.margin:.0%}; the winner is the highest figure "
        "measured, then measured again for its 95% interval (Student's t)."
    ]
    if verdict.drift is not None:
        notes.append(verdict.drift)
    return notes


def curve_table(verdict: Verdict, cases: Cases = no_cases) -> Table:
    """A curve's table, in the latency unit its values read best in (the verdict's)."""
    label, base, curve, found = verdict.setup, verdict.base, _curve(verdict), _knee(verdict)
    points = list(curve.points)
    unit, per = verdict.unit
    rows = []
    for index, point in enumerate(points):
        asked, behind = point.asked_iops, cases(point.workload)
        cells = [
            Cell(asked, "IOPS", "unthrottled" if asked is None else f"{asked:,.0f}"),
            *(
                warned(cell, behind)
                for cell in (
                    Cell(
                        point.delivered_iops if point.ok else None,
                        "IOPS",
                        f"{point.delivered_iops:,.0f}" if point.ok else "failed",
                    ),
                    *(_latency_cell(_percentile(point, key), unit, per) for _, key in PERCENTILES),
                )
            ),
        ]
        flags = [] if point.delivered else ["not delivered"]
        if index == found.index:
            flags.append("knee")
        if curve.slo is not None and curve.slo.iops and point.workload == curve.slo.workload:
            flags.append("slo")
        rows.append(Row(point.label, tuple(cells), (", ".join(flags),)))
    said = _knee_said(curve, found, verdict.knee_mark)
    return Table(
        title=f"Latency against load: {label}, {base}",
        row_header="load",
        columns=(
            "asked (IOPS)",
            "delivered (IOPS)",
            *(f"{name} ({unit})" for name, _ in PERCENTILES),
        ),
        rows=tuple(rows),
        notes=(
            f"Loads are shares of the peak's {curve.peak_iops:,.0f} IOPS, held by fio's "
            "rate_iops (per job); latency is completion latency, the slower direction's.",
            f"not delivered: under {curve.delivered_share:.0%} of the rate asked.",
            said,
            *([verdict.slo] if verdict.slo is not None else []),
        ),
        name=f"curve-{slug(label)}-{slug(base)}",
        stub_headers=("flags",),
        column_header="statistic",
        column_keys=("asked", "delivered", *(name for name, _ in PERCENTILES)),
    )


def _curve(verdict: Verdict) -> Curve:
    curve = verdict.found.curve
    assert curve is not None, "a curve's verdict"
    return curve


def _knee(verdict: Verdict) -> Knee:
    knee = verdict.knee
    assert knee is not None, "a curve's verdict"
    return knee


def _knee_said(curve: Curve, found: Knee, mark: str = "") -> str:
    """Where the knee is (⚑: `mark`), and the noise it was judged against (analysis.peak)."""
    factor = f"{curve.knee_factor:g}x"
    noise = (
        f"p99 scatters about ±{found.noise:.0%} a point (each point is one run), so a rise "
        f"counts past {factor} plus twice that, and only if the later points stay above {factor}"
    )
    if found.index is None:
        return (
            f"No knee within the noise: p99 does not rise past {factor} its lowest-load value "
            f"for good up to the peak{mark}; {noise}."
        )
    point = curve.points[found.index]
    return (
        f"Knee: {point.label} ({point.delivered_iops:,.0f} IOPS){mark}, the last load "
        f"before p99 exceeds {factor} its value at the lowest load for good; {noise}."
    )


def _latency_cell(value: float | None, unit: str, per: float) -> Cell:
    if value is None:
        return Cell(None, unit, "—")
    shown = value / per
    text = f"{shown:,.0f}" if shown >= 100 else f"{shown:,.1f}" if shown >= 10 else f"{shown:.2f}"
    return Cell(shown, unit, text)


def curve_charts(base: str, verdicts: Sequence[Verdict]) -> list[Chart]:
    """Latency against delivered IOPS: one set-up's p50, p99 and p99.9 on one chart; with
    several set-ups, one chart per percentile and one line per set-up (the captions' ⚑ as
    the verdicts found them)."""
    curves = [(found.setup, _curve(found)) for found in verdicts]
    values = [
        v
        for _, c in curves
        for p in c.points
        for _, key in PERCENTILES
        if p.ok and (v := _percentile(p, key)) is not None
    ]
    unit, per = latency_unit(values)

    def line(name: str, curve: Curve, key: str, missed: bool = False) -> Series:
        """A percentile's line over the loads delivered; `missed`: the loads asked but not
        delivered, a series of their own (marked in the legend), never among the others."""
        ok = sorted((p for p in curve.points if p.ok and p.delivered != missed), key=_delivered)
        return Series(
            f"{name}: not delivered" if missed else name,
            tuple(_delivered(p) for p in ok),
            tuple(None if (v := _percentile(p, key)) is None else v / per for p in ok),
        )

    def lines(curve: Curve) -> tuple[Series, ...]:
        drawn = [line(name, curve, key) for name, key in PERCENTILES]
        if any(p.ok and not p.delivered for p in curve.points):
            drawn.append(line("p99", curve, "p99_ns", missed=True))
        return tuple(drawn)

    x = Axis("delivered I/O rate", "IOPS", start_at_zero=True)
    if len(verdicts) == 1:
        label, search = curves[0]
        return [
            Chart(
                name=f"curve-{slug(label)}-{slug(base)}",
                kind="line",
                title=f"Latency against load: {base}, {label}",
                x=x,
                y=Axis("completion latency", unit, start_at_zero=True),
                series=lines(search),
                regions=(*_past_knee(verdicts[0]), *_within(search)),
                guides=_target(verdicts[0], per),
                caption=_caption(verdicts[0]),
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
            caption=" ".join(_caption(found) for found in verdicts),
        )
        for name, key in PERCENTILES
    ]


def _delivered(point: CurvePoint) -> float:
    return point.delivered_iops


def _target(verdict: Verdict, per: float) -> tuple[Guide, ...]:
    """The latency target, where the curve has one, as a dashed line at its limit."""
    found, limit = _curve(verdict).slo, verdict.limit_ns
    if found is None or limit is None:
        return ()
    return (Guide(limit / per, f"target {found.target}"),)


def _within(curve: Curve) -> tuple[Region, ...]:
    """The latency target's answer: up to the most IOPS within it, lightly shaded."""
    found = curve.slo
    if found is None or not found.iops:
        return ()
    most = statistics.median(found.iops)
    return (Region(0.0, most, f"within {found.target}: up to {most:,.0f} IOPS", tone=0.08),)


def _past_knee(verdict: Verdict) -> tuple[Region, ...]:
    """Shaded only past a knee found beyond the noise."""
    curve, knee = _curve(verdict), _knee(verdict).index
    if knee is None:
        return ()
    ok = [_delivered(p) for p in curve.points if p.ok]
    start = _delivered(curve.points[knee])
    return (Region(start, max(ok), "past the knee"),) if max(ok) > start else ()


def _caption(verdict: Verdict) -> str:
    label, curve, found = verdict.setup, _curve(verdict), _knee(verdict)
    noise = f"p99 noise ±{found.noise:.0%} a point"
    mark = verdict.knee_mark
    if found.index is None:
        return (
            f"{label}: no knee within the noise up to the peak ({curve.peak_iops:,.0f} "
            f"IOPS; {noise}){mark}."
        )
    point = curve.points[found.index]
    return (
        f"{label}: knee at {_delivered(point):,.0f} IOPS ({point.label}){mark}, peak "
        f"{curve.peak_iops:,.0f} IOPS; {noise}."
    )
