"""The folders and mounts a run made, in its evidence record: claimed, checked, and removed
or unmounted only while they are still what iolab made."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from dataclasses import replace
from pathlib import Path

from iolab.targets import devices
from iolab.targets.evidence import (
    DIR,
    MOUNT,
    MOUNT_ROOT,
    TOKEN_FILE,
    Made,
    identity_of,
    open_folder,
)

SCRATCH_ENTRY = re.compile(r"iolab-(case|fill)-[a-z0-9_]{8}")  # runner.executing's folders


def claim_dir(path: Path, token: str) -> Made:
    """A scratch folder iolab just made, given its token file; its entry."""
    real = Path(os.path.realpath(path))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(real / TOKEN_FILE, flags, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(token)
    return Made(DIR, str(real), identity_of(real.parent), identity_of(real)[1])


def dir_entry(path: Path) -> Made:
    real = Path(os.path.realpath(path))
    return Made(DIR, str(real), identity_of(real.parent), identity_of(real)[1])


def remove_dir(made: Made, token: str) -> bool:
    """Remove a scratch folder a run made, if it is still that folder, holds its token, and
    holds nothing but what iolab makes there (its token file, fio's case and fill folders):
    a folder with anything else in it is left whole."""
    fd = open_folder(made)
    if fd is None:
        return False
    name = os.path.basename(made.path)
    try:
        found = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if not stat.S_ISDIR(found.st_mode) or found.st_ino != made.inode:
            return False
        inside = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
        try:
            if not _holds_token(inside, token) or not _only_iolabs(inside):
                return False
            for entry in os.listdir(inside):
                if entry != TOKEN_FILE:
                    shutil.rmtree(entry, dir_fd=inside)
            os.unlink(TOKEN_FILE, dir_fd=inside)
        finally:
            os.close(inside)
        os.rmdir(name, dir_fd=fd)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _holds_token(inside: int, token: str) -> bool:
    kept = os.open(TOKEN_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=inside)
    with os.fdopen(kept, "rb") as handle:
        return handle.read(64).decode("ascii", "replace") == token


def _only_iolabs(inside: int) -> bool:
    """Every entry is iolab's own: its token file, or a folder of fio's cases or fills
    (`tempfile.mkdtemp`'s names, this user's, open to nobody else)."""
    for entry in os.listdir(inside):
        if entry == TOKEN_FILE:
            continue
        found = os.stat(entry, dir_fd=inside, follow_symlinks=False)
        private = stat.S_IMODE(found.st_mode) == 0o700 and found.st_uid == os.geteuid()
        if not (SCRATCH_ENTRY.fullmatch(entry) and stat.S_ISDIR(found.st_mode) and private):
            return False
    return True


def mount_entry(mountpoint: Path) -> Made:
    """A mount's entry, before it is made: no source yet, so nothing to unmount."""
    return Made(MOUNT, str(mountpoint))


def mounted(made: Made) -> Made:
    """The entry with the source now mounted there (what a later clean-up checks)."""
    found = devices.mount_of_target(made.path)
    return replace(made, source=found.source if found is not None else "")


def unmount(made: Made) -> bool:
    """Unmount a set-up's mount a run made, if the same source is still mounted there."""
    if not made.path.startswith(MOUNT_ROOT) or not made.source:
        return False
    found = devices.mount_of_target(made.path)
    if found is None or os.path.realpath(found.source) != os.path.realpath(made.source):
        return False
    done = subprocess.run(["umount", made.path], capture_output=True, check=False)
    return done.returncode == 0
