"""Finding a target's limits: the peak search over numjobs x iodepth, and the knee of the
latency-versus-load curve. Pure functions of measured values; the runner measures.

Peak search. A workload with `method = "peak"` gives numjobs and iodepth as bounds
(`numjobs = [1, 64]`); the search walks their ladders (the low bound doubled up to the high
one, which is a rung too) instead of sweeping every pair. What a point delivers depends
mostly on the I/Os it keeps in flight (numjobs x iodepth), then on how they are split (more
jobs use more cores; deeper queues cost less CPU per I/O), so the search walks those two:

1. the I/Os in flight, split as evenly as the ladders allow, from x4 above the low corner up
   x4 a step while the primary figure (IOPS, or bytes/s for blocks over 64 KiB) beats the best
   so far by more than the margin; a step that does not gets one more step beyond it (one
   noisy run can hide a gain), and the climb stops at the second miss in a row or at the top
   (if nothing beat the first point, the points below it, down to the low corner);
2. the same I/Os in flight over twice the jobs at half the iodepth, or half the jobs at twice
   the iodepth, a step at a time while that beats the best (the cores, and the device's
   queues, set which split does best); where the split cannot change (one axis fixed, or the
   best in a corner of the grid), the rungs the x4 steps jumped over beside the best instead;
3. if fewer jobs won, deeper queues there, x2 a step while that beats the best (one job's
   queue saturates later than many jobs' together).

"Beats" means more than `margin` (default 3%) above the best so far. The winner is the
highest figure measured; the runner then measures it until it has three values, for a 95%
interval, and compares the noise it saw (2 x CoV) with the margin. Each decision reads only
the first measurement of a point, so replaying the search over stored values takes the same
path (a resumed search runs only what is missing).

Knee. Points at fixed rates (10% to 100% of the peak's IOPS, then the peak unthrottled) give
p99 completion latency against delivered IOPS. The knee is the last point before p99 first
exceeds twice its value at the lowest load: the most load the target carries while its tail
latency stays within 2x of unloaded. Each point is one short run, so p99 is noisy: the noise
is read from the points themselves, as the spread of each point about the line through its
neighbours (the median of |ln p99[i-1] - 2 ln p99[i] + ln p99[i+1]| / sqrt(6), the standard
deviation of one point's log p99 if the points scatter independently about a smooth curve).
A rise counts only when p99 exceeds 2x the lowest load's by more than twice that noise, and
every later point stays above 2x: one noisy point is no knee. None when there is no such
rise ("no knee within the noise").

What an answer rests on. The search's answer, the knee and the latency target's "at most N
IOPS" each rest on a few points, and carry those points' warnings, marked ⚑ with their codes
as a table's cell is: the peak on the winner's runs; the knee on the lowest load (its 2x is of
that point's p99), the knee's load and the first load past it; no knee on every point (any one
could have been the rise); the latency target on the last load within it and the first beyond
(the lowest load, when none met it). Notes (a busy device) are no ⚑, nor is a rate not
delivered: the curve flags it itself, and the knee and the target read past it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from iolab import units
from iolab.analysis import objective, stats
from iolab.analysis.findings import WARNED
from iolab.model import CheckWarning, Code, Curve, CurvePoint, Drift, PeakRecord, SloPoint

Point = tuple[int, int]  # (numjobs, iodepth)
Measure = Callable[[Point], float | None]  # a point's first figure; None: failed or refused

METHODS = ("peak", "curve")
DEFAULT_MARGIN = 0.03
CONFIRM = 3  # measurements of the winner, for its 95% interval
Rungs = tuple[int, int]  # a point as rung indices: (numjobs rung, iodepth rung)
START = 2  # the first point: two rungs of I/Os in flight above the low corner (x4), split
STEP = 2  # rungs of I/Os in flight a diagonal step climbs (x4)
PATIENCE = 1  # diagonal steps that may miss before the climb stops (a noisy run can hide one)
LOADS = tuple(range(10, 101, 10))  # percent of the peak's IOPS
DELIVERED_SHARE = 0.95  # a rate delivered under 95% of the asked one is flagged
KNEE_FACTOR = 2.0
# Workload keys iolab keeps for itself and never passes to fio: the method and its margin
# (given in plans), and those iolab writes (the bounds, the closing point, a curve's load).
SET_BY_IOLAB = ("peak_numjobs", "peak_iodepth", "peak_again", "curve_load")
IOLAB_ONLY = ("method", "peak_margin", "slo", *SET_BY_IOLAB)


@dataclass(frozen=True)
class Bounds:
    numjobs: tuple[int, int]
    iodepth: tuple[int, int]


def ladder(low: int, high: int) -> tuple[int, ...]:
    """The rungs of one axis: low, doubled while under high, then high."""
    rungs = [low]
    while rungs[-1] * 2 < high:
        rungs.append(rungs[-1] * 2)
    if high > low:
        rungs.append(high)
    return tuple(rungs)


def span(text: str) -> tuple[int, int]:
    """ "1-64" -> (1, 64); "8" -> (8, 8)."""
    low, _, high = str(text).partition("-")
    return units.whole(low), units.whole(high or low)


def beats(new: float | None, old: float | None, margin: float) -> bool:
    """`new` is better than `old` by more than the margin (anything beats a failure)."""
    if new is None:
        return False
    return old is None or new > old * (1 + margin)


@dataclass(frozen=True)
class Climb:
    """What the search did: the points in the order tried, the winner, and why it stopped."""

    tried: tuple[Point, ...]
    winner: Point | None
    steps: tuple[str, ...]


class _Walk:
    """The climb over the rung-index grid (jobs rung, iodepth rung): each point measured once."""

    def __init__(self, bounds: Bounds, measure: Measure, margin: float) -> None:
        self.jobs, self.depths = ladder(*bounds.numjobs), ladder(*bounds.iodepth)
        self.measure, self.margin = measure, margin
        self.values: dict[Point, float | None] = {}
        self.steps: list[str] = []
        self.best = (0, 0)

    def at(self, rungs: Rungs) -> Point:
        return self.jobs[rungs[0]], self.depths[rungs[1]]

    def on_grid(self, rungs: Rungs) -> bool:
        return 0 <= rungs[0] < len(self.jobs) and 0 <= rungs[1] < len(self.depths)

    def value(self, rungs: Rungs) -> float | None:
        point = self.at(rungs)
        if point not in self.values:
            self.values[point] = self.measure(point)
        return self.values[point]

    def take(self, rungs: Rungs) -> bool:
        """Measure a point not yet measured; it becomes the best if it beats it."""
        if not self.on_grid(rungs) or self.at(rungs) in self.values:
            return False
        if beats(self.value(rungs), self.value(self.best), self.margin):
            self.best = rungs
            return True
        return False

    @property
    def top(self) -> int:
        """The most rungs of I/Os in flight: both axes at their high bounds."""
        return len(self.jobs) + len(self.depths) - 2

    @property
    def start(self) -> int:
        """The rungs of I/Os in flight of the first point."""
        return min(START, self.top)

    def split(self, total: int) -> Rungs:
        """The most even split of `total` rungs of I/Os in flight over numjobs and iodepth."""
        job = min(total // 2, len(self.jobs) - 1)
        depth = min(total - job, len(self.depths) - 1)
        return total - depth, depth

    def diagonal(self) -> None:
        """Step 1: I/Os in flight up x4 a step, evenly split, until two steps miss in a row."""
        total = self.start
        self.best = first = self.split(total)
        self.value(first)
        misses = 0
        while total < self.top and misses <= PATIENCE:
            total = min(total + STEP, self.top)
            misses = 0 if self.take(self.split(total)) else misses + 1
        if self.best == first:  # nothing above the first point: look below it
            below = self.start - 1
            while below >= 0 and self.take(self.split(below)):
                below -= 1
        self.steps.append(f"I/Os in flight climbed to {self.said()}")

    def slide(self) -> None:
        """Step 2: the same I/Os in flight over more jobs (shallower queues), or fewer jobs
        (deeper queues), x2 a step while that beats the best; step 3: if fewer jobs won,
        deeper queues there, x2 a step while that beats it."""
        before = self.best
        if not any(self.on_grid((before[0] + way, before[1] - way)) for way in (1, -1)):
            self.between()
            return
        for way in (1, -1):
            while self.take((self.best[0] + way, self.best[1] - way)):
                pass
        if self.best != before:
            self.steps.append(f"the same I/Os in flight did better at {self.said()}")
        if self.best[0] < before[0]:
            while self.take((self.best[0], self.best[1] + 1)):
                pass
            self.steps.append(f"deeper queues at that numjobs: {self.said()}")

    def between(self) -> None:
        """Where the split cannot change (one axis fixed, or the best in a corner of the
        grid): the rungs the x4 steps jumped over beside the best, on either axis."""
        best = self.best
        for near in (
            (best[0], best[1] - 1),
            (best[0], best[1] + 1),
            (best[0] - 1, best[1]),
            (best[0] + 1, best[1]),
        ):
            self.take(near)
        if self.best != best:
            self.steps.append(f"a rung the steps jumped over did better: {self.said()}")

    def said(self) -> str:
        jobs, depth = self.at(self.best)
        return f"numjobs {jobs} x iodepth {depth}"


def climb(bounds: Bounds, measure: Measure, margin: float = DEFAULT_MARGIN) -> Climb:
    """The peak search (see the module's text); `measure` runs or recalls one point."""
    walk = _Walk(bounds, measure, margin)
    walk.diagonal()
    walk.slide()
    measured = {p: v for p, v in walk.values.items() if v is not None}
    winner = max(measured, key=lambda p: measured[p]) if measured else None
    return Climb(tuple(walk.values), winner, tuple(walk.steps))


def first_point(bounds: Bounds) -> Point:
    """The point a search measures first: its start case's numjobs and iodepth."""
    walk = _Walk(bounds, lambda point: None, DEFAULT_MARGIN)
    return walk.at(walk.split(walk.start))


@dataclass(frozen=True)
class LoadPoint:
    """One point of the curve: the load asked (percent of the peak; None: unthrottled)."""

    load_pct: int | None
    asked_iops: float | None
    delivered_iops: float
    p50_ns: float | None
    p99_ns: float | None
    p999_ns: float | None

    @property
    def delivered(self) -> bool:
        asked = self.asked_iops
        return asked is None or self.delivered_iops >= asked * DELIVERED_SHARE


NOISE_SIGMAS = 2.0  # a rise must clear the factor by this many standard deviations of noise


@dataclass(frozen=True)
class Knee:
    """The knee found on a curve, and the noise it was judged against."""

    index: int | None  # the last point before the rise, in `points`; None: no knee
    noise: float  # one point's p99 scatter, as a share (0.1: about ±10%); 0.0 when unknown
    threshold_ns: float | None  # the p99 a point had to exceed to count as a rise


def p99_noise(values: Sequence[float]) -> float:
    """One point's scatter of p99 about its neighbours, as a share: the median of the second
    differences of log p99 over sqrt(6) (see the module's Knee); 0.0 under three points."""
    logs = [math.log(v) for v in values if v > 0]
    seconds = [abs(a - 2 * b + c) for a, b, c in zip(logs, logs[1:], logs[2:], strict=False)]
    if not seconds:
        return 0.0
    return math.expm1(statistics.median(seconds) / math.sqrt(6))


def find_knee(points: Sequence[LoadPoint], factor: float = KNEE_FACTOR) -> Knee:
    """The knee of `points` (ordered by load): the last point before p99 first exceeds
    `factor` times its lowest-load value by more than the noise, for good (see the module)."""
    with_p99 = [(i, p.p99_ns) for i, p in enumerate(points) if p.p99_ns is not None]
    if len(with_p99) < 2:
        return Knee(None, 0.0, None)
    values = [v for _, v in with_p99]
    noise = p99_noise(values)
    low = values[0]
    threshold = factor * low * (1 + NOISE_SIGMAS * noise)
    for at in range(1, len(values)):
        if values[at] > threshold and all(v > factor * low for v in values[at:]):
            return Knee(with_p99[at - 1][0], noise, threshold)
    return Knee(None, noise, threshold)


def knee(points: Sequence[LoadPoint], factor: float = KNEE_FACTOR) -> int | None:
    """The index of the knee in `points`; None when there is none within the noise."""
    return find_knee(points, factor).index


def curve_knee(curve: Curve) -> Knee:
    """The knee of a stored curve (its points that ran), as an index into all its points."""
    ok = [i for i, p in enumerate(curve.points) if p.ok]
    found = find_knee([load_point(curve.points[i]) for i in ok], curve.knee_factor)
    return Knee(None if found.index is None else ok[found.index], found.noise, found.threshold_ns)


Warnings = Callable[[str], Sequence[CheckWarning]]  # the warnings of a workload's stored cases
CURVE_SAYS = frozenset({Code.RATE_NOT_DELIVERED})  # the curve flags it itself: "not delivered"


def no_warnings(workload: str) -> Sequence[CheckWarning]:
    """Where no stored case is at hand: nothing to mark."""
    return ()


@dataclass(frozen=True)
class Rests:
    """What an answer rests on: its points (by workload), the warnings of those that carry
    any, one per code, and those points as the curve's table labels them ("30%", "peak")."""

    workloads: tuple[str, ...] = ()
    warned: tuple[CheckWarning, ...] = ()
    where: tuple[str, ...] = ()

    @property
    def mark(self) -> str:
        """ " ⚑ cpu-bound (loads 30%, 40%)", as a cell is marked (every point of several
        warned: "(all 11 loads)"); "" for clean points."""
        if not self.warned:
            return ""
        where = f" (load{'s' if len(self.where) > 1 else ''} {', '.join(self.where)})"
        if len(self.where) == len(self.workloads) > 2:
            where = f" (all {len(self.where)} loads)"
        return f"{WARNED} {', '.join(w.code for w in self.warned)}{where if self.where else ''}"


def resting(points: Sequence[tuple[str, str]], warnings: Warnings) -> Rests:
    """An answer resting on these (workload, label) points: the warnings that make a figure
    ⚑ (no notes, nor what the curve says itself), and the labels of the points that carry
    them (an empty label is not named)."""
    found: dict[str, CheckWarning] = {}
    where = []
    named = dict.fromkeys(points)
    for name, label in named:
        own = [w for w in warnings(name) if not w.note and w.code not in CURVE_SAYS]
        where += [label] if own and label else []
        found.update((w.code, w) for w in own if w.code not in found)
    return Rests(tuple(name for name, _ in named), tuple(found.values()), tuple(where))


def _on(points: Sequence[CurvePoint], warnings: Warnings) -> Rests:
    return resting([(p.workload, p.label) for p in points], warnings)


def winner_rests(found: PeakRecord, warnings: Warnings) -> Rests:
    """The peak's answer rests on the winner's runs."""
    winner = found.winner
    return Rests() if winner is None else resting([(winner.workload, "")], warnings)


def knee_rests(curve: Curve, warnings: Warnings) -> Rests:
    """The knee rests on the lowest load, the knee's and the first past it; no knee, on
    every point (see the module)."""
    ran = [i for i, p in enumerate(curve.points) if p.ok and p.p99_ns is not None]
    at = curve_knee(curve).index
    chosen = ran if at is None or not ran else [ran[0], at, *[i for i in ran if i > at][:1]]
    return _on([curve.points[i] for i in chosen], warnings)


def slo_rests(curve: Curve, warnings: Warnings) -> Rests:
    """The latency target's answer rests on the last load within it and the first beyond it
    that ran; with no load within it, on the lowest load that ran."""
    found, ran = curve.slo, [p for p in curve.points if p.ok]
    if found is None or not ran:
        return Rests()
    within = [p for p in ran if p.workload == found.workload] if found.iops else []
    if not within:
        return _on(ran[:1], warnings)
    at = ran.index(within[0])
    return _on(ran[at : at + 2], warnings)


def load_point(point: CurvePoint) -> LoadPoint:
    return LoadPoint(
        point.load_pct,
        point.asked_iops,
        point.delivered_iops,
        point.p50_ns,
        point.p99_ns,
        point.p999_ns,
    )


def rates(total: float, numjobs: int, read_share: float | None) -> tuple[str, float]:
    """fio's rate_iops for a total rate spread over the jobs (fio's rate is per job), as
    "reads,writes" for a mixed workload; with the total it really asks for (at least 1 IOPS
    per job and direction: 0 would mean no limit)."""
    if read_share is None:
        per_job = max(1, round(total / numjobs))
        return str(per_job), float(per_job * numjobs)
    reads = max(1, round(total * read_share / numjobs))
    writes = max(1, round(total * (1 - read_share) / numjobs))
    return f"{reads},{writes}", float((reads + writes) * numjobs)


def point_name(base: str, point: Point) -> str:
    """A search point's workload name: the workload's, with its numjobs and iodepth."""
    return f"{base} numjobs={point[0]} iodepth={point[1]}"


def load_name(base: str, point: Point, load_pct: int) -> str:
    """A curve point's workload name: the peak's, with the load asked."""
    return f"{point_name(base, point)} load={load_pct}%"


def share(value: object) -> float | None:
    """A margin given as "3%" or 0.03; None unless strictly between 0 and 1."""
    text = str(value).strip()
    try:
        found = units.number(text.removesuffix("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        return None
    return found if 0 < found < 1 else None


def said(setup: str, base: str, found: PeakRecord, warnings: Warnings = no_warnings) -> list[str]:
    """What a search found, in a line or three; each answer marked ⚑ with the warnings of
    the points it rests on (`warnings`: of a workload's stored cases)."""
    unit = "IOPS" if found.metric == "iops" else "MB/s"
    scale = 1.0 if unit == "IOPS" else 1e6
    winner = found.winner
    head = f"{setup} · {base}: {found.method} search"
    if winner is None:
        return [f"{head}: no point ran to the end ({len(found.points)} tried)"]
    low, high = winner.low, winner.high
    interval = f" ± {(high - low) / 2 / scale:,.0f}" if low is not None and high is not None else ""
    lines = [
        f"{head}: peak {winner.median / scale:,.0f}{interval} {unit} (95%, "
        f"{len(winner.values)} runs) at numjobs={winner.numjobs} "
        f"iodepth={winner.iodepth}{winner_rests(found, warnings).mark}; {len(found.points)} of "
        f"{found.grid} points tried"
    ]
    if winner.noise > found.margin:
        lines.append(
            f"{head}: the noise (2 x CoV = {winner.noise:.1%}) is wider than the "
            f"{found.margin:.0%} margin the search stepped by; tied with the winner: "
            f"{', '.join(winner.tied) or 'none'}; a wider peak_margin suits this target"
        )
    if found.curve is not None:
        lines.append(f"{head}: {_curve_said(found.curve, warnings)}")
    if found.curve is not None and found.curve.slo is not None:
        mark = slo_rests(found.curve, warnings).mark
        lines.append(f"{head}: {slo_said(found.curve.slo, mark=mark)}")
    return lines


def slo_said(found: SloPoint, unit: str = "µs", per: float = 1e3, mark: str = "") -> str:
    """The most IOPS within the target, with its interval and the percentile it kept (in
    `unit`, `per` ns each); or that no load met it; `mark`: its ⚑ (slo_rests)."""
    key = found.target.split("<=")[0]
    if not found.iops:
        return (
            f"slo {found.target}: no load met it at the median of {CONFIRM} runs, not even "
            f"10% of the peak{mark}."
        )
    iops, latency = stats.summarize(found.iops), stats.summarize(found.latency_ns)
    where = "the peak itself" if found.peak else f"{found.load_pct}% of the peak"
    interval = ""
    if iops.low is not None and iops.high is not None:
        interval = f" (95%: {iops.low:,.0f} to {iops.high:,.0f}, {iops.n} runs)"
    return (
        f"slo {found.target}: at most {iops.median:,.0f} IOPS{interval} at {where}, "
        f"{key} {latency.median / per:,.3g} {unit}{mark}."
    )


def _curve_said(curve: Curve, warnings: Warnings) -> str:
    missed = [p for p in curve.points if p.ok and not p.delivered]
    found_knee = curve_knee(curve)
    noise = f"p99 noise ±{found_knee.noise:.0%} a point"
    mark = knee_rests(curve, warnings).mark
    if found_knee.index is None:
        where = (
            "no knee within the noise: p99 stays within 2x its low-load value up to the "
            f"peak ({noise}){mark}"
        )
    else:
        at = curve.points[found_knee.index]
        where = (
            f"knee at {at.delivered_iops:,.0f} IOPS"
            + (f" ({at.load_pct}% of the peak)" if at.load_pct else " (the peak)")
            + f"{mark}, {noise}"
        )
    plural = "s" if len(missed) > 1 else ""
    delivered = f"{len(missed)} rate{plural} not delivered" if missed else "every rate delivered"
    return f"curve of {len(curve.points)} points; {where}; {delivered}"


def drift_line(setup: str, base: str, drift: Drift, margin: float) -> str:
    verdict = (
        "the target drifted during the search: precondition it, or run longer"
        if abs(drift.change) > margin
        else "no drift beyond the margin"
    )
    return (
        f"{setup} · {base}: the start point again after the search: {drift.change:+.1%} "
        f"against its first run; {verdict}"
    )


@dataclass(frozen=True)
class Verdict:
    """A set-up's search of a workload, judged once for the report: what it found (`said`,
    and the start point's drift), and on its curve the knee, the knee's ⚑, the warnings the
    knee and the latency target's answer rest on (one per code), the latency unit the curve
    reads best in, the target's answer in that unit and the target's limit in ns."""

    setup: str
    base: str
    found: PeakRecord
    said: tuple[str, ...]
    drift: str | None = None
    knee: Knee | None = None  # None without a curve
    knee_mark: str = ""
    rests: tuple[CheckWarning, ...] = ()
    unit: units.LatencyUnit = units.MICROSECONDS
    slo: str | None = None  # the latency target's answer; None without a target
    limit_ns: float | None = None  # the target's limit; None without a target (or unread)


def verdict(setup: str, base: str, found: PeakRecord, warnings: Warnings) -> Verdict:
    """What a search says, each answer ⚑ with the warnings of the points it rests on
    (`warnings`: of a workload's stored cases)."""
    lines = tuple(said(setup, base, found, warnings))
    drift = None if found.drift is None else drift_line(setup, base, found.drift, found.margin)
    curve = found.curve
    if curve is None:
        return Verdict(setup, base, found, lines, drift)
    knee, target = knee_rests(curve, warnings), slo_rests(curve, warnings)
    both = {w.code: w for w in (*knee.warned, *target.warned)}
    unit = units.latency_unit([v for p in curve.points for v in latencies(p)])
    slo = None if curve.slo is None else slo_said(curve.slo, *unit, mark=target.mark)
    aimed = None if curve.slo is None else objective.slo(curve.slo.target)
    limit = None if aimed is None else aimed[1]
    return Verdict(
        setup,
        base,
        found,
        lines,
        drift,
        curve_knee(curve),
        knee.mark,
        tuple(both.values()),
        unit,
        slo,
        limit,
    )


def latencies(point: CurvePoint) -> list[float]:
    """A curve point's p50, p99 and p99.9 completion latencies, those it has (ns)."""
    return [v for v in (point.p50_ns, point.p99_ns, point.p999_ns) if v is not None]
