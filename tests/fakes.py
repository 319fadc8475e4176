"""A fake executor: replays output fio really printed (tests/fixtures/fio), runs nothing.

It lets the runner's logic (order, saving, failure, Ctrl-C, resume, retry, clean-up) be tested
without root, without fio, in milliseconds.
"""

from __future__ import annotations

import dataclasses
import shutil
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from iolab.fio.executor import HostLimits
from iolab.fio.info import FioInfo
from iolab.fio.outcome import Outcome
from iolab.fio.parse import Status
from iolab.model import Case, Result
from iolab.targets.controllers.pending import PendingRestore
from iolab.terminal_ui import TerminalUi

FIO = Path(__file__).parent / "fixtures" / "fio"
Behaviour = Literal["ok", "enospc", "interrupt"]


def recorded(name: str) -> Outcome:
    """What fio printed for the fixture `name`: its JSON, stderr and exit code."""
    folder = FIO / name
    stderr = folder / f"{name}.stderr"
    return Outcome(
        returncode=int((folder / f"{name}.rc").read_text().strip()),
        json_text=(folder / f"{name}.json").read_text(),
        stderr=stderr.read_text() if stderr.exists() else "",
        log_files=(),
    )


# The fio a campaign is planned for where no fio runs: 3.33, with the engines plans name.
FIO_INFO = FioInfo(path="fio", version="fio-3.33", engines=("libaio", "io_uring", "psync"))


class Seen:
    """A runner's listener that remembers what it was told."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.started: list[int] = []  # the index of each case started
        self.counted: list[tuple[int, int]] = []  # (index, total) of each case started
        self.finished: list[Result] = []

    def note(self, line: str) -> None:
        self.notes.append(line)

    def case_started(self, index: int, total: int, case: Case, eta_s: float) -> None:
        self.started.append(index)
        self.counted.append((index, total))

    def status(self, status: Status) -> None:
        pass

    def case_finished(self, result: Result) -> None:
        self.finished.append(result)


OUTCOMES: dict[str, str] = {"ok": "randread-jsonplus", "enospc": "failed-enospc"}


@dataclass
class FakeExecutor:
    """Runs nothing: each call takes the next behaviour of `script` (then "ok")."""

    script: list[Behaviour] = field(default_factory=list)
    limits_: HostLimits = field(
        default_factory=lambda: HostLimits(cpus=4, memory_bytes=8 * 1024**3, aio_room=65536)
    )
    jobs: list[str] = field(default_factory=list)
    on_run: Callable[[Path], None] | None = None

    def limits(self) -> HostLimits:
        return self.limits_

    def run(
        self,
        job_text: str,
        workdir: Path,
        on_status: Callable[[Status], None] | None,
        timeout_s: float | None,
    ) -> Outcome:
        self.jobs.append(job_text)
        behaviour = self.script.pop(0) if self.script else "ok"
        if self.on_run:
            self.on_run(workdir)
        if behaviour == "interrupt":
            raise KeyboardInterrupt
        return recorded(OUTCOMES[behaviour])


# ---------------------------------------------------------------- a fio that misbehaves

REAL_FIO = shutil.which("fio") or "/usr/bin/fio"  # looked up before any stand-in is on PATH


@dataclass
class Scene:
    """One row's world: the scratch directory (cwd), TMPDIR, and the fio iolab finds."""

    cwd: Path
    tmp: Path
    bin: Path
    log: Path  # the arguments of every fio command, one line each (first argument)
    pids: Path  # the processes the fake fio started

    def fio(self, body: str, raw: bool = False) -> None:
        """Put a fio first on PATH that records its calls, then runs `body` (sh); `raw`: a
        file holding only `body`."""
        script = self.bin / "fio"
        record = f'#!/bin/sh\necho "$1" >> {self.log}\necho $$ >> {self.pids}\n'
        run = body.replace("@REAL@", REAL_FIO).replace("@PIDS@", str(self.pids))
        script.write_text(body if raw else record + run)
        script.chmod(0o755)

    def fio_calls(self) -> list[str]:
        return self.log.read_text().split() if self.log.exists() else []

    def started(self) -> list[int]:
        return [int(p) for p in self.pids.read_text().split()] if self.pids.exists() else []


def running(pids: list[int], wait_s: float = 5.0) -> list[int]:
    """The processes still alive (not gone, not a zombie) after waiting up to wait_s."""
    deadline = time.monotonic() + wait_s
    while True:
        alive = [pid for pid in pids if is_alive(pid)]
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(0.05)


def is_alive(pid: int) -> bool:
    """The process runs (a zombie nobody reaped yet counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def pending_entry(**changes: Any) -> PendingRestore:
    """A card's restore iolab still owes, as iolab records it: storcli's /c0/v0 left
    always-write-back, its write-back to put back."""
    base = PendingRestore(
        "storcli",
        "/c0/v0",
        (("write_cache", "write-back"),),
        (("write_cache", "always-write-back"),),
        "storcli: `/c0/v0 set wrcache=wb nolog` did not answer within 60 s",
        1_700_000_000.0,
        3,
        12345,
        socket.gethostname(),
    )
    return dataclasses.replace(base, **changes)


class QuietUi(TerminalUi):
    """The terminal's Ui with both consoles quiet: what a use case tells the person, unsaid."""

    def __init__(self) -> None:
        from rich.console import Console

        super().__init__(Console(quiet=True), Console(quiet=True))
