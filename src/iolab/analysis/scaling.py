"""`flat-scaling`, a check over a run's sweep: where doubling numjobs, iodepth or the number
of devices (striped set-ups alike but for their device count) gains under 10% of IOPS (at a
point with telemetry: a local case), say where the limit is, from the cases' telemetry and
warnings: the CPUs the jobs may use (cpu-bound), the device (its queue grew with the load
while the throughput did not), one I/O in flight over more devices, or neither (software:
the filesystem, a driver, a lock), with the figures; and no limit where other work shared
the host (foreign-load). Each warning is a `Flat`, which the findings fold into their sweep's
sentence."""

from __future__ import annotations

import itertools
import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from iolab.fio.options import workload_axis
from iolab.model import CheckWarning, Code
from iolab.model.telemetry import CPU, Telemetry

AXES = ("numjobs", "iodepth", "device_count")
FLAT_GAIN = 0.10  # a doubling that gains less than this is flat
DEVICE_NEAR_PCT = 80.0  # a device named as the limit was at least this busy


Options = tuple[tuple[str, tuple[str, object]], ...]  # a case's workload options (Point.axes)


@dataclass(frozen=True)
class Point:
    """One ok case of a run, as the check reads it."""

    setup: str
    workload: str
    options: Mapping[str, object]
    iops: float  # the case's figure in `unit`: IOPS, or MB/s where the workload is read so
    telemetry: Telemetry | None = None
    devices: int | None = None  # the set-up's device count, when it names devices
    family: str = ""  # the set-up's definition but its name and devices: alike set-ups share it
    codes: frozenset[str] = frozenset()  # the case's warnings' codes
    unit: str = "IOPS"  # the unit its tables and findings give the workload in
    classified: Options | None = None  # `classify(options)`, where the caller has it already

    @property
    def axes(self) -> Options:
        """The options that change the workload (never a file or log name), each with its
        value as JSON, by name: classified once a case, whatever the sweeps asked."""
        return self.classified if self.classified is not None else self._axes

    @cached_property
    def _axes(self) -> Options:
        return classify(self.options)


def classify(options: Mapping[str, object]) -> Options:
    """A workload's options that change it (never a file or log name), each with its value
    as sweeps compare it, by name."""
    return tuple(sorted((k, _value(v)) for k, v in options.items() if workload_axis(k)))


def _value(value: object) -> tuple[str, object]:
    """An option's value as sweeps compare it: a whole number, text or flag as it is, kept
    apart by its type (1, "1" and true are three values, as in JSON); anything else (a
    fraction: nan is not equal to itself) as JSON."""
    if value is None or isinstance(value, (str, int, bool)):  # a tuple: faster than a union
        return type(value).__name__, value
    return "json", json.dumps(value, sort_keys=True, default=str)


@dataclass(frozen=True)
class Flat(CheckWarning):
    """A flat-scaling warning with what it is about, for the findings' sweep sentence: the
    sweep (its set-ups, axis and workloads), the doubling that gained too little, and the
    limit named in a few words ("the CPU", "the device", "software", ...)."""

    setups: tuple[str, ...] = ()
    axis: str = ""
    workloads: tuple[str, ...] = ()
    low: int = 0
    high: int = 0
    limit: str = ""


def flat_scaling(points: Sequence[Point]) -> list[CheckWarning]:
    """One warning per sweep (set-up, axis, the other options) that goes flat."""
    found: list[CheckWarning] = []
    for axis in AXES:
        for sweep in sweeps(points, axis).values():
            setup = " / ".join(dict.fromkeys(p.setup for v in sorted(sweep) for p in sweep[v]))
            warning = _flat(setup, axis, sweep)
            if warning is not None:
                found.append(warning)
    return found


def sweeps(points: Sequence[Point], axis: str) -> dict[tuple[str, Options], dict[int, list[Point]]]:
    """By (set-up, the other options that change the workload: never a file or log name):
    the cases at each value of `axis` (sweeps of two values or more)."""
    out: dict[tuple[str, int], dict[int, list[Point]]] = {}
    # a point's axes less `axis`, numbered: the points of a workload share one axes object
    # (Dataset.axes), so each is looked at once, and no key hashes the options again
    numbered: dict[int, tuple[Options, int]] = {}  # id(axes) -> (axes, number)
    rests: dict[Options, int] = {}  # the axes less `axis` -> its number
    # the value of `axis` in each options mapping, read once (a workload's cases share one)
    values: dict[int, tuple[Mapping[str, object], int | None]] = {}
    for point in points:
        if axis == "device_count":
            value = point.devices
        else:
            read = values.get(id(point.options))
            if read is None:  # kept in `values`: its id stays its own
                read = values[id(point.options)] = (
                    point.options,
                    _int(point.options.get(axis, 1)),
                )
            value = read[1]
        if value is None:
            continue
        owner = point.family if axis == "device_count" else point.setup
        axes = point.axes
        found = numbered.get(id(axes))
        if found is None:  # the axes are kept in `numbered`: their id stays theirs
            rest = tuple(item for item in axes if item[0] != axis)
            found = numbered[id(axes)] = (axes, rests.setdefault(rest, len(rests)))
        out.setdefault((owner, found[1]), {}).setdefault(value, []).append(point)
    named = list(rests)
    return {(owner, named[n]): sweep for (owner, n), sweep in out.items() if len(sweep) > 1}


