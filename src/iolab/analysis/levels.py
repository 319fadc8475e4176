"""A figure that mixes two speeds: one lasting change of level inside a case.

A case's figure is fio's mean over its whole window. When the target changed speed part way
through (a consumer SSD whose SLC write cache filled, a drive that throttled when hot, other
I/O on the host that started or stopped), that mean is neither speed, and the faster part
is not a warm-up. iolab looks for one such change in the case's per-interval bandwidth
(fio's bw log, `log_avg_msec`, every direction added), and keeps it only when all of these
hold:

1. the cut: the one place that best splits the series into a before and an after, each
   near its own mean (the largest n₁·n₂·(m₁ - m₂)², the least squared error around the two
   means: the maximum of a CUSUM of the series);
2. lasting: both sides last at least `MIN_SECONDS` (3 s: 3 of fio's 1 s intervals; a
   series shorter than twice that has no change);
3. material: the lower level is at most 70% of the higher (`MIN_CHANGE`: a drop of 30% or
   more, or a rise of 43% or more), and the change moves the case's mean at least
   `MIN_MOVED` (5%) away from the level of the longer side (a figure within 5% of one
   level is that level's);
4. held: at least `HELD` (80%) of each side's intervals lie nearer its own level than the
   other's (two slow seconds and a normal one are not a level);
5. beyond the noise: Student's t of the two means (pooled variance), on an effective number
   of intervals shrunk by (1 - φ)/(1 + φ) for φ, the lag-1 autocorrelation of the
   intervals around their side's mean (other work on a shared host comes and goes, so its
   noise is correlated from one second to the next, and a t-test that took every second
   as independent would see levels in it); φ, estimated from a few dozen intervals, is
   taken as 0.5 at most (a count shrunk to a third), so that a short case's clean cliff is
   not judged on one degree of freedom. Its p-value, multiplied by the number of cuts the
   search could have chosen (Bonferroni: the cut tested is the most different of them),
   must be under `LEVEL` (0.01).

False alarms, from the synthetic series of tests/test_mixed_speeds.py (600 level series of
8 to 120 s each, noise as a shared host makes it: a per-second scatter correlated from one
second to the next, and dips to 40-70% of the speed for 1 to 3 s at random): 1 in 600 with
10% scatter (lag-1 correlation 0.3, a dip starting in 2% of the seconds), 1 in 600 with
15% (0.5, 3%), 3 in 600 with 15% (0.7, 5%), 8 in 600 with 25% (0.5, 5%), 19 in 600 with
25% (0.8, 10%), a host busier than any figure should be taken from. A cliff to a tenth of
the speed (an SLC cache that ran out) after 3 s or more, in the same noise without dips, is
found in 543 to 582 of 600; 14 to 16 of the misses are cliffs so near an end that they move
the mean less than 5% (rule 3). Limits: one change is looked for, so a level that moves and
comes back is found only where one cut already parts two levels 30% apart; a
slow drift of 30% or more is cut where its halves differ most and reported as two levels,
which is what its mean mixes too; a change in the last or first 3 s is not told from a
dip.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from iolab.analysis.stats import t_two_sided
from iolab.model import CaseMetrics, CheckWarning, Code, Sample

CODE = Code.MIXED_SPEEDS
MIN_SECONDS = 3.0
MIN_CHANGE = 0.30
MIN_MOVED = 0.05
HELD = 0.80
LEVEL = 0.01
MAX_PHI = 0.5  # a rough estimate from a few dozen points: a count shrunk to a third at most
MB = 1_000_000


@dataclass(frozen=True)
class Shift:
    """One lasting change of level in a plain series: `index` is the first point after it."""

    index: int
    before: float  # the mean of the points before
    after: float  # the mean of the points from `index` on
    p_value: float  # Bonferroni-corrected over the cuts the search could choose


def shift(values: Sequence[float], min_points: int) -> Shift | None:
    """The series' one lasting change of level, by the rule above; None without one."""
    least = max(2, min_points)
    cut = _best_cut(values, least)
    if cut is None:
        return None
    before, after = values[:cut], values[cut:]
    found = Shift(cut, statistics.fmean(before), statistics.fmean(after), 1.0)
    if not (_material(values, found) and _held(before, after, found)):
        return None
    p_value = min(1.0, _p_value(before, after, found) * (len(values) - 2 * least + 1))
    return Shift(cut, found.before, found.after, p_value) if p_value < LEVEL else None


