"""Checks on paths the user names for iolab to write: only regular files, never devices."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from iolab.errors import IolabError

_KINDS = (
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


def kind_of(mode: int) -> str:
    """What a file is, in words: 'a block device', 'a directory', 'a regular file'..."""
    return next((words for test, words in _KINDS if test(mode)), "a regular file")


def check_file(
    path: str | Path,
    what: str,
    error: type[IolabError],
    *,
    must_exist: bool = False,
    fix: str = "give a regular file",
) -> None:
    """`path` is a regular file, or (unless must_exist) a new name in an existing directory.

    Raises `error` with one line naming `what` (e.g. "--db results.db") and `fix`.
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if must_exist:
            raise error(f"{what} does not exist; {fix}") from None
        parent = Path(path).parent
        if not parent.is_dir():
            raise error(f"{what}: no directory {parent}; create it first") from None
        return
    except OSError as problem:
        raise error(f"{what} cannot be read ({problem.strerror}); {fix}") from None
    if not stat.S_ISREG(mode):
        raise error(f"{what} is {kind_of(mode)}, not a regular file; {fix}")


def check_folder(path: str | Path, what: str, error: type[IolabError]) -> None:
    """`path` is a directory, or a new name in an existing directory."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if not Path(path).parent.is_dir():
            raise error(f"{what}: no directory {Path(path).parent}; create it first") from None
        return
    if not stat.S_ISDIR(mode):
        raise error(f"{what} is {kind_of(mode)}, not a directory; name a folder to write into")