def _int(value: object) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


def _flat(setup: str, axis: str, sweep: Mapping[int, list[Point]]) -> Flat | None:
    values = sorted(sweep)
    iops = {v: statistics.median(p.iops for p in sweep[v]) for v in values}
    for low, high in itertools.pairwise(values):
        if high < 2 * low or iops[low] <= 0 or not _watched(sweep[high]):
            continue
        gain = iops[high] / iops[low] - 1
        unit = sweep[high][0].unit
        if gain < FLAT_GAIN:
            workloads = tuple(dict.fromkeys(p.workload for v in values for p in sweep[v]))
            limit, said = _limit(axis, sweep[low], sweep[high])
            return Flat(
                Code.FLAT_SCALING,
                f"{setup} · {' and '.join(workloads)}: {axis} {low} → {high} gained {gain:+.0%} "
                f"{unit} ({iops[low]:,.0f} → {iops[high]:,.0f}); at {axis}={high} {said}.",
                "Past this point more parallelism adds queueing, not throughput: look at "
                "the limit named, or report the figure below it.",
                setups=tuple(setup.split(" / ")),
                axis=axis,
                workloads=workloads,
                low=low,
                high=high,
                limit=limit,
            )
    return None


def _watched(cases: Sequence[Point]) -> bool:
    """Only cases with telemetry (local runs) are judged: without it the limit is unknown,
    and stored runs and imports from before it stay as they were reported."""
    return any(p.telemetry is not None for p in cases)


def _limit(axis: str, lows: Sequence[Point], highs: Sequence[Point]) -> tuple[str, str]:
    """Where the limit is, from the cases' telemetry, with the figures. A limit is named only
    where the load on it was fio's: cases with other work on the host (foreign-load) name
    none; the CPU where the cases were cpu-bound; the device only where its queue grew with
    the load while the throughput did not (Little's law: the added I/Os waited at the
    device), not from %util alone, which cannot show the limit of a device serving requests
    in parallel. Returned as (the limit in a few words, what is said of it)."""
    if axis == "device_count" and all(in_flight(p) == 1 for p in highs):
        return "one I/O in flight", (  # so whatever else ran on the host
            "one I/O is in flight (iodepth x numjobs = 1), and one I/O uses one member at a "
            "time: more devices cannot help at this load, whatever the devices"
        )
    if any(FOREIGN in p.codes for p in (*lows, *highs)):
        return "not known (other work shared the host)", (
            "other work shared the host (foreign-load), so no limit can be told from these "
            "cases; run the sweep again on a quiet host"
        )
    seen = [p.telemetry for p in highs if p.telemetry is not None]
    busy = _mean([t.mean(CPU, "busy") for t in seen])
    fio = _mean([t.mean(CPU, "fio") for t in seen])
    tops = [top for t in seen if (top := t.busiest()) is not None]
    device = tops[0][0] if tops else ""
    util = _mean([u for _, u in tops])
    cpu = f"the CPUs were {busy:.0f}% busy (fio {fio:.0f}%)"
    disk = f"{device} was {util:.0f}% busy" if device else "no device was watched"
    if any(CPU_BOUND in p.codes for p in highs):
        return "the CPU", f"the CPU is the limit: {cpu}, {disk}"
    grew = _queue_growth(device, lows, highs) if device else None
    if grew is not None and util >= DEVICE_NEAR_PCT:
        low_q, high_q = grew
        return "the device", (
            f"the device is the limit: {device}'s queue grew from {low_q:.1f} to {high_q:.1f} "
            f"while the throughput did not ({disk}, {cpu})"
        )
    return "software", (
        f"neither the CPU nor the device is the limit ({cpu}, {disk}"
        f"{', its queue did not grow with the load' if device else ''}): software is, such "
        "as the filesystem, a driver (a loop device's, where there is one) or a lock"
    )


FOREIGN, CPU_BOUND = Code.FOREIGN_LOAD, Code.CPU_BOUND
QUEUE_GROWTH = 1.5  # a device whose queue grew this much as the load doubled held the I/Os


def in_flight(point: Point) -> int:
    """I/Os a case keeps in flight: iodepth x numjobs."""
    return (_int(point.options.get("iodepth", 1)) or 1) * (
        _int(point.options.get("numjobs", 1)) or 1
    )


def _queue_growth(
    device: str, lows: Sequence[Point], highs: Sequence[Point]
) -> tuple[float, float] | None:
    """The device's mean queue at the lower and the higher load, when it grew with the load."""
    low = _mean([p.telemetry.mean(device, "queue") for p in lows if p.telemetry is not None])
    high = _mean([p.telemetry.mean(device, "queue") for p in highs if p.telemetry is not None])
    return (low, high) if high >= QUEUE_GROWTH * low and high > 1.0 else None


def _mean(values: Sequence[float | None]) -> float:
    kept = [v for v in values if v is not None]
    return statistics.fmean(kept) if kept else 0.0
