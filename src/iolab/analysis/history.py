"""A plan's results over time: the series of each set-up x workload x metric across the runs
of the same plan, what changed between consecutive runs (a difference beyond the run-to-run
noise, and the run facts that differ), and the gate `iolab check` applies to a run.

Method. A point is one run's repetitions of a case (set-up and workload matched by name);
its figure is their mean (the figure `compare` states too), its spread their 95% interval.
The change between two runs is the change of their means, with Welch's 95% interval of the
difference (analysis.stats.compare): `compare`, `history` and `check` give the same size and
interval for the same two runs.

Run-to-run noise. The runs before a point (a window of the latest `window`, default 10,
leaving out runs that were themselves beyond their own history, and runs before the latest
change point; runs with other load on the host are in it like any other: their spread is the
host's real noise) predict the next run's figure: the mean m and standard deviation s of
their logarithms give the one-sided 99.5% prediction bound exp(m ± t(0.995, n - 1) · s ·
√(1 + 1/n)) (analysis.stats.predict_ratio: a rate's noise is a ratio, and the bound of a
loaded host's wide noise stays above 0). With fewer than 4 such runs the noise is unknown,
and nothing is judged on size alone.

Steps. `history` marks a step where a run leaves its history's bound (or comes back inside
it after runs beyond it), and its change from the run before is at least the default rule's
size (5% for IOPS and MB/s, 10% for p99) with Welch's interval not containing 0. A run beyond
the bound between two runs inside it is a lone outlier, marked once as one.

Change points. Over the whole series (each run's figure),
change points are found by E-divisive means with a permutation test (analysis.changepoint):
the runs where a new level starts and holds for at least three runs, at the 5% level. Each
gets the size of the change between the two levels (the mean of the runs' figures on either
side, up to the neighbouring change points) with Welch's 95% interval over those figures, and
the run facts that differ at that run (docs/history.md).

The gate judges a run against its history: a series fails when its change against the
history's mean is worse than the rule allows (IOPS and MB/s: lower is worse; latency: higher
is worse) and it lies beyond the history's prediction bound on the worse side, or when the
change points confirm a new level that much worse since a recent run. A run with other load
on the host (foreign-load) is marked, and judged like any other (analysis.gate_verdicts).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, NamedTuple, Protocol

from iolab.analysis.stats import PredictionBounds, compare, log_bounds, predict_ratio
from iolab.choices import HISTORY_LEAST
from iolab.model import Code, FioValue, metric_for
from iolab.names import one_line
from iolab.store import RunRow
from iolab.store.figures import CaseFigures, PointFigures

Metric = Literal["iops", "bw", "p99"]
METRICS: tuple[Metric, ...] = ("iops", "bw", "p99")
UNITS = {"iops": "IOPS", "bw": "MB/s", "p99": "µs"}
FACTS = ("kernel", "fio_version", "distro", "cpu_model", "memory_bytes", "hostname", "governor")
DEFAULT_RULES: Mapping[Metric, float] = {"iops": 5.0, "bw": 5.0, "p99": 10.0}
P99 = "99"  # the key percentiles are stored under (store: "50", "99", "99.9", ...)
FOREIGN, CPU_BOUND = Code.FOREIGN_LOAD, Code.CPU_BOUND  # the load warnings a point carries
WINDOW = 10  # earlier runs that give a run's history, by default


@dataclass(slots=True, unsafe_hash=True)  # not frozen: a long history makes 100,000, and
class RunPoint:  # a frozen one costs four times as much to make; nothing changes one once made
    run_id: int
    started_at: float
    values: tuple[float, ...]
    load: frozenset[str] = frozenset()  # FOREIGN and CPU_BOUND, where its cases carried them
    # The run's figure: the mean of its repetitions (as stats.summarize makes it, without the
    # median and spread it needs not), made once: a long history reads it 100,000 times.
    mean: float = field(init=False, compare=False)

    def __post_init__(self) -> None:
        self.mean = math.fsum(self.values) / len(self.values)

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def foreign(self) -> bool:
        """Other work shared the host while its cases ran: marked, and judged like any run."""
        return FOREIGN in self.load


@dataclass(frozen=True)
class RunStep:
    """A change between two consecutive points of a series: a step out of (or back into)
    the run-to-run noise, or a lone outlier (`back`: the run after it, back at the level)."""

    run_id: int  # where it happened
    change_pct: float
    half_width_pct: float | None
    significant: bool | None
    facts: tuple[str, ...]  # "kernel 6.1 -> 6.8", what differs between the two runs
    back: int | None = None  # a lone outlier: the run after it, back inside the bound

    @property
    def outlier(self) -> bool:
        return self.back is not None


@dataclass(frozen=True)
class RunChange:
    """A change point of a series: the run where a new level starts."""

    run_id: int  # the first run of the new level
    p_value: float  # the permutation test's
    before: float  # the mean of the runs' figures from the previous change point
    after: float  # the same from this run to the next change point
    change_pct: float | None  # after against before; None when before is 0
    half_width_pct: float | None  # Welch's 95% interval over those figures; None: one run
    facts: tuple[str, ...]  # what differs between the run before and this one


@dataclass(frozen=True)
class RunSeries:
    setup: str
    workload: str
    metric: Metric
    points: tuple[RunPoint, ...]
    steps: tuple[RunStep, ...]
    changes: tuple[RunChange, ...] = ()

    @property
    def unit(self) -> str:
        return UNITS[self.metric]


def figures_of(ok: Sequence[CaseFigures], metric: Metric) -> tuple[float, ...]:
    """The figure of each case measured (status ok, with figures) that has one: IOPS, MB/s,
    or the worst direction's p99 completion latency in µs."""
    if metric == "iops":
        return tuple(c.iops for c in ok if c.iops is not None)
    if metric == "bw":
        return tuple(c.bw_bytes / 1e6 for c in ok if c.bw_bytes is not None)
    return tuple(c.p99_ns / 1000 for c in ok if c.p99_ns is not None)


