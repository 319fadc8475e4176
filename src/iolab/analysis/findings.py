"""Findings in words: what a report's numbers show, each statement with the figures it rests
on, their intervals, how many cases, and the warnings of those cases.

One module decides what is said, from typed values only (the report's results table and
its cells' statistics, the checks' warnings); `report.findings_view` lays the findings out.
Every figure cited is the text of a cell of the report's results table (so no finding cites
a number the report does not show), and a finding makes no claim its data cannot carry:

- **winner**, per workload: the best set-up against the next; "leads ... by +x% ± y%" only
  when Welch's 95% interval of the difference excludes 0, "not distinguishable" when it does
  not, "indicative (one run each, no interval)" without repetitions. Overall: who leads most
  workloads, counting only significant leads when there are repetitions.
- **cost** of a choice against the baseline (`--baseline`): per other set-up, the median
  change over the workloads, its range, and the workloads where it reverses (significantly).
- **cap**: several set-ups whose best figure on a workload is within 5% of each other, all
  other set-ups below: a shared limit (a controller, a bus, the host), as studies A and C
  found by eye.
- **scaling**: over a numjobs, iodepth or device-count sweep, the gain per doubling from each
  value to the next, citing the figures, and where it stops paying (under 10% a doubling) or
  that it still grows; and analysis.scaling's flat-scaling, with the limit named from the
  telemetry.
- **model**: a RAID set-up's measured figures against the RAID model's prediction (the
  report's RAID model table): the range, and what a gap suggests (far above: a cache; far
  below: costs the rule leaves out, or an array not saturated).
- **latency**: long tails (p99.9 at least 10x p50, from the latency table), workloads where
  the leader by figure has a tail over a quarter worse than the runner-up's, and the knee of
  each load curve (from its table: the last load before p99 climbs for good).
- **trust**: what the checks found, counted by kind, and what that means for the numbers.
- **pooled**: several runs read as repetitions of one another (`--pool`): how far apart the
  runs' own means lie, per cell (the report's Across runs table), the median and the widest.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from iolab.analysis.stats import compare, summarize
from iolab.model import CheckWarning

Kind = Literal["pooled", "winner", "overall", "cost", "cap", "scaling", "model", "latency", "trust"]
CAP_SPREAD = 0.05  # set-ups within 5% of each other share a cap
# without repetitions, set-ups closer than this (percent) are not said to lead: runs of one
# plan differ by a few percent from one to the next (analysis.history's rule)
SAME_WITHOUT_INTERVAL = 5.0
WARNED = " ⚑"


@dataclass(frozen=True)
class Figure:
    """One cell of the results table as a finding reads it: where it is, the figure as the
    table shows it, its repetitions' values, and the warnings of the cases behind it."""

    workload: str
    setup: str
    text: str
    unit: str
    values: tuple[float, ...]
    warnings: tuple[CheckWarning, ...] = ()

    @property
    def shown(self) -> str:
        """The figure as the table shows it, without the warnings' mark (said apart)."""
        return self.text.split(WARNED)[0]

    @property
    def median(self) -> float:
        return statistics.median(self.values)


@dataclass(frozen=True)
class Finding:
    kind: Kind
    sentence: str
    cases: int  # how many stored cases it rests on
    significant: bool | None  # None: no interval (one repetition), or not a comparison
    cells: tuple[tuple[str, str], ...]  # (workload, set-up) of the results cells behind it
    warned: tuple[CheckWarning, ...] = ()  # the warnings of those cells, one per code
    margin: str = ""  # a winner's margin as the Leaders table shows it
    spread: tuple[str, str, str] = ("", "", "")  # a cost's median, lowest and highest change


