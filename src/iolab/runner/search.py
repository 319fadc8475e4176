"""Cases a search adds: `method = "peak"` (numjobs x iodepth, for the highest figure) and
`method = "curve"` (then latency at 10% to 100% of the peak's IOPS). After a method
workload's case, it runs the points it chooses through the case runner it is handed, recalls
the points already stored (so a resumed search runs only what is missing, and takes the same
path), records the search with the set-up as a typed record (model.PeakRecord) and says what
it found. The method itself is in analysis.peak; how a method workload is planned, in
plan.methods."""

from __future__ import annotations

import contextlib
import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from iolab.analysis import objective, peak, stats
from iolab.analysis.peak import Point
from iolab.model import (
    Case,
    CheckWarning,
    Curve,
    CurvePoint,
    Drift,
    FioValue,
    Method,
    PeakPoint,
    PeakRecord,
    PeakWinner,
    SearchBounds,
    SloPoint,
    Workload,
    codec,
    metric_for,
)
from iolab.model.facts import JSONDict
from iolab.runner import precondition
from iolab.runner.campaign import Campaign, CampaignStep, host_problem
from iolab.runner.listener import Listener
from iolab.runner.repeats import CaseRunner
from iolab.store import CaseRow, Store
from iolab.targets.path import Prepared

MIXED = ("rw", "readwrite", "randrw")


class _Missing(Exception):
    """A point a replay needs is not stored (its search has not got that far)."""


class Search:
    """The searches of one run's method workloads."""

    def __init__(
        self, campaign: Campaign, store: Store, run_id: int, listener: Listener, case: CaseRunner
    ) -> None:
        self.campaign, self.store, self.run_id = campaign, store, run_id
        self.listener, self.case = listener, case
        self.found: dict[str, dict[str, PeakRecord]] = {}  # by set-up, then workload

    def search_more(
        self, step: CampaignStep, target: Prepared, state: str, record: Callable[[JSONDict], None]
    ) -> str:
        """After a method workload's start (or its closing "again" case, which a resumed run
        reaches first): the search to its end, the curve, the record, and what was found."""
        plan, case = self.campaign.plan, step.case
        method = case.workload.method
        if method is None or case.repetition != plan.repeat:
            return state
        name = case.workload.name.removesuffix(" again") if method.again else case.workload.name
        start = next(
            w for w in plan.workloads if w.name == name and w.method and not w.method.again
        )
        points = _Points(self, case, start, step.position, target, state)
        found = points.search()
        records = self.found.setdefault(case.setup.name, {})
        records[points.base] = found
        for other in plan.workloads:  # a resumed run records afresh: replay the others
            if other is start or other.method is None or other.method.again:
                continue
            with_stored = _Points(self, Case(case.setup, other, 1), other, 0, target, "", False)
            with contextlib.suppress(_Missing):
                records[with_stored.base] = with_stored.search()
        record({"peak_search": {base: codec.to_json(r) for base, r in records.items()}})
        if points.ran or not method.again:
            for line in peak.said(case.setup.name, points.base, found, points.warnings):
                self.listener.note(line)
        if method.again and found.drift is not None:
            self.listener.note(
                peak.drift_line(case.setup.name, points.base, found.drift, found.margin)
            )
        return points.state

    def stored(self, setup: str, workload: str | None = None) -> dict[tuple[str, int], CaseRow]:
        """The set-up's stored cases (of one workload, if given) by name and repetition."""
        rows = self.store.cases(self.run_id, setup, workload)
        return {(row.workload, row.repetition): row for row in rows}


