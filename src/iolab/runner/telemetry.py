"""The sampler beside a local fio case: once a second, the allowed CPUs' times (psutil reads
/proc/stat), fio's own CPU time (its processes, children of this one) and the set-up's
devices' counters (/proc/diskstats), turned into per-second figures as iostat does:

- CPU: each figure is the share of the allowed CPUs' time in that second; busy is all but
  idle and iowait; fio is fio's processes' user + system time over the same CPU time.
- device: util = time busy / the second; queue = (read time + write time) / the second
  (the mean number of I/Os in flight; diskstats' weighted time, which psutil does not read,
  counts the same thing); r_await / w_await = read / write time per I/O completed; iops =
  reads + writes completed per second.
- temperature: where the kernel exposes a device's own sensor (hwmon: NVMe's composite
  temperature; a SATA drive's with the drivetemp module), temp_c, in °C, each second.
"""

from __future__ import annotations

import os
import queue
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, NamedTuple

import psutil

from iolab.model.telemetry import CPU, Other, Telemetry, TelemetryPoint
from iolab.runner import procs
from iolab.targets import caches
from iolab.targets import stack as stk
from iolab.targets.environment import parse_cpulist

INTERVAL_S = 1.0
LAST_MIN_S = 0.5  # a last part-second shorter than this is not kept (too noisy)
STARTUP_MS = 1000  # the first second holds fio's start-up (files laid out, jobs forked)
IDLE_FIELDS = ("idle", "iowait")
SYS_BLOCK = Path("/sys/block")
HWMON = ("device/hwmon/hwmon*/temp1_input", "device/hwmon*/temp1_input")  # SATA, NVMe
KTHREADD = 2  # the parent of every kernel thread


class _Snapshot(NamedTuple):
    at: float
    cpus: list[Any]
    fio: float
    disks: Mapping[str, Any]


def allowed_cpus(options: Mapping[str, object]) -> tuple[int, ...]:
    """The CPUs the case's jobs may use: cpus_allowed, else every CPU of the host."""
    count = psutil.cpu_count() or 1
    named = [c for c in parse_cpulist(str(options.get("cpus_allowed", ""))) if c < count]
    return tuple(named) if named else tuple(range(count))


def devices_of(paths: Iterable[Path]) -> tuple[str, ...]:
    """The kernel names of the block devices under `paths` (the target's device and its
    members), that /proc/diskstats counts."""
    counted = set(psutil.disk_io_counters(perdisk=True, nowrap=True) or {})
    found: list[str] = []
    for path in paths:
        try:
            found += stk.tree_devices(caches.tree(path))
        except OSError:
            continue
    return tuple(d for d in dict.fromkeys(found) if d in counted)


def _fio_time(me: int, allowed: set[int], seen: dict[int, float], now: procs.Table) -> float:
    """fio's CPU seconds so far on the allowed CPUs: this process's children's user + system
    time, summed over every child seen (one that ended keeps its last figure). With
    cpus_allowed, only the children pinned within those CPUs count (fio's jobs, not its
    main process, which runs anywhere)."""
    everywhere = len(allowed) >= (psutil.cpu_count() or 1)
    for child in procs.descendants(me, now):
        try:
            if not everywhere and not procs.cpus(child) <= allowed:
                continue
        except OSError:
            continue
        seen[child] = now[child].cpu_s
    return sum(seen.values())


def hwmon_sensors(devices: Iterable[str]) -> dict[str, Path]:
    """Each device's own temperature sensor, where the kernel exposes one (hwmon)."""
    found = {}
    for name in devices:
        sensors = [p for pattern in HWMON for p in sorted((SYS_BLOCK / name).glob(pattern))]
        if sensors:
            found[name] = sensors[0]
    return found


def _celsius(sensor: Path) -> float | None:
    """A hwmon reading (millidegrees) in °C; None when it cannot be read."""
    try:
        return int(sensor.read_text().strip()) / 1000
    except (OSError, ValueError):
        return None


class _Worker:
    """The thread that samples beside each case, one a process: a thread started a case made
    the case wait until it ran (10 to 16 ms a case on a loaded 2-CPU host, issue 47)."""

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self.thread: threading.Thread | None = None

    def submit(self, job: Callable[[], None]) -> None:
        if self.thread is None or not self.thread.is_alive():
            self.thread = threading.Thread(target=self._serve, name="iolab-telemetry", daemon=True)
            self.thread.start()
        self.jobs.put(job)

    def _serve(self) -> None:
        """Each case's sampling in turn; one that fails is said on stderr, as a thread's end
        is, and the thread waits for the next (the case's last reading closes it)."""
        while True:
            job = self.jobs.get()
            try:
                job()
            except Exception:
                traceback.print_exc()


