"""Interleaved A/B: the set-ups of one run measured alternately, round by round (a plan's
order = "interleaved": A B, B A, A B, ...), so that each round's pair saw the same neighbours
and the same drift. Each set-up is judged against the baseline by its rounds' paired ratios:
the geometric mean of B/A with Student's 95% interval over the rounds, which a neighbour's
load widens but does not bias. A regression is a change worse than the rule whose whole
interval is on the worse side of no change; where the interval is wider than the rule, the
rounds could not have seen a change of the rule's size: not judged."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from iolab.analysis.gate_verdicts import Judged, Paired, SeriesVerdict
from iolab.analysis.history import Metric, RunPoint, RunSeries
from iolab.analysis.stats import t975

LEAST_ROUNDS = 3  # pairs a paired interval needs (2 degrees of freedom)


@dataclass(frozen=True)
class Rounds:
    """One workload x metric of an interleaved run: each round's figure of the baseline set-up
    (A) and of the set-up judged (B), by repetition; a round where either failed is absent."""

    base: str
    other: str
    workload: str
    metric: Metric
    a: Mapping[int, float]
    b: Mapping[int, float]

    def pairs(self) -> list[tuple[float, float]]:
        return [(self.a[r], self.b[r]) for r in sorted(self.a) if r in self.b]


def paired(pairs: Sequence[tuple[float, float]]) -> Paired | None:
    """Student's interval of the mean log ratio over the rounds; None below LEAST_ROUNDS
    pairs with positive figures."""
    usable = [(a, b) for a, b in pairs if a > 0 and b > 0]
    if len(usable) < LEAST_ROUNDS:
        return None
    logs = [math.log(b / a) for a, b in usable]
    mean = statistics.fmean(logs)
    half = t975(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    a_mean = math.exp(statistics.fmean(math.log(a) for a, _ in usable))
    return Paired(
        len(usable),
        _pct(mean),
        _pct(mean - half),
        _pct(mean + half),
        a_mean,
        a_mean * math.exp(mean),
        half,
    )


def _pct(log_ratio: float) -> float:
    return (math.exp(log_ratio) - 1) * 100


def judge(
    run: tuple[int, float], rounds: Rounds, allowed: float, load: frozenset[str]
) -> SeriesVerdict:
    """One set-up x workload x metric of the run (its id and start), judged against the
    baseline's rounds; `load`: the codes of other load its cases carried."""
    values = tuple(rounds.b[r] for r in sorted(rounds.b))
    point = RunPoint(run[0], run[1], values, load)  # b holds every round it has a figure for
    series = RunSeries(rounds.other, rounds.workload, rounds.metric, (point,), ())
    drops = rounds.metric in ("iops", "bw")
    found = paired(rounds.pairs())
    if found is None:
        words = (
            f"{len(rounds.pairs())} rounds with figures on both {rounds.base!r} and "
            f"{rounds.other!r}; a paired interval needs {LEAST_ROUNDS}"
        )
        return SeriesVerdict(series, point, (), 0.0, 0.0, None, allowed, False, words, "short")
    worse = -found.change_pct if drops else found.change_pct
    better_end = -found.hi_pct if drops else found.lo_pct  # the interval's least worse end
    detectable = found.detectable_pct(drops)
    regression = worse > allowed and better_end > 0
    if regression:
        words = "beyond the rule, and the whole interval is worse"
    elif worse > allowed:
        words = "worse than the rule, but the interval reaches no change"
    else:
        words = "within the rule"
    how: Judged = "pair" if regression or detectable <= allowed else "blind"
    if how == "blind":
        worse_word = "drops" if drops else "rises"
        words += (
            f"; these rounds detect only {worse_word} beyond {detectable:.1f}%, wider than the rule"
        )
    return SeriesVerdict(
        series,
        point,
        (run[0],),
        found.a_mean,
        found.change_pct,
        (found.hi_pct - found.lo_pct) / 2,
        allowed,
        regression,
        words,
        how,
        detectable_pct=detectable,
        paired=found,
    )
