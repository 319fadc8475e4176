"""Who runs a run: this process, named so a later process can tell whether it still lives."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from iolab.model import JSON

BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def _start_ticks(pid: int) -> int | None:
    """When a process started (clock ticks since boot), to tell a reused pid from the original."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    if len(fields) <= 19 or fields[0] in ("Z", "X"):
        return None  # gone, or a zombie nobody reaped: dead all the same
    return int(fields[19])


def started_at() -> float:
    """When this process started, as a time.time() (to a clock tick, 10 ms): a run's start,
    so that its time outside fio includes iolab's own start-up."""
    now, ticks = time.time(), _start_ticks(os.getpid())
    if ticks is None:
        return now
    age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    return now - max(age, 0.0)


def _boot_id() -> str:
    try:
        return BOOT_ID.read_text().strip()
    except OSError:
        return ""


def me() -> dict[str, JSON]:
    """This process: host, boot, pid and start time."""
    pid = os.getpid()
    return {
        "host": socket.gethostname(),
        "boot_id": _boot_id(),
        "pid": pid,
        "start": _start_ticks(pid),
    }


def alive(owner: Mapping[str, object]) -> bool | None:
    """Whether the process that claimed a run still runs; None if it ran on another host."""
    if owner.get("host") != socket.gethostname():
        return None
    if owner.get("boot_id") != _boot_id():
        return False  # the machine rebooted since
    pid = owner.get("pid")
    if not isinstance(pid, int):
        return False
    start = owner.get("start")
    return _start_ticks(pid) is not None and (start is None or _start_ticks(pid) == start)


@dataclass(frozen=True)
class Owner:
    """The process that runs a run, as this host's own records name it: host, boot, pid and
    the pid's start time (so a reused pid is not taken for it)."""

    host: str
    boot_id: str
    pid: int
    start: int

    @classmethod
    def mine(cls) -> Owner:
        pid = os.getpid()
        return cls(socket.gethostname(), _boot_id(), pid, _start_ticks(pid) or 0)

    def gone(self) -> bool | None:
        """True when that process is no more (this boot: no such pid, or a pid started at
        another time; another boot: the machine restarted since); None when it ran on another
        host, where nothing can be told from here."""
        if self.host != socket.gethostname():
            return None
        if self.boot_id != _boot_id():
            return True
        return _start_ticks(self.pid) != self.start