_NO_LOAD: frozenset[str] = frozenset()


def _load(cases: Sequence[CaseFigures]) -> frozenset[str]:
    if not any(c.codes for c in cases):  # most cases carry no warning at all
        return _NO_LOAD
    return frozenset(code for c in cases for code in c.codes if code in (FOREIGN, CPU_BOUND))


def primary(options: Mapping[str, object]) -> Metric:
    """A workload's primary metric for the gate: MB/s where the report shows MB/s, else IOPS."""
    return "bw" if metric_for(options) == "bw" else "iops"


def series(
    runs: Sequence[tuple[RunRow, Sequence[CaseFigures]]], window: int = WINDOW, marks: bool = True
) -> list[RunSeries]:
    """Every set-up x workload x metric seen in the runs (oldest first), with its steps and
    change points, each run judged against the `window` runs before it (`marks` False: the
    points alone, for the gate, which judges one run)."""
    return _judged(_points(runs), {run.id: run.environment for run, _ in runs}, window, marks)


def series_of_points(
    runs: Sequence[RunRow], found: Sequence[PointFigures], window: int = WINDOW, marks: bool = True
) -> list[RunSeries]:
    """The same series from the runs' points as the store sums them (Store.point_figures):
    `iolab history`'s way, a third of the rows and no case decoded in Python (`marks` False:
    the points alone)."""
    started = {run.id: run.started_at for run in runs}
    points: dict[tuple[str, str, Metric], list[RunPoint]] = {}
    primaries: dict[int, Metric] = {}  # by the options' id: the store shares each text's
    for row in found:
        chosen = primaries.get(id(row.options)) or primary(row.options)
        primaries[id(row.options)] = chosen
        figures = row.iops if chosen == "iops" else tuple([v / 1e6 for v in row.bw_bytes])
        at = started[row.run_id]
        for metric, got in ((chosen, figures), ("p99", tuple([v / 1000 for v in row.p99_ns]))):
            if got:
                key = (row.setup, row.workload, metric)
                found_points = points.get(key)
                if found_points is None:
                    found_points = points[key] = []
                found_points.append(RunPoint(row.run_id, at, got, row.load))
    return _judged(points, {run.id: run.environment for run in runs}, window, marks)