def derive(
    figures: Sequence[Figure],
    baseline: str | None = None,
    extra: Sequence[CheckWarning] = (),
    gaps: Sequence[ModelGap] = (),
    tails: Sequence[Tail] = (),
    sweeps: Sequence[Sweep] = (),
    knees: Sequence[Knee] = (),
) -> list[Finding]:
    """Every finding the figures carry, in the order a reader wants them: winners, cost of
    the choice against the baseline, shared caps, scaling, the RAID model, latency, trust."""
    by_workload: dict[str, list[Figure]] = {}
    for figure in figures:
        if figure.values:
            by_workload.setdefault(figure.workload, []).append(figure)
    found = [w for group in by_workload.values() if (w := winner(group)) is not None]
    found += overall(found, len(by_workload))
    if baseline is not None:
        found += cost(by_workload, baseline)
    found += caps(by_workload)
    found += [growth(s) for s in sweeps if all(f.median > 0 for _, f in s.steps)]
    found += [scaling(w) for w in extra if w.code == "flat-scaling"]
    found += model(gaps)
    found += latency(tails, figures)
    found += [knee(k) for k in knees]
    found += trust(figures)
    return found


def _merged(each: Sequence[tuple[CheckWarning, ...]]) -> tuple[CheckWarning, ...]:
    """The warnings of several figures (or changes), one per code."""
    return tuple({w.code: w for warnings in each for w in warnings}.values())


def _but_said(each: Sequence[tuple[CheckWarning, ...]], what: str) -> str:
    """ "; but ..." when some of these rest on warned cases: the reader must not miss it."""
    codes = [w.code for w in _merged(each)]
    if not codes:
        return ""
    warned = sum(1 for warnings in each if warnings)
    return f"; but {warned} of these {len(each)} {what} ({', '.join(codes)})"


def _warned(group: Sequence[Figure]) -> tuple[CheckWarning, ...]:
    return _merged([f.warnings for f in group])


def _but(group: Sequence[Figure]) -> str:
    return _but_said([f.warnings for f in group], "figures carry warnings")


def winner(group: Sequence[Figure]) -> Finding | None:
    """The best set-up on one workload against the next."""
    if len(group) < 2:
        return None
    # ranked by the mean, the figure its margin (Welch's, over the means) is taken from: a
    # leader by median could trail by its own margin
    first, second = sorted(group, key=lambda f: statistics.fmean(f.values), reverse=True)[:2]
    diff = compare(list(second.values), list(first.values))
    change, half = diff.change_pct, diff.half_width_pct
    head = f"{first.workload}: {first.setup} {first.shown} {first.unit}, {second.setup} "
    head += f"{second.shown} {second.unit}"
    if change is None:
        return None
    margin = f"{change:+.1f}%" if half is None else f"{change:+.1f}% ± {half:.1f}%"
    tied = half is None and change < SAME_WITHOUT_INTERVAL  # no interval, and too close
    if half is None and first.shown == second.shown:
        said = "the same figure (one run each: no interval)"
    elif tied:
        said = (
            f"within {SAME_WITHOUT_INTERVAL:g}% of each other ({margin}; one run each: no interval)"
        )
    elif half is None:
        said = f"{first.setup} ahead by {margin} (one run each: no interval, indicative)"
    elif diff.significant:
        said = f"{first.setup} leads by {margin}"
    else:
        said = f"not distinguishable ({margin} includes 0)"
    pair = (first, second)
    return Finding(
        "winner", f"{head}: {said}{_but(pair)}.", len(first.values) + len(second.values),
        False if tied else diff.significant, tuple((f.workload, f.setup) for f in pair),
        _warned(pair), margin,
    )  # fmt: skip


def overall(winners: Sequence[Finding], workloads: int) -> list[Finding]:
    """Who leads most workloads: significant leads only when there are intervals."""
    if workloads < 2 or not winners:
        return []
    counted = [w for w in winners if w.significant is not False]
    leads = Counter(w.cells[0][1] for w in counted)
    if not leads:
        return [Finding("overall", "No set-up leads on any workload beyond the noise.",
                        sum(w.cases for w in winners), False, ())]  # fmt: skip
    setup, count = leads.most_common(1)[0]
    noise = len(winners) - len(counted)
    tail = f"; on {noise} the leader is within the noise" if noise else ""
    return [Finding(
        "overall", f"{setup} leads on {count} of {workloads} workloads{tail}.",
        sum(w.cases for w in winners), None, tuple(c for w in counted for c in w.cells[:1]),
    )]  # fmt: skip


