"""What this host's iolab made for a run, recorded outside the database, and the marks that
prove a thing is iolab's.

A database is data that may come from anywhere, so clean-up after a run whose iolab died
rests on this record alone. Each run writes one, a JSON file in `runs` under iolab's state
folder (as root `/var/lib/iolab`; another user `$XDG_STATE_HOME/iolab`, by default
`~/.local/state/iolab`; `IOLAB_STATE_DIR` names another), folders iolab makes 0700 and never
reaches through a link. The record names the run (its database and number), the process
that runs it (host, boot, pid and the pid's start time) and everything the run makes, each
written down before it is made. A thing is removed after the process died only when it is
still what the record says and still carries iolab's proof: a test file its mark (the extended
attribute `user.iolab.run` holding the run's token), a scratch folder its token file, a mount
the source the record names.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import secrets
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path

from iolab.errors import JSONShapeError, TargetError
from iolab.model import codec
from iolab.model.codec import spec
from iolab.targets.process import Owner

STATE_ENV = "IOLAB_STATE_DIR"
MARK = "user.iolab.run"  # the extended attribute on iolab's test files: the run's token
TOKEN_FILE = ".iolab-run"  # in a scratch folder iolab made: the run's token
TOKEN = re.compile(r"[0-9a-f]{32}")
RECORD_MAX = 1024**2
FILE, USER_FILE, DIR, MOUNT = "file", "user-file", "dir", "mount"
MOUNT_ROOT = "/run/iolab/"  # where iolab mounts set-ups (runner.campaign.MOUNT_ROOT)


def state_dir() -> Path:
    """Where this user's iolab keeps its records of runs: `runs` in iolab's state folder."""
    given = os.environ.get(STATE_ENV)
    if given:
        base = Path(os.path.abspath(given))
    elif os.geteuid() == 0:
        base = Path("/var/lib/iolab")
    else:
        home = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
        base = Path(os.path.abspath(home)) / "iolab"
    return base / "runs"


def _unsafe(folder: Path) -> str | None:
    """Why a state folder cannot be trusted (None when it can): it must be a folder of this
    user's, reached without a link, that no one else may write to."""
    try:
        found = os.lstat(folder)
    except FileNotFoundError:
        return "does not exist"
    if stat.S_ISLNK(found.st_mode) or os.path.realpath(folder) != str(folder):
        return "is reached through a symbolic link"
    if not stat.S_ISDIR(found.st_mode):
        return "is not a folder"
    if found.st_uid != os.geteuid():
        return "belongs to another user"
    if found.st_mode & 0o022:
        return "may be written by other users"
    return None


def _folder(create: bool) -> Path | None:
    """The records' folder (and iolab's state folder above it), made 0700 where absent when
    `create`; None when missing or not to be trusted (for reading); TargetError when a run
    cannot keep its record there."""
    folder = state_dir()
    for part in (folder.parent, folder) if create else ():
        try:
            part.parent.mkdir(parents=True, exist_ok=True)
            os.mkdir(part, 0o700)
        except FileExistsError:
            pass
        except OSError as error:
            raise TargetError(
                f"iolab cannot make its state folder {part} ({error.strerror}); make it "
                f"(mode 0700) or name another with {STATE_ENV}"
            ) from None
    problem = _unsafe(folder.parent) or _unsafe(folder)
    if problem is None:
        return folder
    if create:
        shown = folder.parent if _unsafe(folder.parent) else folder
        raise TargetError(
            f"iolab's state folder {shown} {problem}; iolab keeps its record of what a run "
            f"makes only in a folder of its own: remove it, or name another with {STATE_ENV}"
        )
    return None


def ready() -> None:
    """Make sure a run can keep its record (the state folder made, or TargetError saying why
    not), before anything else is done."""
    _folder(create=True)


@dataclass(frozen=True)
class Made:
    """One thing a run made (or is about to make), as its record says."""

    kind: str  # FILE (iolab's test file), USER_FILE (never removed), DIR, MOUNT, or a card's
    path: str  # for a card's policy: what to restore (targets.controllers.apply)
    folder: tuple[int, int] = (0, 0)  # the (device, inode) of the folder that holds it
    inode: int = 0  # a test file's or scratch folder's inode, as last seen
    marked: bool = False  # the test file holds the mark (its filesystem takes extended attributes)
    busy: bool = False  # a test file being made, or one fio may replace (it lays out anew)
    source: str = ""  # a mount's source