def _judged(
    points: Mapping[tuple[str, str, Metric], Sequence[RunPoint]],
    facts: Mapping[int, Mapping[str, object]],
    window: int,
    marks: bool,
) -> list[RunSeries]:
    """Each series' points with its change points and steps (`marks` False: none)."""
    out = []
    for (setup, workload, metric), found in points.items():
        if not marks:
            out.append(RunSeries(setup, workload, metric, tuple(found), ()))
            continue
        changes = run_changes(found, facts)
        judged = standings(found, changes, window)
        out.append(
            RunSeries(
                setup, workload, metric, tuple(found), steps_of(judged, metric, facts), changes
            )
        )
    return out


def _points(
    runs: Sequence[tuple[RunRow, Sequence[CaseFigures]]],
) -> dict[tuple[str, str, Metric], list[RunPoint]]:
    """Each set-up x workload x metric's points, one per run that measured it (a long history
    has 150,000 cases: each is visited once)."""
    points: dict[tuple[str, str, Metric], list[RunPoint]] = {}
    primaries: dict[int, Metric] = {}  # by the options' id: a history shares each run's
    for run, cases in runs:
        grouped: dict[tuple[str, str], list[CaseFigures]] = {}
        for case in cases:
            key = (case.setup, case.workload)
            if key in grouped:
                grouped[key].append(case)
            else:
                grouped[key] = [case]
        for (setup, workload), group in grouped.items():
            chosen = primaries.get(id(group[0].options)) or primary(group[0].options)
            primaries[id(group[0].options)] = chosen
            load = _load(group)
            ok = [c for c in group if c.status == "ok" and c.iops is not None]
            for metric, got in ((chosen, figures_of(ok, chosen)), ("p99", figures_of(ok, "p99"))):
                if got:
                    point = RunPoint(run.id, run.started_at, got, load)
                    found = points.get((setup, workload, metric))
                    if found is None:
                        points[(setup, workload, metric)] = [point]
                    else:
                        found.append(point)
    return points


class Standing(NamedTuple):
    """A point against what its history predicted: `beyond` -1 below the lower bound, 1
    above the upper one, 0 inside or not judged (`noise` None: too little history); `level`:
    the index of the first point of the level it was judged in. A named tuple: a long
    history makes one per point."""

    point: RunPoint
    noise: PredictionBounds | None  # what its history predicts (predict_ratio low, high)
    history: tuple[int, ...]  # the runs the prediction rests on
    beyond: int
    level: int = 0

    def inside(self, figure: float) -> bool:
        return self.noise is not None and self.noise.low <= figure <= self.noise.high


def standings(
    points: Sequence[RunPoint], changes: Sequence[RunChange], window: int = WINDOW
) -> list[Standing]:
    """Each point judged against the `window` points before it that are its level's: none
    that was beyond its own history in that level, none before the level's start (the latest
    change point with at least HISTORY_LEAST runs of its own before the point: a younger one
    has too few runs to know its noise, and the level before goes on). Runs with other load
    on the host are judged and make history like any other: their spread is the host's noise."""
    ids = {c.run_id for c in changes}
    starts = [i for i, p in enumerate(points) if p.run_id in ids]
    figures = [p.mean for p in points]
    logs = [math.log(f) if f > 0 else math.nan for f in figures]  # each taken once
    positive = all(f > 0 for f in figures)  # then every window's are: predict_ratio's logs
    out: list[Standing] = []
    level, last = 0, -window if window > 0 else 0  # window 0: every point of the level
    ran: list[int] = []  # the run ids and figures of the level's points a later one may
    kept: list[float] = []  # rest on, oldest first, and the figures' logarithms
    kept_logs: list[float] = []
    for i, point in enumerate(points):
        at = _level(starts, i) if starts else 0
        if at != level:  # a new level (levels only move on): its points, walked once
            level, found = at, _window(out, at, i, 0)
            ran, kept = [points[k].run_id for k in found], [figures[k] for k in found]
            kept_logs = [logs[k] for k in found]
        earlier, figure, side = tuple(ran[last:]), figures[i], 0
        if len(earlier) < HISTORY_LEAST:
            out.append(Standing(point, None, earlier, 0, level))
        else:
            noise = log_bounds(kept_logs[last:]) if positive else _bounds(kept[last:])
            side = -1 if figure < noise.low else 1 if figure > noise.high else 0
            out.append(Standing(point, noise, earlier, side, level))
        if side == 0:  # in this level and inside its bound (or unjudged)
            ran.append(point.run_id)
            kept.append(figures[i])
            kept_logs.append(logs[i])
    return out


