"""The Findings section, first in a report: analysis.findings's statements, one per line,
each naming what it rests on (the results table's cells, how many cases, their warnings)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from iolab.analysis import findings, scaling
from iolab.analysis.findings import Figure, Finding, ModelGap, Tail
from iolab.analysis.stats import metric_for
from iolab.model import CheckWarning
from iolab.report.cells import WARNED, Cell, Row, Table, cell_values
from iolab.report.data import Dataset
from iolab.report.views import curve_view, usage_view

TITLE = "Findings"
SAID = "What the numbers show"
NAME = "findings"  # the Notes block's name: the terminal prints it above the results


def figures(data: Dataset, results: Table, metric: str) -> list[Figure]:
    """The results table's set-up cells (not its change columns), with their repetitions."""
    out = []
    setups = set(data.labels)
    for row in results.rows:
        cases = [c for s in data.labels for c in data.cell(s, row.label)]
        if not cases:
            continue
        chosen = metric_for(cases[0].options, metric)
        for key, cell in zip(results.keys, row.cells, strict=True):
            if key not in setups or cell.value is None:
                continue
            values, _ = cell_values(data.cell(key, row.label), chosen)  # IOPS, or MB/s
            out.append(Figure(row.label, key, cell.text, cell.unit, tuple(values), cell.warnings))
    return out


def across_runs(data: Dataset, results: Table, metric: str) -> list[findings.Spread]:
    """Pooled runs: per results cell, how far the runs' own means lie apart, as a percentage
    of their mean."""
    out = []
    for row in results.rows if data.pooled_runs else ():
        for setup in data.labels:
            by_run: dict[int, list[float]] = {}
            for case in data.cell(setup, row.label):
                chosen = metric_for(case.options, metric)
                by_run.setdefault(case.run_id, []).extend(cell_values([case], chosen)[0])
            means = [statistics.mean(v) for v in by_run.values() if v]
            if len(means) >= 2 and statistics.mean(means) > 0:
                spread = (max(means) - min(means)) / statistics.mean(means) * 100
                out.append(findings.Spread(row.label, setup, spread, len(means)))
    return out


def across_runs_table(spreads: Sequence[findings.Spread], runs: Sequence[int]) -> Table | None:
    """The pooled runs' spread per cell: workloads down, set-ups across."""
    if not spreads:
        return None
    setups = list(dict.fromkeys(s.setup for s in spreads))
    at = {(s.workload, s.setup): s for s in spreads}
    rows = tuple(
        Row(workload, tuple(
            Cell(found.pct, "%", found.shown) if (found := at.get((workload, setup))) else
            Cell(None, "", "—") for setup in setups
        ))
        for workload in dict.fromkeys(s.workload for s in spreads)
    )  # fmt: skip
    return Table(
        f"Across runs {findings.and_list([str(r) for r in runs])}", "workload", tuple(setups),
        rows, ("each cell: the highest run mean less the lowest, as a percentage of the mean "
               "of the run means; the results table pools every run's repetitions.",),
        name="across-runs", column_header="set-up",
    )  # fmt: skip


def knees(data: Dataset) -> list[findings.Knee]:
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
        out.append(findings.Knee(
            label, base, peak_iops, peak_p99, load, at_iops, at_p99, slo, mark, warned
        ))  # fmt: skip
    return out


def _at(row: Row | None, p99: int) -> tuple[str, str]:
    """A curve row's delivered IOPS and p99, as the table shows them (their ⚑ said apart)."""
    if row is None:
        return "", ""
    iops, latency = (row.cells[at].text.split(f" {WARNED}")[0] for at in (1, p99))
    return f"{iops} IOPS", f"{latency} {row.cells[p99].unit}"