@dataclass
class _Points:
    """One method workload's search on one set-up: each point run, or recalled if stored."""

    run: Search
    case: Case
    start: Workload
    position: int
    target: Prepared
    state: str
    live: bool = True  # False: recall only; a point not stored raises _Missing
    ran: int = 0
    rows: dict[tuple[str, int], CaseRow] = field(default_factory=dict)
    loads: list[Workload] = field(default_factory=list)  # the curve's points, the peak's too

    def __post_init__(self) -> None:
        options = self.start.options
        assert self.start.method is not None  # a method workload: plan.methods
        self.method: Method = self.start.method
        self.first = (int(options["numjobs"]), int(options["iodepth"]))
        self.base = self.start.name.removesuffix(peak.point_name("", self.first))
        self.bounds = peak.Bounds(self.method.numjobs, self.method.iodepth)
        self.margin = peak.share(self.method.margin or "") or peak.DEFAULT_MARGIN
        self.metric = metric_for(options, self.run.campaign.plan.metric)
        self.rows = self.run.stored(self.case.setup.name)

    def workload(self, point: Point, rate: str | None = None, load: int | None = None) -> Workload:
        """The point's workload; with a rate, the curve's point at that load."""
        if point == self.first and rate is None:
            return self.start
        options: dict[str, FioValue] = {
            **self.start.options,
            "numjobs": point[0],
            "iodepth": point[1],
        }
        name = peak.point_name(self.base, point)
        method = self.method
        if rate is not None and load is not None:
            options["rate_iops"] = rate
            name = peak.load_name(self.base, point, load)
            method = replace(method, curve_load=load)
        return replace(self.start, name=name, options=options, method=method)

    def row(self, workload: Workload, repetition: int = 1) -> CaseRow | None:
        """The point's stored case, running it first if need be (None: refused by the host)."""
        key = (workload.name, repetition)
        if key not in self.rows:
            campaign = self.run.campaign
            if host_problem(workload.options, campaign.fio, campaign.executor.limits()):
                return None
            if not self.live:
                raise _Missing(workload.name)
            step = CampaignStep(Case(self.case.setup, workload, repetition), self.position)
            self.run.case(step, self.target, self.state)
            self.state = precondition.after(self.state, workload.options)
            self.ran += 1
            self.rows.update(self.run.stored(self.case.setup.name, workload.name))
        return self.rows.get(key)

    def warnings(self, workload: str) -> list[CheckWarning]:
        """The warnings of a point's stored cases: what an answer resting on it carries."""
        return [w for (name, _), row in self.rows.items() if name == workload for w in row.warnings]

    def value(self, point: Point, repetition: int = 1) -> float | None:
        return _figure(self.row(self.workload(point), repetition), self.metric)

    def search(self) -> PeakRecord:
        climb = peak.climb(self.bounds, self.value, self.margin)
        winner = None if climb.winner is None else self.confirm(climb.winner, climb.tried)
        curve = None
        if climb.winner is not None and self.method.kind == "curve":
            curve = self.curve(climb.winner)
            if self.method.slo:
                curve = self.within(curve)
        return PeakRecord(
            self.method.kind,
            "bw" if self.metric == "bw" else "iops",
            SearchBounds(self.bounds.numjobs, self.bounds.iodepth),
            len(peak.ladder(*self.bounds.numjobs)) * len(peak.ladder(*self.bounds.iodepth)),
            self.margin,
            tuple(climb.steps),
            tuple(self.point(p) for p in climb.tried),
            winner,
            curve,
            self.drift(),
        )

    def point(self, point: Point) -> PeakPoint:
        return PeakPoint(point[0], point[1], self.workload(point).name, self.value(point))

    def confirm(self, winner: Point, tried: tuple[Point, ...]) -> PeakWinner:
        """The winner measured until it has three values: its median and 95% interval, and
        the noise they show against the margin."""
        most = max(peak.CONFIRM, self.run.campaign.plan.repeat)
        values = [v for r in range(1, most + 1) if (v := self.value(winner, r)) is not None]
        summary = stats.summarize(values)
        cov = summary.cov
        noise = max(self.margin, 2 * cov) if cov is not None else self.margin
        near = summary.median * (1 - noise)
        tied = [
            self.workload(p).name
            for p in tried
            if p != winner and (v := self.value(p)) is not None and v >= near
        ]
        return PeakWinner(
            winner[0],
            winner[1],
            self.workload(winner).name,
            tuple(values),
            summary.median,
            summary.low,
            summary.high,
            cov,
            noise,
            tuple(tied),
        )

    def curve(self, winner: Point) -> Curve:
        """The winner at 10% to 100% of its IOPS, then unthrottled: latency against load."""
        peak_rows = [
            row
            for r in range(1, max(peak.CONFIRM, self.run.campaign.plan.repeat) + 1)
            if (row := self.row(self.workload(winner), r)) is not None and row.status == "ok"
        ]
        top = statistics.median(_figure(r, "iops") or 0.0 for r in peak_rows)
        share = _read_share(self.start.options)
        out: list[CurvePoint] = []
        self.loads = [self.workload(winner)]
        for load in peak.LOADS:
            rate, asked = peak.rates(top * load / 100, winner[0], share)
            workload = self.workload(winner, rate, load)
            self.loads.append(workload)
            out.append(_load_point(self.row(workload), load, asked, workload.name))
        out.append(_load_point(peak_rows, None, None, self.workload(winner).name))
        ok = [i for i, p in enumerate(out) if p.ok]
        knee = peak.knee([peak.load_point(out[i]) for i in ok])
        return Curve(
            top,
            tuple(out),
            None if knee is None else ok[knee],
            peak.KNEE_FACTOR,
            peak.DELIVERED_SHARE,
        )

    def within(self, curve: Curve) -> Curve:
        """The most IOPS within the latency target: from the highest load (the peak included)
        whose percentile met it, down, the first that still meets it at the median of three
        measurements; that point of the curve then shows their median."""
        found = objective.slo(self.method.slo)
        assert found is not None  # checked with the plan
        key, limit = found
        met = [
            i
            for i, p in enumerate(curve.points)
            if p.ok
            and p.delivered
            and (v := getattr(p, objective.SLO_KEYS[key])) is not None
            and v <= limit
        ]
        for index in reversed(met):
            at = curve.points[index]
            rows = self.again(at.workload)
            latency = tuple(
                v for r in rows if (v := _percentile([r], key.removeprefix("p"))) is not None
            )
            if latency and statistics.median(latency) <= limit:
                points = list(curve.points)
                points[index] = _load_point(rows, at.load_pct, at.asked_iops, at.workload)
                iops = tuple(v for r in rows if (v := _figure(r, "iops")) is not None)
                slo = SloPoint(
                    self.method.slo, at.load_pct, at.workload, iops, latency, at.load_pct is None
                )
                return replace(curve, points=tuple(points), slo=slo)
        return replace(curve, slo=SloPoint(self.method.slo, None, "", (), ()))

    def again(self, name: str) -> list[CaseRow]:
        """A curve point's cases, measured until it has three (or the plan's repeat)."""
        workload = next(w for w in self.loads if w.name == name)
        most = max(peak.CONFIRM, self.run.campaign.plan.repeat)
        return [r for n in range(1, most + 1) if (r := self.row(workload, n)) and r.status == "ok"]

    def drift(self) -> Drift | None:
        """The start point measured again after the search, against its first measurement."""
        again = [
            v
            for (name, _), row in self.rows.items()
            if name == f"{self.start.name} again" and (v := _figure(row, self.metric)) is not None
        ]
        first = _figure(self.rows.get((self.start.name, 1)), self.metric)
        if not again or not first:
            return None
        return Drift(first, statistics.median(again), statistics.median(again) / first - 1)


