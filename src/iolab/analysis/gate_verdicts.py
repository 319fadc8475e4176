"""The gate: each series of a run judged against the run-to-run noise of the runs before it
(a one-sided prediction bound), against a new level the change points confirm, or by the rule
alone."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
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
    runs_said,
    standings,
)
from iolab.analysis.stats import compare

Judged = Literal["history", "new-level", "rule", "short", "foreign"]


@dataclass(frozen=True)
class SeriesVerdict:
    """One series of a run, judged: against its history ("history"), a new level the change
    points confirm ("new-level"), one earlier run by the rule alone ("rule": strict, with too
    little history), or not judged ("short": too little history; "foreign": other load)."""

    series: RunSeries
    latest: RunPoint
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
    loaded: int = 0  # too little history: the earlier runs left out for other load


@dataclass(frozen=True)
class Gate:
    """How `iolab check` judges: the rule per metric, the window of earlier runs, and
    whether too little history is judged by the rule alone."""

    rules: Mapping[Metric, float]
    window: int = WINDOW
    strict: bool = False


def gate(
    found: Sequence[RunSeries], latest: int, baseline: int | None, how: Gate
) -> list[SeriesVerdict]:
    """Each series that has the run, judged against the runs before it (or up to and
    including `baseline`); regressions first."""
    out = []
    for one in found:
        if one.metric not in how.rules:
            continue
        runs = [p.run_id for p in one.points]
        if latest not in runs or (baseline is not None and baseline not in runs):
            continue
        at = runs.index(latest)
        upto = runs.index(baseline) + 1 if baseline is not None else at
        if upto == 0:
            continue  # nothing before it to judge it against
        earlier = [p for p in one.points[:upto] if p.run_id != latest]
        later = one.points[at + 1] if at + 1 < len(one.points) else None
        out.append(_judge(one, earlier, one.points[at], later, how))
    return sorted(out, key=lambda v: not v.regression)


def _worse(metric: Metric, change: float) -> float:
    """How much worse a change is (> 0: worse): IOPS and MB/s lower, latency higher."""
    return -change if metric in ("iops", "bw") else change


def _judge(
    one: RunSeries, earlier: Sequence[RunPoint], latest: RunPoint, later: RunPoint | None, how: Gate
) -> SeriesVerdict:
    """One series of a run: not judged with other load on the host; with too little history,
    by the rule alone (strict) or not at all; else against its history's bound, named as a
    new level where the change points confirm one."""
    allowed = how.rules[one.metric]
    quiet = [p for p in earlier if not p.foreign]
    base = (quiet or earlier)[-1]  # the rule alone: against the latest run without other load
    if latest.foreign:
        return SeriesVerdict(
            one,
            latest,
            (),
            base.mean,
            _pct(base.mean, latest.mean),
            None,
            allowed,
            False,
            "other load on the host: not judged",
            "foreign",
        )
    sequence = [*earlier, latest]
    changes = run_changes(sequence, {})
    judged = standings(sequence, changes, how.window)[-1]
    if judged.noise is None:
        if how.strict:
            return _by_rule(one, base, latest, allowed)
        return SeriesVerdict(
            one,
            latest,
            judged.history,
            base.mean,
            _pct(base.mean, latest.mean),
            None,
            allowed,
            False,
            "too little history: not judged",
            "short",
            loaded=sum(p.foreign for p in earlier),
        )
    verdict = _by_history(one, judged, later, allowed)
    return _new_level(verdict, changes, sequence, judged) or verdict


def _pct(level: float, figure: float) -> float:
    return (figure / level - 1) * 100 if level else 0.0


def _by_history(
    one: RunSeries, judged: Standing, later: RunPoint | None, allowed: float
) -> SeriesVerdict:
    noise = judged.noise
    assert noise is not None
    latest = judged.point
    change = _pct(noise.mean, latest.mean)
    lower_worse = one.metric in ("iops", "bw")
    bound = noise.low if lower_worse else noise.high
    beyond = judged.beyond == (-1 if lower_worse else 1)
    worse = _worse(one.metric, change) > allowed
    runs = runs_said(judged.history)
    back = (
        later.run_id
        if later is not None and not later.foreign and beyond and judged.inside(later.mean)
        else None
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
    """The rule alone against one run (strict, with too little history): worse than the rule
    and the whole Welch interval beyond it; with one repetition on a side, the size alone."""
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
