"""The host's processes as the telemetry reads them, straight from /proc: one pass over
/proc/*/stat gives every process's name, parent and CPU time; a process's storage bytes
(/proc/PID/io) and its CPUs (sched_getaffinity) are read only where they are wanted.

psutil asks the same of /proc through an object per process, several files each, and finds
a process's children by reading every process's stat again: about 0.1 s for 120 processes
on a 2-CPU host, before and after every case (issue 47). The figures are psutil's: CPU time
is user + system (clock ticks over SC_CLK_TCK), a name is the kernel's (its first 15
characters) or, where that was cut, its command's that starts with it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import NamedTuple

PROC = "/proc"
TICKS = os.sysconf("SC_CLK_TCK")
COMM_CUT = 15  # the kernel keeps a process's name to this many characters


class Proc(NamedTuple):
    name: str
    parent: int
    cpu_s: float  # user + system


Table = Mapping[int, Proc]  # by pid


def table() -> dict[int, Proc]:
    """Every process that /proc shows now, by pid (one that ends meanwhile is left out)."""
    found = {}
    for entry in os.listdir(PROC):
        if entry.isdigit():
            proc = _stat(int(entry))
            if proc is not None:
                found[int(entry)] = proc
    return found


def _stat(pid: int) -> Proc | None:
    try:
        with open(f"{PROC}/{pid}/stat", "rb") as handle:
            text = handle.read()
    except OSError:
        return None
    head, _, tail = text.rpartition(b")")
    fields = tail.split()
    if len(fields) < 13:
        return None
    name = head.partition(b"(")[2].decode(errors="replace")
    return Proc(name, int(fields[1]), (int(fields[11]) + int(fields[12])) / TICKS)


def descendants(pid: int, procs: Mapping[int, Proc]) -> set[int]:
    """The processes `pid` started, and theirs, as `procs` shows them."""
    children: dict[int, list[int]] = {}
    for child, proc in procs.items():
        children.setdefault(proc.parent, []).append(child)
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def io_bytes(pid: int) -> tuple[int, int]:
    """The bytes the process made storage read and write (OSError: gone, or not ours to read)."""
    with open(f"{PROC}/{pid}/io", "rb") as handle:
        lines = handle.read().splitlines()
    said = dict(_fields(lines))
    return said[b"read_bytes"], said[b"write_bytes"]


def _fields(lines: list[bytes]) -> Iterator[tuple[bytes, int]]:
    for line in lines:
        key, _, value = line.partition(b":")
        if value.strip().isdigit():
            yield key, int(value)


def cpus(pid: int) -> set[int]:
    """The CPUs the process may run on (OSError: gone)."""
    return os.sched_getaffinity(pid)


def full_name(pid: int, name: str) -> str:
    """The process's name, its command's where the kernel's was cut (as psutil names it)."""
    if len(name) < COMM_CUT:
        return name
    try:
        with open(f"{PROC}/{pid}/cmdline", "rb") as handle:
            first = handle.read().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return name
    longer = os.path.basename(first)
    return longer if longer.startswith(name) else name
