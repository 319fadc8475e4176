"""The Findings section, first in a report: analysis.finding_groups's statements, ranked,
one per line, each naming what it rests on (the results table's cells, how many cases,
their warnings); the first FIRST of them, the rest under "More findings" at the end of the
report. The short form (`iolab report --short`) has the first SHORT only, without tags, each
caveat said once under them, and one legend."""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import replace

from iolab.analysis import finding_details, finding_groups, scaling
from iolab.analysis.finding_details import LoadKnee, ModelGap, Spread, Tail
from iolab.analysis.finding_sweeps import Sweep
from iolab.analysis.findings import CHECKS, Figure, Finding, Part, and_list
from iolab.analysis.findings import WARNED as MARK
from iolab.model import DIRECTIONS, CheckWarning, Code
from iolab.report.cells import (
    NO_INTERVAL,
    UNSTABLE,
    WARNED,
    Cell,
    Row,
    Table,
    cell_values,
    format_value,
    shown_in,
)
from iolab.report.data import DataCase, Dataset
from iolab.report.views import curve_view, fleet_view, hosts_view, telemetry_view

TITLE = "Findings"
SAID = "What the numbers show"
NAME = "findings"  # the Notes block's name: the terminal prints it above the results
MORE_TITLE, MORE_NAME = "More findings", "more-findings"  # the appendix, at the end
CAVEATS = "Caveats and legend"  # under the short form's findings
FIRST = 8  # findings in the Findings section; the rest in the appendix
SHORT = 8  # findings in the short form, at most
SHORT_WORDS = 150  # and words: the short form is what an author pastes under a chart
LOAD_AXES = ("numjobs", "iodepth")  # what the points of a workload family differ in
# what a family's workloads share (beside their names less the load axes): the pattern, the
# block size and the mix; never file or log names
FAMILY_OPTIONS = (
    "rw",
    "readwrite",
    "bs",
    "blocksize",
    "bssplit",
    "rwmixread",
    "rwmixwrite",
    "direct",
    "ioengine",
)


def figures(data: Dataset, results: Table, metric: str) -> list[Figure]:
    """The results table's set-up cells (not its change columns), with their repetitions,
    each workload's family and point, and a mixed workload's read and write apart; a
    workload's last row is its figure (a mixed workload's total)."""
    out: dict[tuple[str, str], Figure] = {}
    setups = set(data.labels)
    family = families(data, [row.label for row in results.rows])
    for row in results.rows:
        cases = [c for s in data.labels for c in data.cell(s, row.label)]
        if not cases:
            continue
        chosen = shown_in(cases[0], metric)
        named, point = family.get(row.label, ("", ""))
        for key, cell in zip(results.keys, row.cells, strict=True):
            if key not in setups or cell.value is None:
                continue
            group = data.cell(key, row.label)
            values, _ = cell_values(group, chosen)  # IOPS, or MB/s
            out[(row.label, key)] = Figure(
                row.label,
                key,
                cell.text,
                cell.unit,
                tuple(values),
                cell.warnings,
                named,
                point,
                parts(group, chosen),
                _total_means(cases[0].options, chosen),
            )
    return list(out.values())


def parts(cases: Sequence[DataCase], metric: str) -> tuple[Part, ...]:
    """A mixed workload's figure per direction (the median of its ok repetitions), as the
    results table's direction rows give it; () where the cases moved data one way only."""
    ok = [c for c in cases if c.status == "ok"]
    moved = [d for d in DIRECTIONS if any(d in c.metrics and c.metrics[d].io_bytes for c in ok)]
    if len(moved) < 2:
        return ()
    out = []
    for direction in moved:
        values = [
            (m.iops if metric == "iops" else m.bw_bytes / 1e6)
            if (m := c.metrics.get(direction))
            else 0.0
            for c in ok
        ]
        out.append(Part(direction, format_value(statistics.median(values), metric)))
    return tuple(out)


def _total_means(options: Mapping[str, object], metric: str) -> bool:
    """Whether read + write means something: bytes always; I/Os where both are one size."""
    return metric != "iops" or "," not in str(options.get("bs", "")) + str(
        options.get("bssplit", "")
    )


_LOAD = re.compile(rf"\s*\b(?:{'|'.join(LOAD_AXES)})=\S+")


def _position(name: str, axis: str) -> int:
    """Where a workload's name sets an axis ("iodepth=8 numjobs=4"), to name a point's axes
    in the same order; an axis its name does not set comes last."""
    found = name.find(f"{axis}=")
    return len(name) if found < 0 else found


