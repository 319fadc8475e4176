"""A plan's results over time: the series of each set-up x workload x metric across the runs
of the same plan, what changed between consecutive runs (a difference beyond the noise, and
the run facts that differ), and the gate `iolab check` applies to the latest run.

Method. A point is one run's repetitions of a case (set-up and workload matched by name);
its figure is their median, its spread their 95% interval. A change between two points is
the change of their medians (the figures shown), with Welch's 95% interval of the difference
of the means as its spread. Between two consecutive points a
change is reported when it is at least the default rule's size (5% for IOPS and MB/s, 10%
for p99: runs of one plan differ by a few percent from day to day even when repetitions
within a run agree closely) and Welch's 95% interval of the difference of the means excludes
0 (the test `compare` uses); with one repetition on either side no interval exists and only
the size decides, and that is said. This finds a step at the run where it happens (and its
end); a slow drift shows as a trend of small steps, not as one.

Over the whole series (each run's median), change points are found by E-divisive means with
a permutation test (analysis.changepoint): the runs where a new level starts and holds for at
least three runs, at the 5% level. Each gets the size of the change between the two levels
(the mean of the runs' medians on either side, up to the neighbouring change points) with
Welch's 95% interval over those medians, so the run-to-run noise is what the interval
measures, and the run facts that differ at that run (docs/history.md).

The gate compares the latest run with a baseline run: a series fails when it is worse by
more than the rule allows (IOPS and MB/s: lower is worse; latency: higher is worse) and the
whole 95% interval of the change is beyond that threshold, so a change within the noise is
no regression. With one repetition on either side, the size alone decides, and it is said.
"""

from __future__ import annotations

import functools
import itertools
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from iolab.analysis.changepoint import MAX_POINTS, change_points
from iolab.analysis.stats import Difference, compare, metric_for, summarize
from iolab.store import CaseRow, RunRow

Metric = Literal["iops", "bw", "p99"]
METRICS: tuple[Metric, ...] = ("iops", "bw", "p99")
UNITS = {"iops": "IOPS", "bw": "MB/s", "p99": "µs"}
FACTS = ("kernel", "fio_version", "distro", "cpu_model", "memory_bytes", "hostname", "governor")
DEFAULT_RULES: Mapping[Metric, float] = {"iops": 5.0, "bw": 5.0, "p99": 10.0}
P99 = "99"  # the key percentiles are stored under (store: "50", "99", "99.9", ...)


@dataclass(frozen=True)
class Point:
    run_id: int
    started_at: float
    values: tuple[float, ...]

    @functools.cached_property
    def median(self) -> float:
        return statistics.median(self.values)


@dataclass(frozen=True)
class Step:
    """A change between two consecutive points of a series."""

    run_id: int  # where it happened
    change_pct: float
    half_width_pct: float | None
    significant: bool | None
    facts: tuple[str, ...]  # "kernel 6.1 -> 6.8", what differs between the two runs


@dataclass(frozen=True)
class Change:
    """A change point of a series: the run where a new level starts."""

    run_id: int  # the first run of the new level
    p_value: float  # the permutation test's
    before: float  # the mean of the runs' medians from the previous change point
    after: float  # the same from this run to the next change point
    change_pct: float | None  # after against before; None when before is 0
    half_width_pct: float | None  # Welch's 95% interval over those medians; None: one run
    facts: tuple[str, ...]  # what differs between the run before and this one


@dataclass(frozen=True)
class Series:
    setup: str
    workload: str
    metric: Metric
    points: tuple[Point, ...]
    steps: tuple[Step, ...]
    changes: tuple[Change, ...] = ()

    @property
    def unit(self) -> str:
        return UNITS[self.metric]


def value(case: CaseRow, metric: Metric) -> float | None:
    """A case's figure: IOPS, MB/s, or the worst direction's p99 completion latency in µs."""
    if case.status != "ok" or not case.metrics:
        return None
    if metric == "p99":
        found = [m.percentiles_ns[P99] for m in case.metrics.values() if P99 in m.percentiles_ns]
        return max(found) / 1000 if found else None
    total = case.total(metric)
    return total if metric == "iops" else total / 1e6


def series(runs: Sequence[tuple[RunRow, Sequence[CaseRow]]]) -> list[Series]:
    """Every set-up x workload x metric seen in the runs (oldest first), with its steps."""
    points: dict[tuple[str, str, Metric], list[Point]] = {}
    for run, cases in runs:
        grouped: dict[tuple[str, str], list[CaseRow]] = {}
        for case in cases:
            grouped.setdefault((case.setup, case.workload), []).append(case)
        for (setup, workload), group in grouped.items():
            primary: Metric = "bw" if metric_for(group[0].options) == "bw" else "iops"
            for metric in (primary, "p99"):
                got = tuple(v for c in group if (v := value(c, metric)) is not None)
                if got:
                    key = (setup, workload, metric)
                    points.setdefault(key, []).append(Point(run.id, run.started_at, got))
    facts = {run.id: run.environment for run, _ in runs}
    return [
        Series(
            setup, workload, metric, tuple(found), _steps(found, metric, facts),
            _changes(found, facts),
        )
        for (setup, workload, metric), found in points.items()
    ]  # fmt: skip


