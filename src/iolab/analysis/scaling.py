"""`flat-scaling`, a check over a run's sweep: where doubling numjobs, iodepth or the number
of devices (striped set-ups alike but for their device count) gains under 10% of IOPS (at a
point with telemetry: a local case), say where the limit is, from the cases' telemetry: the
CPUs the jobs may use (nearly saturated), the set-up's devices (fully utilised), or neither
(software: the filesystem, a driver, a lock), with the figures."""

from __future__ import annotations

import itertools
import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from iolab.analysis.checks import CPU_BOUND_SHARE, DEVICE_SATURATED_PCT
from iolab.model import CheckWarning
from iolab.usage import CPU, Telemetry

AXES = ("numjobs", "iodepth", "device_count")
FLAT_GAIN = 0.10  # a doubling that gains less than this is flat
DEVICE_NEAR_PCT = 80.0  # a device this busy is named as near its limit (95%: the limit)


@dataclass(frozen=True)
class Point:
    """One ok case of a run, as the check reads it."""

    setup: str
    workload: str
    options: Mapping[str, Any]
    iops: float
    telemetry: Telemetry | None = None
    devices: int | None = None  # the set-up's device count, when it names devices
    family: str = ""  # the set-up's definition but its name and devices: alike set-ups share it


def flat_scaling(points: Sequence[Point]) -> list[CheckWarning]:
    """One warning per sweep (set-up, axis, the other options) that goes flat."""
    found = []
    for axis in AXES:
        for sweep in sweeps(points, axis).values():
            setup = " / ".join(dict.fromkeys(p.setup for v in sorted(sweep) for p in sweep[v]))
            warning = _flat(setup, axis, sweep)
            if warning is not None:
                found.append(warning)
    return found


def sweeps(points: Sequence[Point], axis: str) -> dict[tuple[str, str], dict[int, list[Point]]]:
    """By (set-up, the other options): the cases at each value of `axis` (sweeps of two values
    or more)."""
    out: dict[tuple[str, str], dict[int, list[Point]]] = {}
    for point in points:
        value = point.devices if axis == "device_count" else _int(point.options.get(axis, 1))
        if value is None:
            continue
        rest = {k: v for k, v in point.options.items() if k != axis}
        owner = point.family if axis == "device_count" else point.setup
        key = (owner, json.dumps(rest, sort_keys=True, default=str))
        out.setdefault(key, {}).setdefault(value, []).append(point)
    return {key: sweep for key, sweep in out.items() if len(sweep) > 1}


def _int(value: object) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


def _flat(setup: str, axis: str, sweep: Mapping[int, list[Point]]) -> CheckWarning | None:
    values = sorted(sweep)
    iops = {v: statistics.median(p.iops for p in sweep[v]) for v in values}
    for low, high in itertools.pairwise(values):
        if high < 2 * low or iops[low] <= 0 or not _watched(sweep[high]):
            continue
        gain = iops[high] / iops[low] - 1
        if gain < FLAT_GAIN:
            names = " and ".join(dict.fromkeys(p.workload for v in values for p in sweep[v]))
            return CheckWarning(
                "flat-scaling",
                f"{setup} · {names}: {axis} {low} → {high} gained {gain:+.0%} IOPS "
                f"({iops[low]:,.0f} → {iops[high]:,.0f}); at {axis}={high} "
                f"{_limit(sweep[high])}.",
                "Past this point more parallelism adds queueing, not throughput: look at "
                "the limit named, or report the figure below it.",
            )
    return None


def _watched(cases: Sequence[Point]) -> bool:
    """Only cases with telemetry (local runs) are judged: without it the limit is unknown,
    and stored runs and imports from before it stay as they were reported."""
    return any(p.telemetry is not None for p in cases)


def _limit(cases: Sequence[Point]) -> str:
    """Where the limit is, from the cases' telemetry, with the figures."""
    seen = [p.telemetry for p in cases if p.telemetry is not None]
    busy = _mean([t.mean(CPU, "busy") for t in seen])
    fio = _mean([t.mean(CPU, "fio") for t in seen])
    tops = [top for t in seen if (top := t.busiest()) is not None]
    device = tops[0][0] if tops else ""
    util = _mean([u for _, u in tops])
    cpu = f"the CPUs were {busy:.0f}% busy (fio {fio:.0f}%)"
    disk = f"{device} was {util:.0f}% busy" if device else "no device was watched"
    if busy >= CPU_BOUND_SHARE * 100:
        return f"the CPU is the limit: {cpu}, {disk}"
    if device and util >= DEVICE_SATURATED_PCT:
        return f"the device is the limit: {disk}, {cpu}"
    if device and util >= DEVICE_NEAR_PCT:
        return f"the device is near its limit: {disk}, {cpu}"
    return (
        f"neither the CPU nor the device is the limit ({cpu}, {disk}): software is, such as "
        "the filesystem, a driver (a loop device's, where there is one) or a lock"
    )


def _mean(values: Sequence[float | None]) -> float:
    kept = [v for v in values if v is not None]
    return statistics.fmean(kept) if kept else 0.0
