"""The RAID model beside the measurements: when a run has a set-up on one plain device and
set-ups built as RAID (mdadm, LVM, btrfs), a table of each RAID set-up's predicted figures
(iolab.analysis.raid_model, from the single device's) next to what it measured. The
predictions are made once where the run is judged (report.judged.raid_models); the table
words them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from iolab.analysis.raid_model import Geometry, RaidPrediction, RaidWorkload, Single
from iolab.errors import ReportError
from iolab.model import Setup
from iolab.report.cells import (
    MB,
    UNITS,
    Cell,
    Row,
    Table,
    cell_values,
    format_value,
    stat_cell,
    warned,
)
from iolab.report.data import Dataset, SetupInfo

TITLE = "RAID model: predicted vs measured"


@dataclass(frozen=True)
class Figures:
    """One device's figures for one workload, as the model reads them."""

    name: str
    workload: RaidWorkload
    single: Single

    def metric(self, forced: str = "auto") -> str:
        return forced if forced in ("iops", "bw") else self.workload.metric

    def value(self, metric: str, factor: float = 1.0) -> float:
        """IOPS, or MB/s, times a factor."""
        single = self.single.iops if metric == "iops" else self.single.bw_bytes / MB
        return single * factor


def is_single(setup: Setup) -> bool:
    """A set-up on one plain device: no RAID, or btrfs's single profile."""
    layout = setup.layout
    if layout is None or len(layout.devices) != 1:
        return False
    return layout.raid == "none" or (layout.raid == "btrfs" and layout.level in (None, "single"))


def single_setup(data: Dataset, name: str | None = None) -> SetupInfo:
    """The set-up that stands for one device: the one named, the first on one plain device,
    or a run's only set-up."""
    if name is not None:
        found = next((s for s in data.setups if name in (s.label, s.name)), None)
        if found is None:
            raise ReportError(f"--setup {name!r} is not a set-up; set-ups: {_names(data)}")
        return found
    single = next((s for s in data.setups if is_single(s.setup)), None)
    if single is not None:
        return single
    if len(data.setups) == 1:
        return data.setups[0]
    raise ReportError(
        f"no set-up on one plain device; name the one to start from with --setup NAME "
        f"(set-ups: {_names(data)})"
    )


def _names(data: Dataset) -> str:
    return ", ".join(repr(s.label) for s in data.setups) or "none"


@dataclass(frozen=True)
class Modelled:
    """A RAID set-up beside its run's set-up on one plain device, as the RAID model predicts
    it: per workload both ran, the one device's figures and the prediction from them."""

    setup: str
    single: str  # the one device's set-up
    array: Geometry
    shared: str  # what the members share, where they are not devices of their own (or "")
    predictions: tuple[tuple[Figures, RaidPrediction], ...]


def table(data: Dataset, modelled: Sequence[Modelled], metric: str = "auto") -> Table | None:
    """Predicted beside measured for every RAID set-up of a run that also has a set-up on one
    plain device; None when there is no such pair."""
    rows: list[Row] = []
    used: dict[str, str] = {}
    for found in modelled:
        used[found.setup] = found.single
        for figures, prediction in found.predictions:
            row = _row(data, found, figures, prediction, metric)
            if row is not None:
                rows.append(row)
    if not rows:
        return None
    return Table(
        TITLE,
        "workload",
        ("predicted", "measured", "measured / predicted"),
        tuple(rows),
        _notes(used),
        name="raid-model",
        stub_headers=("setup", "metric", "rule"),
        column_header="figure",
        column_keys=("predicted", "measured", "measured_pct_of_predicted"),
    )


def single_of(data: Dataset, run_id: int) -> SetupInfo | None:
    """The run's first set-up on one plain device, if it has one."""
    return next((s for s in data.setups if s.run_id == run_id and is_single(s.setup)), None)


def shared_backing(setup: SetupInfo) -> str:
    """What the members of a set-up share, where they are not independent devices: loop
    devices over files (on whatever disk holds them), or partitions of one disk; "" where
    the record names members of their own (or none)."""
    layout = setup.facts.layout
    members = list(layout.devices.values()) if layout is not None else []
    if len(members) < 2:
        return ""
    if all(m.backing_file for m in members):
        return "loop devices over files: one backing store"
    disks = {m.disk for m in members}
    if len(disks) == 1 and all(m.kind == "part" for m in members):
        return f"partitions of one disk ({disks.pop()})"
    return ""


def _row(
    data: Dataset, found: Modelled, figures: Figures, prediction: RaidPrediction, metric: str
) -> Row | None:
    setup, array, single, shared = found.setup, found.array, found.single, found.shared
    group = data.cell(setup, figures.name)
    if not group:
        return None
    chosen = figures.metric(metric)
    unit = UNITS[chosen]
    # members that share one backing store are one member: they add nothing to one device
    factor = min(prediction.factor, 1.0) if shared else prediction.factor
    rule = f"{prediction.rule}; {shared}: at most one device's" if shared else prediction.rule
    predicted = figures.value(chosen, factor)
    values, failed = cell_values(group, chosen)
    measured = (
        stat_cell(values, unit, chosen) if values else Cell(None, unit, "failed" if failed else "—")
    )
    single_cases = data.cell(single, figures.name)
    cells = (
        warned(Cell(predicted, unit, format_value(predicted, chosen)), single_cases),
        warned(measured, group),
        warned(_ratio(measured.value, predicted), [*single_cases, *group]),
    )
    return Row(figures.name, cells, (setup, unit, f"{array.name} of {array.devices}, {rule}"))


def _ratio(measured: float | None, predicted: float) -> Cell:
    if measured is None or predicted <= 0:
        return Cell(None, "%", "n/a")
    pct = 100 * measured / predicted
    return Cell(pct, "%", f"{pct:.0f}%", heat=pct)


def _notes(used: Mapping[str, str]) -> tuple[str, ...]:
    singles = sorted(set(used.values()))
    return (
        f"Predicted from {', '.join(repr(s) for s in singles)} (one plain device): the same "
        "workload's median IOPS and bandwidth times the factor of the rule shown; "
        "iolab.analysis.raid_model documents every rule and where the model misses.",
        "QD1 rules are for one I/O in flight (a chain of dependent member I/Os); ceiling rules "
        "assume every member as busy as the single device was, so under 100% is expected "
        "below saturation, and far over 100% points at a cache.",
    )
