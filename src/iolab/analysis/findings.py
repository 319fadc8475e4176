"""Findings in words: what a report's numbers show, each statement with the figures it rests
on, their intervals, how many cases, and the warnings of those cases.

The typed finding and figure, and the findings that compare set-ups on a workload, live
here; analysis.finding_details has the RAID model's, latency's, the load curves' and pooled
runs' findings, analysis.finding_sweeps the scaling ones, and analysis.finding_groups puts
them together: one line per group of workloads or per sweep, each ranked by how much it
says (`derive`). `report.views.findings_view` lays them out. Every figure cited is the text of a
cell of the report's tables (so no finding cites a number the report does not show), in the
unit that table gives the workload (IOPS for small blocks, MB/s for large), a mixed
workload's read and write apart; and a finding makes no claim its data cannot carry:

- **winner**, per workload: the best set-up against the next; "leads ... by +x% ± y%" only
  when Welch's 95% interval of the difference excludes 0, "not distinguishable" when it does
  not, "indicative (one run each, no interval)" without repetitions. Overall: who leads most
  workloads, counting only significant leads when there are repetitions.
- **cost** of a choice against the baseline (`--baseline`): per other set-up, the median
  change over the workloads, its range, and the workloads where it reverses (significantly).
- **cap**: several set-ups whose best figure on a workload is within 5% of each other, all
  other set-ups below: a shared limit (a controller, a bus, the host), as studies A and C
  found by eye.
- **trust**: what the checks found, counted by kind, and what that means for the numbers.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from iolab.analysis.stats import compare, summarize
from iolab.model import CheckWarning, Code

Kind = Literal[
    "pooled", "winner", "overall", "cost", "cap", "scaling", "model", "latency", "trust", "factor"
]  # factor: analysis.factors's
CAP_SPREAD = 0.05  # set-ups within 5% of each other share a cap
# without repetitions, set-ups closer than this (percent) are not said to lead: runs of one
# plan differ by a few percent from one to the next (analysis.history's rule)
SAME_WITHOUT_INTERVAL = 5.0
WARNED = " ⚑"
CHECKS = "checks"  # the group of the trust findings that count the checks' warnings


@dataclass(frozen=True)
class Part:
    """One direction of a mixed workload's figure, as its table's direction row shows it."""

    direction: str  # "read", "write" or "trim"
    shown: str


@dataclass(frozen=True)
class Figure:
    """One cell of the results table as a finding reads it: where it is, the figure as the
    table shows it, its repetitions' values, and the warnings of the cases behind it; for a
    workload of a family (the points of a sweep: alike but for numjobs or iodepth), the
    family and the point; for a mixed workload, each direction's figure (`parts`), and
    whether its total means something (`total`: not where IOPS of different block sizes
    would be added)."""

    workload: str
    setup: str
    text: str
    unit: str
    values: tuple[float, ...]
    warnings: tuple[CheckWarning, ...] = ()
    family: str = ""  # "" where the workload is its own family
    point: str = ""  # "iodepth=8 numjobs=4": what sets it apart in its family
    parts: tuple[Part, ...] = ()
    total: bool = True

    @property
    def shown(self) -> str:
        """The figure as the table shows it, without the warnings' mark (said apart)."""
        return self.text.split(WARNED)[0]

    @property
    def quoted(self) -> str:
        """The figure as a sentence quotes it, with its unit: "41,938 IOPS"; a mixed
        workload's "54,113 read + 23,248 write IOPS (total 77,361)"."""
        if not self.parts:
            return f"{self.shown} {self.unit}"
        apart = " + ".join(f"{p.shown} {p.direction}" for p in self.parts)
        if not self.total:
            return f"{apart} {self.unit}"
        # a total that says its interval in words ("(2 repetitions: ...)") after a comma
        return f"{apart} {self.unit}" + (
            f", total {self.shown}" if "(" in self.shown else f" (total {self.shown})"
        )

    @cached_property
    def median(self) -> float:
        """The repetitions' median, worked out once (the findings ask it many times)."""
        return statistics.median(self.values)

    @property
    def group(self) -> str:
        """What a grouped finding names it by: its family, else its workload."""
        return self.family or self.workload


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
    effect: float = 0.0  # how large what it says is, in percent (a lead, a change, a gain)
    group: str = ""  # the comparison or sweep it speaks for: a workload family, a set-up
    rank: float = 0.0  # how much it says (analysis.finding_groups.rank); higher first
    plain: str = ""  # the sentence without its "; but ..." caveat (the short form's)
    points: tuple[Finding, ...] = ()  # the per-workload findings a grouped one stands for

    @property
    def short(self) -> str:
        """The sentence for the short form: its caveat said once, under all of them."""
        return self.plain or self.sentence