def sweeps(data: Dataset, shown: Sequence[Figure]) -> list[findings.Sweep]:
    """The results' numjobs, iodepth and device-count sweeps (analysis.scaling groups them:
    the same set-up, or striped set-ups alike but for their devices; every other option
    alike)."""
    by_cell = {(f.setup, f.workload): f for f in shown}
    definitions = {s.label: s.definition for s in data.setups}
    points = [
        scaling.Point(f.setup, f.workload, data.first(f.workload).options, f.median, None,
                      *usage_view.devices_of(definitions.get(f.setup, {})))
        for f in shown
    ]  # fmt: skip
    points += usage_view.single_devices(points, definitions)
    out = []
    for axis in scaling.AXES:
        for sweep in scaling.sweeps(points, axis).values():
            firsts = [(value, sweep[value][0]) for value in sorted(sweep)]
            steps = tuple((value, by_cell[(p.setup, p.workload)]) for value, p in firsts)
            owner = " / ".join(dict.fromkeys(p.setup for _, p in firsts))
            out.append(findings.Sweep(owner, axis, steps))
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
                c for c in data.cases
                if c.run_id == run_id and c.workload == row.label
                and (not _several(data) or _name(data, c.setup) == setup)
            ]  # fmt: skip
            chosen = metric_for(cases[0].options, metric) if cases else metric
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
    found = findings.derive(run_figures(data, comparison, metric), reference)
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
        out.append(ModelGap(
            row.label, setup, f"{predicted.text} {predicted.unit}", f"{measured.text} "
            f"{measured.unit}", ratio.value, ratio.text.split(f" {WARNED}")[0],
            len(data.cell(setup, row.label)), ratio.warnings,
        ))  # fmt: skip
    return out


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
        out.append(Tail(
            row.label, row.stubs[0], row.stubs[1], p50.value * scale[0], p999.value * scale[1],
            f"{p50.text} {p50.unit}", f"{p999.text} {p999.unit}",
        ))  # fmt: skip
    return out


SCALES = {"ns": 1.0, "µs": 1e3, "ms": 1e6, "s": 1e9}


def derive(
    data: Dataset,
    results: Table,
    metric: str,
    baseline: str | None,
    extra: Sequence[CheckWarning],
    raid: Table | None = None,
    latency: Table | None = None,
    spreads: Sequence[findings.Spread] = (),
) -> list[Finding]:
    """Every finding of a report; `spreads`: the pooled runs' (across_runs), which the
    Across runs table shows too."""
    shown = figures(data, results, metric)
    found = findings.derive(
        shown, baseline, extra, gaps(data, raid), tails(latency), sweeps(data, shown),
        knees(data),
    )  # fmt: skip
    return [*findings.pooled(spreads, data.pooled_runs), *found]


def leaders_table(found: Sequence[Finding]) -> Table | None:
    """Each workload's leader and runner-up, and the leader's margin with its interval."""
    rows = tuple(
        Row(f.cells[0][0], (Cell(None, "", f.cells[0][1]), Cell(None, "", f.cells[1][1]),
                            _margin(f)))
        for f in found if f.kind == "winner" and len(f.cells) == 2
    )  # fmt: skip
    if not rows:
        return None
    return Table(
        "Leaders per workload", "workload", ("leader", "next", "leader vs next"), rows,
        ("leader vs next: the difference of the means as a percentage of the next's mean, ± "
         "the half-width of its 95% interval (Welch's t); n.s.: within the noise.",),
        name="leaders", column_header="role",
    )  # fmt: skip


def costs_table(found: Sequence[Finding], baseline: str | None) -> Table | None:
    """Each set-up's change against the baseline over the workloads: median, lowest, highest."""
    rows = tuple(
        Row(f.cells[0][1], tuple(Cell(None, "%", text) for text in f.spread))
        for f in found if f.kind == "cost" and f.spread[0]
    )  # fmt: skip
    if not rows or baseline is None:
        return None
    return Table(
        f"Cost against {baseline}", "set-up", ("median change", "lowest", "highest"), rows,
        ("change: the difference of the means as a percentage of the baseline's, per "
         "workload (± its 95% interval); the median is over the workloads both ran.",),
        name="costs", column_header="change",
    )  # fmt: skip


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
