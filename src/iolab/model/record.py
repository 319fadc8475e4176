"""What a method recorded about a set-up: steady-state rounds, a peak search, a load curve."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from iolab.model.common import JSON, MethodKind


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

    def to_json(self) -> dict[str, JSON]:
        out = dataclasses.asdict(self)
        out["values"], out["window_rounds"] = list(self.values), list(self.window_rounds)
        return out

    @classmethod
    def from_json(cls, data: object) -> SteadyRecord | None:
        """The record as stored; None for anything else (a damaged or foreign value)."""
        if not isinstance(data, Mapping):
            return None
        try:
            first, last = (int(n) for n in data["window_rounds"])
            return cls(
                str(data["track"]), "bw" if data.get("metric") == "bw" else "iops",
                tuple(float(v) for v in data["values"]), (first, last),
                float(data["window_mean"]), float(data["data_excursion"]),
                float(data["data_limit"]), float(data["slope_excursion"]),
                float(data["slope_limit"]), bool(data["steady"]), int(data["most_rounds"]),
            )  # fmt: skip
        except (KeyError, TypeError, ValueError):
            return None


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
    knee: int | None
    knee_factor: float
    delivered_share: float
    slo: SloPoint | None = None


@dataclass(frozen=True)
class Drift:
    """The search's start point measured again after it, against its first measurement."""

    start: float
    again: float
    change: float


@dataclass(frozen=True)
class PeakRecord:
    """What a peak or curve search found for one workload on one set-up, as the runner
    records it with the set-up (environment "peak_search", by workload) and the report
    reads it back."""

    method: MethodKind
    metric: Literal["iops", "bw"]
    bounds: tuple[tuple[int, int], tuple[int, int]]  # numjobs, iodepth
    grid: int  # the points the bounds hold
    margin: float
    steps: tuple[str, ...]
    points: tuple[PeakPoint, ...]
    winner: PeakWinner | None
    curve: Curve | None = None
    drift: Drift | None = None

    def to_json(self) -> dict[str, JSON]:
        out = dataclasses.asdict(self)
        numjobs, iodepth = self.bounds
        out["bounds"] = {"numjobs": list(numjobs), "iodepth": list(iodepth)}
        for key in ("curve", "drift"):
            if out[key] is None:
                del out[key]
        stored: dict[str, JSON] = json.loads(json.dumps(out))  # tuples as lists
        return stored

    @classmethod
    def from_json(cls, data: object) -> PeakRecord | None:
        """The record as stored; None for anything else (a damaged or foreign value)."""
        if not isinstance(data, Mapping):
            return None
        try:
            return cls(
                "curve" if data["method"] == "curve" else "peak",
                "bw" if data["metric"] == "bw" else "iops",
                (_pair(data["bounds"]["numjobs"]), _pair(data["bounds"]["iodepth"])),
                int(data["grid"]), float(data["margin"]), tuple(str(s) for s in data["steps"]),
                tuple(PeakPoint(int(p["numjobs"]), int(p["iodepth"]), str(p["workload"]),
                                _number(p["value"])) for p in data["points"]),
                _winner(data["winner"]), _curve(data.get("curve")), _drift(data.get("drift")),
            )  # fmt: skip
        except (KeyError, TypeError, ValueError, AttributeError):
            return None


def _pair(value: object) -> tuple[int, int]:
    low, high = (int(v) for v in value)  # type: ignore[attr-defined]
    return low, high


def _number(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]


def _winner(data: object) -> PeakWinner | None:
    if data is None:
        return None
    if not isinstance(data, Mapping):
        raise TypeError("winner")
    return PeakWinner(
        int(data["numjobs"]), int(data["iodepth"]), str(data["workload"]),
        tuple(float(v) for v in data["values"]), float(data["median"]), _number(data["low"]),
        _number(data["high"]), _number(data["cov"]), float(data["noise"]),
        tuple(str(t) for t in data["tied"]),
    )  # fmt: skip


def _curve(data: object) -> Curve | None:
    if not data:
        return None
    if not isinstance(data, Mapping):
        raise TypeError("curve")
    points = tuple(_curve_point(p) for p in data["points"])
    knee = data.get("knee")
    return Curve(
        float(data["peak_iops"]), points, None if knee is None else int(knee),
        float(data["knee_factor"]), float(data["delivered_share"]), _slo(data.get("slo")),
    )  # fmt: skip


def _slo(data: object) -> SloPoint | None:
    if not data:
        return None
    if not isinstance(data, Mapping):
        raise TypeError("slo")
    load = data["load_pct"]
    return SloPoint(
        str(data["target"]), None if load is None else int(load), str(data["workload"]),
        tuple(float(v) for v in data["iops"]), tuple(float(v) for v in data["latency_ns"]),
        bool(data.get("peak", False)),
    )  # fmt: skip


def _curve_point(p: Mapping[str, object]) -> CurvePoint:
    load = p["load_pct"]
    return CurvePoint(
        None if load is None else int(load),  # type: ignore[call-overload]
        _number(p["asked_iops"]), str(p["workload"]), bool(p["ok"]),
        float(p["delivered_iops"]),  # type: ignore[arg-type]
        _number(p["p50_ns"]), _number(p["p99_ns"]), _number(p["p999_ns"]), bool(p["delivered"]),
    )  # fmt: skip


def _drift(data: object) -> Drift | None:
    if not data:
        return None
    if not isinstance(data, Mapping):
        raise TypeError("drift")
    return Drift(float(data["start"]), float(data["again"]), float(data["change"]))