def cost(by_workload: Mapping[str, Sequence[Figure]], baseline: str) -> list[Finding]:
    """Each other set-up against the baseline: the median change, its range, reversals."""
    changes: dict[str, list[Change]] = {}
    for workload, group in by_workload.items():
        base = next((f for f in group if f.setup == baseline), None)
        if base is None:
            continue
        for other in group:
            if other.setup == baseline:
                continue
            diff = compare(list(base.values), list(other.values))
            if diff.change_pct is not None:
                half = diff.half_width_pct
                shown = f"{diff.change_pct:+.1f}%" + (f" ± {half:.1f}%" if half is not None else "")
                changes.setdefault(other.setup, []).append(
                    Change(workload, diff.change_pct, shown, diff.significant,
                           len(base.values) + len(other.values), _warned((base, other)))
                )  # fmt: skip
    return [_cost(setup, baseline, found) for setup, found in changes.items()]


@dataclass(frozen=True)
class Change:
    """One set-up's change against the baseline on one workload, as the table shows it."""

    workload: str
    pct: float
    shown: str
    significant: bool | None
    cases: int
    warnings: tuple[CheckWarning, ...] = ()


def _cost(setup: str, baseline: str, found: list[Change]) -> Finding:
    values = [c.pct for c in found]
    middle = statistics.median(values)
    cases = sum(c.cases for c in found)
    if len(found) == 1:
        only = found[0]
        said = "significant" if only.significant else "within the noise" \
            if only.significant is False else "one run each: no interval"  # fmt: skip
        sentence = f"Against {baseline}, {setup} changes {only.workload} by {only.shown} ({said})"
        sentence += f"{_but_changes(found)}."
        return Finding("cost", sentence, cases, only.significant, ((only.workload, setup),),
                       _warned_changes(found))  # fmt: skip
    up = [c.workload for c in found if c.pct > 0 and c.significant is not False]
    down = [c.workload for c in found if c.pct < 0 and c.significant is not False]
    low, high = min(found, key=lambda c: c.pct), max(found, key=lambda c: c.pct)
    median = f"{middle:+.1f}%"
    sentence = (
        f"Against {baseline}, {setup} changes the figures by a median of {median} over "
        f"{len(found)} workloads, from {low.shown} ({low.workload}) to {high.shown} "
        f"({high.workload})"
    )
    if up and down:
        sentence += f"; it helps {', '.join(up)} and costs {', '.join(down)}"
    within = sum(1 for c in found if c.significant is False)
    verb = "is" if within == 1 else "are"
    sentence += f"; {within} of these changes {verb} within the noise" if within else ""
    sentence += f"{_but_changes(found)}."
    spread = (median, f"{low.shown} ({low.workload})", f"{high.shown} ({high.workload})")
    cells = tuple((c.workload, setup) for c in found)
    return Finding("cost", sentence, cases, None, cells, _warned_changes(found), spread=spread)


def _warned_changes(found: Sequence[Change]) -> tuple[CheckWarning, ...]:
    return _merged([c.warnings for c in found])


def _but_changes(found: Sequence[Change]) -> str:
    """ "; but ..." when changes rest on warned figures (the baseline's or the set-up's)."""
    return _but_said([c.warnings for c in found], "changes rest on warned figures")