_WORKER = _Worker()


class Sampler:
    """Samples once a second while the case runs, on the sampling thread (a context
    manager)."""

    def __init__(self, cpus: tuple[int, ...], devices: tuple[str, ...], skip_ms: int = 0) -> None:
        self.cpus, self.devices, self.skip_ms = cpus, devices, skip_ms
        self.points: list[TelemetryPoint] = []
        self._stop, self._done = threading.Event(), threading.Event()
        self._me = os.getpid()
        self._seen: dict[int, float] = {}
        self._start = 0.0
        self._started_at = 0.0
        self._procs: dict[int, _Proc] = {}
        self._last: _Snapshot | None = None  # the latest reading (the thread's first, at first)
        self._first_at = 0.0
        self._others: tuple[tuple[Other, ...], float | None] = ((), None)
        self._sensors = hwmon_sensors(devices)

    def __enter__(self) -> Sampler:
        """Start sampling: the first reading (every process's counters, about 40 ms on a
        loaded 2-CPU host) is the thread's, taken while fio starts, not before it (issue 47);
        the first second, fio's start-up, is not judged (STARTUP_MS)."""
        self._start = time.monotonic()
        self._started_at = time.time()
        _WORKER.submit(self._sample)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._done.wait()
        last = self._first() if self._last is None else self._last  # the thread's failed
        seen = procs.table()
        now = self._snapshot(seen)
        if now.at - last.at >= LAST_MIN_S:
            self._add(last, now)
        after = _processes(self._me, set(self.cpus), seen)
        self._others = _others(self._procs, after, now.at - self._first_at, len(self.cpus))

    def telemetry(self) -> Telemetry:
        others, share = self._others
        return Telemetry(
            self.cpus,
            self.devices,
            tuple(self.points),
            self.skip_ms,
            started_at=self._started_at,
            others=others,
            others_cpu_pct=share,
        )

    def _first(self) -> _Snapshot:
        """The first reading: every process's counters, and the CPUs' and devices'."""
        now = procs.table()
        self._procs = _processes(self._me, set(self.cpus), now)
        self._last = self._snapshot(now)
        self._first_at = self._last.at
        return self._last

    def _sample(self) -> None:
        try:
            self._loop()
        finally:
            self._done.set()

    def _loop(self) -> None:
        last = self._first()
        while not self._stop.wait(INTERVAL_S - (time.monotonic() - self._start) % INTERVAL_S):
            now = self._snapshot()
            self._add(last, now)
            last = self._last = now

    def _snapshot(self, now: procs.Table | None = None) -> _Snapshot:
        cpus = psutil.cpu_times(percpu=True)
        disks = psutil.disk_io_counters(perdisk=True, nowrap=True) or {}
        chosen = [cpus[c] for c in self.cpus if c < len(cpus)]
        wanted = {d: disks[d] for d in self.devices if d in disks}
        table = procs.table() if now is None else now
        fio = _fio_time(self._me, set(self.cpus), self._seen, table)
        return _Snapshot(time.monotonic(), chosen, fio, wanted)

    def _add(self, before: _Snapshot, after: _Snapshot) -> None:
        at = round((after.at - self._start) * 1000)
        self.points += [TelemetryPoint(at, CPU, m, v) for m, v in _cpu(before, after).items()]
        seconds = after.at - before.at
        for name, now in after.disks.items():
            if name in before.disks:
                figures = _device(before.disks[name], now, seconds)
                self.points += [TelemetryPoint(at, name, m, v) for m, v in figures.items()]
        for name, sensor in self._sensors.items():
            celsius = _celsius(sensor)
            if celsius is not None:
                self.points.append(TelemetryPoint(at, name, "temp_c", celsius))


class _Proc(NamedTuple):
    name: str
    cpu_s: float
    read_bytes: int
    write_bytes: int
    ppid: int = 0


OTHERS_KEPT = 2  # the busiest other processes named, by CPU and by I/O
OTHER_MIN_CPU_PCT = 1.0
OTHER_MIN_MBPS = 1.0


def _processes(me: int, allowed: set[int], now: procs.Table) -> dict[int, _Proc]:
    """Every user process but this iolab and what it started (fio): its CPU seconds on the
    allowed CPUs (its time times the share of its own CPUs that are allowed ones: none for a
    process pinned elsewhere) and the bytes it made storage read and write. Kernel threads
    (children of kthreadd) are left out: a loop device's or md's workers serve fio's I/O."""
    ours = {me} | procs.descendants(me, now)
    found = {}
    for pid, proc in now.items():
        if pid in ours or KTHREADD in (pid, proc.parent):
            continue
        try:
            read, write = procs.io_bytes(pid)
            mine = procs.cpus(pid) or allowed
        except (OSError, KeyError):
            continue
        share = len(mine & allowed) / len(mine)
        name = procs.full_name(pid, proc.name)
        found[pid] = _Proc(name, proc.cpu_s * share, read, write, proc.parent)
    return found


