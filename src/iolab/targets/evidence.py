"""What this host's iolab made for a run, recorded outside the database, and the marks that
prove a thing is iolab's.

A database is data that may come from anywhere, so clean-up after a run whose iolab died
rests on this record, and a record is only a claim. Each run writes one, a JSON file in `runs`
under iolab's state folder (as root `/var/lib/iolab`; another user `$XDG_STATE_HOME/iolab`, by
default `~/.local/state/iolab`; `IOLAB_STATE_DIR` names another, refused unless it is an
absolute, clean path to an empty or iolab-made folder of this user's), folders iolab makes
0700 and never reaches through a link. The record names the run (its database and number), the
process that runs it (host, boot, pid and the pid's start time) and everything the run makes,
each written down before it is made. A thing is removed after the process died (never while it
lives) only when it still carries iolab's proof, which a record cannot forge: a test file the
mark iolab set on it before fio wrote a byte (the extended attribute `user.iolab.run` holding
the record's token) and the device and inode the record noted; a scratch folder its token file,
and then only the entries iolab makes there; a mount the source the record names.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import secrets
import stat
from collections.abc import Iterator
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
LAYOUT_BLOCK = 1024**2  # bytes iolab writes at a time when it lays out its test file
LAYOUT_TURN = 4099  # odd: no two blocks of one pool hold the same bytes at a 512-byte boundary
LAYOUT_POOL_BLOCKS = 512  # blocks written from one pool of random bytes before a fresh one
FILE, USER_FILE, DIR, MOUNT = "file", "user-file", "dir", "mount"
MOUNT_ROOT = "/run/iolab/"  # where iolab mounts set-ups (runner.campaign.MOUNT_ROOT)


STATE_MARK = ".iolab-state"  # in a state folder iolab made or took when it was empty
OWN_NAMES = frozenset({"runs", "pending-restores", STATE_MARK})  # what iolab keeps there
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def state_dir() -> Path:
    """Where this user's iolab keeps its records of runs: `runs` in iolab's state folder
    (TargetError when IOLAB_STATE_DIR names a folder iolab must not take)."""
    return state_folder() / "runs"


def default_state_folder() -> Path:
    if os.geteuid() == 0:
        return Path("/var/lib/iolab")
    home = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return Path(os.path.abspath(home)) / "iolab"


def state_folder() -> Path:
    """iolab's state folder: its default, or the one IOLAB_STATE_DIR names when that is an
    absolute, clean path to a folder of this user's that is empty, iolab's own, or absent
    (iolab makes it); else a TargetError in one line."""
    given = os.environ.get(STATE_ENV)
    if not given:
        return default_state_folder()
    problem = _named_problem(given)
    if problem is not None:
        shown = given.encode("unicode_escape").decode("ascii")
        raise TargetError(
            f"{STATE_ENV}={shown!r} {problem}; iolab keeps its records only in an empty folder "
            "of yours or one it made: name such a folder, or unset it"
        )
    return Path(given)


def _named_problem(given: str) -> str | None:
    """Why IOLAB_STATE_DIR's value cannot be iolab's state folder (None when it can)."""
    if _CONTROL.search(given):
        return "holds a control character"
    if not given.startswith("/"):
        return "is not an absolute path"
    if os.path.normpath(given) != given or given.startswith("//"):
        return "is not a clean path (no '.', '..', '//' or trailing '/')"
    if given == "/" or os.path.realpath(given) != given:
        return "is reached through a symbolic link" if given != "/" else "is the root folder"
    try:
        found = os.lstat(given)
    except FileNotFoundError:
        return (
            None if os.path.isdir(os.path.dirname(given)) else "is in a folder that does not exist"
        )
    except OSError as error:
        return f"cannot be read ({error.strerror})"
    if not stat.S_ISDIR(found.st_mode):
        return "is not a folder"
    if found.st_uid != os.geteuid() or found.st_mode & 0o022:
        return "is not a folder of yours alone (another owner, or writable by others)"
    try:
        names = set(os.listdir(given))
    except OSError as error:
        return f"cannot be read ({error.strerror})"
    if not names <= OWN_NAMES:
        return "is neither empty nor iolab's (it holds files iolab did not make)"
    return None


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
    if create:
        make_state(folder)
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


def make_state(folder: Path) -> None:
    """`folder` and iolab's state folder above it made 0700 where absent (the default's
    parents as usual; a named one's parent must exist), the state folder marked iolab's."""
    base = folder.parent
    try:
        if base == default_state_folder():
            base.parent.mkdir(parents=True, exist_ok=True)
        for part in (base, folder):
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o700)
        if _unsafe(base) is None:
            flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
            os.close(os.open(base / STATE_MARK, flags, 0o600))
    except OSError as error:
        raise TargetError(
            f"iolab cannot make its state folder {folder} ({error.strerror}); make it "
            f"(mode 0700) or name another with {STATE_ENV}"
        ) from None


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
    device: int = 0  # a test file's device, as last seen (with its inode: its identity)
    marked: bool = False  # the test file holds the mark (its filesystem takes extended attributes)
    busy: bool = False  # fio writes the test file (it proves nothing: the mark does)
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
    """Whether a plain file at `path` is iolab's, to write again: it carries an iolab run's
    mark (which only iolab sets), and no iolab that still runs holds it. A record alone never
    vouches for a file: a file made later at the same name is not iolab's."""
    mark = _mark_at(path)
    return mark is not None and _live_holder(mark) is None


