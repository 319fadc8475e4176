"""Running fio as a child process on this host, with live status and a clean stop.

Each fio runs under this process's keeper (`guard.py --serve`, started at the first fio and
kept for the rest of the process): iolab hands it each fio's command, working folder, stdout
and stderr over a socket; the keeper answers with fio's exit status and its wall time, and
kills every fio process when iolab goes, even by SIGKILL (see guard.py).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import re
import select
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from iolab.fio.outcome import Outcome
from iolab.fio.parse import Status, status_line

log = logging.getLogger(__name__)  # `iolab -v` shows what it ran

STOP_GRACE_S = 5.0
CLOSE_WAIT_S = 5.0
ANSWER_MAX = 1 << 16
GUARD = Path(__file__).with_name("guard.py")
SERVE = "--serve"  # guard.SERVE: the keeper imports nothing, nor is imported
NOT_STARTED = 127  # fio's status when its keeper could not start it (a shell's)


def guarded(command: list[str]) -> list[str]:
    """fio under a keeper of its own, which kills every fio process if iolab dies (see
    guard.py); fed on its stdin, which must be a pipe from iolab."""
    return [sys.executable, "-I", "-S", str(GUARD), *command]


@dataclass(frozen=True)
class KeeperWord:
    """What the keeper said of one fio: its exit status, its wall time (None: not timed, as
    when fio or the keeper was killed), why it did not start (fio's stderr then)."""

    code: int
    wall_s: float | None = None
    error: str = ""


class Keeper:
    """This process's fio keeper (`guard.py --serve`): one fio at a time."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with theirs:
            self.process = subprocess.Popen(
                guarded([SERVE]),
                stdin=theirs.fileno(),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd="/",  # it holds no folder iolab may unmount or remove
                start_new_session=True,
            )
        self.channel, self.owner = ours, os.getpid()

    def alive(self) -> bool:
        return self.owner == os.getpid() and self.process.poll() is None

    def start(self, command: list[str], workdir: Path, stdout: int, stderr: int) -> None:
        """Have the keeper start fio there, with those descriptors as its stdout and stderr
        (OSError: the keeper is gone)."""
        asked = json.dumps({"argv": command, "cwd": str(workdir)}).encode()
        socket.send_fds(self.channel, [asked], [stdout, stderr])

    def answer(self, timeout_s: float | None = None) -> KeeperWord | None:
        """The keeper's word on the fio it ran, once fio ended; None if none came within
        `timeout_s`. A keeper that ended instead (killed, or it killed everything on
        SIGTERM) answers with its own status."""
        if timeout_s is not None and not select.select([self.channel], [], [], timeout_s)[0]:
            return None
        try:
            said = self.channel.recv(ANSWER_MAX)
        except OSError:
            said = b""
        if not said:
            self.close()
            return KeeperWord(_status(self.process.returncode))
        try:
            told = json.loads(said)
            if "error" in told:
                return KeeperWord(NOT_STARTED, error=str(told["error"]))
            return KeeperWord(int(told["code"]), float(told["wall"]))
        except (ValueError, KeyError, TypeError):
            return KeeperWord(NOT_STARTED, error=f"fio's keeper answered {said[:200]!r}")

    def stop(self, grace_s: float = STOP_GRACE_S) -> KeeperWord:
        """Ask fio to stop as Ctrl-C would (through the keeper), then have every fio process
        killed if it does not go (the keeper kills them all on SIGTERM, a stopped one too,
        and ends); the keeper itself is killed if it does not end either."""
        for signum in (signal.SIGINT, signal.SIGTERM):
            _signal(self.process, signum)
            answer = self.answer(grace_s)
            if answer is not None:
                return answer
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        self.close()
        return KeeperWord(_status(self.process.returncode))

    def close(self) -> None:
        """End the keeper (it kills whatever is left, and ends) and reap it."""
        self.channel.close()
        if self.owner != os.getpid():
            return
        try:
            self.process.wait(CLOSE_WAIT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


_kept: list[Keeper] = []  # this process's keeper, once started


def keeper() -> Keeper:
    """This process's keeper: the one started before if it still runs, else a new one."""
    if _kept and _kept[0].alive():
        return _kept[0]
    if _kept:
        _kept.pop().close()
    else:
        atexit.register(_close)
    _kept.append(Keeper())
    return _kept[0]


def _close() -> None:
    if _kept:
        _kept.pop().close()


def _status(code: int | None) -> int:
    """A keeper's exit status as fio's would read (the keeper's: fio's, or 137 killed)."""
    if code is None:
        return NOT_STARTED
    return code if code >= 0 else 128 - code


def _signal(child: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, signal.SIGCONT)  # a stopped keeper or fio takes no signal
    with contextlib.suppress(ProcessLookupError):
        child.send_signal(signum)


def run(
    fio: str,
    job_file: Path,
    workdir: Path,
    on_status: Callable[[Status], None] | None = None,
    timeout_s: float | None = None,
) -> Outcome:
    """Run one job file; on KeyboardInterrupt stop fio (SIGINT, then SIGKILL) and re-raise."""
    output = workdir / "out.json"
    errors = workdir / "stderr.txt"
    command = [
        fio,
        "--output-format=json+",
        f"--output={output}",
        "--eta=always",
        "--eta-newline=1",
        str(job_file),
    ]
    log.info("ran: %s", shlex.join(command))
    reading, writing = os.pipe()
    try:
        try:
            kept = _started(command, workdir, writing, errors)
        finally:
            os.close(writing)  # fio holds it now: its stdout ends with it
        try:
            answer, timed_out = _follow(reading, kept, on_status, timeout_s)
        except BaseException:
            kept.stop()
            raise
    finally:
        os.close(reading)
    said = answer.error and f"{answer.error}\n"
    return Outcome(
        returncode=answer.code,
        json_text=output.read_text(errors="replace") if output.exists() else "",
        stderr=errors.read_text(errors="replace") + said,
        log_files=tuple(sorted(workdir.glob("*.log"))),
        timed_out=timed_out,
        fio_s=answer.wall_s,
    )


def _started(command: list[str], workdir: Path, stdout: int, errors: Path) -> Keeper:
    """fio started by this process's keeper (by a new one if that one ended meanwhile)."""
    with errors.open("wb") as stderr:
        try:
            kept = keeper()
            kept.start(command, workdir, stdout, stderr.fileno())
        except OSError:
            kept = keeper()
            kept.start(command, workdir, stdout, stderr.fileno())
    return kept


def _follow(
    fd: int,
    kept: Keeper,
    on_status: Callable[[Status], None] | None,
    timeout_s: float | None,
) -> tuple[KeeperWord, bool]:
    """Read fio's status lines until its stdout ends, then the keeper's answer; True with it
    if fio had to be stopped for the timeout. Each wait, for a line and for the answer, has
    the deadline too: a fio that prints nothing (stopped, or hung in the kernel) is stopped
    when it passes, not waited for."""
    deadline = time.monotonic() + timeout_s if timeout_s else None
    pending = b""
    while True:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return kept.stop(), True
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        *lines, pending = re.split(rb"[\r\n]", pending + chunk)
        for line in lines:
            status = status_line(line.decode(errors="replace"))
            if status and on_status:
                on_status(status)
    answer = kept.answer(None if deadline is None else max(deadline - time.monotonic(), 0.0))
    return (kept.stop(), True) if answer is None else (answer, False)


def stop(child: subprocess.Popen[bytes], grace_s: float = STOP_GRACE_S) -> None:
    """Ask fio to stop as Ctrl-C would (through its keeper), then have every fio process
    killed if it does not go (the keeper kills them all on SIGTERM, a stopped one too); the
    keeper itself is killed if it does not end either. Always reaps it."""
    if child.poll() is not None:
        return
    for signum in (signal.SIGINT, signal.SIGTERM):
        _signal(child, signum)
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(grace_s)
            return
    with contextlib.suppress(ProcessLookupError):
        child.kill()
    child.wait()