def _bounds(figures: Sequence[float]) -> PredictionBounds:
    """predict_ratio(figures)'s bounds, of a series with a figure at or below 0 (one
    without has them from the logarithms it takes once)."""
    found = predict_ratio(figures)
    return PredictionBounds(found.low, found.high)


def _level(starts: Sequence[int], i: int) -> int:
    """The index of the first point of point i's level: the latest change point before it
    with at least HISTORY_LEAST runs from it up to point i; 0 where none is."""
    for s in reversed(starts):
        if s < i and i - s >= HISTORY_LEAST:
            return s
    return 0


def _window(judged: Sequence[Standing], level: int, i: int, window: int) -> list[int]:
    """The indices of the latest `window` points (0: all) before point i, from the level's
    start on, that are the level's: not beyond their own history in this level (walked back
    from i, so a long history costs the window, not its length)."""
    found: list[int] = []
    for k in range(i - 1, level - 1, -1):
        if judged[k].beyond == 0 or judged[k].level != level:
            found.append(k)
            if len(found) == window:
                break
    return found[::-1]


def steps_of(
    judged: Sequence[Standing], metric: Metric, facts: Mapping[int, Mapping[str, object]]
) -> tuple[RunStep, ...]:
    """Where a run leaves its history's bound, or comes back inside it, by at least the
    rule's size from the run before (Welch's interval not containing 0); a run beyond it
    between two inside it, once, as a lone outlier."""
    out = []
    for i in range(1, len(judged)):
        before, at = judged[i - 1], judged[i]
        after = judged[i + 1] if i + 1 < len(judged) else None
        out_now = at.beyond != 0 and before.beyond == 0
        back_now = at.beyond == 0 and before.beyond != 0 and not _lone(judged, i - 1)
        if not (out_now or back_now) or (back_now and at.noise is None):
            continue
        diff = compare(list(before.point.values), list(at.point.values))
        change = diff.change_pct
        if change is None or diff.significant is False or abs(change) < DEFAULT_RULES[metric]:
            continue  # the change from the run before is within its noise, or too small
        said = differences(facts.get(before.point.run_id, {}), facts.get(at.point.run_id, {}))
        back = after.point.run_id if after is not None and _lone(judged, i) else None
        out.append(
            RunStep(at.point.run_id, change, diff.half_width_pct, diff.significant, said, back)
        )
    return tuple(out)


def _lone(judged: Sequence[Standing], i: int) -> bool:
    """RunPoint i is beyond its bound, the run before it was not, and the run after it is back
    inside the bound point i was judged by."""
    at = judged[i]
    if at.beyond == 0 or i + 1 >= len(judged) or (i > 0 and judged[i - 1].beyond != 0):
        return False
    after = judged[i + 1].point
    return at.inside(after.mean)


def run_changes(
    points: Sequence[RunPoint], facts: Mapping[int, Mapping[str, object]]
) -> tuple[RunChange, ...]:
    """The series' change points (over each run's figure), each with its size and interval
    between the levels on either side, and the run facts that differ at it."""
    # numpy's, imported here: `iolab check` judges without change points
    from iolab.analysis.changepoint import MAX_POINTS, change_points

    own = points
    figures = [p.mean for p in own]
    found = change_points(figures)
    start = max(0, len(own) - MAX_POINTS)  # longer series: the latest MAX_POINTS runs
    bounds = [start, *(c.index for c in found), len(own)]
    out = []
    for i, point in enumerate(found):
        diff = compare(figures[bounds[i] : point.index], figures[point.index : bounds[i + 2]])
        before, at = own[point.index - 1], own[point.index]
        said = differences(facts.get(before.run_id, {}), facts.get(at.run_id, {}))
        out.append(
            RunChange(
                at.run_id,
                point.p_value,
                point.mean_before,
                point.mean_after,
                diff.change_pct,
                diff.half_width_pct,
                said,
            )
        )
    return tuple(out)


