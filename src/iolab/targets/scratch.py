"""The lab's scratch folders: where `iolab rehearse` and `iolab run --lab` keep the lab
kernel's disk images and the runs inside it, one fresh folder per command.

A folder is removed when its command ends. A command killed outright (SIGKILL, the machine's
out-of-memory killer) cannot remove it, so each folder carries an owner file that its command
holds locked (flock) while it runs: the lock vanishes with the process, however it ends. The
next command removes the folders whose lock it can take, and only those: a folder named as
iolab names them, a directory (not a link) in the scratch place, owned by this user, with an
owner file iolab made. Anything else there is left as it is.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

PLACES = (Path("/var/tmp"), Path(tempfile.gettempdir()))
PREFIX = "iolab-rehearse-"
OWNER = ".iolab-owner"


def place() -> Path:
    """Where the scratch folders go: /var/tmp (disk, kept off tmpfs) where there is one."""
    return next((p for p in PLACES if p.is_dir()), Path(tempfile.gettempdir()))


@contextlib.contextmanager
def folder(say: Callable[[str], None], where: Path | None = None) -> Iterator[Path]:
    """A fresh scratch folder, held while the block runs and removed after it; first, the
    folders of commands that were killed are removed, each said through `say`."""
    base = where or place()
    for left in left_behind(base):
        say(f"removed {left}: the lab folder of an iolab that was killed")
    made = Path(tempfile.mkdtemp(prefix=PREFIX, dir=base))
    try:
        with _held(made):
            yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


@contextlib.contextmanager
def _held(made: Path) -> Iterator[None]:
    """The owner file, locked before it takes its name: another command never finds it
    unlocked while this one lives."""
    unnamed = made / f"{OWNER}.new"
    with open(unnamed, "w") as owner:
        fcntl.flock(owner, fcntl.LOCK_EX)
        owner.write(f"{os.getpid()}\n")
        owner.flush()
        unnamed.rename(made / OWNER)
        yield


def left_behind(base: Path) -> list[Path]:
    """Remove the scratch folders in `base` whose command is gone; return them."""
    removed = []
    for candidate in sorted(base.glob(f"{PREFIX}*")):
        if _ours(candidate) and _removed_if_free(candidate):
            removed.append(candidate)
    return removed


def _ours(candidate: Path) -> bool:
    try:
        found = os.lstat(candidate)
        owner = os.lstat(candidate / OWNER)
    except OSError:
        return False
    return (
        stat.S_ISDIR(found.st_mode)
        and stat.S_ISREG(owner.st_mode)
        and found.st_uid == owner.st_uid == os.getuid()
    )


def _removed_if_free(candidate: Path) -> bool:
    """Take the owner's lock without waiting; holding it, remove the folder."""
    try:
        descriptor = os.open(candidate / OWNER, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(descriptor)
        return False
    try:
        shutil.rmtree(candidate, ignore_errors=True)
    finally:
        os.close(descriptor)
    return not candidate.exists()
