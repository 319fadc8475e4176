"""Every finding of a report, grouped and ranked: what a reader can take in.

A sweep's points (a workload family: alike but for numjobs or iodepth) are one comparison,
so their winners make one line per family ("4k random read, 15 points: x1 leads on 11, x2
on 2, ..."), not one per point; caps and latency reversals of one family fold the same way
(`fold`); sweeps are one sentence per family and axis (analysis.finding_sweeps). Each finding
then gets a rank, how much it says (`rank`): the size of its effect, whether it is beyond the
noise, and how many cases and cells it covers; `ranked` orders any findings by it, so that
findings made elsewhere (per factor, say) join the same order. The per-point findings a
grouped one stands for stay in it (`Finding.points`), for the Leaders table.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import replace

from iolab.analysis.finding_details import (
    LoadKnee,
    ModelGap,
    Tail,
    knee,
    latency,
    model,
)
from iolab.analysis.finding_sweeps import Sweep, sweep_findings
from iolab.analysis.findings import (
    Figure,
    Finding,
    but_said,
    caps,
    cost,
    merged,
    overall,
    some,
    trust,
    winner,
)
from iolab.model import CheckWarning, Code

MOST_EFFECT = 300.0  # percent: past a 4x difference, a larger one says no more
WEIGHT = {True: 1.0, None: 0.6, False: 0.3}  # beyond the noise, no interval, within it


def derive(
    figures: Sequence[Figure],
    baseline: str | None = None,
    extra: Sequence[CheckWarning] = (),
    gaps: Sequence[ModelGap] = (),
    tails: Sequence[Tail] = (),
    sweeps: Sequence[Sweep] = (),
    knees: Sequence[LoadKnee] = (),
) -> list[Finding]:
    """Every finding the figures carry, grouped per family and sweep, ranked."""
    by_workload: dict[str, list[Figure]] = {}
    for figure in figures:
        if figure.values:
            by_workload.setdefault(figure.workload, []).append(figure)
    points = [w for group in by_workload.values() if (w := winner(group)) is not None]
    found = winners(points, by_workload)
    found += overall(points, len(by_workload))
    if baseline is not None:
        found += cost(by_workload, baseline)
    found += fold(caps(by_workload), "cap")
    usable = [s for s in sweeps if all(f.median > 0 for _, f in s.steps)]
    found += sweep_findings(usable, [w for w in extra if w.code == Code.FLAT_SCALING])
    found += model(gaps)
    found += fold(latency(tails, figures), "latency")
    found += [knee(k) for k in knees]
    found += trust(figures)
    return ranked(found)


def rank(finding: Finding) -> float:
    """How much a finding says: the size of its effect (capped at MOST_EFFECT), weighed by
    whether it is beyond the noise, times the log of how many cases and cells it covers."""
    size = 0.2 + min(abs(finding.effect), MOST_EFFECT) / 100
    reach = math.log2(2 + finding.cases + len(finding.cells))
    return round(size * WEIGHT[finding.significant] * reach, 3)


def ranked(found: Sequence[Finding]) -> list[Finding]:
    """The findings with their rank, highest first (the order they came in between equals)."""
    scored = [replace(f, rank=rank(f)) for f in found]
    return sorted(scored, key=lambda f: -f.rank)


def winners(points: Sequence[Finding], figures: Mapping[str, Sequence[Figure]]) -> list[Finding]:
    """One winner line per family of workloads; a workload of its own keeps its own.
    `figures`: each workload's, to quote the widest lead's."""
    by_group: dict[str, list[Finding]] = {}
    for point in points:
        by_group.setdefault(point.group or point.cells[0][0], []).append(point)
    return [
        group[0] if len(group) == 1 else _family(name, group, figures)
        for name, group in by_group.items()
    ]


def _family(
    name: str, points: Sequence[Finding], figures: Mapping[str, Sequence[Figure]]
) -> Finding:
    """A family's winners in one sentence: who leads on how many points, how many are within
    the noise, and the widest lead with its figures (from the Leaders table's margins)."""
    leads = [p for p in points if p.significant is not False]
    counts: dict[str, int] = {}
    for point in leads:
        counts[point.cells[0][1]] = counts.get(point.cells[0][1], 0) + 1
    ordered = sorted(counts.items(), key=lambda item: -item[1])
    said = ", ".join(f"{setup} on {n}" for setup, n in ordered)
    labels = [figures[p.cells[0][0]][0].point or p.cells[0][0] for p in points]
    head = f"{name}, {len(points)} points ({_axes(labels)})"
    parts = [f"{ordered[0][0]} leads on {ordered[0][1]}"] if ordered else []
    parts[0:1] = [f"leads: {said}"] if len(ordered) > 1 else parts
    noise = len(points) - len(leads)
    if noise:
        parts.append(f"within the noise on {noise}")
    if any(p.significant is None for p in leads):
        parts.append("one run each: no interval, indicative")
    widest = max(leads or points, key=lambda p: p.effect)  # the figures, whoever leads
    lead = "the widest lead" if leads else "the widest gap"
    parts.append(f"{lead}, {_figures(widest, figures[widest.cells[0][0]])}")
    sentence = f"{head}: {'; '.join(parts)}"
    caveat = but_said([p.warned for p in points], "points rest on warned figures")
    significant = None if any(p.significant is None for p in leads) else bool(leads)
    return Finding(
        "winner",
        f"{sentence}{caveat}.",
        sum(p.cases for p in points),
        significant if len(counts) <= 1 else None,
        tuple(c for p in points for c in p.cells),
        merged([p.warned for p in points]),
        effect=_typical(leads),
        group=name,
        plain=f"{sentence}.",
        points=tuple(points),
    )


def _figures(point: Finding, figures: Sequence[Figure]) -> str:
    """A point's lead with both figures as the table shows them: "x1 at iodepth=32 numjobs=1:
    78,086 IOPS against x2's 4,553 IOPS (+1615.0%)"."""
    (workload, setup), (_, other) = point.cells[:2]
    at = {f.setup: f for f in figures}
    where = at[setup].point or workload
    return (
        f"{setup} at {where}: {at[setup].quoted} against {other}'s {at[other].quoted} "
        f"({point.margin})"
    )


def _typical(leads: Sequence[Finding]) -> float:
    """The typical lead (the median margin) of a family's points, in percent."""
    return statistics.median(p.effect for p in leads) if leads else 0.0


_SETTING = re.compile(r"(\w+)=(\S+)")


def _axes(labels: Sequence[str]) -> str:
    """What the points vary, from their labels ("iodepth=8 numjobs=4"): "iodepth 1-32,
    numjobs 1-16"."""
    seen: dict[str, list[str]] = {}
    for label in labels:
        for name, value in _SETTING.findall(label):
            if value not in seen.setdefault(name, []):
                seen[name].append(value)
    varied = {name: values for name, values in seen.items() if len(values) > 1}
    if not varied:
        return f"{len(labels)} workloads"
    return ", ".join(f"{name} {_span(values)}" for name, values in varied.items())


def _span(values: Sequence[str]) -> str:
    numbers = [int(v) for v in values if v.isdigit()]
    if len(numbers) == len(values):
        return f"{min(numbers)}-{max(numbers)}"
    return "/".join(values)


def fold(found: Sequence[Finding], kind: str) -> list[Finding]:
    """Findings of one kind about one family: the one with the largest effect, and the rest
    named after it ("Likewise on 4 more of 4k random read: ..."); others as they are."""
    by_group: dict[str, list[Finding]] = {}
    alone = []
    for finding in found:
        if finding.kind == kind and finding.group:
            by_group.setdefault(finding.group, []).append(finding)
        else:
            alone.append(finding)
    out = []
    for group, members in by_group.items():
        if len(members) == 1:
            out.append(members[0])
            continue
        first, *rest = sorted(members, key=lambda f: -f.effect)
        named = some(list(dict.fromkeys(f.cells[0][0] for f in rest if f.cells)))
        also = f" Likewise on {len(rest)} more of {group}: {named}."
        out.append(
            replace(
                first,
                sentence=first.sentence + also,
                plain=first.short + also,
                cases=sum(f.cases for f in members),
                points=tuple(members),
                cells=tuple(dict.fromkeys(c for f in members for c in f.cells)),
                warned=merged([f.warned for f in members]),
            )
        )
    return [*out, *alone]
