"""What the analysis says of a report's runs, as one typed value the document lays out: the
warnings that go under "Warnings and notes" (a set-up beyond what its devices can deliver,
hosts that differ, a fleet's odd hosts, mixed fio versions, flat scaling, changes resting on
few repetitions), each peak search and load curve judged (analysis.peak's Verdict) and the
findings, ranked, with the table of their spread across runs.

`judge` is the trip from the report's data into the analysis and back; the document
(report.document) only places what it returns. Two judgements come before it, as the run is
derived (report.run), for the tables judge reads: a fleet's hosts (`fleets`: each host's
figure, their spread, the outliers) and the RAID model's predictions (`raid_models`)."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from iolab.analysis import checks, comparison, factors, fleet, peak, raid_model, scaling
from iolab.analysis.environment import EnvDifference, differences
from iolab.analysis.findings import Finding
from iolab.analysis.raid_model import Geometry, RaidWorkload, Single
from iolab.model import FioValue, Layout, Setup, codec
from iolab.report import judged_findings
from iolab.report.cells import UNITS, Table, cell_values, shown_in, whole_rows
from iolab.report.data import DataCase, Dataset, SetupInfo
from iolab.report.views import (
    curve_view,
    env_view,
    findings_view,
    fleet_view,
    hosts_view,
    raid_view,
    telemetry_view,
)
from iolab.report.views.fleet_view import Fleet, HostFigures
from iolab.report.views.raid_view import Figures, Modelled

Differed = tuple[EnvDifference, tuple[int, ...]]  # a fact that differs, the runs of its values


@dataclass(frozen=True)
class Judged:
    warnings: tuple[str, ...]  # "code: sentence", in the order the notes show them
    findings: tuple[Finding, ...]  # ranked
    spread: Table | None  # the findings' spread across pooled runs, where runs were pooled
    differences: tuple[Differed, ...]  # every recorded fact that differs between the runs
    searches: tuple[peak.Verdict, ...]  # each set-up's peak searches, in plan order


def judge(
    data: Dataset,
    results: Table,
    metric: str,
    baseline: str | None,
    raid: Table | None,
    latency: Table | None,
    fleets: Sequence[Fleet],
) -> Judged:
    """The warnings and the ranked findings of the report of `data` (its results table,
    the RAID model's and the latency table as the document drew them, its fleets judged)."""
    warned = [*_ceiling_warnings(data, metric), *hosts_view.warnings(data, metric)]
    warned += fleet_view.warnings(fleets)  # a fleet's odd hosts, what differs
    warned += _mixed(data)  # between runs, or within an import
    flat = scaling.flat_scaling(telemetry_view.scaling_points(data))
    warned += [f"{w.code}: {w}" for w in flat]
    warned += _fragile(results)  # changes against the baseline, as compare judges them
    whole = whole_rows(results)  # a workload's one figure: a mixed one's total
    spreads = judged_findings.across_runs(data, whole, metric)
    searches = searched(data)
    found = judged_findings.derive(
        data, whole, metric, baseline, flat, raid, latency, spreads, searches, fleets
    )
    factored = {s.label: s.setup.factors for s in data.setups}
    if any(factored.values()):  # each factor's consistent effect, where set-ups carry factors
        found += factors.findings(judged_findings.figures(data, results, metric), factored)
    spread = findings_view.across_runs_table(spreads, data.pooled_runs)
    ranked = tuple(judged_findings.ordered(found))
    return Judged(tuple(warned), ranked, spread, environment_differences(data), searches)


def searched(data: Dataset) -> tuple[peak.Verdict, ...]:
    """Each set-up's peak searches, in set-up then plan order, judged: the peak, the knee and
    the latency target's answer, each ⚑ with the warnings of the stored cases it rests on."""
    return tuple(
        peak.verdict(label, base, found, _warnings_of(data, label))
        for label, base, found in curve_view.searches(data)
    )


def _warnings_of(data: Dataset, label: str) -> peak.Warnings:
    """The warnings of a set-up's stored cases of a workload."""
    return lambda workload: [w for case in data.cell(label, workload) for w in case.warnings]


def environment_differences(data: Dataset) -> tuple[Differed, ...]:
    """Every recorded fact that differs between the runs (analysis.environment): the hosts',
    and the facts of each set-up several runs share by name; with the runs its values are
    of."""
    if len(data.runs) < 2:
        return ()
    ids = tuple(r.id for r in data.runs)
    found = [(d, ids) for d in differences("host", [r.environment for r in data.runs])]
    for name, same in env_view.pairs(data):
        stored = [codec.to_object(s.facts) for s in same]
        runs = tuple(s.run_id for s in same)
        found += [(d, runs) for d in differences(f"set-up {name!r}", stored)]
    return tuple(found)


def compare_warnings(data: Dataset, table: Table) -> list[str]:
    """What `iolab compare` warns of: mixed-versions and few-repeats (analysis.comparison)."""
    return [*_mixed(data), *_fragile(table)]


def _mixed(data: Dataset) -> list[str]:
    """mixed-versions: the runs' fio versions differ."""
    mixed = comparison.mixed_versions([(r.id, r.environment) for r in data.runs])
    return [f"{mixed.code}: {mixed}"] if mixed else []


def _fragile(table: Table) -> list[str]:
    """few-repeats: changes in `table` that rest on few repetitions."""
    cells = [cell for row in table.rows for cell in row.cells]
    fragile = comparison.few_repeats(
        [c.summary for c in cells if c.summary], [c.difference for c in cells if c.difference]
    )
    return [f"{fragile.code}: {fragile}"] if fragile else []


def _ceiling(setup: Setup, options: Mapping[str, FioValue]) -> tuple[float, str]:
    """The most a set-up's members can deliver, as a multiple of one device, and why."""
    layout = setup.layout or Layout(())
    devices = len(layout.devices)
    writes = str(options.get("rw", "read")) not in ("read", "randread")
    array = raid_model.geometry(
        layout.raid, layout.level or "", devices, layout.chunk, layout.md_layout
    )
    if array is not None and writes:
        return array.data, f"the {array.name} of {devices} can write (its members' data worth)"
    return float(devices), f"its {devices} devices can deliver"


def _ceiling_warnings(data: Dataset, metric: str) -> list[str]:
    """above-ceiling: set-ups over several devices beyond what their members can do."""
    setups = {s.label: s for s in data.setups}
    counts = {label: len(s.devices) for label, s in setups.items()}
    singles = [label for label, n in counts.items() if n == 1]
    if not singles:
        return []
    single: dict[str, float] = {}
    others: list[tuple[str, float, str, float, str]] = []
    advice: dict[tuple[str, str], str] = {}
    for workload in data.workloads():
        for label, count in counts.items():
            cell = data.cell(label, workload)
            chosen = shown_in(cell[0], metric) if cell else metric
            values, _ = cell_values(cell, chosen)
            if not values:
                continue
            value = statistics.median(values)
            if label == singles[0]:
                single[workload] = value
            elif count > 1:
                most, why = _ceiling(setups[label].setup, cell[0].options)
                others.append((label, most, workload, value, why))
                advice[(label, workload)] = _ceiling_advice(setups[label].setup, cell[0])
    return [f"{w.code}: {w}" for w in comparison.above_ceiling(single, others, advice)]


def _ceiling_advice(setup: Setup, case: DataCase) -> str:
    """checks.ceiling_advice for the set-up's filesystem (btrfs: its sector size)."""
    layout = setup.layout or Layout(())
    fs = layout.filesystem if setup.layout else ""
    return checks.ceiling_advice(case.options, fs, checks.btrfs_sector(layout.mkfs_options))


def fleets(data: Dataset, metric: str) -> tuple[Fleet, ...]:
    """Each set-up run on a fleet (report.views.fleet_view), judged once: per workload each
    host's figure, their spread and the outlier hosts (analysis.fleet)."""
    if not hosts_view.any_hosts(data):
        return ()
    out = []
    for setup in data.setups:
        hosts = hosts_view.setup_hosts(data, setup)
        if hosts and hosts_view.fleet(data, hosts):
            out.append(Fleet(setup, tuple(hosts), tuple(_host_figures(data, setup, hosts, metric))))
    return tuple(out)


def _host_figures(
    data: Dataset, setup: SetupInfo, hosts: Sequence[str], metric: str
) -> list[HostFigures]:
    inventories = _inventories(data, setup.run_id)
    out = []
    for name in data.workloads():
        group = data.cell(setup.label, name)
        if not group:
            continue
        chosen = shown_in(group[0], metric)
        figures = tuple((host, _host_figure(group, host, chosen)) for host in hosts)
        known = {h: v for h, v in figures if v is not None}
        found = fleet.outliers(setup.label, name, UNITS[chosen], known, inventories)
        spread = fleet.spread(list(known.values()))
        if found and _no_storage(group):  # what differs is the CPU each server gets
            out.append(HostFigures(name, chosen, figures, (), spread, generator=True))
            continue
        out.append(HostFigures(name, chosen, figures, tuple(found), spread))
    return out


def _no_storage(group: Sequence[DataCase]) -> bool:
    """Whether the workload's figures are the load generator's alone: fio's null engine
    moves no data, so each host's figure is what its fio server gets of a CPU."""
    return str(group[0].options.get("ioengine", "")).strip() == "null"


def _host_figure(group: Sequence[DataCase], host: str, metric: str) -> float | None:
    """The host's median over the ok repetitions (over what failed cases kept, when none is
    ok); None where it sent no result."""
    used = [c for c in group if c.status == "ok"] or list(group)
    values = [hosts_view.host_value(c.hosts[host], metric) for c in used if host in c.hosts]
    return statistics.median(values) if values else None


def _inventories(data: Dataset, run_id: int) -> list[fleet.Inventory]:
    """Each host's inventory facts, as its run recorded them (host_env)."""
    run = next((r for r in data.runs if r.id == run_id), None)
    listed = run.environment.get("hosts") if run else None
    if not isinstance(listed, list):
        return []
    return [
        fleet.inventory(str(entry["host"]), entry.get("environment"))
        for entry in listed
        if isinstance(entry, Mapping) and "host" in entry
    ]


def raid_models(data: Dataset) -> tuple[Modelled, ...]:
    """Every RAID set-up of a run that also has a set-up on one plain device, with the RAID
    model's predictions (analysis.raid_model) from that device's figures, for each workload
    both ran (report.views.raid_view words them beside what was measured)."""
    out = []
    for setup in data.setups:
        array = _array_of(setup.setup)
        single = raid_view.single_of(data, setup.run_id)
        if array is None or single is None:
            continue
        predictions = tuple(
            (figures, raid_model.predict(array, figures.workload, figures.single))
            for figures in single_figures(data, single.label)
            if data.cell(setup.label, figures.name)
        )
        shared = raid_view.shared_backing(setup)
        out.append(Modelled(setup.label, single.label, array, shared, predictions))
    return tuple(out)


def _array_of(setup: Setup) -> Geometry | None:
    """A set-up's RAID as the model sees it; None for a path, one device, a degraded array,
    or a level the model does not cover."""
    layout = setup.layout
    if layout is None or layout.raid == "none" or layout.degraded:
        return None
    return raid_model.geometry(
        layout.raid, layout.level or "", len(layout.devices), layout.chunk, layout.md_layout
    )


def single_figures(data: Dataset, setup: str) -> list[Figures]:
    """The set-up's median IOPS and bandwidth per workload (ok cases only), with rho, its read
    time over its write time, for QD1 writes that have a read of the same block size beside."""
    found: dict[str, tuple[RaidWorkload, float, float]] = {}
    for name in data.workloads():
        cases = [c for c in data.cell(setup, name) if c.status == "ok" and c.metrics]
        model = raid_model.workload(cases[0].options) if cases else None
        if model is not None:
            found[name] = (model, _median(cases, "iops"), _median(cases, "bw_bytes"))
    reads = {(w.bs, w.in_flight): iops for w, iops, _ in found.values() if w.read_share == 1}
    out = []
    for name, (w, iops, bw) in found.items():
        read = reads.get((w.bs, 1)) if w.read_share == 0 and w.in_flight == 1 else None
        rho = iops / read if read else 1.0
        out.append(Figures(name, w, Single(iops, bw, rho)))
    return out


def _median(cases: Sequence[DataCase], field: str) -> float:
    return statistics.median(
        float(sum(getattr(m, field) for m in c.metrics.values())) for c in cases
    )