def _steps(
    points: Sequence[Point], metric: Metric, facts: Mapping[int, Mapping[str, object]]
) -> tuple[Step, ...]:
    out = []
    summaries = [summarize(p.values) for p in points]  # each point once, not twice
    for (before, after), pair in zip(
        itertools.pairwise(points), itertools.pairwise(summaries), strict=True
    ):
        diff = Difference(*pair)
        change = median_change(before, after, diff)
        if change is None or diff.significant is False or abs(change) < DEFAULT_RULES[metric]:
            continue  # within the noise, or too small to matter (runs differ by a few %)
        said = differences(facts.get(before.run_id, {}), facts.get(after.run_id, {}))
        out.append(Step(after.run_id, change, diff.half_width_pct, diff.significant, said))
    return tuple(out)


def _changes(
    points: Sequence[Point], facts: Mapping[int, Mapping[str, object]]
) -> tuple[Change, ...]:
    """The series' change points (over each run's median), each with its size and interval
    between the levels on either side, and the run facts that differ at it."""
    medians = [p.median for p in points]
    found = change_points(medians)
    start = max(0, len(points) - MAX_POINTS)  # longer series: the latest MAX_POINTS runs
    bounds = [start, *(c.index for c in found), len(points)]
    out = []
    for i, point in enumerate(found):
        diff = compare(medians[bounds[i] : point.index], medians[point.index : bounds[i + 2]])
        before, at = points[point.index - 1], points[point.index]
        said = differences(facts.get(before.run_id, {}), facts.get(at.run_id, {}))
        out.append(
            Change(at.run_id, point.p_value, point.mean_before, point.mean_after,
                   diff.change_pct, diff.half_width_pct, said)
        )  # fmt: skip
    return tuple(out)


def imported(plan_name: str, runs: Sequence[RunRow]) -> list[int]:
    """The runs of a plan's history that came from elsewhere: another plan's whose cases are
    this one's (history.joins), or an import (an iolab export keeps its plan's name)."""
    return [r.id for r in runs if r.plan_name != plan_name or r.origin.kind == "import"]


IDENTITY = ("rw", "bs", "iodepth", "numjobs", "rwmixread", "ioengine", "direct")


def joins(plan_cases: Sequence[CaseRow], imported: Sequence[CaseRow]) -> bool:
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
        if before.get(key) != after.get(key) and before.get(key) not in (None, "")
        and after.get(key) not in (None, "")
    )  # fmt: skip


@dataclass(frozen=True)
class Verdict:
    """One series of the latest run against its baseline, under a rule."""

    series: Series
    base: Point
    latest: Point
    change_pct: float
    half_width_pct: float | None
    allowed_pct: float
    regression: bool
    words: str


def gate(
    found: Sequence[Series], latest: int, baseline: int, rules: Mapping[Metric, float]
) -> list[Verdict]:
    """Each series that has both runs, judged; regressions first."""
    out = []
    for one in found:
        if one.metric not in rules:
            continue
        by_run = {p.run_id: p for p in one.points}
        if latest not in by_run or baseline not in by_run:
            continue
        out.append(_judge(one, by_run[baseline], by_run[latest], rules[one.metric]))
    return sorted(out, key=lambda v: not v.regression)


def median_change(before: Point, after: Point, diff: Difference) -> float | None:
    """The change between two points as the figures shown say it: between their medians
    (the interval stays Welch's, over the means); the means' change when a median is 0."""
    if before.median == 0:
        return diff.change_pct
    return (after.median / before.median - 1) * 100


def _judge(one: Series, base: Point, latest: Point, allowed: float) -> Verdict:
    diff = compare(list(base.values), list(latest.values))
    change, half = median_change(base, latest, diff) or 0.0, diff.half_width_pct
    worse = -change if one.metric in ("iops", "bw") else change  # > 0: worse
    if half is None:
        real = worse > allowed
        words = "one repetition on a side: the size alone decides" if real else "within the rule"
    else:
        real = worse - half > allowed  # the whole interval is beyond what the rule allows
        words = (
            "beyond the rule and the noise" if real
            else "worse than the rule, but within the noise" if worse > allowed
            else "within the rule"
        )  # fmt: skip
    return Verdict(one, base, latest, change, half, allowed, real, words)