def _inherited(before: Mapping[int, _Proc], after: Mapping[int, _Proc]) -> dict[int, _Proc]:
    """Per parent, the bytes its children that ended during the case had moved before it: the
    kernel adds a reaped child's whole count to its parent's (/proc/PID/io), so the parent's
    difference over the case holds the child's past too, which is not the case's."""
    out: dict[int, _Proc] = {}
    for pid, old in before.items():
        if pid in after or old.ppid not in after:
            continue
        had = out.get(old.ppid, _Proc("", 0.0, 0, 0))
        out[old.ppid] = had._replace(
            read_bytes=had.read_bytes + old.read_bytes,
            write_bytes=had.write_bytes + old.write_bytes,
        )
    return out


def _others(
    before: Mapping[int, _Proc], after: Mapping[int, _Proc], seconds: float, cpus: int
) -> tuple[tuple[Other, ...], float | None]:
    """The busiest other processes over the case, and all of theirs share of the CPUs."""
    if seconds <= 0:
        return (), None
    deltas = []
    inherited = _inherited(before, after)
    for pid, now in after.items():
        old = before.get(pid, _Proc(now.name, 0.0, now.read_bytes, now.write_bytes))
        past = inherited.get(pid, _Proc("", 0.0, 0, 0))
        cpu = 100 * max(now.cpu_s - old.cpu_s, 0.0) / (seconds * max(cpus, 1))
        read = max(now.read_bytes - old.read_bytes - past.read_bytes, 0) / seconds / 1e6
        write = max(now.write_bytes - old.write_bytes - past.write_bytes, 0) / seconds / 1e6
        deltas.append(Other(pid, now.name, min(cpu, 100.0), read, write))
    share = min(sum(o.cpu_pct for o in deltas), 100.0)
    busy = [o for o in deltas if o.cpu_pct >= OTHER_MIN_CPU_PCT or _moved(o) >= OTHER_MIN_MBPS]
    by_cpu = sorted(busy, key=lambda o: -o.cpu_pct)[:OTHERS_KEPT]
    by_io = sorted(busy, key=lambda o: -_moved(o))[:OTHERS_KEPT]
    return tuple({o.pid: o for o in (*by_cpu, *by_io) if o in by_cpu or _moved(o)}.values()), share


def _moved(other: Other) -> float:
    return other.read_mbps + other.write_mbps


def _cpu(before: _Snapshot, after: _Snapshot) -> dict[str, float]:
    """The allowed CPUs' shares of their time in the interval, percent."""
    fields = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
    spent = dict.fromkeys(fields, 0.0)
    for old, new in zip(before.cpus, after.cpus, strict=True):
        for f in fields:
            spent[f] += max(getattr(new, f, 0.0) - getattr(old, f, 0.0), 0.0)
    total = sum(spent.values())
    if total <= 0:
        return {}
    share = {f: 100 * v / total for f, v in spent.items()}
    busy = 100 - sum(share[f] for f in IDLE_FIELDS)
    fio = min(100 * max(after.fio - before.fio, 0.0) / total, 100.0)
    return {
        "busy": busy,
        "user": share["user"] + share["nice"],
        "system": share["system"],
        "iowait": share["iowait"],
        "softirq": share["softirq"],
        "steal": share["steal"],
        "fio": fio,
    }


def _device(old: Any, new: Any, seconds: float) -> dict[str, float]:
    """iostat's figures for one device over `seconds`."""
    reads, writes = new.read_count - old.read_count, new.write_count - old.write_count
    read_ms, write_ms = new.read_time - old.read_time, new.write_time - old.write_time
    busy_ms = new.busy_time - old.busy_time
    return {
        "util": min(100 * busy_ms / (seconds * 1000), 100.0),
        "queue": (read_ms + write_ms) / (seconds * 1000),
        "r_await_ms": read_ms / reads if reads else 0.0,
        "w_await_ms": write_ms / writes if writes else 0.0,
        "iops": (reads + writes) / seconds,
        "r_iops": reads / seconds,
        "w_iops": writes / seconds,
        "r_mbps": (new.read_bytes - old.read_bytes) / seconds / 1e6,
        "w_mbps": (new.write_bytes - old.write_bytes) / seconds / 1e6,
    }
