"""What a report reads from the store, for one run or several, as plain values.

Each (run, set-up) pair becomes one column, labelled by the set-up's name, or "run N: name"
where several runs are shown and names would clash. Samples and json+ histograms are read for
the workloads that get time series and exceedance curves only: all of them up to a dozen,
else the few at the ends of the ranking (see report.summary), so big stores load fast.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from iolab.analysis import latency
from iolab.errors import ReportError
from iolab.fio import parse
from iolab.model import Direction, JSONObject, PeakRecord, Sample, Setup, SteadyRecord
from iolab.report import summary
from iolab.store import CaseRow, RunRow, Store
from iolab.targets.facts import SetupFacts
from iolab.usage import Telemetry

SeriesKey = tuple[str, str, int]  # (set-up label, workload, repetition)
HistogramKey = tuple[str, str, Direction]  # (set-up label, workload, direction)


@dataclass(frozen=True)
class SetupInfo:
    label: str
    run_id: int
    name: str
    definition: JSONObject
    environment: JSONObject

    @cached_property
    def setup(self) -> Setup:
        """The set-up as defined, decoded once from its stored definition."""
        return Setup.from_definition(self.definition)

    @cached_property
    def facts(self) -> SetupFacts:
        """What was recorded about its target, decoded once."""
        return SetupFacts.from_json(self.environment)

    @property
    def devices(self) -> tuple[str, ...]:
        layout = self.setup.layout
        return () if layout is None else layout.devices

    @cached_property
    def steady(self) -> SteadyRecord | None:
        """What [steady] rounds found for this set-up, decoded once; None without rounds."""
        return SteadyRecord.from_json(self.environment.get("steady_rounds"))

    @cached_property
    def searches(self) -> dict[str, PeakRecord]:
        """What each peak or curve search found on this set-up, by workload, decoded once
        (a damaged record is left out)."""
        stored = self.environment.get("peak_search")
        if not isinstance(stored, Mapping):
            return {}
        decoded = {str(base): PeakRecord.from_json(found) for base, found in stored.items()}
        return {base: found for base, found in decoded.items() if found is not None}


@dataclass(frozen=True)
class Case(CaseRow):
    """A stored case of one of the runs, its set-up named by its column label."""

    run_id: int = 0


@dataclass(frozen=True)
class Dataset:
    runs: tuple[RunRow, ...]
    setups: tuple[SetupInfo, ...]
    cases: tuple[Case, ...]
    samples: Mapping[SeriesKey, tuple[Sample, ...]]
    histograms: Mapping[HistogramKey, Mapping[int, int]]
    charted: tuple[str, ...] | None = None  # the workloads samples and bins were read for
    # local cases' CPU and device figures per second (runner.telemetry), when they have them
    telemetry: Mapping[SeriesKey, Telemetry] = field(default_factory=dict)

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(s.label for s in self.setups)

    def workloads(self) -> list[str]:
        """Workload points in plan order (then first appearance across runs)."""
        return list(self._workloads)

    @cached_property
    def _workloads(self) -> tuple[str, ...]:
        seen: dict[str, tuple[int, int]] = {}
        for index, case in enumerate(self.cases):
            seen.setdefault(case.workload, (case.workload_position, index))
        return tuple(sorted(seen, key=lambda name: seen[name]))

    def cell(self, setup: str, workload: str) -> list[Case]:
        return list(self._cells.get((setup, workload), ()))

    @cached_property
    def _cells(self) -> dict[tuple[str, str], list[Case]]:
        out: dict[tuple[str, str], list[Case]] = {}
        for case in self.cases:
            out.setdefault((case.setup, case.workload), []).append(case)
        return out

    def first(self, workload: str) -> Case:
        """The first stored case of a workload (its options)."""
        return self._first[workload]

    @cached_property
    def _first(self) -> dict[str, Case]:
        out: dict[str, Case] = {}
        for case in self.cases:
            out.setdefault(case.workload, case)
        return out


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
    labels = [s.label for s in setups]
    ref = summary.reference(labels, runs[0].baseline if len(runs) == 1 else None)
    charted = summary.charted(cases, labels, ref) if samples or histograms else None
    found_samples = _samples(store, runs, label, charted) if samples else {}
    found_bins = _histograms(store, runs, label, charted) if histograms else {}
    seen = {
        (label[(run.id, setup)], workload, repetition): found
        for run in runs
        for (setup, workload, repetition), found in store.telemetry(run.id).items()
        if (run.id, setup) in label
    }
    return Dataset(tuple(runs), setups, cases, found_samples, found_bins, charted, seen)


def _unique(runs: list[RunRow]) -> list[RunRow]:
    ids = [run.id for run in runs]
    if len(set(ids)) < len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise ReportError(f"run {twice[0]} is named twice; name each run once")
    return runs


def _case(run_id: int, label: str, row: CaseRow) -> Case:
    return Case(**{**row.__dict__, "setup": label}, run_id=run_id)


def _samples(
    store: Store,
    runs: Sequence[RunRow],
    label: Mapping[tuple[int, str], str],
    workloads: Collection[str] | None,
) -> dict[SeriesKey, tuple[Sample, ...]]:
    out: dict[SeriesKey, list[Sample]] = {}
    for run in runs:
        for found in store.case_samples(run.id, workloads):
            key = (label[(run.id, found.setup)], found.workload, found.repetition)
            out.setdefault(key, []).append(found.sample)
    return {key: tuple(values) for key, values in out.items()}


def _histograms(
    store: Store,
    runs: Sequence[RunRow],
    label: Mapping[tuple[int, str], str],
    workloads: Collection[str] | None,
) -> dict[HistogramKey, dict[int, int]]:
    """json+ completion-latency bins per (set-up, workload, direction): jobs and repetitions
    merged into one distribution."""
    parts: dict[HistogramKey, list[Mapping[int, int]]] = {}
    for run in runs:
        for setup, workload, _, raw in store.case_raw(run.id, workloads):
            for direction, bins in _bins(raw).items():
                key = (label[(run.id, setup)], workload, direction)
                parts.setdefault(key, []).append(bins)
    return {key: latency.merge(found) for key, found in parts.items()}


def _bins(raw: str | None) -> dict[Direction, dict[int, int]]:
    """A stored case's json+ bins per direction; none when its raw JSON is missing or damaged."""
    if not raw:
        return {}
    try:
        return parse.histogram_bins(parse.load_json(raw))
    except parse.ParseError:
        return {}
