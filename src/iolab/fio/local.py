"""Running fio as a child process on this host, with live status and a clean stop."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import select
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from iolab.fio.outcome import Outcome
from iolab.fio.parse import Status, status_line

log = logging.getLogger(__name__)  # `iolab -v` shows what it ran

STOP_GRACE_S = 5.0


GUARD = Path(__file__).with_name("guard.py")
WALL_FILE = "fio-wall.txt"  # guard.WALL_FILE: the keeper imports nothing, nor is imported


def guarded(command: list[str]) -> list[str]:
    """fio under its keeper, which kills every fio process if iolab dies (see guard.py)."""
    return [sys.executable, "-I", "-S", str(GUARD), *command]


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
    with errors.open("wb") as stderr:
        child = subprocess.Popen(
            guarded(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=workdir,
            start_new_session=True,
        )
        timed_out = False
        try:
            timed_out = _follow(child, on_status, timeout_s)
        except BaseException:
            stop(child)
            raise
        finally:
            for pipe in (child.stdin, child.stdout):
                if pipe:
                    pipe.close()
    return Outcome(
        returncode=child.returncode,
        json_text=output.read_text(errors="replace") if output.exists() else "",
        stderr=errors.read_text(errors="replace"),
        log_files=tuple(sorted(workdir.glob("*.log"))),
        timed_out=timed_out,
        fio_s=_wall(workdir / WALL_FILE),
    )


def _wall(path: Path) -> float | None:
    """fio's wall time as its keeper wrote it; None if it wrote none (it was killed)."""
    try:
        wall = float(path.read_text())
    except (OSError, ValueError):
        return None
    return wall if 0 <= wall < float("inf") else None


def _follow(
    child: subprocess.Popen[bytes],
    on_status: Callable[[Status], None] | None,
    timeout_s: float | None,
) -> bool:
    """Read fio's status lines until it exits; True if it had to be stopped for the timeout.
    The wait for a line has the deadline too: a fio that prints nothing (stopped, or hung in
    the kernel) is stopped when it passes, not waited for."""
    assert child.stdout is not None
    deadline = time.monotonic() + timeout_s if timeout_s else None
    fd, pending = child.stdout.fileno(), b""
    while True:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                stop(child)
                return True
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        *lines, pending = re.split(rb"[\r\n]", pending + chunk)
        for line in lines:
            status = status_line(line.decode(errors="replace"))
            if status and on_status:
                on_status(status)
    child.wait()
    return False


def stop(child: subprocess.Popen[bytes], grace_s: float = STOP_GRACE_S) -> None:
    """Ask fio to stop as Ctrl-C would (through its keeper), then have every fio process
    killed if it does not go (the keeper kills them all on SIGTERM, a stopped one too); the
    keeper itself is killed if it does not end either. Always reaps it."""
    if child.poll() is not None:
        return
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGCONT)  # a stopped keeper or fio takes no signal
        with contextlib.suppress(ProcessLookupError):
            child.send_signal(signum)
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(grace_s)
            return
    with contextlib.suppress(ProcessLookupError):
        child.kill()
    child.wait()
