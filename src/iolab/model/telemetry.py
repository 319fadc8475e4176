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
DEVICE_METRICS = (
    "util",
    "queue",
    "r_await_ms",
    "w_await_ms",
    "iops",
    "r_iops",
    "w_iops",
    "r_mbps",
    "w_mbps",
    "temp_c",  # the device's own temperature, where hwmon exposes it
)


@dataclass(frozen=True)
class Other:
    """A process other than fio and iolab that used the CPUs or did I/O while a case ran:
    its CPU share (percent of the allowed CPUs' time) and the bytes per second it read from
    and wrote to storage (/proc/PID/io), over the case."""

    pid: int
    name: str
    cpu_pct: float
    read_mbps: float = 0.0
    write_mbps: float = 0.0

    def said(self) -> str:
        """'fio (pid 4321): 45% CPU, 650.2 MB/s read'."""
        parts = [f"{self.cpu_pct:.0f}% CPU"] if self.cpu_pct >= 1 else []
        moved = (("read", self.read_mbps), ("written", self.write_mbps))
        parts += [f"{v:,.1f} MB/s {d}" for d, v in moved if v >= 0.1]
        return f"{self.name} (pid {self.pid}): {', '.join(parts) or 'little'}"


@dataclass(frozen=True)
class TelemetryPoint:
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
    points: tuple[TelemetryPoint, ...] = ()
    skip_ms: int = 0  # fio's start-up and ramp: points up to it are left out of the means
    window_ms: tuple[int, int] | None = None  # fio's measured window, in the samples' time
    started_at: float = 0.0  # the samples' time 0, as a Unix time (to place fio's window)
    others: tuple[Other, ...] = ()  # the busiest other processes over the case
    others_cpu_pct: float | None = None  # all other user processes' share of the allowed CPUs

    def series(self, source: str, metric: str) -> list[tuple[int, float]]:
        return [
            (p.time_ms, p.value) for p in self.points if (p.source, p.metric) == (source, metric)
        ]

    def mean(self, source: str, metric: str) -> float | None:
        """The mean over fio's measured window: each second weighted by how much of it lies
        in the window, where the window is known (a live case); else after the start-up and
        ramp (all of it, if that is empty)."""
        found = self.series(source, metric)
        if self.window_ms is not None:
            starts = [found[0][0] - 1000, *(t for t, _ in found[:-1])] if found else []
            weighted = [
                (_overlap(start, t, self.window_ms), v)
                for start, (t, v) in zip(starts, found, strict=True)
            ]
            total = sum(w for w, _ in weighted)
            if total > 0:
                return sum(w * v for w, v in weighted) / total
        kept = [v for t, v in found if t > self.skip_ms] or [v for _, v in found]
        return statistics.fmean(kept) if kept else None

    @property
    def over_time(self) -> bool:
        """Readings at two moments or more: something to draw over time."""
        return len({p.time_ms for p in self.points}) > 1

    def busiest(self) -> tuple[str, float] | None:
        """The device with the highest mean utilisation, and that figure."""
        utils = [(d, u) for d in self.devices if (u := self.mean(d, "util")) is not None]
        return max(utils, key=lambda found: found[1]) if utils else None


def _overlap(start_ms: int, end_ms: int, window: tuple[int, int]) -> float:
    """How many milliseconds of the sample from `start_ms` to `end_ms` (the sample before
    ends where it starts: a loaded host stretches them) lie in the window."""
    return float(max(min(end_ms, window[1]) - max(start_ms, window[0]), 0))


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
