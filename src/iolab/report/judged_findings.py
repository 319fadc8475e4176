"""The findings of a report's runs, worked out once where the run is judged
(report.judged): the figures its tables show (each workload's family and point, a mixed
workload's directions), its sweeps, load curves' knees, the RAID model's gaps and the latency
tails, handed to analysis.finding_groups and ranked. report.views.findings_view words them."""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import replace

from iolab.analysis import finding_details, finding_groups, scaling
from iolab.analysis.finding_details import LoadKnee, ModelGap, Spread, Tail
from iolab.analysis.finding_sweeps import Sweep
from iolab.analysis.findings import CHECKS, Figure, Finding, Part
from iolab.analysis.peak import Verdict
from iolab.model import DIRECTIONS, CheckWarning
from iolab.report.cells import WARNED, Row, Table, cell_values, format_value, shown_in
from iolab.report.data import DataCase, Dataset
from iolab.report.views import curve_view, fleet_view, hosts_view, telemetry_view
from iolab.report.views.fleet_view import Fleet

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
_LOAD = re.compile(rf"\s*\b(?:{'|'.join(LOAD_AXES)})=\S+")
SCALES = {"ns": 1.0, "µs": 1e3, "ms": 1e6, "s": 1e9}


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


def knees(data: Dataset, searches: Sequence[Verdict]) -> list[LoadKnee]:
    """Each load curve's knee as its table shows it: the row flagged knee (or none) and the
    peak's row, their delivered IOPS and p99."""
    out = []
    for verdict in searches:
        if verdict.found.curve is None:
            continue
        label, base = verdict.setup, verdict.base
        table = curve_view.curve_table(verdict, curve_view.cases_of(data, label))
        p99 = next(i for i, name in enumerate(table.columns) if name.startswith("p99 "))
        knee = next((r for r in table.rows if "knee" in r.stubs[0].split(", ")), None)
        (peak_iops, peak_p99), (at_iops, at_p99) = _at(table.rows[-1], p99), _at(knee, p99)
        load = None if knee is None else knee.label
        slo, mark, warned = verdict.slo or "", verdict.knee_mark, verdict.rests
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


def derive(
    data: Dataset,
    results: Table,
    metric: str,
    baseline: str | None,
    extra: Sequence[CheckWarning],
    raid: Table | None = None,
    latency: Table | None = None,
    spreads: Sequence[Spread] = (),
    searches: Sequence[Verdict] = (),
    fleets: Sequence[Fleet] = (),
) -> list[Finding]:
    """Every finding of a report; `spreads`: the pooled runs' (across_runs), which the
    Across runs table shows too; `searches`, `fleets`: the peak searches and the fleets, judged
    (report.judged)."""
    shown = figures(data, results, metric)
    found = finding_groups.derive(
        shown,
        baseline,
        extra,
        gaps(data, raid),
        tails(latency),
        sweeps(data, shown),
        knees(data, searches),
    )
    # a fleet's outlier hosts, with what differs, and hosts far below the median host
    odd = [*fleet_view.findings(fleets), *hosts_view.findings(data, metric)]
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


def ordered(found: Sequence[Finding]) -> list[Finding]:
    """The findings ranked, highest first (findings made elsewhere, per factor, join here)."""
    return finding_groups.ranked(found)
