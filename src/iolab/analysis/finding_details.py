"""Findings beside the comparison of set-ups: the RAID model's prediction against the
measured figures, latency (long tails, a leader with the worse tail, each load curve's knee),
and runs pooled as repetitions of one another.

- **model**: a RAID set-up's measured figures against the RAID model's prediction (the
  report's RAID model table): the range, and what a gap suggests (far above: a cache; far
  below: costs the rule leaves out, or an array not saturated).
- **latency**: long tails (p99.9 at least 10x p50, from the latency table), workloads where
  the leader by figure has a tail over a quarter worse than the runner-up's, and the knee of
  each load curve (from its table: the last load before p99 climbs for good).
- **pooled**: several runs read as repetitions of one another (`--pool`): how far apart the
  runs' own means lie, per cell (the report's Across runs table), the median and the widest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from iolab.analysis.findings import Figure, Finding, but, some, warned_of, winner
from iolab.model import CheckWarning
from iolab.names import and_list

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
    level: str = ""  # the RAID level ("raid0", "raid5", "raid10"...); "" where not known
    cached: bool = True  # a cache sits in the stack (a card's, a drive's, buffered I/O)


def _adds(level: str) -> str:
    """What a level's writes add beyond the rule, in words; RAID0 adds none."""
    if level.endswith(("1", "10")) or "mirror" in level:
        return "mirror copies; "
    if level.endswith(("5", "6")):
        return "parity updates; "
    return "" if level else "mirror copies or parity updates; "


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
        cached = any(g.cached for g in found if g.workload in above)
        sentence += (
            f"; far above it on {some(above)}: a cache (the card's, the drive's or the host's "
            "page cache) answers, not the members"
            if cached
            else f"; far above it on {some(above)}, with no cache in the stack to answer: the "
            "single device's figure the model scales from is likely low (other load, or "
            "noise); measure the single device again"
        )
    if below:
        adds = _adds(found[0].level)
        sentence += (
            f"; far below it on {some(below)}: the array pays more than the rule counts "
            f"({adds}a busy CPU; a stripe the I/O does not fill) or is not saturated"
        )
    if not above and not below:
        sentence += f"; within {BELOW_MODEL:.0f}% to {ABOVE_MODEL:.0f}%: the model explains it"
    warned = tuple({w.code: w for g in found for w in g.warnings}.values())
    caveat = (
        f"; but it rests on warned cases ({', '.join(w.code for w in warned)})" if warned else ""
    )
    cells = tuple((g.workload, g.setup) for g in found)
    return Finding(
        "model",
        f"{sentence}{caveat}.",
        sum(g.cases for g in found),
        None,
        cells,
        warned,
        effect=max(abs(g.pct - 100) for g in found),
        group=setup,
        plain=f"{sentence}.",
    )


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
        said = (
            f"{len(long)} of {len(tails)} latency rows {'has' if len(long) == 1 else 'have'} a "
            f"tail: p99.9 at least {TAIL_RATIO:.0f}x p50; the longest, {worst.setup} on "
            f"{worst.workload} ({worst.direction}), p50 {worst.p50_shown}, p99.9 "
            f"{worst.p999_shown}"
        )
        found.append(
            Finding(
                "latency",
                f"{said}{but(behind)}.",
                sum(len(f.values) for f in behind),
                None,
                cells,
                warned_of(behind),
                effect=100 * len(long) / len(tails),
                group="latency",
                plain=f"{said}.",
            )
        )
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
        out.append(
            Finding(
                "latency",
                f"{workload}: {first} has the better figure but the worse tail: p99.9 "
                f"{a.p999_shown} against {second}'s {b.p999_shown}; for latency-sensitive work "
                f"{second} is the safer choice.",
                lead.cases,
                True,
                lead.cells,
                lead.warned,
                effect=100 * (a.p999 / b.p999 - 1),
                group=lead.group,
            )
        )
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
    return [Finding("pooled", sentence, 0, None, cells, effect=widest.pct, group="pooled")]


@dataclass(frozen=True)
class LoadKnee:
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


def knee(found: LoadKnee) -> Finding:
    head = f"{found.setup} · {found.workload}"
    if found.load is None:
        said = (
            f"{head}: no knee in the load curve within the noise: p99 stays near its "
            f"low-load value up to the peak ({found.peak}, p99 {found.peak_p99})"
            f"{found.mark}."
        )
    else:
        said = (
            f"{head}: the load curve's knee is at {found.load} of the peak ({found.delivered}, "
            f"p99 {found.p99}){found.mark}; past it p99 climbs to {found.peak_p99} at the peak "
            f"({found.peak}): run it below the knee where latency matters."
        )
    if found.slo:
        said += f" Within the target, {found.slo.removeprefix('slo ')}"
    return Finding(
        "latency",
        said,
        0,
        None,
        ((found.workload, found.setup),),
        found.warned,
        effect=20.0 if found.load is None else 50.0,
        group=head,
    )
