"""The Findings section, first in a report: the findings report.judged_findings works out
(analysis.finding_groups's statements, ranked) in words, one per line, each naming what it
rests on (the results table's cells, how many cases, their warnings); the first FIRST of
them, the rest under "More findings" at the end of the report. The short form (`iolab report
--short`) has the first SHORT only, without tags, each caveat said once under them, and one
legend."""

from __future__ import annotations

import re
from collections.abc import Sequence

from iolab.analysis.finding_details import Spread
from iolab.analysis.findings import CHECKS, Finding
from iolab.analysis.findings import WARNED as MARK
from iolab.model import CheckWarning, Code
from iolab.names import and_list
from iolab.report.cells import (
    NO_INTERVAL,
    UNSTABLE,
    WARNED,
    Cell,
    Row,
    Table,
)

TITLE = "Findings"
SAID = "What the numbers show"
NAME = "findings"  # the Notes block's name: the terminal prints it above the results
MORE_TITLE, MORE_NAME = "More findings", "more-findings"  # the appendix, at the end
CAVEATS = "Caveats and legend"  # under the short form's findings
FIRST = 8  # findings in the Findings section; the rest in the appendix
SHORT = 8  # findings in the short form, at most
SHORT_WORDS = 150  # and words: the short form is what an author pastes under a chart


def across_runs_table(spreads: Sequence[Spread], runs: Sequence[int]) -> Table | None:
    """The pooled runs' spread per cell: workloads down, set-ups across."""
    if not spreads:
        return None
    setups = list(dict.fromkeys(s.setup for s in spreads))
    at = {(s.workload, s.setup): s for s in spreads}
    rows = tuple(
        Row(
            workload,
            tuple(
                Cell(found.pct, "%", found.shown)
                if (found := at.get((workload, setup)))
                else Cell(None, "", "—")
                for setup in setups
            ),
        )
        for workload in dict.fromkeys(s.workload for s in spreads)
    )
    return Table(
        f"Across runs {and_list([str(r) for r in runs])}",
        "workload",
        tuple(setups),
        rows,
        (
            "each cell: the highest run mean less the lowest, as a percentage of the mean "
            "of the run means; the results table pools every run's repetitions.",
        ),
        name="across-runs",
        column_header="set-up",
    )


def leaders_table(found: Sequence[Finding]) -> Table | None:
    """Each workload's leader and runner-up, and the leader's margin with its interval."""
    points = [p for f in found if f.kind == "winner" for p in f.points or (f,)]
    rows = tuple(
        Row(
            f.cells[0][0],
            (Cell(None, "", f.cells[0][1]), Cell(None, "", f.cells[1][1]), _margin(f)),
        )
        for f in points
        if len(f.cells) == 2
    )
    if not rows:
        return None
    return Table(
        "Leaders per workload",
        "workload",
        ("leader", "next", "leader vs next"),
        rows,
        (
            "leader vs next: the difference of the means as a percentage of the next's mean, ± "
            "the half-width of its 95% interval (Welch's t); n.s.: within the noise.",
        ),
        name="leaders",
        column_header="role",
    )


def costs_table(found: Sequence[Finding], baseline: str | None) -> Table | None:
    """Each set-up's change against the baseline over the workloads: median, lowest, highest."""
    rows = tuple(
        Row(f.cells[0][1], tuple(Cell(None, "%", text) for text in f.spread))
        for f in found
        if f.kind == "cost" and f.spread[0]
    )
    if not rows or baseline is None:
        return None
    return Table(
        f"Cost against {baseline}",
        "set-up",
        ("median change", "lowest", "highest"),
        rows,
        (
            "change: the difference of the means as a percentage of the baseline's, per "
            "workload (± its 95% interval); the median is over the workloads both ran.",
        ),
        name="costs",
        column_header="change",
    )


def _margin(finding: Finding) -> Cell:
    """The leader's margin, marked n.s. within the noise and ⚑ where it rests on warned
    cases, as every other cell of the report is."""
    text = finding.margin + (" n.s." if finding.significant is False else "")
    codes = tuple(w.code for w in finding.warned)
    if codes:
        text += f" {WARNED} {', '.join(codes)}"
    flags = ("not significant",) if finding.significant is False else ()
    return Cell(None, "%", text, flags=(*flags, *codes), warnings=finding.warned)