def _best_cut(values: Sequence[float], min_points: int) -> int | None:
    """The cut with the largest n₁·n₂·(m₁ - m₂)², each side at least min_points long."""
    n = len(values)
    if n < 2 * min_points:
        return None
    prefix = list(itertools.accumulate(values, initial=0.0))

    def spread(k: int) -> float:
        return k * (n - k) * (prefix[k] / k - (prefix[n] - prefix[k]) / (n - k)) ** 2

    return max(range(min_points, n - min_points + 1), key=spread)


def _material(values: Sequence[float], found: Shift) -> bool:
    """Levels 30% apart, and the mean moved 5% off the longer side's level."""
    low, high = sorted((found.before, found.after))
    if high <= 0 or low > (1 - MIN_CHANGE) * high:
        return False
    longer = found.before if found.index >= len(values) - found.index else found.after
    return abs(statistics.fmean(values) - longer) >= MIN_MOVED * longer


def _held(before: Sequence[float], after: Sequence[float], found: Shift) -> bool:
    """Most of each side's points nearer its own level than the other's."""
    middle = (found.before + found.after) / 2
    for side, level in ((before, found.before), (after, found.after)):
        near = sum(1 for v in side if (v - middle) * (level - middle) > 0)
        if near < HELD * len(side):
            return False
    return True


def _p_value(before: Sequence[float], after: Sequence[float], found: Shift) -> float:
    """Student's t of the two means on an effective count shrunk for lag-1 autocorrelation
    (the residuals' own, each side's around its mean)."""
    residuals = [[v - found.before for v in before], [v - found.after for v in after]]
    squares = sum(r * r for side in residuals for r in side)
    if squares == 0:
        return 0.0
    lagged = sum(a * b for side in residuals for a, b in itertools.pairwise(side))
    phi = min(MAX_PHI, max(0.0, lagged / squares))
    shrink = (1 - phi) / (1 + phi)
    n = len(before) + len(after)
    spread = math.sqrt(squares / (n - 2) * (1 / len(before) + 1 / len(after)))
    t = (found.after - found.before) / spread * math.sqrt(shrink)
    return t_two_sided(t, max(1.0, n * shrink - 2))


@dataclass(frozen=True)
class SpeedLevel:
    """One of the two speeds of a case: how long it held and its means."""

    seconds: float
    bw_bytes: float  # bytes/s, every direction added
    iops: float | None  # None when fio logged no IOPS


@dataclass(frozen=True)
class SpeedStep:
    """A case's figure that mixes two speeds."""

    at_s: float  # when the first speed ended, on the logs' clock (the time charts' x axis)
    interval_s: float  # fio's logging interval
    before: SpeedLevel
    after: SpeedLevel
    moved_bytes: float  # moved (written, read) before the change
    verb: str  # "written", "read", "read and written"

    @property
    def change_pct(self) -> float | None:
        """The after level against the before one, in percent (-90: a tenth of the speed);
        None from a standstill."""
        if self.before.bw_bytes <= 0:
            return None
        return (self.after.bw_bytes / self.before.bw_bytes - 1) * 100

    @property
    def change(self) -> str:
        """ "fell 85%", "rose 200%", "rose from a standstill"."""
        way = "fell" if self.after.bw_bytes < self.before.bw_bytes else "rose"
        pct = self.change_pct
        return f"{way} {abs(pct):.0f}%" if pct is not None else f"{way} from a standstill"

    @property
    def words(self) -> str:
        """The step in a few words, for a chart's caption."""
        way = "fell" if self.after.bw_bytes < self.before.bw_bytes else "rose"
        return (
            f"{way} from {_mbps(self.before.bw_bytes)} to {_mbps(self.after.bw_bytes)} MB/s at "
            f"{_seconds(self.at_s)} s ({_bytes(self.moved_bytes)} {self.verb} by then)"
        )


