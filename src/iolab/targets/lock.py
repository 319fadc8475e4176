"""One iolab at a time per target: an advisory lock per file, directory or device.

The locks are flock(2) locks, so they vanish with the process however it ends; a second run
on the same target is refused in one line naming the process that holds it. A lock is keyed
by what the target is, not by how it is spelled: a block device by its device number, a file
by its directory's (device, inode) and its name, and by its own (device, inode) once it
exists; so a bind mount, a symlink or another spelling of the same target meets the same lock.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import re
import stat
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from iolab.errors import TargetError

LOCK_DIRS = (Path("/run/iolab/locks"), Path(tempfile.gettempdir()) / "iolab-locks")
HOLDER_TRIES = 40
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _lock_dir() -> Path:
    for folder in LOCK_DIRS:
        with contextlib.suppress(OSError):
            folder.mkdir(parents=True, exist_ok=True)
            if os.access(folder, os.W_OK):
                return folder
    raise TargetError(f"no writable folder for iolab's target locks (tried {LOCK_DIRS[0]})")


def keys(target: str) -> list[str]:
    """What `target` is, as lock keys: ["block MAJ:MIN"] for a block device; for a file (or a
    directory), "entry DEV:INO/NAME" (its directory and its name, so one not made yet is
    held too) and, once it exists, "inode DEV:INO" (so a hard link is the same file)."""
    path = Path(target)
    try:
        found: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        found = None
    except OSError as error:
        raise TargetError(f"{target} cannot be read to lock it ({error.strerror})") from None
    if found is not None and stat.S_ISBLK(found.st_mode):
        return [f"block {os.major(found.st_rdev)}:{os.minor(found.st_rdev)}"]
    try:
        parent = os.stat(path.parent)
    except OSError as error:
        raise TargetError(f"{path.parent} cannot be read to lock it ({error.strerror})") from None
    out = [f"entry {parent.st_dev}:{parent.st_ino}/{path.name}"]
    if found is not None:
        out.append(f"inode {found.st_dev}:{found.st_ino}")
    return out


def _take(folder: Path, key: str, target: str, what: str) -> int:
    file = folder / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.lock"
    try:
        fd = os.open(file, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as error:
        raise TargetError(
            f"{what}: iolab's lock {file} cannot be opened ({error.strerror}); remove it if "
            "no iolab runs, or run as its owner"
        ) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        holder = _holder(fd)
        os.close(fd)
        if error.errno in (errno.EAGAIN, errno.EACCES):
            raise TargetError(
                f"{what} is in use by another iolab ({holder}); wait for it to finish, "
                "or choose another target"
            ) from None
        raise TargetError(
            f"{what}: iolab's lock {file} cannot be taken ({error.strerror})"
        ) from None
    said = f"pid {os.getpid()}, target {target}".encode()
    os.pwrite(fd, said, 0)
    os.ftruncate(fd, len(said))
    return fd


def _holder(fd: int) -> str:
    """Who holds the lock, as it wrote it; a holder that has just taken the lock may not
    have written yet, so an empty file is read again for a moment."""
    for _ in range(HOLDER_TRIES):
        said = os.pread(fd, 200, 0).decode(errors="replace").strip()
        if said:
            return _CONTROL.sub("?", said)
        time.sleep(0.05)
    return "another process"


@contextlib.contextmanager
def held(targets: Iterable[tuple[str, str]]) -> Iterator[None]:
    """Hold a lock on each (path, description) for the block; refuse if one is taken by
    another process (the same target named twice here is held once)."""
    folder = _lock_dir()
    fds: dict[str, int] = {}
    try:
        for target, what in targets:
            for key in keys(target):
                if key not in fds:
                    fds[key] = _take(folder, key, target, what)
        yield
    finally:
        for fd in fds.values():
            os.close(fd)
