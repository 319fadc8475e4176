"""How iolab meets the process that started it: the signals that stop it (SIGTERM, SIGHUP and
SIGQUIT stop it as Ctrl-C does), standard streams the parent closed (`iolab report >&-`), and a
standard output that cannot be written (a full disk, a closed pipe, a closed descriptor), told
apart from any other file's failure. The cli uses them; nothing else does.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import io
import os
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType
from typing import TYPE_CHECKING

from iolab.errors import STOP_SIGNALS, Interrupted, Stopped

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer


class StdoutError(OSError):
    """Writing to standard output failed (errno and strerror as the system said)."""


STANDARD_FDS = (0, 1, 2)


def hold_closed_standard_fds() -> None:
    """Standard streams the parent closed (`>&-`, `2>&-`, `<&-`) are held open on /dev/null,
    so that no file iolab opens later (the database, an output, fio's) takes their number and
    receives what is printed, or what a child writes to its inherited stderr. Python saw them
    closed at start: sys.stdout (or stderr, stdin) is None, and stays so, but for stdin, which
    reads as empty (no terminal: no prompt)."""
    for fd in STANDARD_FDS:
        if not _is_open(fd):
            held = os.open(os.devnull, os.O_RDWR)
            if held != fd:  # the lowest free one is fd, the ones below held already
                os.dup2(held, fd)
                os.close(held)
    if sys.stdin is None:
        sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 (open for the process's life)


def _is_open(fd: int) -> bool:
    try:
        fcntl.fcntl(fd, fcntl.F_GETFD)
    except OSError:
        return False
    return True


class _Stdout(io.RawIOBase):
    """File descriptor 1, whose write failures are StdoutError. After the first, what is
    written is dropped: nobody can read it, and the interpreter's last flush stays quiet.
    `closed_by_parent`: fd 1 was closed when iolab started (now held on /dev/null): a write
    fails as it would on the closed descriptor (EBADF), as other tools say."""

    def __init__(self, fd: int, closed_by_parent: bool = False) -> None:
        super().__init__()
        self._fd = fd
        self.failed = False
        self._closed_by_parent = closed_by_parent

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data: ReadableBuffer) -> int:
        size = memoryview(data).nbytes
        if self.failed:
            return size
        if self._closed_by_parent:
            self.failed = True
            raise StdoutError(errno.EBADF, os.strerror(errno.EBADF))
        try:
            return os.write(self._fd, data)
        except OSError as error:
            self.failed = True
            raise StdoutError(error.errno, error.strerror) from None


@contextlib.contextmanager
def guarded_stdout() -> Iterator[None]:
    """sys.stdout written through _Stdout while the block runs (the caller flushes it to see
    a failure); only when sys.stdout is the process's own (a test's capture is left alone),
    or None: fd 1 was closed when iolab started (see hold_closed_standard_fds)."""
    original = sys.stdout
    try:
        own = original is None or (original.fileno() >= 0 and original is sys.__stdout__)
    except (OSError, ValueError):  # no file descriptor behind it
        own = False
    if not own:
        yield
        return
    if original is not None:
        original.flush()
    raw = _Stdout(1 if original is None else original.fileno(), closed_by_parent=original is None)
    sys.stdout = io.TextIOWrapper(
        io.BufferedWriter(raw),
        encoding=original.encoding if original is not None else "utf-8",
        errors=original.errors if original is not None else "strict",
        line_buffering=bool(original.line_buffering) if original is not None else False,
    )
    try:
        yield
    except BaseException as error:
        if not stopped(error):  # sys.exit: what was printed goes out; a stop never waits on it
            with contextlib.suppress(OSError):
                sys.stdout.flush()
        raise
    finally:  # nothing more: what is left (after a fault or a stop) is dropped, quietly
        raw.failed = True
        sys.stdout = original


@contextlib.contextmanager
def stop_signals() -> Iterator[None]:
    """While the block runs, SIGTERM, SIGHUP and SIGQUIT raise Stopped where iolab is, as
    Ctrl-C raises KeyboardInterrupt, so the same clean-up runs; a second one while it cleans
    up is ignored. A signal the parent ignores (nohup's SIGHUP) stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []

    def stop(signum: int, _frame: FrameType | None) -> None:
        if received:
            return
        received.append(signum)
        raise Stopped(signum, signal.Signals(signum).name)

    previous = {
        number: signal.signal(number, stop)
        for number in STOP_SIGNALS
        if signal.getsignal(number) is not signal.SIG_IGN
    }
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def stopped(error: BaseException | None) -> bool:
    """Whether error comes of Ctrl-C or a stop signal (itself, or what it was raised in)."""
    while error is not None:
        if isinstance(error, KeyboardInterrupt):
            return True
        error = error.__context__
    return False


def exit_code(stop: BaseException) -> int:
    """128 + the number of the signal that stopped iolab: 130 for Ctrl-C, 143 for SIGTERM,
    129 for SIGHUP, 131 for SIGQUIT, as a shell reports a process its signal ended."""
    signum = stop.signum if isinstance(stop, Stopped | Interrupted) else signal.SIGINT
    return 128 + signum


def stopped_by(stop: BaseException) -> str:
    """'interrupted', or 'interrupted by SIGTERM' for a signal other than Ctrl-C."""
    return f"interrupted by {stop.name}" if isinstance(stop, Stopped) else "interrupted"
