"""Measurements: one case's fio figures per direction, its warnings, windows and result."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from iolab.model.codes import Code
from iolab.model.common import (
    HERE,
    JSON,
    Direction,
    Metric,
    Phase,
)
from iolab.model.plan import Case
from iolab.model.telemetry import Telemetry


@dataclass(frozen=True)
class DirectionMetrics:
    """What fio measured for one direction (read, write or trim) of one case."""

    direction: Direction
    iops: float
    bw_bytes: float
    io_bytes: int
    runtime_ms: int
    lat_mean_ns: float | None
    lat_max_ns: float | None
    percentiles_ns: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class CaseMetrics:
    """One case's parsed fio result, all jobs of the case aggregated."""

    directions: tuple[DirectionMetrics, ...]
    usr_cpu: float
    sys_cpu: float
    runtime_ms: int
    error: int

    def direction(self, name: Direction) -> DirectionMetrics | None:
        return next((d for d in self.directions if d.direction == name), None)

    @property
    def total_iops(self) -> float:
        return sum(d.iops for d in self.directions)

    @property
    def total_bw_bytes(self) -> float:
        return sum(d.bw_bytes for d in self.directions)


HOST_LOST = Code.HOST_LOST  # the warning code of a case a host sent no result for


NOTE_CODES = frozenset({Code.DEVICE_BUSY})  # said under the table as notes; no ⚑ on the cell


@dataclass(frozen=True)
class CheckWarning:
    """A methodology or measurement problem, with what to do about it; or, for the codes in
    NOTE_CODES, a note for the reader that says nothing against the figure (no ⚑)."""

    code: str
    message: str
    advice: str
    hosts: tuple[str, ...] = ()  # the hosts it is about (host-lost: those that sent nothing)

    def __str__(self) -> str:
        return f"{self.message} {self.advice}"

    @property
    def note(self) -> bool:
        """A note for the reader (a busy device), not a figure iolab cannot vouch for."""
        return self.code in NOTE_CODES

    def stored(self) -> dict[str, JSON]:
        """As the store keeps it: hosts only when it names some."""
        out: dict[str, JSON] = {"code": self.code, "message": self.message, "advice": self.advice}
        if self.hosts:
            out["hosts"] = list[JSON](self.hosts)
        return out


@dataclass(frozen=True)
class Sample:
    """One point of a per-interval time series from fio's logs."""

    metric: Metric
    direction: Direction
    time_ms: int
    value: float


@dataclass(frozen=True)
class Window:
    """One stretch of a case besides its main measurement: a preconditioning pass, a ramp, a
    steady-state round, or one host's share of a case run on several hosts."""

    metrics: CaseMetrics
    phase: Phase = "measure"
    round: int = 0
    host: str = HERE
    samples: tuple[Sample, ...] = ()


@dataclass(frozen=True)
class Origin:
    """Where a run's results come from: a plan iolab ran (here, or in its virtual lab: "lab"),
    or files it imported."""

    kind: Literal["plan", "import", "lab"] = "plan"
    files: tuple[str, ...] = ()
    fio_version: str = ""
    hostname: str = ""
    digests: tuple[str, ...] = ()  # sha256 of each file imported, so none is imported twice
    lab: str = ""  # the lab's kernel, in words, for a run measured in the lab


@dataclass(frozen=True)
class Result:
    """One case's outcome: its main measurement (phase measure, on this host or aggregated
    over hosts), and any other windows it had."""

    case: Case
    status: Literal["ok", "failed"]
    started_at: float
    ended_at: float
    metrics: CaseMetrics | None = None
    error: str | None = None
    raw_json: str | None = None
    job_file: str = ""
    warnings: tuple[CheckWarning, ...] = ()
    samples: tuple[Sample, ...] = ()
    windows: tuple[Window, ...] = ()
    target_state: str = ""  # what the target had seen before the case (see runner.precondition)
    telemetry: Telemetry | None = None  # the host's CPUs and the devices, per second (local)

    def all_windows(self) -> tuple[Window, ...]:
        """The main measurement as a window, then the others."""
        main = () if self.metrics is None else (Window(self.metrics, samples=self.samples),)
        return main + self.windows