def _mark_at(path: Path) -> str | None:
    """The iolab mark of a plain file at `path`, if it carries one."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        mark = mark_of(fd) if plain(os.fstat(fd)) else None
    finally:
        os.close(fd)
    return mark if mark is not None and TOKEN.fullmatch(mark) else None


def _live_holder(mark: str) -> Record | None:
    """The record of an iolab that still runs and marked a file so."""
    return next((r for r in records() if r.token == mark and not dead(r)), None)


def claim_file(path: Path, token: str, made: Made) -> Made:
    """Make iolab's test file at `path` and mark it as this run's (or take over a plain file
    there that is iolab's, checked again now); the record entry as it now stands, with the
    file's device and inode."""
    flags = os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        if not vouched(path):
            raise TargetError(refusal(path)) from None
        fd = os.open(path, flags)
    try:
        found = os.fstat(fd)
        if not plain(found):
            raise TargetError(refused_words(path))
        marked = _mark(fd, token)
    finally:
        os.close(fd)
    return replace(made, inode=found.st_ino, device=found.st_dev, marked=marked, busy=False)


def refusal(path: Path) -> str:
    """Why a file at `path` that iolab may not write is refused: another iolab's test file in
    use now, or a file iolab did not make."""
    mark = _mark_at(path)
    holder = _live_holder(mark) if mark is not None else None
    if holder is not None:
        return (
            f"{str(path)!r} is in use by another iolab (pid {holder.owner.pid}); wait for it "
            "to finish, or choose another target"
        )
    return refused_words(path)


def refused_words(path: Path) -> str:
    return (
        f"{str(path)!r} exists and iolab did not make it (it carries no iolab mark); iolab "
        "writes only its own test file there: move it away, or choose another directory"
    )


class FolderMoved(Exception):
    """The folder a record names is no longer there as it was (moved, or a link)."""


@contextlib.contextmanager
def _opened_file(made: Made, flags: int) -> Iterator[tuple[int, int, os.stat_result]]:
    """(the folder's fd, the file's fd, the file's status) of a test file the record names,
    reached through no link; OSError when it is not there."""
    fd = open_folder(made)
    if fd is None:
        raise FolderMoved
    try:
        name = os.path.basename(made.path)
        file_fd = os.open(name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
        try:
            yield fd, file_fd, os.fstat(file_fd)
        finally:
            os.close(file_fd)
    finally:
        os.close(fd)


def proven(made: Made, token: str, found: os.stat_result, mark: str | None) -> bool:
    """The file is the one the record names and still carries its proof: plain, the device
    and inode the record noted, and the record's mark."""
    same = (found.st_dev, found.st_ino) == (made.device, made.inode) and made.inode != 0
    return plain(found) and same and mark == token


def replaced(made: Made, token: str, live: bool = True) -> str | None:
    """What stands at a test file's name now, when it is no longer the file this run made (a
    link, another file, a folder reached through a link); None while it is the run's, or
    gone."""
    try:
        with _opened_file(made, os.O_RDONLY) as (_, file_fd, found):
            mark = mark_of(file_fd)
    except FolderMoved:
        return "its folder was moved or replaced by a link"
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "a link or something else now stands there"
        return f"it cannot be read ({error.strerror})"
    if not plain(found):
        return "a link or something else now stands there"
    if proven(made, token, found, mark) or (live and _unmarked_same(made, found, mark)):
        return None
    return "another file, not iolab's, now stands there"


def _unmarked_same(made: Made, found: os.stat_result, mark: str | None) -> bool:
    """On a filesystem that takes no mark: the very file (device and inode) this process
    made. Only the live run that made it may go by this; a dead run's record may not."""
    same = (found.st_dev, found.st_ino) == (made.device, made.inode) and made.inode != 0
    return not made.marked and mark is None and same


def layout_block(index: int, pool: bytes) -> bytes:
    """The `index`-th block of a test file's layout: the pool of random bytes turned by an
    odd stride, so that within LAYOUT_POOL_BLOCKS blocks no two hold the same bytes at any
    512-byte boundary (nothing for a device to deduplicate, nor to compress: random bytes,
    as fio lays a file out), for a copy's cost rather than the kernel's random generator's
    (about 10 ms a MiB here: 0.65 s of a 64 MiB file, issue 47)."""
    turn = index * LAYOUT_TURN % len(pool)
    return pool[turn:] + pool[:turn]


def _laid(fd: int, at: int, size: int) -> None:
    """Write the layout from `at` up to `size`, a fresh pool every LAYOUT_POOL_BLOCKS blocks."""
    pool, pooled = b"", -1
    while at < size:
        index = at // LAYOUT_BLOCK
        if index // LAYOUT_POOL_BLOCKS != pooled:
            pool, pooled = os.urandom(LAYOUT_BLOCK), index // LAYOUT_POOL_BLOCKS
        block = layout_block(index, pool)
        at += os.pwrite(fd, block[: min(LAYOUT_BLOCK, size - at)], at)


def lay_out(made: Made, token: str, size: int) -> int:
    """Grow iolab's test file to `size` bytes (fio's own layout: random bytes), in place, so
    that fio finds it large enough and never lays it out anew (a new, unmarked file): the
    file keeps its mark and inode while fio writes. Synced, as fio's `create_fsync` (its
    default) syncs its own. The bytes it wrote; TargetError when it is not the run's."""
    try:
        with _opened_file(made, os.O_WRONLY) as (_, file_fd, found):
            if not (
                proven(made, token, found, mark_of(file_fd))
                or _unmarked_same(made, found, mark_of(file_fd))
            ):
                raise TargetError(
                    f"iolab's test file {made.path} was replaced while the run went on; fio "
                    "writes only to iolab's own test file, so this set-up's cases stop here"
                )
            _laid(file_fd, found.st_size, size)
            if found.st_size < size:
                os.fsync(file_fd)
            return max(size - found.st_size, 0)
    except FolderMoved:
        raise TargetError(
            f"the folder of iolab's test file {made.path} was moved or replaced by a link while "
            "the run went on, so this set-up's cases stop here"
        ) from None
    except OSError as error:
        raise TargetError(
            f"iolab could not lay out its test file {made.path} ({error.strerror})"
        ) from None


def remark_file(made: Made, token: str) -> Made:
    """After fio wrote the test file: the entry as it now stands (the same file, marked; a
    file fio laid out anew, which this live process saw it make, marked again)."""
    try:
        with _opened_file(made, os.O_WRONLY) as (_, file_fd, found):
            mark = mark_of(file_fd)
            if proven(made, token, found, mark) or not plain(found):
                return replace(made, busy=False)
            if mark is not None or not made.busy:
                return replace(made, busy=False)
            marked = _mark(file_fd, token)
            return replace(made, inode=found.st_ino, device=found.st_dev, marked=marked, busy=False)
    except (OSError, FolderMoved):
        return replace(made, busy=False)


def remove_file(made: Made, token: str, live: bool = False) -> bool:
    """Remove a test file a run made, if it is still there and carries the run's proof (the
    live run that made it, on a filesystem that takes no mark: the same device and inode)."""
    try:
        with _opened_file(made, os.O_RDONLY) as (fd, file_fd, found):
            mark = mark_of(file_fd)
            ours = proven(made, token, found, mark) or (live and _unmarked_same(made, found, mark))
            name = os.path.basename(made.path)
            now = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if ours and (now.st_dev, now.st_ino) == (found.st_dev, found.st_ino):
                os.unlink(name, dir_fd=fd)
                return True
    except (OSError, FolderMoved):
        pass
    return False


def file_entry(path: Path, kind: str = FILE) -> Made:
    """A test file's (or a user's file's) entry, before it is made."""
    return Made(kind, str(path), identity_of(path.parent))