def _figure(row: CaseRow | None, metric: str) -> float | None:
    if row is None or row.status != "ok" or not row.metrics:
        return None
    parts = row.metrics.values()
    return sum(m.iops if metric == "iops" else m.bw_bytes for m in parts)


def _percentile(rows: list[CaseRow], key: str) -> float | None:
    """The median over repetitions of the slower direction's percentile."""
    found = []
    for row in rows:
        values = [m.percentiles_ns[key] for m in row.metrics.values() if key in m.percentiles_ns]
        if values:
            found.append(max(values))
    return statistics.median(found) if found else None


def _load_point(
    found: CaseRow | list[CaseRow] | None, load: int | None, asked: float | None, name: str
) -> CurvePoint:
    rows = [r for r in (found if isinstance(found, list) else [found]) if r and r.status == "ok"]
    delivered = [v for r in rows if (v := _figure(r, "iops")) is not None]
    figure = statistics.median(delivered) if delivered else 0.0
    p50, p99, p999 = (_percentile(rows, key) for key in ("50", "99", "99.9"))
    met = peak.LoadPoint(load, asked, figure, p50, p99, p999).delivered
    return CurvePoint(load, asked, name, bool(delivered), figure, p50, p99, p999, met)


def _read_share(options: Mapping[str, FioValue]) -> float | None:
    """The reads' share of a mixed workload (rwmixread, default 50%); None if not mixed."""
    if options.get("rw") not in MIXED:
        return None
    if "rwmixread" in options:
        return float(options["rwmixread"]) / 100
    return 1 - float(options.get("rwmixwrite", 50)) / 100