def step(samples: Sequence[Sample]) -> SpeedStep | None:
    """The lasting change of speed in a case's per-interval bandwidth; None without one."""
    series = _per_interval(samples, "bw")
    if len(series) < 2:
        return None
    times = [t for t, _ in series]
    interval = statistics.median(b - a for a, b in itertools.pairwise(times)) / 1000
    if interval <= 0:
        return None
    found = shift([v for _, v in series], math.ceil(MIN_SECONDS / interval - 1e-9))
    if found is None:
        return None
    spans = [interval, *((b - a) / 1000 for a, b in itertools.pairwise(times))]
    iops = dict(_per_interval(samples, "iops"))
    first, second = slice(0, found.index), slice(found.index, None)
    return SpeedStep(
        times[found.index - 1] / 1000,
        interval,
        _level(series[first], spans[first], iops),
        _level(series[second], spans[second], iops),
        sum(v * s for (_, v), s in zip(series[first], spans[first], strict=True)),
        _verb({s.direction for s in samples if s.metric == "bw"}),
    )


def _per_interval(samples: Sequence[Sample], metric: str) -> list[tuple[int, float]]:
    """(interval end in ms, the value of every direction added), in time order."""
    totals: dict[int, float] = {}
    for sample in samples:
        if sample.metric == metric:
            totals[sample.time_ms] = totals.get(sample.time_ms, 0.0) + sample.value
    return sorted(totals.items())


def _level(
    points: Sequence[tuple[int, float]], spans: Sequence[float], iops: dict[int, float]
) -> SpeedLevel:
    known = [iops[t] for t, _ in points if t in iops]
    return SpeedLevel(
        sum(spans),
        statistics.fmean(v for _, v in points),
        statistics.fmean(known) if len(known) == len(points) else None,
    )


def _verb(directions: set[str]) -> str:
    reads, writes = "read" in directions, bool(directions & {"write", "trim"})
    return "read and written" if reads and writes else "read" if reads else "written"


def warning(found: SpeedStep, figure_bw: float | None = None) -> CheckWarning:
    """The cell's warning: which speed is which, when it changed and what had moved by then.
    `figure_bw` is the case's figure (bytes/s); without it, the series' mean."""
    before, after = found.before, found.after
    if figure_bw is None:
        total = before.seconds + after.seconds
        figure_bw = (before.bw_bytes * before.seconds + after.bw_bytes * after.seconds) / total
    return CheckWarning(
        CODE,
        f"{_mbps(figure_bw)} MB/s mixes two speeds: {_speed(before)} for the first "
        f"{_seconds(before.seconds)} s ({_bytes(found.moved_bytes)} {found.verb}), then "
        f"{_speed(after)} for the {_seconds(after.seconds)} s after; the speed "
        f"{found.change} at {_seconds(found.at_s)} s and stayed there (a write "
        "cache that filled, a device that throttled, or other load on the host).",
        "Read the two speeds, not their mean: the later one is what the target sustains "
        "after that much I/O. Run longer (or precondition) to measure it alone, and make "
        "sure nothing else ran at that time.",
    )


def warnings(
    samples: Sequence[Sample], metrics: CaseMetrics | None = None
) -> tuple[CheckWarning, ...]:
    """The case's mixed-speeds warning, if its series has a lasting change; `metrics` gives
    the figure the warning names (the case's MB/s)."""
    found = step(samples)
    if found is None:
        return ()
    return (warning(found, metrics.total_bw_bytes if metrics is not None else None),)


def _speed(level: SpeedLevel) -> str:
    iops = f" ({level.iops:,.0f} IOPS)" if level.iops is not None else ""
    return f"{_mbps(level.bw_bytes)} MB/s{iops}"


def _mbps(bw_bytes: float) -> str:
    value = bw_bytes / MB
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:,.1f}" if abs(value) >= 10 else f"{value:,.2f}"


def _seconds(seconds: float) -> str:
    return f"{seconds:,.0f}" if seconds >= 10 else f"{seconds:.1f}".removesuffix(".0")


def _bytes(count: float) -> str:
    """Decimal units, as MB/s is: 13.3 GB, 200 MB."""
    value = float(count)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(value) < 1000 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "B" or value >= 100 else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} TB"
