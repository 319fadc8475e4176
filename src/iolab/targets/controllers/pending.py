"""Cache policies iolab changed and could not put back, kept outside the database until put back.

When restoring a RAID card's policy (or a plain disk's write cache) fails after a set-up, the
card is left as iolab set it: possibly always-write-back with no battery behind it. That is
kept here, one JSON file per card VD or disk, so that the end of the run and every later
command say it, with the command to restore it (built from its typed fields), until a later
restore succeeds (a later set-up on the same VD puts the first values back; `iolab run`
retries the others, this host's only).

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
import re
import shlex
import socket
import stat
import time
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, replace
from pathlib import Path

from iolab.errors import ControllerError, JSONShapeError, TargetError
from iolab.model import CardPolicy, codec
from iolab.targets import evidence
from iolab.targets.controllers import nvme_cache
from iolab.targets.controllers.card_commands import (
    SYSFS_FILE,
    SYSFS_WORDS,
    problem,
    program,
    set_commands,
)

STATE_ENV = evidence.STATE_ENV  # where iolab keeps what must outlive a run (tests set it)
FOLDER = "pending-restores"
MAX_RECORD = 64 * 1024  # bytes: a record is a few hundred
MAX_READ = 64  # records read at most (the others are counted)
MAX_ERROR = 300  # characters of a record's error shown
_RUN: ContextVar[int | None] = ContextVar("run", default=None)
_NAME = re.compile(r"[0-9a-f]{24}\.json")  # a record's name (`_name`)

# a plain disk's own write cache: where each kind of switch may be, as iolab sets it
DISK_SWITCHES = {"sysfs": SYSFS_FILE, "nvme": nvme_cache.DEVICE}


@dataclass(frozen=True)
class PendingRestore:
    """One card VD (or disk) whose policy a run changed and could not put back: typed fields
    only; the commands that put it back are built from them (never read from the record)."""

    tool: str  # "storcli", "perccli", "megacli", "ssacli", "arcconf", or "sysfs" for a disk
    where: str  # the VD as the tool names it ("/c0/v0"), or the disk's sysfs cache_type file
    restore: tuple[tuple[str, str], ...]  # the values to put back, by plan key (sysfs: "value")
    left: tuple[tuple[str, str], ...]  # what iolab set there, which may still be in effect
    error: str  # why the restore failed, in one line
    when: float  # seconds since the epoch
    run: int | None  # the run that changed it, where known
    pid: int  # the process that changed it
    host: str = ""  # the host whose iolab changed it ("": a record of an older iolab)

    def said(self) -> str:
        """The warning, one line: what is left, since when, why, and how to put it back."""
        by = f"run {self.run}" if self.run is not None else f"iolab (pid {self.pid})"
        at = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.when))
        error = self.error if len(self.error) <= MAX_ERROR else self.error[:MAX_ERROR] + "..."
        commands = restore_commands(self)
        if commands is None:
            return (
                f"a record in {folder()} says iolab left a cache policy changed and could not "
                f"put it back ({error}), but names no tool, device and values iolab would set; "
                "check the card or disk by hand, then remove the record"
            )
        left = (
            ", ".join(f"{key} = {value}" for key, value in self.left) if self.sound_left() else ""
        )
        there = "" if self.here() else f" on host {self.host or 'unknown'} (not this one)"
        return (
            f"{self.tool} {self.where}{there} may still have {left or 'a changed policy'}, set "
            f"by {by} at {at} (its restore failed: {error}); restore it: "
            f"{' && '.join(_shown(c) for c in commands)}"
        )

    def here(self) -> bool:
        """Written by this host's iolab (a record of another, or of no host, is not acted on)."""
        return self.host == socket.gethostname()

    def values(self) -> dict[str, str] | None:
        """The values to put back, when the tool, the device and each value are ones iolab
        would set (each checked against the tool's own allow-list); None if not."""
        values = dict(self.restore)
        if self.tool in DISK_SWITCHES:
            sound = DISK_SWITCHES[self.tool].fullmatch(self.where) and set(values) == {"value"}
            return values if sound and values["value"] in SYSFS_WORDS.values() else None
        if not values or problem(self.tool, self.where, values) is not None:
            return None
        return values

    def sound_left(self) -> bool:
        left = dict(self.left)
        if self.tool in DISK_SWITCHES:
            return set(left) == {"drive_cache"} and left["drive_cache"] in SYSFS_WORDS
        return problem(self.tool, self.where, left) is None

    def of_run(self, run_id: int) -> bool:
        """Left by run `run_id`, or by this process (a dead run's restore it tried first)."""
        return self.run == run_id or self.pid == os.getpid()

    def sound(self) -> bool:
        """What a record must hold beyond its shape: a pid and run that are counts, and a
        time that is one."""
        counts = [self.pid, *([self.run] if self.run is not None else [])]
        when = math.isfinite(self.when) and 0 <= self.when < 2**40
        return when and all(0 <= n < 2**63 for n in counts)


def restore_commands(entry: PendingRestore) -> list[tuple[str, ...]] | None:
    """The commands that put `entry` back, built from its typed fields; None when they are
    not ones iolab would run."""
    values = entry.values()
    if values is None:
        return None
    if entry.tool == "sysfs":
        return [("echo", values["value"], ">", entry.where)]
    if entry.tool == "nvme":
        return [tuple(nvme_cache.argv(entry.where, values["value"]))]
    policy = replace(CardPolicy(entry.tool, entry.where), **values)
    prog = program(entry.tool) or ""
    return [tuple(a) for k, v in values.items() for a in set_commands(policy, k, v, prog)]


def _shown(argv: tuple[str, ...]) -> str:
    """A command as one types it; `>` is the shell's, for a sysfs file."""
    if len(argv) == 4 and argv[0] == "echo" and argv[2] == ">":
        return f"echo {shlex.quote(argv[1])} > {shlex.quote(argv[3])}"
    return shlex.join(argv)


def said_all(entries: list[PendingRestore], files: int) -> list[str]:
    """The restores owed, in one line: the one, or how many with the oldest."""
    if not entries:
        return []
    if files == 1:
        return [entries[0].said()]
    return [
        f"{files} cache policies iolab changed were not put back (each kept in {folder()}; "
        f"'iolab run' retries this host's); the oldest: {entries[0].said()}"
    ]


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
    """`path` and the state directory above it made 0700 where absent (`evidence`); both
    must be real directories of this user."""
    try:
        evidence.make_state(path)
    except TargetError as error:
        raise ControllerError(str(error)) from None
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
    """The restores still owed, oldest first (of the first MAX_READ records); creates
    nothing. A folder that is not iolab's (a link, another owner, writable by others) or a
    file that is not a record is passed over."""
    return owed()[0]


def owed() -> tuple[list[PendingRestore], int]:
    """(the restores read, oldest first, of at most MAX_READ records; how many records the
    folder holds in all)."""
    where = folder()
    if not _owned_dir(where):
        return [], 0
    found: list[PendingRestore] = []
    try:
        handle = os.open(where, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return [], 0
    try:
        names = sorted(n for n in os.listdir(handle) if _NAME.fullmatch(n))
        for name in names[:MAX_READ]:
            entry = _read(handle, name)
            found += [entry] if entry is not None else []
    finally:
        os.close(handle)
    return sorted(found, key=lambda e: e.when), len(found) + max(len(names) - MAX_READ, 0)


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
