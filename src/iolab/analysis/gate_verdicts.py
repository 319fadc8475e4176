"""The gate: each series of a run judged against the run-to-run noise of the runs before it
(a one-sided prediction bound), against a new level the change points confirm, or by the rule
alone against a baseline named; each with the smallest change its history lets it detect. A
run has three outcomes: a regression, a pass (every series judged, none worse beyond rule and
noise), or not judged (a series with too little history, a history too noisy to see a change
of the rule's size, or no figure because its cases failed)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from iolab.analysis.history import (
    WINDOW,
    Metric,
    RunChange,
    RunPoint,
    RunSeries,
    Standing,
    run_changes,
    standings,
)
from iolab.analysis.stats import Prediction, compare, predict_ratio
from iolab.names import runs_said

Judged = Literal["history", "new-level", "rule", "pair", "short", "blind", "failed"]
NOT_JUDGED: tuple[Judged, ...] = ("short", "blind", "failed")
Outcome = Literal["pass", "regression", "not judged"]


@dataclass(frozen=True)
class Paired:
    """The change of B against A over the rounds, in %: the geometric means' ratio, and the
    95% interval's ends (lo <= change <= hi)."""

    rounds: int
    change_pct: float
    lo_pct: float
    hi_pct: float
    a_mean: float  # geometric means of the rounds paired
    b_mean: float
    half_log: float  # the interval's half-width on the log ratio

    def detectable_pct(self, drops: bool) -> float:
        """The least worse change these rounds can tell from none: a drop (or a rise) by the
        interval's half-width."""
        return (1 - math.exp(-self.half_log) if drops else math.exp(self.half_log) - 1) * 100


@dataclass(frozen=True)
class SeriesVerdict:
    """One series of a run, judged: against its history ("history"), a new level the change
    points confirm ("new-level"), a baseline named by the rule alone ("rule": too little
    history before it), another set-up's rounds of an interleaved run ("pair", analysis.ab);
    or not judged: too little history ("short"), a history that can only detect changes
    wider than the rule ("blind"), no figure in the run ("failed")."""

    series: RunSeries
    latest: RunPoint | None  # None: the run has no figure for it (its cases failed)
    against: tuple[int, ...]  # the runs it was judged against
    level: float  # their mean figure (one run: its mean; a new level: the level before)
    change_pct: float
    half_width_pct: float | None  # Welch's, against one run
    allowed_pct: float
    regression: bool
    words: str
    how: Judged
    bound: float | None = None  # the prediction bound on the worse side
    back: int | None = None  # a lone outlier: the run after it, back at the level
    since: RunChange | None = None  # the new level's change point
    detectable_pct: float | None = None  # the least worse change the history can see
    paired: Paired | None = None  # judged by interleaved rounds (analysis.ab): their change

    @property
    def judged(self) -> bool:
        return self.how not in NOT_JUDGED

    @property
    def worse_word(self) -> str:
        """What a worse change is for its metric: IOPS and MB/s drop, latency rises."""
        return "drops" if self.series.metric in ("iops", "bw") else "rises"


@dataclass(frozen=True)
class Gate:
    """How `iolab check` judges: the rule per metric, the window of earlier runs, and
    whether a run not judged fails the build (strict: its exit code of its own)."""

    rules: Mapping[Metric, float]
    window: int = WINDOW
    strict: bool = True


@dataclass(frozen=True)
class Checked:
    """A run judged: its plan, how, each series' verdict, the other load its cases ran
    beside (the foreign-load warnings' words, "" where none), whether it is the plan's first
    run on its host, and how many of the plan's runs ran on other hosts."""

    run: int
    plan_name: str
    how: Gate
    verdicts: tuple[SeriesVerdict, ...]
    beside: str = ""
    first: bool = False
    elsewhere: int = 0  # the plan's runs left out of its history: they ran on another host
    paired: str = ""  # judged by its interleaved rounds (check --ab): "b against a, 6 rounds"

    @property
    def outcome(self) -> Outcome:
        return outcome(self.verdicts)


def gate(
    found: Sequence[RunSeries],
    latest: int,
    baseline: int | None,
    how: Gate,
    measured: Collection[tuple[str, str]] = (),
) -> list[SeriesVerdict]:
    """Each series that has the run, judged against the runs before it (or up to and
    including `baseline`, judged by the rule alone against it when the history before it is
    too short); each series of a set-up and workload the run `measured` that has no figure
    in it, not judged; regressions first, then what was not judged."""
    out = []
    for one in found:
        if one.metric not in how.rules:
            continue
        runs = [p.run_id for p in one.points]
        if baseline is not None and baseline not in runs:
            continue
        if latest not in runs:
            if (one.setup, one.workload) in measured:
                out.append(_failed(one, latest, how.rules[one.metric]))
            continue
        at = runs.index(latest)
        upto = runs.index(baseline) + 1 if baseline is not None else at
        earlier = [p for p in one.points[:upto] if p.run_id != latest]
        later = one.points[at + 1] if at + 1 < len(one.points) else None
        out.append(_judge(one, earlier, one.points[at], later, how, baseline is not None))
    return sorted(out, key=lambda v: (not v.regression, v.judged))


def outcome(verdicts: Sequence[SeriesVerdict]) -> Outcome:
    """A regression where any series is one; else not judged where any series (or the run:
    nothing measured) was not judged; else a pass."""
    if any(v.regression for v in verdicts):
        return "regression"
    if not verdicts or any(not v.judged for v in verdicts):
        return "not judged"
    return "pass"


def _worse(metric: Metric, change: float) -> float:
    """How much worse a change is (> 0: worse): IOPS and MB/s lower, latency higher."""
    return -change if metric in ("iops", "bw") else change


