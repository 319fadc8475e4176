"""What a method recorded about a set-up: steady-state rounds, a peak search, a load curve.
Each is stored as its fields (model.codec), as the runner records it with the set-up."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from iolab.model.codec import spec
from iolab.model.common import MethodKind


@dataclass(frozen=True)
class SteadyRecord:
    """What `[steady]` rounds found for one set-up: every round's tracked figure (IOPS, or
    bytes/s for a bandwidth workload) and the determination over its window, as the runner
    records it with the set-up and the report reads it back."""

    track: str
    metric: Literal["iops", "bw"]
    values: tuple[float, ...]
    window_rounds: tuple[int, int]  # the first and last round of the measurement window
    window_mean: float
    data_excursion: float
    data_limit: float
    slope_excursion: float
    slope_limit: float
    steady: bool
    most_rounds: int


@dataclass(frozen=True)
class PeakPoint:
    """One point a peak search measured: its figure (None: it failed or was refused)."""

    numjobs: int
    iodepth: int
    workload: str
    value: float | None


@dataclass(frozen=True)
class PeakWinner:
    """The search's highest point, measured until it has three values: their median and 95%
    interval, the noise they show (at least the margin), and the points tied with it."""

    numjobs: int
    iodepth: int
    workload: str
    values: tuple[float, ...]
    median: float
    low: float | None
    high: float | None
    cov: float | None
    noise: float
    tied: tuple[str, ...]


@dataclass(frozen=True)
class CurvePoint:
    """One load of a latency-against-load curve: what was asked (percent of the peak's IOPS;
    None: the peak itself, unthrottled), what was delivered, and the slower direction's
    completion latency percentiles."""

    load_pct: int | None
    asked_iops: float | None
    workload: str
    ok: bool
    delivered_iops: float
    p50_ns: float | None
    p99_ns: float | None
    p999_ns: float | None
    delivered: bool  # at least analysis.peak.DELIVERED_SHARE of the rate asked

    @property
    def label(self) -> str:
        """The load as a curve's table labels it: "30%", or "peak" (unthrottled)."""
        return "peak" if self.load_pct is None else f"{self.load_pct}%"


@dataclass(frozen=True)
class SloPoint:
    """The most IOPS a curve held within its latency target (`slo = "p99<=2ms"`): the highest
    load whose percentile met it, measured again for an interval (load None and no values:
    no load met it)."""

    target: str
    load_pct: int | None
    workload: str
    iops: tuple[float, ...]  # each repetition's delivered IOPS
    latency_ns: tuple[float, ...]  # each repetition's percentile named by the target
    peak: bool = False  # the unthrottled peak itself met it


@dataclass(frozen=True)
class Curve:
    peak_iops: float
    points: tuple[CurvePoint, ...]
    knee: int | None = field(metadata=spec(missing=None))
    knee_factor: float
    delivered_share: float
    slo: SloPoint | None = None


@dataclass(frozen=True)
class Drift:
    """The search's start point measured again after it, against its first measurement."""

    start: float
    again: float
    change: float


class SearchBounds(NamedTuple):
    """The least and most jobs and queue depth a search may try (stored as an object)."""

    numjobs: tuple[int, int]
    iodepth: tuple[int, int]


@dataclass(frozen=True)
class PeakRecord:
    """What a peak or curve search found for one workload on one set-up, as the runner
    records it with the set-up (environment "peak_search", by workload) and the report
    reads it back."""

    method: MethodKind
    metric: Literal["iops", "bw"]
    bounds: SearchBounds
    grid: int  # the points the bounds hold
    margin: float
    steps: tuple[str, ...]
    points: tuple[PeakPoint, ...]
    winner: PeakWinner | None
    curve: Curve | None = field(default=None, metadata=spec(omit="none"))
    drift: Drift | None = field(default=None, metadata=spec(omit="none"))
