"""One iolab at a time per target: an advisory lock per file, directory or device.

The locks are flock(2) locks, so they vanish with the process however it ends; a second run
on the same target is refused in one line naming the process that holds it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from iolab.errors import TargetError

LOCK_DIRS = (Path("/run/iolab/locks"), Path(tempfile.gettempdir()) / "iolab-locks")


def _lock_dir() -> Path:
    for folder in LOCK_DIRS:
        with contextlib.suppress(OSError):
            folder.mkdir(parents=True, exist_ok=True)
            if os.access(folder, os.W_OK):
                return folder
    raise TargetError(f"no writable folder for iolab's target locks (tried {LOCK_DIRS[0]})")


def _take(folder: Path, target: str, what: str) -> int:
    name = hashlib.sha256(target.encode()).hexdigest()[:24]
    fd = os.open(folder / f"{name}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
        os.close(fd)
        if error.errno in (errno.EAGAIN, errno.EACCES):
            raise TargetError(
                f"{what} is in use by another iolab ({holder}); wait for it to finish, "
                "or choose another target"
            ) from None
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"pid {os.getpid()}, target {target}".encode(), 0)
    return fd


@contextlib.contextmanager
def held(targets: Iterable[tuple[str, str]]) -> Iterator[None]:
    """Hold a lock on each (real path, description) for the block; refuse if one is taken."""
    folder = _lock_dir()
    fds: list[int] = []
    try:
        for target, what in dict(targets).items():  # one lock per target, however named
            fds.append(_take(folder, target, what))
        yield
    finally:
        for fd in fds:
            os.close(fd)