def families(data: Dataset, workloads: Sequence[str]) -> dict[str, tuple[str, str]]:
    """Each workload of a family (workloads alike in name and FAMILY_OPTIONS but for
    numjobs or iodepth: a sweep's points) as (the family's name, the point's: "iodepth=8
    numjobs=4", the load axes that vary in it); a workload alone is not listed."""
    keyed: dict[tuple[str, str], list[str]] = {}
    for workload in dict.fromkeys(workloads):
        options = data.first(workload).options
        name = _LOAD.sub("", workload).strip() or f"{options.get('rw')} {options.get('bs')}"
        shared = json.dumps([str(options.get(k, "")) for k in FAMILY_OPTIONS])
        keyed.setdefault((name, shared), []).append(workload)
    out = {}
    for (name, _), members in keyed.items():
        at = {w: data.first(w).options for w in members}
        varied = [a for a in LOAD_AXES if len({str(o.get(a, 1)) for o in at.values()}) > 1]
        varied.sort(key=lambda a: _position(members[0], a))
        if len(members) < 2 or not varied:
            continue
        for workload, options in at.items():
            out[workload] = (name, " ".join(f"{a}={options.get(a, 1)}" for a in varied))
    return out


def across_runs(data: Dataset, results: Table, metric: str) -> list[Spread]:
    """Pooled runs: per results cell, how far the runs' own means lie apart, as a percentage
    of their mean."""
    out = []
    for row in results.rows if data.pooled_runs else ():
        for setup in data.labels:
            by_run: dict[int, list[float]] = {}
            for case in data.cell(setup, row.label):
                chosen = shown_in(case, metric)
                by_run.setdefault(case.run_id, []).extend(cell_values([case], chosen)[0])
            means = [statistics.mean(v) for v in by_run.values() if v]
            if len(means) >= 2 and statistics.mean(means) > 0:
                spread = (max(means) - min(means)) / statistics.mean(means) * 100
                out.append(Spread(row.label, setup, spread, len(means)))
    return out


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


def knees(data: Dataset) -> list[LoadKnee]:
    """Each load curve's knee as its table shows it: the row flagged knee (or none) and the
    peak's row, their delivered IOPS and p99."""
    out = []
    for label, base, search in curve_view.searches(data):
        if search.curve is None:
            continue
        cases = curve_view.cases_of(data, label)
        table = curve_view.curve_table(label, base, search.curve, cases)
        p99 = next(i for i, name in enumerate(table.columns) if name.startswith("p99 "))
        knee = next((r for r in table.rows if "knee" in r.stubs[0].split(", ")), None)
        (peak_iops, peak_p99), (at_iops, at_p99) = _at(table.rows[-1], p99), _at(knee, p99)
        load = None if knee is None else knee.label
        slo = curve_view.slo_note(search.curve, cases) or ""
        mark, warned = curve_view.rests_on(search.curve, cases)
        out.append(
            LoadKnee(label, base, peak_iops, peak_p99, load, at_iops, at_p99, slo, mark, warned)
        )
    return out


def _at(row: Row | None, p99: int) -> tuple[str, str]:
    """A curve row's delivered IOPS and p99, as the table shows them (their ⚑ said apart)."""
    if row is None:
        return "", ""
    iops, latency = (row.cells[at].text.split(f" {WARNED}")[0] for at in (1, p99))
    return f"{iops} IOPS", f"{latency} {row.cells[p99].unit}"


def sweeps(data: Dataset, shown: Sequence[Figure]) -> list[Sweep]:
    """The results' numjobs, iodepth and device-count sweeps (analysis.scaling groups them:
    the same set-up, or striped set-ups alike but for their devices; every other option
    alike)."""
    by_cell = {(f.setup, f.workload): f for f in shown}
    definitions = {s.label: s.definition for s in data.setups}
    counted = {label: telemetry_view.devices_of(d) for label, d in definitions.items()}
    points = [
        scaling.Point(
            f.setup,
            f.workload,
            first.options,
            f.median,
            None,
            *(counted.get(f.setup) or telemetry_view.devices_of({})),
            classified=data.axes(first),
        )
        for f in shown
        for first in [data.first(f.workload)]
    ]
    points += telemetry_view.single_devices(points, definitions)
    out = []
    for axis in scaling.AXES:
        for sweep in scaling.sweeps(points, axis).values():
            firsts = [(value, sweep[value][0]) for value in sorted(sweep)]
            steps = tuple((value, by_cell[(p.setup, p.workload)]) for value, p in firsts)
            owner = " / ".join(dict.fromkeys(p.setup for _, p in firsts))
            loads = {scaling.in_flight(p) for _, p in firsts}
            out.append(Sweep(owner, axis, steps, loads.pop() if len(loads) == 1 else None))
    return out


def run_figures(data: Dataset, comparison: Table, metric: str) -> list[Figure]:
    """The comparison table's run cells as figures: each run a column ("run N"), each row's
    workload (with its set-up where the runs have several) a group."""
    out = []
    for row in comparison.rows:
        setup = row.stubs[0]
        group = f"{row.label} on {setup}" if " / " not in setup and _several(data) else row.label
        for column, cell in zip(comparison.columns, row.cells, strict=True):
            if not column.startswith("run ") or cell.value is None:
                continue
            run_id = int(column.removeprefix("run "))
            cases = [
                c
                for c in data.cases
                if c.run_id == run_id
                and c.workload == row.label
                and (not _several(data) or _name(data, c.setup) == setup)
            ]
            chosen = shown_in(cases[0], metric) if cases else metric
            values, _ = cell_values(cases, chosen)
            out.append(Figure(group, column, cell.text, cell.unit, tuple(values), cell.warnings))
    return out


