"""What the commands call to write their outputs: a file or folder the user named, checked
before any work, and batches of files saved all or none (through outputs.Folder)."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from contextlib import ExitStack, suppress
from dataclasses import dataclass

from iolab.errors import ReportError
from iolab.files import check_file as check_kind
from iolab.files import check_folder as check_folder_kind
from iolab.outputs import LINK, Folder, OutputRefused, Target, split


def check_file(path: str, *, force: bool, what: str, fix: str) -> None:
    """A file the user named (-o FILE) can be written, checked before any work: not a link,
    a regular file or a new name in an existing folder, and (unless force) new or iolab's."""
    with suppress(OSError):
        if stat.S_ISLNK(os.lstat(path).st_mode):
            raise OutputRefused(f"{what} {LINK}")
    check_kind(path, what, ReportError, fix=fix)
    target, name = split(path)
    with Folder(target, force=force) as folder:
        folder.check([name])


def check_folder(path: str, *, force: bool, what: str) -> Folder:
    """A folder the user named to write into (--export DIR, -o DIR), checked before any
    work: not a link, a folder or a new name in an existing one. Returns it opened."""
    with suppress(OSError):
        if stat.S_ISLNK(os.lstat(path.rstrip("/") or "/").st_mode):
            raise OutputRefused(f"{what} {LINK}")
    check_folder_kind(path, what, ReportError)
    return Folder(Target(path, named=True), force=force)


@dataclass(frozen=True)
class WriteBatch:
    """Files to write into one folder, and the kind of output they are ('report', ...)."""

    target: Target
    files: Mapping[str, bytes]
    by: str


def save(batches: Sequence[WriteBatch], *, force: bool) -> None:
    """Write every batch, after checking all of them: a refusal writes nothing."""
    with ExitStack() as stack:
        folders = [stack.enter_context(Folder(b.target, force=force)) for b in batches]
        for folder, batch in zip(folders, batches, strict=True):
            folder.check(batch.files)
        for folder, batch in zip(folders, batches, strict=True):
            folder.write(batch.files, batch.by)