@dataclass
class Record:
    """One run's record: whose it is, and what it made."""

    token: str
    db: str
    run_id: int = field(metadata=spec("run"))
    owner: Owner
    made: list[Made] = field(default_factory=list, metadata=spec(tolerant=True))  # unread: out

    @classmethod
    def begin(cls, db: Path, run_id: int) -> Record:
        """A new record for run `run_id` of `db`, run by this process; written now."""
        record = cls(secrets.token_hex(16), str(db.resolve()), run_id, Owner.mine())
        record.save()
        return record

    @property
    def path(self) -> Path:
        return state_dir() / f"{self.token}.json"

    def save(self) -> None:
        """Write the record whole (a new file renamed over the old), never through a link."""
        folder = _folder(create=True)
        assert folder is not None  # _folder(create=True) raises instead
        temporary = folder / f".{self.token}.new"
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(temporary, flags, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(json.dumps(codec.to_json(self)))
        os.replace(temporary, folder / f"{self.token}.json")

    def delete(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def add(self, made: Made) -> Made:
        self.made.append(made)
        self.save()
        return made

    def change(self, old: Made, new: Made) -> Made:
        self.made = [new if m == old else m for m in self.made]
        self.save()
        return new

    def drop(self, made: Made) -> None:
        if made in self.made:
            self.made.remove(made)
            self.save()


def _parse(text: str) -> Record | None:
    """A run's record as `Record.save` wrote it; None for anything else (a made thing that
    cannot be read is left out, the others kept)."""
    try:
        record = codec.from_json(Record, json.loads(text), "a run's record")
    except (ValueError, RecursionError, JSONShapeError):
        return None
    return record if TOKEN.fullmatch(record.token) else None


def _read(path: Path) -> Record | None:
    """A record file of this user's, read without following a link; None if it is not one."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        found = os.fstat(handle.fileno())
        if not stat.S_ISREG(found.st_mode) or found.st_uid != os.geteuid():
            return None
        text = handle.read(RECORD_MAX).decode("utf-8", "replace")
    record = _parse(text)
    return record if record is not None and path.name == f"{record.token}.json" else None


def records() -> list[Record]:
    """Every run record of this user's on this host (none when the folder is not to be
    trusted: a link, another user's, open to others)."""
    folder = _folder(create=False)
    if folder is None:
        return []
    names = sorted(n for n in os.listdir(folder) if TOKEN.fullmatch(n.removesuffix(".json")))
    found = (_read(folder / name) for name in names if name.endswith(".json"))
    return [r for r in found if r is not None]


def records_of(db: Path) -> list[Record]:
    """The records of the runs of one database (by its resolved path)."""
    where = str(db.resolve())
    return sorted((r for r in records() if r.db == where), key=lambda r: r.run_id)


def dead(record: Record) -> bool:
    """Whether the process a record names is gone (on this host: another host's is not)."""
    return record.owner.gone() is True


# ------------------------------------------------------------------ proofs


def identity_of(path: Path) -> tuple[int, int]:
    found = os.stat(path)
    return found.st_dev, found.st_ino


def open_folder(made: Made) -> int | None:
    """The folder that holds `made`, opened without a link anywhere on its path, if it is
    still the folder the record names; None if not."""
    folder = os.path.dirname(made.path)
    if os.path.realpath(folder) != folder:
        return None
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    found = os.fstat(fd)
    if (found.st_dev, found.st_ino) != made.folder:
        os.close(fd)
        return None
    return fd


def mark_of(fd: int) -> str | None:
    """The mark on an open file (the token of the run that made it), None without one."""
    try:
        return os.getxattr(fd, MARK).decode("ascii", "replace")
    except OSError:
        return None


def _mark(fd: int, token: str) -> bool:
    """Mark an open file as this run's; False where the filesystem takes no such attribute."""
    try:
        os.setxattr(fd, MARK, token.encode())
    except OSError as error:
        if error.errno in (errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM, errno.EACCES):
            return False
        raise
    return True


def plain(found: os.stat_result) -> bool:
    """A regular file with one name (a link of either kind could lead elsewhere)."""
    return stat.S_ISREG(found.st_mode) and found.st_nlink == 1


def vouched(path: Path) -> bool:
    """Whether a plain file at `path` is iolab's: it carries an iolab run's mark, or a run's
    record names it as a test file it was making or fio was writing (a live run's: its lock
    then says which process holds it; a dead run's: the next run removes it)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        found = os.fstat(fd)
        if not plain(found):
            return False
        mark = mark_of(fd)
        if mark is not None:
            return TOKEN.fullmatch(mark) is not None
    finally:
        os.close(fd)
    where = (identity_of(path.parent), path.name)  # the same folder however reached (a bind mount)
    for record in records():
        for made in record.made:
            named = (made.folder, os.path.basename(made.path))
            if made.kind == FILE and named == where and _unmarked_ours(made, found):
                return True
    return False


def _unmarked_ours(made: Made, found: os.stat_result) -> bool:
    """A file with no mark is the record's when the record says it was being made or fio was
    writing it (fio lays a file out anew, as a new file), or, where the filesystem takes no
    mark, when it is the very file (inode) the record names."""
    return made.busy or (not made.marked and found.st_ino == made.inode)


def claim_file(path: Path, token: str, made: Made) -> Made:
    """Make iolab's test file at `path` and mark it as this run's (or take over a plain file
    there that is iolab's, checked again now); the record entry as it now stands."""
    flags = os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        if not vouched(path):
            raise TargetError(refused_words(path)) from None
        fd = os.open(path, flags)
    try:
        found = os.fstat(fd)
        if not plain(found):
            raise TargetError(refused_words(path))
        marked = _mark(fd, token)
    finally:
        os.close(fd)
    return replace(made, inode=found.st_ino, marked=marked, busy=False)


def refused_words(path: Path) -> str:
    return (
        f"{str(path)!r} exists and iolab did not make it (it carries no iolab mark); iolab "
        "writes only its own test file there: move it away, or choose another directory"
    )


def replaced(made: Made, token: str) -> str | None:
    """What stands at a test file's name now, when it is no longer the file this run made (a
    link, another file, a folder reached through a link); None while it is the run's, or gone
    (fio makes it anew, as a file of its own)."""
    fd = open_folder(made)
    if fd is None:
        return "its folder was moved or replaced by a link"
    try:
        found = os.stat(os.path.basename(made.path), dir_fd=fd, follow_symlinks=False)
        if not plain(found):
            return "a link or something else now stands there"
        file_fd = os.open(
            os.path.basename(made.path),
            os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
            dir_fd=fd,
        )
        try:
            mark = mark_of(file_fd)
        finally:
            os.close(file_fd)
    except FileNotFoundError:
        return None
    except OSError as error:
        return f"it cannot be read ({error.strerror})"
    finally:
        os.close(fd)
    if mark == token or (mark is None and not made.marked and found.st_ino == made.inode):
        return None
    return "another file, not iolab's, now stands there"


def remark_file(made: Made, token: str) -> Made:
    """After fio wrote the test file (it may have laid it out anew): marked again, if what is
    there is still a plain file that is this run's; the entry as it now stands."""
    fd = open_folder(made)
    if fd is None:
        return replace(made, busy=False)
    try:
        file_fd = os.open(
            os.path.basename(made.path),
            os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
            dir_fd=fd,
        )
    except OSError:
        return replace(made, busy=False)
    finally:
        os.close(fd)
    try:
        found = os.fstat(file_fd)
        mark = mark_of(file_fd)
        if not plain(found) or (mark != token and not (mark is None and made.busy)):
            return replace(made, busy=False)
        return replace(made, inode=found.st_ino, marked=_mark(file_fd, token), busy=False)
    finally:
        os.close(file_fd)


def remove_file(made: Made, token: str) -> bool:
    """Remove a test file a run made, if it is still there, plain, and the run's."""
    fd = open_folder(made)
    if fd is None:
        return False
    name = os.path.basename(made.path)
    try:
        file_fd = os.open(
            name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd
        )
        try:
            found, mark = os.fstat(file_fd), mark_of(file_fd)
        finally:
            os.close(file_fd)
        ours = mark == token or (mark is None and _unmarked_ours(made, found))
        now = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if plain(found) and ours and (now.st_dev, now.st_ino) == (found.st_dev, found.st_ino):
            os.unlink(name, dir_fd=fd)
            return True
        return False
    except OSError:
        return False
    finally:
        os.close(fd)


def file_entry(path: Path, kind: str = FILE) -> Made:
    """A test file's (or a user's file's) entry, before it is made."""
    return Made(kind, str(path), identity_of(path.parent), busy=kind == FILE)
