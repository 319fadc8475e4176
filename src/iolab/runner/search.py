"""Cases a search adds: `method = "peak"` (numjobs x iodepth, for the highest figure) and
`method = "curve"` (then latency at 10% to 100% of the peak's IOPS). A mixin of the run, as
runner.repeats is: it runs the points it chooses through the run's own `case`, recalls the
points already stored (so a resumed search runs only what is missing, and takes the same
path), records the search with the set-up and says what it found. The method itself is in
analysis.peak; how a method workload is planned, in plan.methods."""

from __future__ import annotations

import contextlib
import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from iolab.analysis import peak, stats
from iolab.analysis.peak import Point
from iolab.model import Case, Workload
from iolab.runner import precondition
from iolab.runner.campaign import Campaign, Step, host_problem
from iolab.runner.listener import Listener
from iolab.store import CaseRow, Store
from iolab.targets.facts import JSONDict
from iolab.targets.path import Prepared

MIXED = ("rw", "readwrite", "randrw")


class _Missing(Exception):
    """A point a replay needs is not stored (its search has not got that far)."""


class Search:
    """What a run needs to search a method workload's points."""

    campaign: Campaign
    store: Store
    run_id: int
    listener: Listener
    environments: dict[str, JSONDict]

    def case(self, step: Step, target: Prepared, state: str = "") -> None:
        raise NotImplementedError

    def search_more(
        self, step: Step, target: Prepared, state: str, record: Callable[[JSONDict], None]
    ) -> str:
        """After a method workload's start (or its closing "again" case, which a resumed run
        reaches first): the search to its end, the curve, the record, and what was found."""
        plan, case = self.campaign.plan, step.case
        if "method" not in case.workload.options or case.repetition != plan.repeat:
            return state
        closing = "peak_again" in case.workload.options
        name = case.workload.name.removesuffix(" again") if closing else case.workload.name
        start = next(w for w in plan.workloads if w.name == name and "peak_again" not in w.options)
        points = _Points(self, case, start, step.position, target, state)
        found = points.search()
        records = dict(self.environments.get(case.setup.name, {}).get("peak_search", {}))
        records[points.base] = found
        for other in plan.workloads:  # a resumed run records afresh: replay the others
            if other is start or "method" not in other.options or "peak_again" in other.options:
                continue
            with_stored = _Points(self, Case(case.setup, other, 1), other, 0, target, "", False)
            with contextlib.suppress(_Missing):
                records[with_stored.base] = with_stored.search()
        record({"peak_search": records})
        if points.ran or not closing:
            for line in peak.said(case.setup.name, points.base, found):
                self.listener.note(line)
        if closing and (drift := found.get("drift")):
            self.listener.note(
                peak.drift_line(case.setup.name, points.base, drift, found["margin"])
            )
        return points.state

    # what _Points needs of the run
    def run_point(self, step: Step, target: Prepared, state: str) -> None:
        self.case(step, target, state)

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

    def __post_init__(self) -> None:
        options = self.start.options
        self.first = (int(options["numjobs"]), int(options["iodepth"]))
        self.base = self.start.name.removesuffix(peak.point_name("", self.first))
        self.bounds = peak.Bounds(
            peak.span(str(options.get("peak_numjobs", self.first[0]))),
            peak.span(str(options.get("peak_iodepth", self.first[1]))),
        )
        self.margin = peak.share(options.get("peak_margin", "")) or peak.DEFAULT_MARGIN
        self.metric = stats.metric_for(options, self.run.campaign.plan.metric)
        self.rows = self.run.stored(self.case.setup.name)

    def workload(self, point: Point, extra: Mapping[str, Any] | None = None) -> Workload:
        if point == self.first and not extra:
            return self.start
        options = {**self.start.options, "numjobs": point[0], "iodepth": point[1], **(extra or {})}
        name = peak.point_name(self.base, point)
        if extra and "curve_load" in extra:
            name = peak.load_name(self.base, point, int(extra["curve_load"]))
        return replace(self.start, name=name, options=options)

    def row(self, workload: Workload, repetition: int = 1) -> CaseRow | None:
        """The point's stored case, running it first if need be (None: refused by the host)."""
        key = (workload.name, repetition)
        if key not in self.rows:
            campaign = self.run.campaign
            if host_problem(workload.options, campaign.fio, campaign.executor.limits()):
                return None
            if not self.live:
                raise _Missing(workload.name)
            step = Step(Case(self.case.setup, workload, repetition), self.position)
            self.run.run_point(step, self.target, self.state)
            self.state = precondition.after(self.state, workload.options)
            self.ran += 1
            self.rows.update(self.run.stored(self.case.setup.name, workload.name))
        return self.rows.get(key)

    def value(self, point: Point, repetition: int = 1) -> float | None:
        return _figure(self.row(self.workload(point), repetition), self.metric)

    def search(self) -> JSONDict:
        climb = peak.climb(self.bounds, self.value, self.margin)
        found: JSONDict = {
            "method": self.start.options["method"],
            "metric": self.metric,
            "bounds": {"numjobs": list(self.bounds.numjobs), "iodepth": list(self.bounds.iodepth)},
            "grid": len(peak.ladder(*self.bounds.numjobs)) * len(peak.ladder(*self.bounds.iodepth)),
            "margin": self.margin,
            "steps": list(climb.steps),
            "points": [self.point(p) for p in climb.tried],
            "winner": None,
        }
        if climb.winner is not None:
            found["winner"] = self.confirm(climb.winner, climb.tried)
            if self.start.options["method"] == "curve":
                found["curve"] = self.curve(climb.winner)
        drift = self.drift()
        if drift:
            found["drift"] = drift
        return found

    def point(self, point: Point) -> JSONDict:
        return {"numjobs": point[0], "iodepth": point[1], "workload": self.workload(point).name,
                "value": self.value(point)}  # fmt: skip

    def confirm(self, winner: Point, tried: tuple[Point, ...]) -> JSONDict:
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
        return {
            "numjobs": winner[0], "iodepth": winner[1], "workload": self.workload(winner).name,
            "values": values, "median": summary.median, "low": summary.low,
            "high": summary.high, "cov": cov, "noise": noise, "tied": tied,
        }  # fmt: skip

    def curve(self, winner: Point) -> JSONDict:
        """The winner at 10% to 100% of its IOPS, then unthrottled: latency against load."""
        peak_rows = [
            row for r in range(1, max(peak.CONFIRM, self.run.campaign.plan.repeat) + 1)
            if (row := self.row(self.workload(winner), r)) is not None and row.status == "ok"
        ]  # fmt: skip
        top = statistics.median(_figure(r, "iops") or 0.0 for r in peak_rows)
        options = self.start.options
        share = _read_share(options)
        out: list[JSONDict] = []
        for load in peak.LOADS:
            rate, asked = peak.rates(top * load / 100, winner[0], share)
            workload = self.workload(winner, {"rate_iops": rate, "curve_load": load})
            row = self.row(workload)
            out.append(_load_point(row, load, asked, workload.name))
        out.append(_load_point(peak_rows, None, None, self.workload(winner).name))
        ok = [i for i, p in enumerate(out) if p["ok"]]
        knee = peak.knee([peak.LoadPoint(**{k: out[i][k] for k in _LOAD_FIELDS}) for i in ok])
        return {
            "peak_iops": top,
            "points": out,
            "knee": None if knee is None else ok[knee],
            "knee_factor": peak.KNEE_FACTOR,
            "delivered_share": peak.DELIVERED_SHARE,
        }

    def drift(self) -> JSONDict | None:
        """The start point measured again after the search, against its first measurement."""
        again = [
            v for (name, _), row in self.rows.items()
            if name == f"{self.start.name} again" and (v := _figure(row, self.metric)) is not None
        ]  # fmt: skip
        first = _figure(self.rows.get((self.start.name, 1)), self.metric)
        if not again or not first:
            return None
        return {"start": first, "again": statistics.median(again),
                "change": statistics.median(again) / first - 1}  # fmt: skip


_LOAD_FIELDS = ("load_pct", "asked_iops", "delivered_iops", "p50_ns", "p99_ns", "p999_ns")


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
) -> JSONDict:
    rows = [r for r in (found if isinstance(found, list) else [found]) if r and r.status == "ok"]
    delivered = [v for r in rows if (v := _figure(r, "iops")) is not None]
    point: JSONDict = {
        "load_pct": load, "asked_iops": asked, "workload": name, "ok": bool(delivered),
        "delivered_iops": statistics.median(delivered) if delivered else 0.0,
        "p50_ns": _percentile(rows, "50"), "p99_ns": _percentile(rows, "99"),
        "p999_ns": _percentile(rows, "99.9"),
    }  # fmt: skip
    point["delivered"] = peak.LoadPoint(**{k: point[k] for k in _LOAD_FIELDS}).delivered
    return point


def _read_share(options: Mapping[str, Any]) -> float | None:
    """The reads' share of a mixed workload (rwmixread, default 50%); None if not mixed."""
    if options.get("rw") not in MIXED:
        return None
    if "rwmixread" in options:
        return float(options["rwmixread"]) / 100
    return 1 - float(options.get("rwmixwrite", 50)) / 100
