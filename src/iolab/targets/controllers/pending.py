"""Cache policies iolab changed and could not put back, kept outside the database until put back.

When restoring a RAID card's policy (or a plain disk's write cache) fails after a set-up, the
card is left as iolab set it: possibly always-write-back with no battery behind it. That is
kept here, one JSON file per card VD or disk, so that the end of the run and every later
command say it, with the exact command to restore it, until a later restore succeeds (a
later set-up on the same VD puts the first values back; `iolab run` retries the others).

The record is not in the results database (a database is data that may come from anywhere,
and a database can be deleted or moved): it sits in iolab's state folder (`targets.evidence`),
as `pending-restores/`: /var/lib/iolab/pending-restores for root,
$XDG_STATE_HOME/iolab/pending-restores (~/.local/state/iolab/...) for anyone else, or under
$IOLAB_STATE_DIR. iolab makes its folders 0700 and its files 0600, writes them whole (a file
renamed into place), never through a symbolic link, and reads only a folder that is a real
directory of the user running iolab, reached through no link, that nobody else can write to.
Reading never creates anything.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import shlex
import stat
import time
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, replace
from pathlib import Path

from iolab.errors import ControllerError, JSONShapeError
from iolab.model import codec
from iolab.targets import evidence

STATE_ENV = evidence.STATE_ENV  # where iolab keeps what must outlive a run (tests set it)
FOLDER = "pending-restores"
MAX_RECORD = 64 * 1024  # bytes: a record is a few hundred
_RUN: ContextVar[int | None] = ContextVar("run", default=None)


@dataclass(frozen=True)
class PendingRestore:
    """One card VD (or disk) whose policy a run changed and could not put back."""

    tool: str  # "storcli", "perccli", "megacli", "ssacli", "arcconf", or "sysfs" for a disk
    where: str  # the VD as the tool names it ("/c0/v0"), or the disk's sysfs cache_type file
    restore: tuple[tuple[str, str], ...]  # the values to put back, by plan key (sysfs: "value")
    left: tuple[tuple[str, str], ...]  # what iolab set there, which may still be in effect
    commands: tuple[tuple[str, ...], ...]  # the exact commands that put it back by hand
    error: str  # why the restore failed, in one line
    when: float  # seconds since the epoch
    run: int | None  # the run that changed it, where known
    pid: int  # the process that changed it

    def said(self) -> str:
        """The warning, one line: what is left, since when, why, and how to put it back."""
        left = ", ".join(f"{key} = {value}" for key, value in self.left)
        by = f"run {self.run}" if self.run is not None else f"iolab (pid {self.pid})"
        at = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.when))
        return (
            f"{self.tool} {self.where} may still have {left}, set by {by} at {at} (its restore "
            f"failed: {self.error}); restore it: {' && '.join(_shown(c) for c in self.commands)}"
        )

    def of_run(self, run_id: int) -> bool:
        """Left by run `run_id`, or by this process (a dead run's restore it tried first)."""
        return self.run == run_id or self.pid == os.getpid()

    def sound(self) -> bool:
        """What a record must hold beyond its shape: a command to put it back, a pid and run
        that are counts, and a time that is one."""
        counts = [self.pid, *([self.run] if self.run is not None else [])]
        commands = bool(self.commands) and all(self.commands)
        when = math.isfinite(self.when) and 0 <= self.when < 2**40
        return commands and when and all(0 <= n < 2**63 for n in counts)


def _shown(argv: tuple[str, ...]) -> str:
    """A command as one types it; `>` is the shell's, for a sysfs file."""
    if len(argv) == 4 and argv[0] == "echo" and argv[2] == ">":
        return f"echo {shlex.quote(argv[1])} > {shlex.quote(argv[3])}"
    return shlex.join(argv)


# -- the run that changes policies now --------------------------------------------------------


@contextlib.contextmanager
def during(run_id: int) -> Iterator[None]:
    """Records added in the block name `run_id` as the run that changed the policy."""
    token = _RUN.set(run_id)
    try:
        yield
    finally:
        _RUN.reset(token)


def current_run() -> int | None:
    return _RUN.get()


# -- the folder -------------------------------------------------------------------------------


def folder() -> Path:
    """The records' folder, beside the runs' records in iolab's state folder."""
    return evidence.state_dir().parent / FOLDER


def _name(tool: str, where: str) -> str:
    family = "storcli" if tool == "perccli" else tool  # one card, either tool
    return hashlib.sha256(f"{family}\0{where.lower()}".encode()).hexdigest()[:24] + ".json"


def _owned_dir(path: Path) -> bool:
    """A real directory of this user, reached through no link, that nobody else may write to."""
    try:
        found = os.lstat(path)
    except OSError:
        return False
    private = not found.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    direct = os.path.realpath(path) == os.path.abspath(path)
    return stat.S_ISDIR(found.st_mode) and found.st_uid == os.geteuid() and private and direct


def _make(path: Path) -> None:
    """`path` and the state directory above it made 0700 where absent (their parents as
    usual); both must be real directories of this user."""
    for part in (path.parent, path):
        try:
            if part == path.parent:
                part.parent.mkdir(parents=True, exist_ok=True)
            os.mkdir(part, 0o700)
        except FileExistsError:
            pass
        except OSError as error:
            raise ControllerError(f"could not make {part} ({error.strerror})") from None
    if not _owned_dir(path) or not _owned_dir(path.parent):
        raise ControllerError(
            f"{path} or its parent is not a directory of iolab's user (a link, another owner, "
            "or writable by others); iolab keeps the restores it still owes there"
        )


@contextlib.contextmanager
def _opened() -> Iterator[int]:
    """The folder, opened without following a link (made first where absent)."""
    where = folder()
    _make(where)
    try:
        handle = os.open(where, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as error:
        raise ControllerError(f"could not open {where} ({error.strerror})") from None
    try:
        yield handle
    finally:
        os.close(handle)


# -- add, drop, read --------------------------------------------------------------------------


def add(entry: PendingRestore) -> None:
    """Keep `entry`, over any earlier one for the same VD or disk (whose values to put back
    are kept: they are what was there before iolab changed anything)."""
    name = _name(entry.tool, entry.where)
    earlier = next((e for e in pending() if _name(e.tool, e.where) == name), None)
    if earlier is not None:
        first = dict(earlier.restore)
        merged = tuple({**dict(entry.restore), **first}.items())
        entry = replace(entry, restore=merged)
    text = json.dumps(codec.to_json(entry), indent=1).encode()
    with _opened() as handle:
        partial = f".{name}.{os.getpid()}.partial"
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
        try:
            out = os.open(partial, flags, 0o600, dir_fd=handle)
            try:
                os.write(out, text)
                os.fsync(out)
            finally:
                os.close(out)
            os.replace(partial, name, src_dir_fd=handle, dst_dir_fd=handle)
        except OSError as error:
            raise ControllerError(f"could not write {folder() / name} ({error.strerror})") from None


def drop(tool: str, where: str) -> bool:
    """Forget the record of `where` (its restore succeeded); True if there was one."""
    if not _owned_dir(folder()):
        return False
    with _opened() as handle:
        try:
            os.unlink(_name(tool, where), dir_fd=handle)
        except FileNotFoundError:
            return False
        except OSError as error:
            raise ControllerError(
                f"could not remove {folder() / _name(tool, where)} ({error.strerror})"
            ) from None
    return True


def pending() -> list[PendingRestore]:
    """Every restore still owed, oldest first; creates nothing. A folder that is not iolab's
    (a link, another owner, writable by others) or a file that is not a record is passed over."""
    where = folder()
    if not _owned_dir(where):
        return []
    found: list[PendingRestore] = []
    try:
        handle = os.open(where, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return []
    try:
        for name in sorted(os.listdir(handle)):
            if name.endswith(".json") and not name.startswith("."):
                entry = _read(handle, name)
                found += [entry] if entry is not None else []
    finally:
        os.close(handle)
    return sorted(found, key=lambda e: e.when)


def _read(handle: int, name: str) -> PendingRestore | None:
    try:
        one = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=handle)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(one).st_mode):
            return None
        data = os.read(one, MAX_RECORD + 1)
    finally:
        os.close(one)
    if len(data) > MAX_RECORD:
        return None
    try:
        entry = codec.from_json(PendingRestore, json.loads(data), "a pending restore")
    except (ValueError, RecursionError, JSONShapeError):
        return None
    if not entry.sound() or _name(entry.tool, entry.where) != name:
        return None
    return entry