def lines(found: Sequence[Finding]) -> tuple[str, ...]:
    """Each finding as a line: its sentence, then what it rests on."""
    out = []
    for finding in found:
        cases = f"{finding.cases} case{'s' if finding.cases != 1 else ''}"
        rests = f"{finding.kind}; {cases}" if finding.cases else finding.kind
        out.append(f"{finding.sentence} [{rests}]")
    return tuple(out)


def first_lines(found: Sequence[Finding]) -> tuple[str, ...]:
    """The Findings section's lines: the first FIRST, and where the rest are."""
    rest = len(found) - FIRST
    more = (
        f"{rest} more finding{'s' if rest > 1 else ''}, ranked below these, under "
        f"{MORE_TITLE} at the end of the report.",
    )
    return (*lines(found[:FIRST]), *(more if rest > 0 else ()))


def more_lines(found: Sequence[Finding]) -> tuple[str, ...]:
    """The appendix's lines: the findings past the first FIRST."""
    return lines(found[FIRST:])


# What a caveat means, said once under the short form's findings; other codes say what to do
MEANINGS: dict[str, str] = {
    Code.FOREIGN_LOAD: "other work shared the host while these cases ran: the figures are the "
    "set-ups' under that load, not their own",
    Code.CPU_BOUND: "the CPU may have been the limit, not the device",
    Code.PAGE_CACHE: "the page cache served some of the I/O: a cache's speed, not the device's",
    Code.ABOVE_CEILING: "a figure above what the devices behind can deliver: a cache answered",
    Code.CACHE_SIZE: "a test small enough to fit a cache",
    Code.PUBLISHED: "a published figure, imported as printed: not measured here",
}


def _short(found: Sequence[Finding]) -> list[Finding]:
    """The short form's findings: in rank order, past the count of warned figures (which
    the caveats say once), up to SHORT of them and SHORT_WORDS words (the first always)."""
    out: list[Finding] = []
    words = 0
    for finding in (f for f in found if not (f.group == CHECKS and f.warned)):
        size = len(_brief(finding.short).split())
        if out and (len(out) == SHORT or words + size > SHORT_WORDS):
            break
        out.append(finding)
        words += size
    return out


_NO_INTERVAL = re.compile(rf" \([\d,]+ [a-z]+: {NO_INTERVAL}\)( {UNSTABLE})?")


def _brief(sentence: str) -> str:
    """A sentence without the per-figure interval words, which the caveats say once."""
    return _NO_INTERVAL.sub("", sentence)


def _marked(finding: Finding) -> list[CheckWarning]:
    return [w for w in finding.warned if not w.note]


def short_lines(found: Sequence[Finding]) -> tuple[str, ...]:
    """The short form: the first SHORT findings without tags or caveats, each marked ⚑ with
    the codes of the warnings it rests on (said once, by caveat_lines)."""
    out = []
    for finding in _short(found):
        mine = _marked(finding)
        mark = f"{MARK} {', '.join(w.code for w in mine)}" if mine else ""
        out.append(f"{_brief(finding.short)}{mark}")
    return tuple(out)


def caveat_lines(found: Sequence[Finding]) -> tuple[str, ...]:
    """Under the short form's findings: each caveat once, with how many findings it is on,
    and one legend."""
    shown = _short(found)
    codes: dict[str, list[CheckWarning]] = {}
    for finding in shown:
        for warning in _marked(finding):
            codes.setdefault(warning.code, []).append(warning)
    out = []
    loose = sum(1 for finding in shown if _brief(finding.short) != finding.short)
    if loose:
        many = f"{loose} of these {len(shown)} findings" if len(shown) > 1 else "it"
        out.append(
            f"No interval, on {many}: some figures' repetitions spread wider than the figure "
            "itself, so they carry no useful 95% interval; the full report shows which."
        )
    for code, said in codes.items():
        meaning = MEANINGS.get(code) or said[0].advice
        many = f"{len(said)} of these {len(shown)} findings" if len(shown) > 1 else "it"
        out.append(f"{MARK.strip()} {code}, on {many}: {meaning.rstrip('.')}.")
    out.append(LEGEND)
    return tuple(out)


LEGEND = (
    "Figures as the results table shows them: the median of the repetitions ± the half-width "
    "of its 95% interval; a lead is one beyond the noise when Welch's 95% interval of the "
    f"difference excludes 0; {MARK.strip()} marks a finding that rests on figures iolab cannot "
    "vouch for, with the caveat's code. Every finding, ranked, is in --format json and csv "
    "(--export)."
)