def _several(data: Dataset) -> bool:
    return any(sum(1 for s in data.setups if s.run_id == r.id) > 1 for r in data.runs)


def _name(data: Dataset, label: str) -> str:
    return next(s.name for s in data.setups if s.label == label)


def compare_findings(data: Dataset, comparison: Table, metric: str) -> list[Finding]:
    """What changed between the runs: each later run against the first (median change, its
    range, where it reverses), and what the checks found."""
    reference = f"run {data.runs[0].id}"
    found = finding_groups.derive(run_figures(data, comparison, metric), reference)
    return [f for f in found if f.kind in ("cost", "trust")]


def gaps(data: Dataset, raid: Table | None) -> list[ModelGap]:
    """The RAID model table's rows that have a measured figure."""
    if raid is None:
        return []
    out = []
    for row in raid.rows:
        predicted, measured, ratio = row.cells
        if ratio.value is None or measured.value is None:
            continue
        setup = row.stubs[0]
        out.append(
            ModelGap(
                row.label,
                setup,
                f"{predicted.text} {predicted.unit}",
                f"{measured.text} {measured.unit}",
                ratio.value,
                ratio.text.split(f" {WARNED}")[0],
                len(data.cell(setup, row.label)),
                ratio.warnings,
                *_stack(data, setup, row.label),
            )
        )
    return out


def _stack(data: Dataset, setup: str, workload: str) -> tuple[str, bool]:
    """A RAID set-up's level, and whether a cache sits in its stack for a workload: a card
    or a declared cache, a drive's write-back cache, or buffered I/O (direct=0)."""
    info = next((s for s in data.setups if s.label == setup), None)
    if info is None:
        return "", True
    defined = info.setup
    layout = defined.layout
    level = (layout.level or layout.raid) if layout is not None else ""
    buffered = any(
        str(c.options.get("direct", "0")) in ("0", "false") for c in data.cell(setup, workload)
    )
    card = defined.cache_bytes > 0 or defined.controller is not None
    return level, card or buffered or defined.drive_cache == "write-back"


def tails(latency: Table | None) -> list[Tail]:
    """The latency table's rows with a p50 and a p99.9, in ns (from each column's unit)."""
    if latency is None:
        return []
    at = {name.split(" (")[0]: n for n, name in enumerate(latency.columns)}
    if "p50" not in at or "p99.9" not in at:
        return []
    out = []
    for row in latency.rows:
        p50, p999 = row.cells[at["p50"]], row.cells[at["p99.9"]]
        if p50.value is None or p999.value is None:
            continue
        scale = SCALES.get(p50.unit, 1.0), SCALES.get(p999.unit, 1.0)
        out.append(
            Tail(
                row.label,
                row.stubs[0],
                row.stubs[1],
                p50.value * scale[0],
                p999.value * scale[1],
                _with_unit(p50.text, p50.unit),
                _with_unit(p999.text, p999.unit),
            )
        )
    return out


def _with_unit(text: str, unit: str) -> str:
    """A cell's text with its unit right after its figure (and its ± half-width), before
    any words or flag: "2.36 ms (2 repetitions: no useful interval) ⚠"."""
    words = text.split(" ")
    figure = 3 if len(words) >= 3 and words[1] == "±" else 1
    return " ".join([*words[:figure], unit, *words[figure:]])


SCALES = {"ns": 1.0, "µs": 1e3, "ms": 1e6, "s": 1e9}


def derive(
    data: Dataset,
    results: Table,
    metric: str,
    baseline: str | None,
    extra: Sequence[CheckWarning],
    raid: Table | None = None,
    latency: Table | None = None,
    spreads: Sequence[Spread] = (),
) -> list[Finding]:
    """Every finding of a report; `spreads`: the pooled runs' (across_runs), which the
    Across runs table shows too."""
    shown = figures(data, results, metric)
    found = finding_groups.derive(
        shown,
        baseline,
        extra,
        gaps(data, raid),
        tails(latency),
        sweeps(data, shown),
        knees(data),
    )
    # a fleet's outlier hosts, with what differs, and hosts far below the median host
    odd = [*fleet_view.findings(data, metric), *hosts_view.findings(data, metric)]
    if odd:  # the figures' checks are quiet, but the hosts behind them are not
        found = [_not_quiet(f) for f in found]
    return finding_groups.ranked([*finding_details.pooled(spreads, data.pooled_runs), *found, *odd])


def _not_quiet(finding: Finding) -> Finding:
    """ "No methodology check fired on N figures" where the hosts are named below: said so
    that the findings never read as a clean bill beside the hosts' warnings."""
    if finding.kind != "trust" or finding.group != CHECKS or finding.warned:
        return finding
    said = finding.sentence.removesuffix(".") + ", but the hosts behind them differ: see below."
    return replace(finding, sentence=said, plain=said)


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


def ordered(found: Sequence[Finding]) -> list[Finding]:
    """The findings ranked, highest first (findings made elsewhere, per factor, join here)."""
    return finding_groups.ranked(found)


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