def caps(by_workload: Mapping[str, Sequence[Figure]]) -> list[Finding]:
    """Several set-ups at the same best figure on a workload, the others below: a shared
    limit."""
    found = []
    for workload, group in by_workload.items():
        if len(group) < 3:
            continue
        ranked = sorted(group, key=lambda f: f.median, reverse=True)
        top = ranked[0].median
        near = [f for f in ranked if f.median >= top * (1 - CAP_SPREAD)]
        if len(near) < max(2, (len(ranked) + 1) // 2):  # two of six alike is not a cap
            continue
        if any(_loose(f) for f in near):  # a figure this uncertain cannot show a plateau
            continue
        names = ", ".join(f"{f.setup} {f.shown}" for f in near)
        if len(near) == len(ranked):
            said = (
                f"all {len(near)} set-ups reach the same figure within {CAP_SPREAD:.0%} "
                f"({names} {near[0].unit}): what they share sets it (a controller or its "
                "cache, a bus, the host), not what differs between them"
            )
        else:
            said = (
                f"{len(near)} set-ups reach the same figure within {CAP_SPREAD:.0%} "
                f"({names} {near[0].unit}): a shared limit (a controller, a bus, the host), "
                "not their devices"
            )
        sentence = f"{workload}: {said}{_but(near)}."
        cells = tuple((f.workload, f.setup) for f in near)
        cases = sum(len(f.values) for f in near)
        found.append(Finding("cap", sentence, cases, None, cells, _warned(near)))
    return found


def _loose(figure: Figure) -> bool:
    """A figure whose 95% interval is wider than the cap's spread either side of it."""
    if len(figure.values) < 2 or figure.median <= 0:
        return False
    half = summarize(figure.values).half_width
    return half is not None and half > CAP_SPREAD * figure.median


STOPS = 1.10  # a doubling that gains less than 10% has stopped paying


@dataclass(frozen=True)
class Sweep:
    """One set-up's figures over a numjobs or iodepth sweep (or striped set-ups' over their
    device count, `setup` naming them all), the other options alike: (value of the axis, its
    figure) in order."""

    setup: str
    axis: str
    steps: tuple[tuple[int, Figure], ...]


def growth(sweep: Sweep) -> Finding:
    """The gain per doubling from each value of the sweep to the next."""
    parts, stop = [], None
    for (low, before), (high, after) in itertools.pairwise(sweep.steps):
        factor = (after.median / before.median) ** (1 / math.log2(high / low))
        parts.append(f"×{factor:.2f} from {low} to {high} ({before.shown} → {after.shown})")
        if factor < STOPS and stop is None:
            stop = low
    last = sweep.steps[-1][0]
    end = (f"it stops paying past {sweep.axis}={stop}" if stop is not None else
           f"still growing up to {sweep.axis}={last}")  # fmt: skip
    figures = [f for _, f in sweep.steps]
    unit = figures[0].unit
    start, close = figures[0].workload, figures[-1].workload
    where = start if start == close else f"{start} → {close}"
    sentence = (
        f"{sweep.setup} · {where}: per doubling of {sweep.axis}, {unit} {', '.join(parts)}; "
        f"{end}{_but(figures)}."
    )
    cells = tuple((f.workload, f.setup) for f in figures)
    return Finding("scaling", sentence, sum(len(f.values) for f in figures), None, cells,
                   _warned(figures))  # fmt: skip


def scaling(flat: CheckWarning) -> Finding:
    return Finding("scaling", flat.message, 0, None, ())


def trust(figures: Sequence[Figure]) -> list[Finding]:
    """What the checks found on the figures of the results table, counted by kind."""
    if not figures:
        return []
    warned = [f for f in figures if f.warnings]
    if not warned:
        return [Finding("trust", f"No methodology check fired on the {len(figures)} figures.",
                        sum(len(f.values) for f in figures), None, ())]  # fmt: skip
    counts = Counter(w.code for f in warned for w in f.warnings)
    listed = ", ".join(f"{code} on {n}" for code, n in counts.most_common())
    sentence = (
        f"{len(warned)} of {len(figures)} figures rest on warned cases ({listed}): read them "
        "with the warnings under the results, which say why and what to do."
    )
    counted = Finding("trust", sentence, sum(len(f.values) for f in warned), None,
                      tuple((f.workload, f.setup) for f in warned), _warned(warned))  # fmt: skip
    return [counted, *(f for code in CACHED if (f := _cached(code, warned)) is not None)]


# Checks that say a figure is a cache's, not the devices': each gets its own finding that
# names the figures, since a reader would otherwise quote them as the devices' speed.
CACHED = {
    "above-ceiling": "above the physical limit of the devices behind",
    "page-cache": "served by the page cache",
    "cache-size": "from a test small enough to fit a cache",
}


def _cached(code: str, warned: Sequence[Figure]) -> Finding | None:
    hit = [f for f in warned if any(w.code == code for w in f.warnings)]
    if not hit:
        return None
    hit.sort(key=lambda f: f.median, reverse=True)
    named = _some([f"{f.setup} {f.shown} {f.unit} ({f.workload})" for f in hit])
    many, them = ("figures are", "them") if len(hit) > 1 else ("figure is", "it")
    sentence = (
        f"{len(hit)} {many} {CACHED[code]}: {named}; read {them} as a cache's speed, not the "
        f"devices' ({code})."
    )
    codes = tuple(w for w in _warned(hit) if w.code == code)
    return Finding("trust", sentence, sum(len(f.values) for f in hit), None,
                   tuple((f.workload, f.setup) for f in hit), codes)  # fmt: skip


ABOVE_MODEL = 150.0  # measured over 150% of the RAID model's prediction: a cache, not members
BELOW_MODEL = 50.0  # under 50%: the array pays more than the rule says, or is not saturated


@dataclass(frozen=True)
class ModelGap:
    """One row of the report's RAID model table: a RAID set-up's measured figure against the
    model's prediction from the single device, as the table shows them."""

    workload: str
    setup: str
    predicted: str
    measured: str
    pct: float  # measured as a percentage of predicted
    shown: str  # that percentage as the table shows it
    cases: int
    warnings: tuple[CheckWarning, ...] = ()


def model(gaps: Sequence[ModelGap]) -> list[Finding]:
    """Per RAID set-up: how far the measured figures sit from the model's, where the model
    misses, and what the miss suggests."""
    by_setup: dict[str, list[ModelGap]] = {}
    for gap in gaps:
        by_setup.setdefault(gap.setup, []).append(gap)
    return [_model(setup, found) for setup, found in by_setup.items()]


def _model(setup: str, found: Sequence[ModelGap]) -> Finding:
    low, high = min(found, key=lambda g: g.pct), max(found, key=lambda g: g.pct)
    span = (
        f"{low.shown} of it on {low.workload}"
        if len(found) == 1
        else f"from {low.shown} ({low.workload}) to {high.shown} ({high.workload}) of it"
    )
    sentence = f"Against the RAID model's prediction, {setup} measures {span}"
    above = [g.workload for g in found if g.pct > ABOVE_MODEL]
    below = [g.workload for g in found if g.pct < BELOW_MODEL]
    if above:
        sentence += (
            f"; far above it on {_some(above)}: a cache (the card's, or the host's page cache) "
            "answers, not the members"
        )
    if below:
        sentence += (
            f"; far below it on {_some(below)}: the array pays more than the rule counts "
            "(the writes its level adds: mirror copies or parity updates; a busy CPU; a stripe the "
            "I/O does not fill) or is not saturated"
        )
    if not above and not below:
        sentence += f"; within {BELOW_MODEL:.0f}% to {ABOVE_MODEL:.0f}%: the model explains it"
    warned = tuple({w.code: w for g in found for w in g.warnings}.values())
    but = f"; but it rests on warned cases ({', '.join(w.code for w in warned)})" if warned else ""
    cells = tuple((g.workload, g.setup) for g in found)
    return Finding("model", f"{sentence}{but}.", sum(g.cases for g in found), None, cells, warned)


def _some(names: Sequence[str], most: int = 3) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


TAIL_RATIO = 10.0  # p99.9 over ten times p50: a long tail worth saying


@dataclass(frozen=True)
class Tail:
    """One row of the report's latency table: a set-up's completion latency on a workload
    and direction, as the table shows it (values in ns, for comparing)."""

    workload: str
    setup: str
    direction: str
    p50: float
    p999: float
    p50_shown: str
    p999_shown: str
    mean: float | None = None


def latency(tails: Sequence[Tail], figures: Sequence[Figure]) -> list[Finding]:
    """Long tails (p99.9 far above p50), and workloads where the set-up with the better
    figure (IOPS, MB/s) has the worse tail: a latency-sensitive reader's choice differs."""
    found = []
    long = [t for t in tails if t.p50 > 0 and t.p999 / t.p50 >= TAIL_RATIO]
    if long:
        worst = max(long, key=lambda t: t.p999 / t.p50)
        cells = tuple(dict.fromkeys((t.workload, t.setup) for t in long))
        behind = [f for f in figures if (f.workload, f.setup) in cells]
        found.append(Finding(
            "latency",
            f"{len(long)} of {len(tails)} latency rows {'has' if len(long) == 1 else 'have'} a "
            "tail: p99.9 at least "
            f"{TAIL_RATIO:.0f}x p50; the longest, {worst.setup} on {worst.workload} "
            f"({worst.direction}), p50 {worst.p50_shown}, p99.9 {worst.p999_shown}"
            f"{_but(behind)}.",
            sum(len(f.values) for f in behind), None, cells, _warned(behind),
        ))  # fmt: skip
    found += _tail_reversals(tails, figures)
    return found


def _tail_reversals(tails: Sequence[Tail], figures: Sequence[Figure]) -> list[Finding]:
    """Workloads where the leader by figure has a worse p99.9 than the runner-up, both
    beyond the noise of the figure (a significant lead) and by more than a quarter."""
    out = []
    by_workload: dict[str, list[Figure]] = {}
    for figure in figures:
        if figure.values:
            by_workload.setdefault(figure.workload, []).append(figure)
    for workload, group in by_workload.items():
        lead = winner(group)
        if lead is None or not lead.significant or len(lead.cells) != 2:
            continue
        first, second = (s for _, s in lead.cells)
        a = _worst_tail(tails, workload, first)
        b = _worst_tail(tails, workload, second)
        if a is None or b is None or a.p999 <= 1.25 * b.p999:
            continue
        out.append(Finding(
            "latency",
            f"{workload}: {first} has the better figure but the worse tail: p99.9 "
            f"{a.p999_shown} against {second}'s {b.p999_shown}; for latency-sensitive work "
            f"{second} is the safer choice.",
            lead.cases, True, lead.cells, lead.warned,
        ))  # fmt: skip
    return out


def _worst_tail(tails: Sequence[Tail], workload: str, setup: str) -> Tail | None:
    mine = [t for t in tails if t.workload == workload and t.setup == setup]
    return max(mine, key=lambda t: t.p999) if mine else None


@dataclass(frozen=True)
class Spread:
    """One cell of pooled runs: how far its runs' means lie apart, as a percentage of their
    mean, over how many runs."""

    workload: str
    setup: str
    pct: float
    runs: int

    @property
    def shown(self) -> str:
        return f"{self.pct:.1f}%"


def and_list(items: Sequence[str]) -> str:
    """ "3", "3 and 10", "3, 7 and 10"."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def pooled(spreads: Sequence[Spread], runs: Sequence[int]) -> list[Finding]:
    """Runs pooled as repetitions: the median cell's spread between them and the widest, each
    a cell of the Across runs table."""
    if not spreads or len(runs) < 2:
        return []
    ranked = sorted(spreads, key=lambda s: s.pct)
    middle, widest = ranked[(len(ranked) - 1) // 2], ranked[-1]  # the median, low
    sentence = (
        f"Runs {and_list([str(r) for r in runs])} read as repetitions of one another: per "
        f"cell, their means lie {middle.shown} apart at the median cell ({middle.setup} on "
        f"{middle.workload}) and {widest.shown} at the widest ({widest.setup} on "
        f"{widest.workload}); a spread wider than the repetitions within one run says "
        "something differs between the runs."
    )
    cells = tuple((s.workload, s.setup) for s in (middle, widest))
    return [Finding("pooled", sentence, 0, None, cells)]


@dataclass(frozen=True)
class Knee:
    """One load curve as its table shows it: the peak's delivered IOPS and p99, and the knee's
    load, IOPS and p99 (no load: no knee within the noise)."""

    setup: str
    workload: str
    peak: str
    peak_p99: str
    load: str | None
    delivered: str = ""
    p99: str = ""
    slo: str = ""  # the curve table's note on its latency target, when it has one
    mark: str = ""  # the knee's ⚑ and the codes of the points it rests on (analysis.peak)
    warned: tuple[CheckWarning, ...] = ()  # what the knee and the target's answer rest on


def knee(found: Knee) -> Finding:
    head = f"{found.setup} · {found.workload}"
    if found.load is None:
        said = (f"{head}: no knee in the load curve within the noise: p99 stays near its "
                f"low-load value up to the peak ({found.peak}, p99 {found.peak_p99})"
                f"{found.mark}.")  # fmt: skip
    else:
        said = (
            f"{head}: the load curve's knee is at {found.load} of the peak ({found.delivered}, "
            f"p99 {found.p99}){found.mark}; past it p99 climbs to {found.peak_p99} at the peak "
            f"({found.peak}): run it below the knee where latency matters."
        )
    if found.slo:
        said += f" Within the target, {found.slo.removeprefix('slo ')}"
    return Finding("latency", said, 0, None, ((found.workload, found.setup),), found.warned)