LATEST = 10  # the runs of each series `iolab history` shows by default, beside its marked ones


def shown(one: RunSeries, every: bool = False) -> tuple[RunPoint, ...]:
    """The points a person reads of a series: its latest LATEST runs and every run marked
    (a step, a lone outlier, a change point), oldest first; `every`: all of them."""
    if every or len(one.points) <= LATEST:
        return one.points
    marked = {s.run_id for s in one.steps} | {c.run_id for c in one.changes}
    cut = len(one.points) - LATEST
    return tuple(p for i, p in enumerate(one.points) if i >= cut or p.run_id in marked)


def not_finite(found: Sequence[RunSeries]) -> str | None:
    """Where a series holds a figure that is not a finite number (NaN, infinity), in words;
    None when none does."""
    for one in found:
        where = f"{one_line(one.setup)!r} x {one_line(one.workload)!r}, {one.metric}"
        for point in one.points:
            if not math.isfinite(point.mean):  # finite values have a finite mean
                return f"{where}, run {point.run_id}"
        for step in one.steps:
            if not all(map(math.isfinite, (step.change_pct, step.half_width_pct or 0.0))):
                return f"{where}, the change at run {step.run_id}"
        for change in one.changes:
            said = (change.before, change.after, change.change_pct or 0.0, change.p_value)
            if not all(map(math.isfinite, (*said, change.half_width_pct or 0.0))):
                return f"{where}, the change point at run {change.run_id}"
    return None


def imported(plan_name: str, runs: Sequence[RunRow]) -> list[int]:
    """The runs of a plan's history that came from elsewhere: another plan's whose cases are
    this one's (history.joins), or an import (an iolab export keeps its plan's name)."""
    return [r.id for r in runs if r.plan_name != plan_name or r.origin.kind == "import"]


IDENTITY = ("rw", "bs", "iodepth", "numjobs", "rwmixread", "ioengine", "direct")


class Named(Protocol):
    """A case, or a run's cases of one set-up x workload: what `joins` compares."""

    @property
    def setup(self) -> str: ...
    @property
    def workload(self) -> str: ...
    @property
    def options(self) -> Mapping[str, FioValue]: ...


def joins(plan_cases: Sequence[Named], imported: Sequence[Named]) -> bool:
    """Whether an imported run's cases are cases of the plan: each one's set-up and workload
    name among the plan's, and the options that make a workload what it is (rw, bs, iodepth,
    numjobs, rwmixread, ioengine, direct) the same where both record them."""
    known = {(c.setup, c.workload): c.options for c in plan_cases}
    if not imported:
        return False
    for case in imported:
        options = known.get((case.setup, case.workload))
        if options is None or any(
            key in options and key in case.options and not _same(options[key], case.options[key])
            for key in IDENTITY
        ):
            return False
    return True


def _same(a: object, b: object) -> bool:
    """fio's values as text: 4k and "4k", 1 and "1" alike; iolab's "auto" (the engine it
    picks) like any."""
    texts = {str(v).strip().lower() for v in (a, b)}
    return len(texts) == 1 or "auto" in texts


def differences(before: Mapping[str, object], after: Mapping[str, object]) -> tuple[str, ...]:
    """The run facts that differ: "kernel 6.1.0 -> 6.8.0"; a fact one run did not record
    (an imported fio JSON says nothing of its machine) is no known change."""
    return tuple(
        f"{key} {before.get(key)} -> {after.get(key)}"
        for key in FACTS
        if before.get(key) != after.get(key)
        and before.get(key) not in (None, "")
        and after.get(key) not in (None, "")
    )
