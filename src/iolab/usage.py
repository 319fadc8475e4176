"""What the host's CPUs and the set-up's devices did while a case ran (its telemetry).

Sampled once a second beside a local fio case (see runner.telemetry): per the CPUs the jobs
may use, the share of time busy, in user and system mode, waiting for I/O, in softirq and
stolen by the hypervisor, and fio's own share; per device of the set-up (the target's device
and its members), iostat's figures from /proc/diskstats: utilisation, average queue depth,
read and write await, IOPS. A case on fio servers has none.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

CPU = "cpu"  # the source of the CPU figures (a device's are under its kernel name)
CPU_METRICS = ("busy", "user", "system", "iowait", "softirq", "steal", "fio")
DEVICE_METRICS = ("util", "queue", "r_await_ms", "w_await_ms", "iops")


@dataclass(frozen=True)
class UsagePoint:
    """One figure of one second: `source` is "cpu" or a device's kernel name; CPU figures and
    util are percent (of the allowed CPUs' time, of the second), queue a depth."""

    time_ms: int
    source: str
    metric: str
    value: float


@dataclass(frozen=True)
class Telemetry:
    """A case's per-second figures, over the CPUs it may use and the set-up's devices."""

    cpus: tuple[int, ...]
    devices: tuple[str, ...]
    points: tuple[UsagePoint, ...] = ()
    skip_ms: int = 0  # fio's start-up and ramp: points up to it are left out of the means

    def series(self, source: str, metric: str) -> list[tuple[int, float]]:
        return [
            (p.time_ms, p.value) for p in self.points if (p.source, p.metric) == (source, metric)
        ]

    def mean(self, source: str, metric: str) -> float | None:
        """The mean over the measured window (after the ramp; all of it, if that is empty)."""
        found = self.series(source, metric)
        kept = [v for t, v in found if t > self.skip_ms] or [v for _, v in found]
        return statistics.fmean(kept) if kept else None

    def busiest(self) -> tuple[str, float] | None:
        """The device with the highest mean utilisation, and that figure."""
        utils = [(d, u) for d in self.devices if (u := self.mean(d, "util")) is not None]
        return max(utils, key=lambda found: found[1]) if utils else None


def clause(telemetry: Telemetry | None, devices: int = 2) -> str:
    """'CPU 34% (fio 12%), vda 98% busy': the case's CPU and its busiest devices, short."""
    if telemetry is None:
        return ""
    said = []
    busy, fio = telemetry.mean(CPU, "busy"), telemetry.mean(CPU, "fio")
    if busy is not None:
        said.append(f"CPU {busy:.0f}%" + (f" (fio {fio:.0f}%)" if fio is not None else ""))
    utils = [(d, u) for d in telemetry.devices if (u := telemetry.mean(d, "util")) is not None]
    utils.sort(key=lambda found: -found[1])
    said += [f"{d} {u:.0f}% busy" for d, u in utils[:devices]]
    return ", ".join(said)


def summary_columns(telemetry: Telemetry | None) -> dict[str, float | str | None]:
    """The case's means as flat columns (exports): cpu_busy_pct ..., dev_util_pct (the
    busiest device), dev_queue, dev_r_await_ms, dev_w_await_ms, dev_iops (summed)."""
    columns: dict[str, float | str | None] = {f"cpu_{m}_pct": None for m in CPU_METRICS}
    columns |= {"dev_name": None, "dev_util_pct": None, "dev_queue": None}
    columns |= {"dev_r_await_ms": None, "dev_w_await_ms": None, "dev_iops": None}
    if telemetry is None:
        return columns
    for metric in CPU_METRICS:
        columns[f"cpu_{metric}_pct"] = telemetry.mean(CPU, metric)
    top = telemetry.busiest()
    if top is not None:
        name = top[0]
        columns["dev_name"], columns["dev_util_pct"] = name, top[1]
        columns["dev_util_pct"] = top[1]
        columns["dev_queue"] = telemetry.mean(name, "queue")
        columns["dev_r_await_ms"] = telemetry.mean(name, "r_await_ms")
        columns["dev_w_await_ms"] = telemetry.mean(name, "w_await_ms")
        columns["dev_iops"] = telemetry.mean(name, "iops")
    return columns
