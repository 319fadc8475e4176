"""What a report reads from the store, for one run or several, as plain values.

Each (run, set-up) pair becomes one column, labelled by the set-up's name, or "run N: name"
where several runs are shown and names would clash.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from iolab.analysis import latency
from iolab.errors import ReportError
from iolab.store import CaseRow, RunRow, Store

SeriesKey = tuple[str, str, int]  # (set-up label, workload, repetition)


@dataclass(frozen=True)
class SetupInfo:
    label: str
    run_id: int
    name: str
    definition: Mapping[str, Any]
    environment: Mapping[str, Any]


@dataclass(frozen=True)
class Case(CaseRow):
    """A stored case of one of the runs, its set-up named by its column label."""

    run_id: int = 0


@dataclass(frozen=True)
class Sample:
    metric: str
    direction: str
    time_ms: int
    value: float


@dataclass(frozen=True)
class Dataset:
    runs: tuple[RunRow, ...]
    setups: tuple[SetupInfo, ...]
    cases: tuple[Case, ...]
    samples: Mapping[SeriesKey, tuple[Sample, ...]]
    histograms: Mapping[tuple[str, str, str], Mapping[int, int]]  # (setup, workload, direction)

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(s.label for s in self.setups)

    def workloads(self) -> list[str]:
        """Workload points in plan order (then first appearance across runs)."""
        seen: dict[str, tuple[int, int]] = {}
        for index, case in enumerate(self.cases):
            seen.setdefault(case.workload, (case.workload_position, index))
        return sorted(seen, key=lambda name: seen[name])

    def cell(self, setup: str, workload: str) -> list[Case]:
        return [c for c in self.cases if c.setup == setup and c.workload == workload]


def load(
    store: Store, run_ids: Sequence[int | None], samples: bool = True, histograms: bool = True
) -> Dataset:
    """The runs asked for (None: the latest), their set-ups, cases, samples and histograms."""
    runs = _unique([store.run(run_id) for run_id in (run_ids or [None])])
    named = [(run, name, d, env) for run in runs for name, d, env in store.setups(run.id)]
    clash = len({name for _, name, _, _ in named}) < len(named)
    setups = tuple(
        SetupInfo(f"run {run.id}: {name}" if clash else name, run.id, name, d, env)
        for run, name, d, env in named
    )
    label = {(s.run_id, s.name): s.label for s in setups}
    cases = tuple(
        _case(run.id, label[(run.id, row.setup)], row)
        for run in runs
        for row in store.cases(run.id)
        if (run.id, row.setup) in label
    )
    found_samples = _samples(store, runs, label) if samples else {}
    found_bins = _histograms(store, runs, label) if histograms else {}
    return Dataset(tuple(runs), setups, cases, found_samples, found_bins)


def _unique(runs: list[RunRow]) -> list[RunRow]:
    ids = [run.id for run in runs]
    if len(set(ids)) < len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise ReportError(f"run {twice[0]} is named twice; name each run once")
    return runs


def _case(run_id: int, label: str, row: CaseRow) -> Case:
    return Case(**{**row.__dict__, "setup": label}, run_id=run_id)


def _samples(
    store: Store, runs: Sequence[RunRow], label: Mapping[tuple[int, str], str]
) -> dict[SeriesKey, tuple[Sample, ...]]:
    out: dict[SeriesKey, list[Sample]] = {}
    for run in runs:
        for setup, workload, rep, metric, direction, time_ms, value in store.case_samples(run.id):
            key = (label[(run.id, setup)], workload, rep)
            out.setdefault(key, []).append(Sample(metric, direction, time_ms, value))
    return {key: tuple(values) for key, values in out.items()}


def _histograms(
    store: Store, runs: Sequence[RunRow], label: Mapping[tuple[int, str], str]
) -> dict[tuple[str, str, str], dict[int, int]]:
    """json+ completion-latency bins per (set-up, workload, direction): jobs and repetitions
    merged into one distribution."""
    parts: dict[tuple[str, str, str], list[Mapping[str, int]]] = {}
    for run in runs:
        for setup, workload, _, raw in store.case_raw(run.id):
            for direction, bins in _bins(raw):
                key = (label[(run.id, setup)], workload, direction)
                parts.setdefault(key, []).append(bins)
    return {key: latency.merge(found) for key, found in parts.items()}


def _bins(raw: str | None) -> list[tuple[str, Mapping[str, int]]]:
    if not raw:
        return []
    try:
        document = json.loads(raw[raw.find("{") :])
    except ValueError:
        return []
    out = []
    for job in document.get("jobs", []):
        for direction in ("read", "write", "trim"):
            bins = job.get(direction, {}).get("clat_ns", {}).get("bins")
            if bins and int(job[direction].get("total_ios", 0)) > 0:
                out.append((direction, bins))
    return out