def merged(each: Sequence[tuple[CheckWarning, ...]]) -> tuple[CheckWarning, ...]:
    """The warnings of several figures (or changes), one per code."""
    return tuple({w.code: w for warnings in each for w in warnings}.values())


def but_said(each: Sequence[tuple[CheckWarning, ...]], what: str) -> str:
    """ "; but ..." when some of these rest on warned cases: the reader must not miss it."""
    codes = [w.code for w in merged(each)]
    if not codes:
        return ""
    warned = sum(1 for warnings in each if warnings)
    return f"; but {warned} of these {len(each)} {what} ({', '.join(codes)})"


def warned_of(group: Sequence[Figure]) -> tuple[CheckWarning, ...]:
    return merged([f.warnings for f in group])


def but(group: Sequence[Figure]) -> str:
    return but_said([f.warnings for f in group], "figures carry warnings")


def winner(group: Sequence[Figure]) -> Finding | None:
    """The best set-up on one workload against the next."""
    if len(group) < 2:
        return None
    # ranked by the mean, the figure its margin (Welch's, over the means) is taken from: a
    # leader by median could trail by its own margin
    first, second = sorted(group, key=lambda f: statistics.fmean(f.values), reverse=True)[:2]
    diff = compare(list(second.values), list(first.values))
    change, half = diff.change_pct, diff.half_width_pct
    head = f"{first.workload}: {first.setup} {first.quoted}, {second.setup} {second.quoted}"
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
        "winner",
        f"{head}: {said}{but(pair)}.",
        len(first.values) + len(second.values),
        False if tied else diff.significant,
        tuple((f.workload, f.setup) for f in pair),
        warned_of(pair),
        margin,
        effect=abs(change),
        group=first.group,
        plain=f"{head}: {said}.",
    )


def overall(winners: Sequence[Finding], workloads: int) -> list[Finding]:
    """Who leads most workloads: significant leads only when there are intervals."""
    if workloads < 2 or not winners:
        return []
    counted = [w for w in winners if w.significant is not False]
    leads = Counter(w.cells[0][1] for w in counted)
    if not leads:
        return [
            Finding(
                "overall",
                "No set-up leads on any workload beyond the noise.",
                sum(w.cases for w in winners),
                False,
                (),
            )
        ]
    setup, count = leads.most_common(1)[0]
    noise = len(winners) - len(counted)
    tail = f"; on {noise} the leader is within the noise" if noise else ""
    return [
        Finding(
            "overall",
            f"{setup} leads on {count} of {workloads} workloads{tail}.",
            sum(w.cases for w in winners),
            None,
            tuple(c for w in counted for c in w.cells[:1]),
            effect=100 * count / workloads,
            group="overall",
        )
    ]


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
                    Change(
                        workload,
                        diff.change_pct,
                        shown,
                        diff.significant,
                        len(base.values) + len(other.values),
                        warned_of((base, other)),
                    )
                )
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
        said = (
            "significant"
            if only.significant
            else "within the noise"
            if only.significant is False
            else "one run each: no interval"
        )
        sentence = f"Against {baseline}, {setup} changes {only.workload} by {only.shown} ({said})"
        return Finding(
            "cost",
            f"{sentence}{_but_changes(found)}.",
            cases,
            only.significant,
            ((only.workload, setup),),
            _warned_changes(found),
            effect=abs(only.pct),
            group=f"{setup} against {baseline}",
            plain=f"{sentence}.",
        )
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
    spread = (median, f"{low.shown} ({low.workload})", f"{high.shown} ({high.workload})")
    cells = tuple((c.workload, setup) for c in found)
    return Finding(
        "cost",
        f"{sentence}{_but_changes(found)}.",
        cases,
        None,
        cells,
        _warned_changes(found),
        spread=spread,
        effect=max(abs(low.pct), abs(high.pct)),
        group=f"{setup} against {baseline}",
        plain=f"{sentence}.",
    )


