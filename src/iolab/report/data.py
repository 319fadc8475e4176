"""What a report reads from the store, for one run or several, as plain values.

Each (run, set-up) pair becomes one column, labelled by the set-up's name, or "run N: name"
where several runs are shown and names would clash; pooled (`--pool`), the runs' cases of a
set-up are one column, repetitions of one another. Samples and json+ histograms are read for
the workloads that get time series and exceedance curves only: all of them up to a dozen,
else the few at the ends of the ranking (see report.summary), so big stores load fast.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import cached_property

from iolab.analysis import latency, levels, scaling, virtual_cache
from iolab.analysis.levels import SpeedStep
from iolab.errors import ReportError
from iolab.fio import parse
from iolab.model import (
    CheckWarning,
    Direction,
    JSONObject,
    PeakRecord,
    Ratio,
    Sample,
    Setup,
    SteadyRecord,
    codec,
)
from iolab.model.facts import DeviceFacts, SetupFacts
from iolab.model.setup_record import SetupRecord
from iolab.model.telemetry import Telemetry
from iolab.report import summary
from iolab.store import CaseRow, RunRow, Store

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
    def record(self) -> SetupRecord:
        """Everything the run recorded about the set-up (model.setup_record), decoded once:
        views read it, never the stored JSON."""
        return codec.from_json(SetupRecord, self.environment, f"the record of set-up {self.name!r}")

    @property
    def facts(self) -> SetupFacts:
        """What was recorded about its target and layout."""
        return self.record.facts

    @property
    def devices(self) -> tuple[str, ...]:
        layout = self.setup.layout
        return () if layout is None else layout.devices

    @property
    def steady(self) -> SteadyRecord | None:
        """What [steady] rounds found for this set-up; None without rounds."""
        return self.record.steady

    @property
    def searches(self) -> Mapping[str, PeakRecord]:
        """What each peak or curve search found on this set-up, by workload (a damaged record
        is left out)."""
        return self.record.searches


@dataclass(frozen=True)
class DataCase(CaseRow):
    """A stored case of one of the runs, its set-up named by its column label."""

    run_id: int = 0


@dataclass(frozen=True)
class Dataset:
    runs: tuple[RunRow, ...]
    setups: tuple[SetupInfo, ...]
    cases: tuple[DataCase, ...]
    samples: Mapping[SeriesKey, tuple[Sample, ...]]
    histograms: Mapping[HistogramKey, Mapping[int, int]]
    charted: tuple[str, ...] | None = None  # the workloads samples and bins were read for
    # local cases' CPU and device figures per second (runner.telemetry), when they have them
    telemetry: Mapping[SeriesKey, Telemetry] = field(default_factory=dict)
    pooled: bool = False  # several runs read as repetitions of one another
    # figures published relative to a baseline's (a table of percentages), never IOPS
    ratios: tuple[Ratio, ...] = ()

    @cached_property
    def exceedances(self) -> Mapping[HistogramKey, tuple[tuple[float, float], ...]]:
        """Each histogram's 1 - CDF curve, (latency ns, share of I/Os slower): worked out
        once, from the histograms this dataset holds."""
        return {key: tuple(latency.exceedance(bins)) for key, bins in self.histograms.items()}

    @cached_property
    def steps(self) -> Mapping[SeriesKey, SpeedStep]:
        """The cases whose speed changed for good part way through, by their samples."""
        return {k: step for k, s in self.samples.items() if (step := levels.step(s)) is not None}

    @property
    def pooled_runs(self) -> tuple[int, ...]:
        """The runs pooled, when they are."""
        return tuple(run.id for run in self.runs) if self.pooled and len(self.runs) > 1 else ()

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(s.label for s in self.setups)

    @cached_property
    def on_hosts(self) -> bool:
        """Whether any case has figures per host (a fleet's, or a case run on several)."""
        return any(case.hosts for case in self.cases)

    @cached_property
    def codes(self) -> frozenset[str]:
        """The codes of every warning on the cases (asked once per view, not once per case)."""
        return frozenset(w.code for case in self.cases for w in case.warnings)

    def workloads(self) -> list[str]:
        """Workload points in plan order (then first appearance across runs)."""
        return list(self._workloads)

    @cached_property
    def _workloads(self) -> tuple[str, ...]:
        seen: dict[str, tuple[int, int]] = {}
        for index, case in enumerate(self.cases):
            seen.setdefault(case.workload, (case.workload_position, index))
        return tuple(sorted(seen, key=lambda name: seen[name]))

    def cell(self, setup: str, workload: str) -> list[DataCase]:
        return list(self._cells.get((setup, workload), ()))

    @cached_property
    def _cells(self) -> dict[tuple[str, str], list[DataCase]]:
        out: dict[tuple[str, str], list[DataCase]] = {}
        for case in self.cases:
            out.setdefault((case.setup, case.workload), []).append(case)
        return out

    def first(self, workload: str) -> DataCase:
        """The first stored case of a workload (its options)."""
        return self._first[workload]

    @cached_property
    def _first(self) -> dict[str, DataCase]:
        out: dict[str, DataCase] = {}
        for case in self.cases:
            out.setdefault(case.workload, case)
        return out

    def axes(self, case: DataCase) -> scaling.Options:
        """A case's options that change its workload (analysis.scaling.classify): classified
        once a workload, whatever view asks (a case whose options differ from its workload's
        first case's, as another run's may, on its own)."""
        first = self._first[case.workload]
        if case.options is first.options or case.options == first.options:
            return self._axes[case.workload]
        return scaling.classify(case.options)

    @cached_property
    def _axes(self) -> dict[str, scaling.Options]:
        return {name: scaling.classify(case.options) for name, case in self._first.items()}


def load(
    store: Store,
    run_ids: Sequence[int | None],
    samples: bool = True,
    histograms: bool = True,
    pool: bool = False,
) -> Dataset:
    """The runs asked for (None: the latest), their set-ups, cases, samples and histograms.
    `pool`: the runs read as repetitions of one another, each set-up one column (ReportError
    where a set-up's definition differs between them)."""
    runs = _unique([store.run(run_id) for run_id in (run_ids or [None])])
    ratios = tuple(r for run in runs for r in store.ratios(run.id))
    shares = {r.setup for r in ratios} | {r.baseline for r in ratios}  # no column of their own
    named = [
        (run, name, d, env)
        for run in runs
        for name, d, env in store.setups(run.id)
        if run.case_count or name not in shares
    ]
    clash = len({name for _, name, _, _ in named}) < len(named) and not pool
    setups = tuple(
        SetupInfo(f"run {run.id}: {name}" if clash else name, run.id, name, d, env)
        for run, name, d, env in named
    )
    if pool:
        setups = _pooled(setups)
    label = {
        (run.id, name): name if pool else f"run {run.id}: {name}" if clash else name
        for run, name, _, _ in named
    }
    renumber = Repetitions()
    cases = tuple(
        renumber.case(run.id, label[(run.id, row.setup)], row)
        for run in runs
        for row in store.cases(run.id)
        if (run.id, row.setup) in label
    )
    cases = _with_run_checks(cases, setups)
    labels = [s.label for s in setups]
    ref = summary.reference(labels, runs[0].baseline if len(runs) == 1 or pool else None)
    charted = summary.charted(cases, labels, ref) if samples or histograms else None
    found_samples = _samples(store, runs, label, charted, renumber) if samples else {}
    found_bins = _histograms(store, runs, label, charted) if histograms else {}
    seen = {
        renumber.key(run.id, label[(run.id, setup)], workload, repetition): found
        for run in runs
        for (setup, workload, repetition), found in store.telemetry(run.id).items()
        if (run.id, setup) in label
    }
    return Dataset(
        tuple(runs), setups, cases, found_samples, found_bins, charted, seen, pool, ratios
    )


def _with_run_checks(
    cases: tuple[DataCase, ...], setups: Sequence[SetupInfo]
) -> tuple[DataCase, ...]:
    """The cases with the warnings only a set-up's cases together show (virtual-cache: writes
    far above reads of the same shape on a virtual disk with write back), each on its cell."""
    disks = {info.label: disk for info in setups if (disk := _write_back(info))}
    if not disks:  # no virtual disk caching writes: nothing to look for
        return cases
    ok: dict[str, list[DataCase]] = {}
    for case in cases:
        if case.status == "ok":
            ok.setdefault(case.setup, []).append(case)
    found: dict[tuple[str, str], CheckWarning] = {}
    for label, disk in disks.items():
        figures = [
            virtual_cache.CachedFigure(c.workload, c.options, c.total("bw") / 1e6)
            for c in ok.get(label, [])
        ]
        for workload, warning in virtual_cache.warnings(disk, figures).items():
            found[(label, workload)] = warning
    return tuple(_warned(c, found.get((c.setup, c.workload))) for c in cases)


def _write_back(info: SetupInfo) -> str:
    """The virtual disk with write-back caching under a set-up, if any (virtual_cache)."""
    return virtual_cache.virtual_write_back(_devices(info.facts))


def _warned(case: DataCase, warning: CheckWarning | None) -> DataCase:
    if warning is None or case.status != "ok" or any(w.code == warning.code for w in case.warnings):
        return case
    return replace(case, warnings=(*case.warnings, warning))


def _devices(facts: SetupFacts) -> list[DeviceFacts]:
    """Every device recorded under a set-up's target, its layout's members included."""
    found = list(facts.target.devices.values()) if facts.target else []
    if facts.layout is not None:
        found += list(facts.layout.devices.values())
    return found


def _pooled(setups: Sequence[SetupInfo]) -> tuple[SetupInfo, ...]:
    """One set-up per name, the first run's; a name whose definition differs between the runs
    cannot be pooled."""
    first: dict[str, SetupInfo] = {}
    for info in setups:
        seen = first.setdefault(info.name, info)
        if seen.setup != info.setup:
            raise ReportError(
                f"set-up {info.name!r} differs between run {seen.run_id} and run "
                f"{info.run_id}; pool runs of one plan, or leave --pool out to show them side "
                "by side"
            )
    return tuple(replace(info, label=info.name) for info in first.values())


_ROW_FIELDS = tuple(f.name for f in fields(CaseRow))


class Repetitions:
    """Repetition numbers for pooled runs: each (set-up, workload)'s cases numbered on from
    one run to the next (run 3's #1-#3 and run 10's #1-#3 become #1-#6); a single run's, or
    runs side by side, keep theirs."""

    def __init__(self) -> None:
        self.offset: dict[tuple[int, str, str], int] = {}
        self.seen: dict[tuple[str, str], int] = {}

    def key(self, run_id: int, label: str, workload: str, repetition: int) -> SeriesKey:
        where = (run_id, label, workload)
        if where not in self.offset:
            self.offset[where] = self.seen.get((label, workload), 0)
        number = self.offset[where] + repetition
        self.seen[(label, workload)] = max(self.seen.get((label, workload), 0), number)
        return label, workload, number

    def case(self, run_id: int, label: str, row: CaseRow) -> DataCase:
        _, _, number = self.key(run_id, label, row.workload, row.repetition)
        found = {name: getattr(row, name) for name in _ROW_FIELDS}  # not its cached sums
        return DataCase(**{**found, "setup": label, "repetition": number}, run_id=run_id)


def _unique(runs: list[RunRow]) -> list[RunRow]:
    ids = [run.id for run in runs]
    if len(set(ids)) < len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise ReportError(f"run {twice[0]} is named twice; name each run once")
    return runs


def _samples(
    store: Store,
    runs: Sequence[RunRow],
    label: Mapping[tuple[int, str], str],
    workloads: Collection[str] | None,
    renumber: Repetitions,
) -> dict[SeriesKey, tuple[Sample, ...]]:
    out: dict[SeriesKey, list[Sample]] = {}
    for run in runs:
        for found in store.case_samples(run.id, workloads):
            setup = label[(run.id, found.setup)]
            key = renumber.key(run.id, setup, found.workload, found.repetition)
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
