"""The one seam for where fio runs: an executor runs a job and says what the host allows.

The runner only ever talks to an Executor. `Local` runs fio as a child process of this host;
fio's client/server mode across hosts is another implementation of the same protocol, and the
tests use a fake that replays real fio output without running anything.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from iolab.fio import local
from iolab.fio.outcome import Outcome
from iolab.fio.parse import Status

JOB_FILE = "job.fio"


@dataclass(frozen=True)
class HostLimits:
    """What the host that runs fio has, for checks before and after a case."""

    cpus: int
    memory_bytes: int
    aio_room: int  # AIO contexts still free (aio-max-nr minus aio-nr)


class Executor(Protocol):
    """Runs fio jobs somewhere; the runner knows nothing else about where."""

    def limits(self) -> HostLimits:
        """The limits of the host (or the smallest over the hosts) that run the jobs."""
        ...

    def run(
        self,
        job_text: str,
        workdir: Path,
        on_status: Callable[[Status], None] | None,
        timeout_s: float | None,
    ) -> Outcome:
        """Run one job file's text with `workdir` as fio's working directory (its logs go
        there); stream fio's status lines; on KeyboardInterrupt stop fio and re-raise."""
        ...


def _read_int(path: str) -> int | None:
    try:
        return int(Path(path).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _memory_bytes() -> int:
    try:
        lines = Path("/proc/meminfo").read_text().splitlines()
    except OSError:
        return 0
    total = next((line for line in lines if line.startswith("MemTotal:")), "MemTotal: 0 kB")
    return int(total.split()[1]) * 1024


@dataclass(frozen=True)
class Local:
    """fio as a child process of this host (under a keeper that outlives iolab)."""

    fio: str

    def limits(self) -> HostLimits:
        aio_max = _read_int("/proc/sys/fs/aio-max-nr") or 65536
        aio_used = _read_int("/proc/sys/fs/aio-nr") or 0
        return HostLimits(os.cpu_count() or 1, _memory_bytes(), max(0, aio_max - aio_used))

    def run(
        self,
        job_text: str,
        workdir: Path,
        on_status: Callable[[Status], None] | None,
        timeout_s: float | None,
    ) -> Outcome:
        job = workdir / JOB_FILE
        job.write_text(job_text)
        return local.run(self.fio, job, workdir, on_status, timeout_s)