def _failed(one: RunSeries, latest: int, allowed: float) -> SeriesVerdict:
    level = one.points[-1].mean if one.points else 0.0
    words = f"no figure in run {latest}: its cases failed"
    return SeriesVerdict(one, None, (), level, 0.0, None, allowed, False, words, "failed")


def _judge(
    one: RunSeries,
    earlier: Sequence[RunPoint],
    latest: RunPoint,
    later: RunPoint | None,
    how: Gate,
    named: bool,
) -> SeriesVerdict:
    """One series of a run: with too little history, by the rule alone against the baseline
    `named`, or not at all; else against its history's bound, named as a new level where the
    change points confirm one, and not judged where the bound is wider than the rule."""
    allowed = how.rules[one.metric]
    sequence = [*earlier, latest]
    changes = run_changes(sequence, {})
    judged = standings(sequence, changes, how.window)[-1]
    if judged.noise is None:
        if named and earlier:
            return _by_rule(one, earlier[-1], latest, allowed)
        base = earlier[-1].mean if earlier else latest.mean
        words = (
            "nothing to judge yet: its first run"
            if not earlier
            else f"too little history: {len(judged.history)} earlier "
            f"run{'s' if len(judged.history) != 1 else ''}, the gate needs 4 to know the noise"
        )
        return SeriesVerdict(
            one,
            latest,
            judged.history,
            base,
            _pct(base, latest.mean),
            None,
            allowed,
            False,
            words,
            "short",
        )
    window = set(judged.history)  # what it predicts, its mean too: the gate's own figure
    noise = predict_ratio([p.mean for p in sequence if p.run_id in window])
    verdict = _by_history(one, judged, noise, later, allowed)
    verdict = _new_level(verdict, changes, sequence, judged) or verdict
    return _blind(verdict) or verdict


def _pct(level: float, figure: float) -> float:
    return (figure / level - 1) * 100 if level else 0.0


def _blind(verdict: SeriesVerdict) -> SeriesVerdict | None:
    """A pass that the history could not have seen failing: the least change it detects is
    wider than the rule, so a change of the rule's size would have passed as well."""
    seen = verdict.detectable_pct
    if verdict.regression or seen is None or seen <= verdict.allowed_pct:
        return None
    runs = runs_said(verdict.against)
    seen_said = (
        f"no {verdict.worse_word[:-1]} at all (the lowest they predict is below 0)"
        if seen >= 100 and verdict.worse_word == "drops"
        else f"only {verdict.worse_word} beyond {seen:.1f}%"
    )
    words = f"{verdict.words}; {runs} detect {seen_said}, wider than the rule"
    return dataclasses.replace(verdict, words=words, how="blind")


def _by_history(
    one: RunSeries, judged: Standing, noise: Prediction, later: RunPoint | None, allowed: float
) -> SeriesVerdict:
    """The run against what its history predicts (`noise`: predict_ratio of the figures of
    the runs `judged` rests on, whose bounds `judged` holds)."""
    latest = judged.point
    change = _pct(noise.mean, latest.mean)
    lower_worse = one.metric in ("iops", "bw")
    bound = noise.low if lower_worse else noise.high
    beyond = judged.beyond == (-1 if lower_worse else 1)
    worse = _worse(one.metric, change) > allowed
    runs = runs_said(judged.history)
    back = (
        later.run_id if later is not None and beyond and judged.inside(later.mean) else None
    )  # a lone outlier: the run after it is back inside the bound
    words = (
        f"beyond the rule and what {runs} predict"
        if worse and beyond
        else f"worse than the rule, but within what {runs} predict"
        if worse
        else "within the rule"
    )
    return SeriesVerdict(
        one,
        latest,
        judged.history,
        noise.mean,
        change,
        None,
        allowed,
        worse and beyond,
        words,
        "history",
        bound,
        back,
        detectable_pct=max(0.0, _worse(one.metric, _pct(noise.mean, bound))),
    )


def _new_level(
    verdict: SeriesVerdict,
    changes: Sequence[RunChange],
    sequence: Sequence[RunPoint],
    judged: Standing,
) -> SeriesVerdict | None:
    """A regression that the change points confirm: the latest change point is younger than
    the level the run was judged in (its new level, which the run is on, has too few runs to
    be a history of its own) and moved the way the run failed, by more than the rule: named
    as the new level since that run, with the change between the two levels."""
    if not verdict.regression or not changes or changes[-1].change_pct is None:
        return None
    since = changes[-1]
    start = next(i for i, p in enumerate(sequence) if p.run_id == since.run_id)
    change = since.change_pct or 0.0
    if start <= judged.level or _worse(verdict.series.metric, change) <= verdict.allowed_pct:
        return None
    return dataclasses.replace(
        verdict,
        level=since.before,
        change_pct=change,
        half_width_pct=since.half_width_pct,
        words=f"a new level since run {since.run_id}",
        how="new-level",
        since=since,
    )


def _by_rule(one: RunSeries, base: RunPoint, latest: RunPoint, allowed: float) -> SeriesVerdict:
    """The rule alone against the baseline named (too little history before it): worse than
    the rule and the whole Welch interval beyond it; with one repetition on a side, the size
    alone."""
    diff = compare(list(base.values), list(latest.values))
    change, half = diff.change_pct or 0.0, diff.half_width_pct
    worse = _worse(one.metric, change)
    if half is None:
        real = worse > allowed
        words = "one repetition on a side: the size alone decides" if real else "within the rule"
    else:
        real = worse - half > allowed  # the whole interval is beyond what the rule allows
        words = (
            "beyond the rule and the noise"
            if real
            else "worse than the rule, but within the noise"
            if worse > allowed
            else "within the rule"
        )
    return SeriesVerdict(
        one, latest, (base.run_id,), base.mean, change, half, allowed, real, words, "rule"
    )
