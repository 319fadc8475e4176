"""`iolab advise` and `iolab env`: what the stored runs and this host suggest."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iolab.analysis import raid_model
from iolab.app.base import Ui, open_store
from iolab.errors import ReportError, TargetError
from iolab.fio import info
from iolab.report import advice as report_advice
from iolab.report import data as report_data
from iolab.report import document as report_document
from iolab.report import judged as report_judged
from iolab.report.views import raid_view
from iolab.targets import (
    controllers,
    environment,
)


def environment_of(path: str) -> dict[str, Any]:
    """The host, and what `path` lives on: filesystem, RAID, devices and their settings;
    and the RAID cards that an installed tool (storcli, MegaCli, ssacli, arcconf) lists."""
    target = Path(path)
    if not target.exists():
        raise TargetError(f"{path} does not exist; give a file, directory or device")
    host, facts = environment.host(info.probe().version), environment.target(target)
    return {"host": host, "target": facts, **controllers.probe().to_json()}


@dataclass(frozen=True)
class AdviseRequest:
    """`iolab advise`: the array's size, and one device's figures from a run's set-up or given
    (None: not given)."""

    devices: int = 4
    setup: str | None = None
    workloads: tuple[str, ...] = ()  # RW:BS[:QD[:READ%]]
    read_iops: float | None = None
    write_iops: float | None = None
    read_mbps: float | None = None
    write_mbps: float | None = None

    @property
    def figures(self) -> dict[str, float | None]:
        """The figures given, by their flags' names (report.advice's keys)."""
        return {
            key: getattr(self, key.replace("-", "_")) for key in report_advice.DEFAULT_WORKLOADS
        }


def advise(db: str, run_id: int | None, given: AdviseRequest, ui: Ui) -> report_document.Document:
    """RAID levels ranked for one device's figures: a stored run's, or those given."""
    devices = given.devices
    if not 2 <= devices <= 64:
        raise ReportError(f"--devices {devices}: give 2 to 64 devices")
    figures = given.figures
    for key, value in figures.items():
        if value is not None and not (math.isfinite(value) and value > 0):
            raise ReportError(f"--{key} {value:g}: give a positive figure (a finite number)")
    try:
        workloads = [raid_model.parse_workload(text) for text in given.workloads]
    except raid_model.ModelError as error:
        raise ReportError(f"--workload: {error}") from None
    if any(value is not None for value in figures.values()):
        if run_id is not None or given.setup:
            raise ReportError("give a RUN or one device's figures (--read-iops ...), not both")
        asked = workloads or [
            raid_model.parse_workload(spec) for spec in report_advice.defaults(figures)
        ]
        found = report_advice.from_figures(figures, asked)
        source = "the figures given"
    else:
        if workloads:
            raise ReportError(
                "--workload goes with one device's figures (--read-iops ...); a run's own "
                "workloads are used"
            )
        with open_store(db, ui) as store:
            data = report_data.load(store, [run_id] if run_id else [], False, False)
        single = raid_view.single_setup(data, given.setup)
        found = report_judged.single_figures(data, single.label)
        source = f"set-up {single.label!r} of run {single.run_id}"
    if not found:
        raise ReportError(f"no workload to advise on: {source} has no finished case")
    ranked = raid_model.rank(devices, [(f.workload, f.single) for f in found])
    return report_advice.document(ranked, found, devices, source)
