"""Which fio is installed, what it can do, and which engine suits this kernel.

Every fio command iolab runs before the cases (--version, --enghelp, --parse-only, --showcmd)
goes through `ask`: a time limit (ANSWER_S, or IOLAB_FIO_ANSWER_S seconds), after which fio and
anything it started are killed and FioError says in one line which command did not answer.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from iolab.errors import FioError

MIN_VERSION = (3, 0)
ANSWER_S = 30.0  # how long fio may take to answer a question asked before the cases
ANSWER_ENV = "IOLAB_FIO_ANSWER_S"  # seconds, to change ANSWER_S (tests lower it)
ANSWER_MAX_S = 3600.0
REAP_S = 5.0  # after the kill: how long to wait for the pipes to close
_VERSION = re.compile(r"fio-(\d+)\.(\d+)[\w.+~-]*")


@dataclass(frozen=True)
class FioInfo:
    path: str
    version: str
    engines: tuple[str, ...]

    @property
    def default_engine(self) -> str:
        """io_uring where fio has it and the kernel allows it, else libaio, else psync."""
        if "io_uring" in self.engines and _io_uring_allowed():
            return "io_uring"
        return "libaio" if "libaio" in self.engines else "psync"


@dataclass(frozen=True)
class Answer:
    """What a short fio command printed (decoded, undecodable bytes replaced) and its status."""

    returncode: int
    stdout: str
    stderr: str


def _io_uring_allowed() -> bool:
    switch = Path("/proc/sys/kernel/io_uring_disabled")
    try:
        return switch.read_text().strip() == "0"
    except OSError:
        return Path("/proc/sys/kernel").exists()


def answer_limit() -> float:
    """Seconds a pre-case fio command may take: IOLAB_FIO_ANSWER_S if set, else ANSWER_S."""
    text = os.environ.get(ANSWER_ENV)
    if text is None:
        return ANSWER_S
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value <= ANSWER_MAX_S:
        raise FioError(
            f"{ANSWER_ENV} is not a number of seconds from 0 to {ANSWER_MAX_S:g}; "
            f"unset it (default {ANSWER_S:g} s) or give e.g. {ANSWER_ENV}=60"
        )
    return value


def ask(command: Sequence[str], purpose: str, timeout_s: float | None = None) -> Answer:
    """Run one short fio command (`purpose` says why, for the message) with a time limit.

    FioError in one line if it cannot be started or does not answer in time; then it is
    killed with everything it started (its own session, so a child cannot keep it alive).
    """
    return ask_all([(command, purpose)], timeout_s)[0]


def ask_all(
    asked: Sequence[tuple[Sequence[str], str]], timeout_s: float | None = None
) -> list[Answer]:
    """Short fio commands (each with its purpose) run side by side, their answers in order,
    all within one time limit: as `ask`, and the first that fails says so (the others are
    killed then)."""
    limit = answer_limit() if timeout_s is None else timeout_s
    deadline = time.monotonic() + limit
    children: list[subprocess.Popen[bytes]] = []
    try:
        children += [_started(command) for command, _ in asked]
        return [
            _answer(child, command, purpose, limit, deadline)
            for child, (command, purpose) in zip(children, asked, strict=True)
        ]
    except BaseException:
        for child in children:
            _kill(child)
        raise


def _started(command: Sequence[str]) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(
            list(command),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as error:
        raise FioError(
            f"cannot run {command[0]} ({error.strerror}); install fio 3.x "
            "('apt-get install fio') or put a working fio first on PATH"
        ) from None


def _answer(
    child: subprocess.Popen[bytes],
    command: Sequence[str],
    purpose: str,
    limit: float,
    deadline: float,
) -> Answer:
    try:
        out, err = child.communicate(timeout=max(deadline - time.monotonic(), 0.0))
    except subprocess.TimeoutExpired:
        said = " ".join(command[:2])
        raise FioError(
            f"'{said}' ({purpose}) did not answer in {limit:g} s, so iolab stopped it; check "
            f"that {command[0]} is a working fio 3.x that nothing holds stopped (run "
            f"'{command[0]} --version' by hand), then try again"
        ) from None
    return Answer(child.returncode, out.decode(errors="replace"), err.decode(errors="replace"))


def _kill(child: subprocess.Popen[bytes]) -> None:
    """Kill a command's whole session (a stopped one too) and reap it; close its pipes."""
    if child.poll() is None:  # not reaped yet: its pid, and so its group, is still its own
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        child.communicate(timeout=REAP_S)
    for pipe in (child.stdout, child.stderr):
        if pipe:
            pipe.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        child.wait(REAP_S)


def parse_version(text: str) -> tuple[int, int]:
    """(major, minor) of the first "fio-X.Y" in what fio printed; FioError if none."""
    match = _VERSION.search(text)
    if not match:
        raise FioError(
            "cannot read fio's version (no 'fio-3.x' in what it printed); install fio 3.x"
        )
    return int(match.group(1)), int(match.group(2))


@functools.cache
def probe(binary: str = "fio") -> FioInfo:
    """Find fio and check that it is new enough; cached for the process."""
    path = shutil.which(binary)
    if path is None:
        raise FioError("fio is not installed: run 'apt-get install fio' (or the README's set-up)")
    said, help_text = ask_all(
        [
            ([path, "--version"], "reading its version"),
            ([path, "--enghelp"], "listing its I/O engines"),
        ]
    )
    found = _VERSION.search(said.stdout)
    if not found:
        raise FioError(
            f"{path} --version printed no fio version (fio-3.x); install fio 3.x "
            "('apt-get install fio') or put it first on PATH"
        )
    version = found.group(0)
    if parse_version(version) < MIN_VERSION:
        raise FioError(f"{version} is too old: iolab needs fio 3.0 or newer")
    engines = tuple(line.strip() for line in help_text.stdout.splitlines()[1:] if line.strip())
    return FioInfo(path=path, version=version, engines=engines)