def _warned_changes(found: Sequence[Change]) -> tuple[CheckWarning, ...]:
    return merged([c.warnings for c in found])


def _but_changes(found: Sequence[Change]) -> str:
    """ "; but ..." when changes rest on warned figures (the baseline's or the set-up's)."""
    return but_said([c.warnings for c in found], "changes rest on warned figures")


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
        if near[0].parts:  # a mixed workload: each set-up's read and write apart
            names = ", ".join(f"{f.setup} {f.quoted.removesuffix(' ' + f.unit)}" for f in near)
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
        cells = tuple((f.workload, f.setup) for f in near)
        cases = sum(len(f.values) for f in near)
        below = ranked[len(near)].median if len(near) < len(ranked) else top
        found.append(
            Finding(
                "cap",
                f"{workload}: {said}{but(near)}.",
                cases,
                None,
                cells,
                warned_of(near),
                effect=100 * (top / below - 1) if below > 0 else 0.0,
                group=near[0].group,
                plain=f"{workload}: {said}.",
            )
        )
    return found


def _loose(figure: Figure) -> bool:
    """A figure whose 95% interval is wider than the cap's spread either side of it."""
    if len(figure.values) < 2 or figure.median <= 0:
        return False
    half = summarize(figure.values).half_width
    return half is not None and half > CAP_SPREAD * figure.median


def trust(figures: Sequence[Figure]) -> list[Finding]:
    """What the checks found on the figures of the results table, counted by kind."""
    if not figures:
        return []
    warned = [f for f in figures if f.warnings]
    if not warned:
        return [
            Finding(
                "trust",
                f"No methodology check fired on the {len(figures)} figures.",
                sum(len(f.values) for f in figures),
                None,
                (),
                group=CHECKS,
            )
        ]
    counts = Counter(w.code for f in warned for w in f.warnings)
    listed = ", ".join(f"{code} on {n}" for code, n in counts.most_common())
    sentence = (
        f"{len(warned)} of {len(figures)} figures rest on warned cases ({listed}): read them "
        "with the warnings under the results, which say why and what to do."
    )
    counted = Finding(
        "trust",
        sentence,
        sum(len(f.values) for f in warned),
        None,
        tuple((f.workload, f.setup) for f in warned),
        warned_of(warned),
        effect=100 * len(warned) / len(figures),
        group=CHECKS,
    )
    return [counted, *(f for code in CACHED if (f := _cached(code, warned)) is not None)]


# Checks that say a figure is a cache's, not the devices': each gets its own finding that
# names the figures, since a reader would otherwise quote them as the devices' speed.
CACHED = {
    Code.ABOVE_CEILING: "above the physical limit of the devices behind",
    Code.PAGE_CACHE: "served by the page cache",
    Code.CACHE_SIZE: "from a test small enough to fit a cache",
}


def _cached(code: Code, warned: Sequence[Figure]) -> Finding | None:
    hit = [f for f in warned if any(w.code == code for w in f.warnings)]
    if not hit:
        return None
    hit.sort(key=lambda f: f.median, reverse=True)
    named = some([f"{f.setup} {f.quoted} ({f.workload})" for f in hit])
    many, them = ("figures are", "them") if len(hit) > 1 else ("figure is", "it")
    sentence = (
        f"{len(hit)} {many} {CACHED[code]}: {named}; read {them} as a cache's speed, not the "
        f"devices' ({code})."
    )
    codes = tuple(w for w in warned_of(hit) if w.code == code)
    return Finding(
        "trust",
        sentence,
        sum(len(f.values) for f in hit),
        None,
        tuple((f.workload, f.setup) for f in hit),
        codes,
        effect=100.0,
        group=f"{CHECKS}: {code}",
    )


def some(names: Sequence[str], most: int = 3) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")
