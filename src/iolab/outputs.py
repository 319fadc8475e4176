"""The one writer of what the user asks iolab to write (reports, exports, images, trees).

- Never through a symbolic link: a file is replaced by renaming a new one onto its name
  (which never follows a link), and a link found where a file or folder would be is refused,
  even with --force. Every folder iolab walks into or creates inside an output folder is
  opened relative to its parent with O_DIRECTORY | O_NOFOLLOW; a folder the user names to
  write into (--export DIR, fio-plot's -o DIR) must not be a link itself. The folders above
  what the user named are the user's path, followed as given.
- Atomic: each file is written to a temporary file in its own folder, synced, then renamed
  into place; a refusal or a failure leaves no half-written output.
- Never replaces a file iolab did not write, unless the user says so (--force). iolab keeps
  a record in each output folder, `.iolab-written` (JSON: name relative to the folder ->
  sha256 of what iolab wrote and the kind of output). A file is iolab's when it is a regular
  file owned by this user, whose content still has the recorded sha256: re-running the same
  command replaces it; a file edited since, or one from elsewhere, is not replaced.
- Deletes only what the record lists: plain relative names (no '..', not absolute), reached
  without links, regular files that are still iolab's by the rule above. Anything else is
  left alone, and counted.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import secrets
import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from iolab.errors import ReportError
from iolab.files import kind_of

RECORD = ".iolab-written"
RECORD_LIMIT = 16 << 20  # a record bigger than this is not one iolab wrote
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
LINK = "is a symbolic link; iolab never writes through one: choose another name"
FOREIGN = "exists and iolab did not write it; choose another name or add --force"


class OutputRefused(ReportError):
    """An output would go through a link, or replace a file iolab did not write."""


@dataclass(frozen=True)
class Target:
    """An output folder as the user gave it ("" is the current one). `named`: the user named
    this folder to write into, so it may be made, and must not be a link itself."""

    path: str
    named: bool = False

    def shown(self, name: str = "") -> str:
        """How a file in it is named in messages: as the user would write it."""
        if not name:
            return self.path or "."
        return os.path.join(self.path, name) if self.path else name


@dataclass(frozen=True)
class Entry:
    """What the record says of one file iolab wrote there."""

    sha256: str
    by: str


def split(path: str) -> tuple[Target, str]:
    """A file the user named: (its folder, its name in it)."""
    folder, name = os.path.split(path)
    return Target(folder), name


def plain(name: str) -> tuple[str, ...] | None:
    """The parts of a plain relative name (a/b/c), or None: absolute, empty, '.', '..'."""
    parts = tuple(name.split("/"))
    if not name or "\0" in name or name.startswith("/"):
        return None
    return None if any(p in ("", ".", "..") for p in parts) else parts


def _read_up_to(fd: int, limit: int) -> bytes:
    chunks, size = [], 0
    while size < limit and (chunk := os.read(fd, min(1 << 20, limit - size))):
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def sha256_of(fd: int) -> str:
    digest = hashlib.sha256()
    while chunk := os.read(fd, 1 << 20):
        digest.update(chunk)
    return digest.hexdigest()


class Folder:
    """An output folder, open by descriptor, with iolab's record of what it wrote there.

    Use as a context manager; `check` before any work, `write` when the work is done."""

    def __init__(self, target: Target, *, force: bool) -> None:
        self.target = target
        self.force = force
        self.root: int | None = self._open_root()
        self.record: dict[str, Entry] = {}
        self.has_record = False
        self.written: dict[str, Entry] = {}  # what this folder wrote or removed, for the record
        self.dropped: set[str] = set()
        if self.root is not None:
            try:
                self._load_record()
            except BaseException:
                self.close()
                raise

    def __enter__(self) -> Folder:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        if self.root is not None:
            os.close(self.root)
            self.root = None

    # ------------------------------------------------------------ opening

    def _open_root(self) -> int | None:
        """The folder's descriptor; None when a folder the user named does not exist yet."""
        path = self.target.path.rstrip("/") or ("/" if self.target.path else ".")
        if not self.target.named or path in ("/", ".", "..") or path.endswith(("/.", "/..")):
            try:
                return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except FileNotFoundError:
                if self.target.named:
                    return None
                raise ReportError(
                    f"cannot write in {path}: no such folder; create it first"
                ) from None
            except OSError as error:
                raise ReportError(f"cannot write in {path}: {error.strerror}") from None
        parent, name = os.path.split(path)
        try:
            above = os.open(parent or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as error:
            raise ReportError(f"cannot write in {parent}: {error.strerror}") from None
        try:
            return self._enter(above, name, self.target.shown(), create=False)
        finally:
            os.close(above)

    def _enter(self, fd: int, name: str, shown: str, *, create: bool) -> int | None:
        """Open folder `name` inside `fd`, never through a link; made if `create`, else None
        when missing."""
        try:
            return os.open(name, DIR_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            if not create:
                return None
        except OSError as error:
            raise self._refusal(fd, name, shown, error, "folder") from None
        try:
            with suppress(FileExistsError):
                os.mkdir(name, 0o777, dir_fd=fd)
            return os.open(name, DIR_FLAGS, dir_fd=fd)
        except OSError as error:
            raise self._refusal(fd, name, shown, error, "folder") from None

    def _refusal(self, fd: int, name: str, shown: str, error: OSError, want: str) -> ReportError:
        """Why `name` in `fd` cannot be used as a `want` ("folder" or "file"), in one line."""
        try:
            mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
        except OSError:
            mode = None
        if mode is not None and stat.S_ISLNK(mode):
            return OutputRefused(f"{shown} {LINK}")
        if mode is not None and error.errno in (errno.ENOTDIR, errno.ELOOP):
            return OutputRefused(f"{shown} is {kind_of(mode)}, not a {want}; choose another name")
        return ReportError(f"cannot write {shown}: {error.strerror}")

    def _walk(self, parts: Sequence[str], *, create: bool) -> int | None:
        """A new descriptor of folder parts[0]/parts[1]/... (the root if none), every step
        without links; None when one is missing and not `create`."""
        if self.root is None:
            if not create:
                return None
            self._make_root()
        assert self.root is not None
        fd = os.dup(self.root)
        for depth, part in enumerate(parts):
            shown = self.target.shown("/".join(parts[: depth + 1]))
            try:
                inner = self._enter(fd, part, shown, create=create)
            finally:
                os.close(fd)
            if inner is None:
                return None
            fd = inner
        return fd

    def _make_root(self) -> None:
        path = self.target.path.rstrip("/")
        try:
            os.mkdir(path, 0o777)
        except FileExistsError:
            pass
        except OSError as error:
            raise ReportError(f"cannot make {self.target.shown()}: {error.strerror}") from None
        self.root = self._open_root()
        if self.root is None:
            raise ReportError(f"cannot make {self.target.shown()}: it disappeared")

    # ------------------------------------------------------------ the record

    def _load_record(self) -> None:
        there, found = self._read_record()
        if found is None and not self.force:
            raise OutputRefused(
                f"{self.target.shown(RECORD)} exists and iolab did not write "
                "it; choose another folder or add --force"
            )
        self.record = found or {}
        self.has_record = there and found is not None

    def _read_record(self) -> tuple[bool, dict[str, Entry] | None]:
        """Whether there is a record, and its entries (None when it is not iolab's)."""
        assert self.root is not None
        shown = self.target.shown(RECORD)
        try:
            fd = os.open(RECORD, READ_FLAGS, dir_fd=self.root)
        except FileNotFoundError:
            return False, {}
        except OSError as error:
            raise self._refusal(self.root, RECORD, shown, error, "file") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise OutputRefused(
                    f"{shown} is {kind_of(st.st_mode)}, not iolab's record of "
                    "the files it wrote; remove it"
                )
            data = _read_up_to(fd, RECORD_LIMIT + 1)
        finally:
            os.close(fd)
        return True, _parse_record(data) if st.st_uid == os.geteuid() else None

    def _save_record(self) -> None:
        """The record as it is now on disk (another output may have written there since),
        with this folder's changes."""
        if self.root is None:
            return
        entries = {**(self._read_record()[1] or {}), **self.written}
        for name in self.dropped:
            entries.pop(name, None)
        files = {name: {"sha256": e.sha256, "by": e.by} for name, e in sorted(entries.items())}
        text = json.dumps({"written_by": "iolab", "version": 1, "files": files}, indent=1)
        self._put(self.root, RECORD, (text + "\n").encode(), self.target.shown(RECORD))

    def recorded(self, by: str) -> set[str]:
        """The names the record lists as written by this kind of output."""
        return {name for name, entry in self.record.items() if entry.by == by}

    def holds_only_iolabs(self) -> bool:
        """New, empty, or holding iolab's record (an earlier output of iolab's)."""
        if self.root is None or self.has_record:
            return True
        with os.scandir(self.root) as entries:
            return next(iter(entries), None) is None

    # ------------------------------------------------------------ checking

    def state(self, name: str) -> str:
        """'new', 'iolab' (iolab's own, unchanged) or 'other'; a link, or a file that is not
        a regular file, is refused."""
        parts = self._parts(name)
        fd = self._walk(parts[:-1], create=False)
        if fd is None:
            return "new"
        try:
            return self._leaf_state(fd, parts[-1], name)
        finally:
            os.close(fd)

    def _parts(self, name: str) -> tuple[str, ...]:
        parts = plain(name)
        if parts is None:
            raise ReportError(f"cannot write {self.target.shown(name)}: not a plain file name")
        return parts

    def _leaf_state(self, fd: int, leaf: str, name: str) -> str:
        shown = self.target.shown(name)
        try:
            st = os.stat(leaf, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return "new"
        except OSError as error:
            raise ReportError(f"cannot write {shown}: {error.strerror}") from None
        if stat.S_ISLNK(st.st_mode):
            raise OutputRefused(f"{shown} {LINK}")
        if not stat.S_ISREG(st.st_mode):
            raise OutputRefused(
                f"{shown} is {kind_of(st.st_mode)}, not a regular file; choose another name"
            )
        return "iolab" if self._is_iolabs(fd, leaf, st, self.record.get(name)) else "other"

    @staticmethod
    def _is_iolabs(fd: int, leaf: str, st: os.stat_result, entry: Entry | None) -> bool:
        if entry is None or st.st_uid != os.geteuid():
            return False
        try:
            handle = os.open(leaf, READ_FLAGS, dir_fd=fd)
        except OSError:
            return False
        try:
            same = os.fstat(handle)
            if (same.st_dev, same.st_ino) != (st.st_dev, st.st_ino):
                return False
            return sha256_of(handle) == entry.sha256
        finally:
            os.close(handle)

    def check(self, names: Iterable[str]) -> None:
        """Each name can be written: new, iolab's own, or (with --force) another file; never
        a link, in the name or in the folders on its way. Read under the folder's lock: not
        while another iolab has written a file there and not yet its record."""
        if self.root is None:
            self._check(names)
            return
        with self._locked(fcntl.LOCK_SH):
            self._check(names)

    def _check(self, names: Iterable[str]) -> None:
        for name in names:
            if self.state(name) == "other" and not self.force:
                raise OutputRefused(f"{self.target.shown(name)} {FOREIGN}")

    def check_folders(self, names: Iterable[str]) -> None:
        """Folders iolab would write into (an images folder) are new or real folders."""
        for name in names:
            fd = self._walk(self._parts(name), create=False)
            if fd is not None:
                os.close(fd)

    # ------------------------------------------------------------ writing and removing

    def write(self, files: Mapping[str, bytes], by: str) -> None:
        """Check every file, then write each (atomically), then the record; all under the
        folder's lock (see _locked), the record read afresh once it is held."""
        self.check(files)
        if self.root is None:
            self._make_root()
        with self._locked(fcntl.LOCK_EX):
            self._write(files, by)

    @contextlib.contextmanager
    def _locked(self, mode: int) -> Iterator[None]:
        """A flock on the folder, exclusive while iolab writes into it and updates its
        record, shared while it checks what it would replace, with the record read afresh:
        outputs written side by side (six reports into one folder at once) each see what
        the others wrote, and none loses another's entry in the record."""
        assert self.root is not None
        fcntl.flock(self.root, mode)
        try:
            self._refresh_record()
            yield
        finally:
            fcntl.flock(self.root, fcntl.LOCK_UN)

    def _refresh_record(self) -> None:
        """The record as it is on disk now (another output may have written since this
        folder was opened), with this folder's own changes over it."""
        _, found = self._read_record()
        if found is None and not self.force:
            raise OutputRefused(
                f"{self.target.shown(RECORD)} exists and iolab did not write "
                "it; choose another folder or add --force"
            )
        self.record = {**(found or {}), **self.written}
        for name in self.dropped:
            self.record.pop(name, None)

    def _write(self, files: Mapping[str, bytes], by: str) -> None:
        self._check(files)
        for name, data in files.items():
            parts = self._parts(name)
            fd = self._walk(parts[:-1], create=True)
            assert fd is not None
            try:
                self._put(fd, parts[-1], data, self.target.shown(name))
            finally:
                os.close(fd)
            self.record[name] = self.written[name] = Entry(hashlib.sha256(data).hexdigest(), by)
            self.dropped.discard(name)
        self._save_record()

    def _put(self, fd: int, leaf: str, data: bytes, shown: str) -> None:
        """`data` as `leaf` in `fd`: a temporary file beside it, synced, renamed onto it."""
        temporary = f".iolab-{secrets.token_hex(8)}.tmp"
        try:
            out = os.open(temporary, NEW_FLAGS, 0o666, dir_fd=fd)
            with os.fdopen(out, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(out)
            os.rename(temporary, leaf, src_dir_fd=fd, dst_dir_fd=fd)
        except OSError as error:
            with suppress(OSError):
                os.unlink(temporary, dir_fd=fd)
            raise ReportError(f"cannot write {shown}: {error.strerror}") from None
        except BaseException:
            with suppress(OSError):
                os.unlink(temporary, dir_fd=fd)
            raise

    def remove(self, names: Iterable[str]) -> int:
        """Delete the recorded files named that are still iolab's, and the folders that
        leaves empty; how many were left alone (not plain names, reached through a link,
        changed since, or not regular files). Their record entries go either way."""
        left = 0
        for name in sorted(set(names)):
            entry = self.record.pop(name, None)
            self.dropped.add(name)
            self.written.pop(name, None)
            parts = plain(name)
            if parts is None or entry is None or self.root is None:
                left += 1
                continue
            left += not self._remove_one(parts, entry)
        return left

    def _remove_one(self, parts: tuple[str, ...], entry: Entry) -> bool:
        """Remove one file if it is iolab's; False if it had to be left alone."""
        assert self.root is not None
        with ExitStack() as stack:
            fds = [self.root]
            for part in parts[:-1]:
                try:
                    fd = os.open(part, DIR_FLAGS, dir_fd=fds[-1])
                except FileNotFoundError:
                    return True  # already gone
                except OSError:
                    return False  # a link or not a folder on the way
                stack.callback(os.close, fd)
                fds.append(fd)
            try:
                st = os.stat(parts[-1], dir_fd=fds[-1], follow_symlinks=False)
            except FileNotFoundError:
                return True
            if not stat.S_ISREG(st.st_mode) or not self._is_iolabs(fds[-1], parts[-1], st, entry):
                return False
            os.unlink(parts[-1], dir_fd=fds[-1])
            for fd, part in zip(reversed(fds[:-1]), reversed(parts[:-1]), strict=True):
                try:
                    os.rmdir(part, dir_fd=fd)  # only when empty; never follows a link
                except OSError:
                    break
        return True


def _parse_record(data: bytes) -> dict[str, Entry] | None:
    """The entries of a record iolab wrote, or None when it is not one."""
    if len(data) > RECORD_LIMIT:
        return None
    try:
        found: Any = json.loads(data)
    except ValueError:
        return None
    if not isinstance(found, dict) or found.get("written_by") != "iolab":
        return None
    files = found.get("files")
    if not isinstance(files, dict):
        return None
    return {
        name: Entry(entry["sha256"], entry["by"])
        for name, entry in files.items()
        if plain(name) is not None
        and isinstance(entry, dict)
        and isinstance(entry.get("sha256"), str)
        and isinstance(entry.get("by"), str)
    }
