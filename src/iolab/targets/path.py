"""Path set-ups: check a file or directory target, size and place the test file, clean up."""

from __future__ import annotations

import errno
import os
import shutil
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from iolab.errors import TargetError
from iolab.files import kind_of
from iolab.model import FioValue, Setup
from iolab.targets import evidence, safety
from iolab.units import human_bytes

TEST_FILE = "iolab.testfile"
AUTO_SIZE_MAX = 1024**3
AUTO_SIZE_SHARE = 0.5
MIN_SIZE = 16 * 1024**2
FREE_SPACE_MARGIN = 0.9
READ_ONLY_RW = ("read", "randread")


def several_files(path: str | Path) -> str | None:
    """Why fio would not read `path` as one file: it splits filename= at each ':' (a
    directory named "a:/dev/sdb:" would put a device among the files); None if it would."""
    if ":" not in str(path):
        return None
    return "has a ':', which fio reads as a list of files (one of them could be a device)"


def writes(options: Mapping[str, FioValue]) -> bool:
    """Whether a workload writes (or trims) its target."""
    return str(options.get("rw", "read")) not in READ_ONLY_RW or bool(options.get("verify"))


@dataclass(frozen=True)
class Prepared:
    """A checked target: the file fio uses, and whether iolab owns (and removes) it."""

    setup: Setup
    filename: Path
    owned: bool
    free_bytes: int
    raw: bool = False
    loop_cache: str = ""  # a buffered loop device under the target (see targets.caches)
    remote: bool = False  # on fio servers: made and removed by fio there, not by iolab here

    def paths(self) -> list[Path]:
        """What fio does its I/O on: a raw set-up's devices (fio's ':' list), else the file."""
        return [Path(p) for p in str(self.filename).split(":")] if self.raw else [self.filename]

    def auto_size(self) -> int:
        """Half the free space (counting a test file already there), at most 1 GiB, in MiB;
        a user's own file: its size."""
        if not self.owned:
            return self.filename.stat().st_size
        existing = self.filename.stat().st_size if self.owned and self.filename.exists() else 0
        size = min(AUTO_SIZE_MAX, int((self.free_bytes + existing) * AUTO_SIZE_SHARE))
        size -= size % (1024**2)
        if size < MIN_SIZE:
            raise TargetError(
                f"set-up {self.setup.name!r}: only {self.free_bytes // 1024**2} MiB free at "
                f"{self.filename.parent}; free some space or give --target elsewhere"
            )
        return size

    def check_room(self, size: int) -> None:
        """Refuse a test file that would fill the filesystem, or grow a user's file: `size` is
        how far fio's file reaches (runner.campaign.footprint)."""
        if not self.owned:
            have = self.filename.stat().st_size
            if size > have:
                raise TargetError(
                    f"set-up {self.setup.name!r}: fio's I/O would reach {human_bytes(size)} "
                    f"into your file {self.filename} ({human_bytes(have)}), and fio lays out again "
                    "(grows and rewrites) a file shorter than that; lower size or offset to stay "
                    "inside it, or give a directory"
                )
            return
        existing = self.filename.stat().st_size if self.filename.exists() else 0
        room = int((self.free_bytes + existing) * FREE_SPACE_MARGIN)
        if size > room:
            raise TargetError(
                f"set-up {self.setup.name!r}: the test file would reach {human_bytes(size)} "
                f"(size and offset), more than the {human_bytes(room)} usable at "
                f"{self.filename.parent}; lower size or offset (--size)"
            )


def prepare(setup: Setup, probe_write: bool = True) -> Prepared:
    """Check a path set-up's target before anything runs; raise TargetError saying what to do.

    With probe_write, an empty file is made and removed to prove the directory takes writes.
    """
    path = Path(setup.path).expanduser()
    where = f"set-up {setup.name!r}: target {str(path)!r}"
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise TargetError(
            f"{where} does not exist; create the directory or give an existing one with --target"
        ) from None
    except OSError as error:
        raise TargetError(f"{where} cannot be read: {error.strerror}") from None
    if stat.S_ISBLK(mode):
        raise TargetError(
            f"{where} is a block device; a path set-up takes a directory or a file "
            "(set-ups that write to devices need them named and confirmed)"
        )
    if stat.S_ISDIR(mode):
        filename, owned = path.resolve() / TEST_FILE, True
    elif stat.S_ISREG(mode):
        filename, owned = path.resolve(), False
    else:
        raise TargetError(f"{where} is neither a directory nor a regular file")
    problem = several_files(filename)  # after resolve: a link may lead to such a name
    if problem:
        raise TargetError(f"{where}: its test file {str(filename)!r} {problem}; choose another")
    if owned:
        _check_test_file(filename, where)
    _check_storage(path, where)
    if probe_write:
        _check_writable(filename.parent, where)
    return Prepared(setup, filename, owned, shutil.disk_usage(filename.parent).free)


def _check_test_file(filename: Path, where: str) -> None:
    """iolab's test file in a directory may be left from an earlier run, but only as a plain
    file that iolab made (targets.evidence: its mark, or a dead run's record): a link
    (symbolic or hard) or anything else there would lead fio's writes to a file or device
    nobody named, and a file of that name iolab did not make is someone's data."""
    try:
        found = os.lstat(filename)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(found.st_mode):
        kind = "a symbolic link"
    elif not stat.S_ISREG(found.st_mode):
        kind = kind_of(found.st_mode)
    elif found.st_nlink > 1:
        kind = f"a file with {found.st_nlink} hard links"
    elif not evidence.vouched(filename):
        raise TargetError(f"{where}: {evidence.refusal(filename)}")
    else:
        return
    raise TargetError(
        f"{where}: {str(filename)!r} exists and is {kind}; iolab writes its test file only as "
        "a plain file there: remove it, or choose another directory"
    )


def _check_storage(path: Path, where: str) -> None:
    """Refuse a target on a kernel pseudo filesystem (/dev, /proc, /sys...), by what its
    resolved path is on, whatever its spelling (a link, '..', '//')."""
    real = path.resolve()
    problem = safety.pseudo_filesystem(real)
    if problem:
        shown = "" if str(real) == str(path) else f" ({str(real)!r})"
        raise TargetError(
            f"{where}{shown} {problem}, not storage; give a directory on the storage to test "
            "(--target or the set-up's path)"
        )


def _check_writable(directory: Path, where: str) -> None:
    probe = directory / f".iolab-probe-{os.getpid()}"
    try:
        fd = os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except OSError as error:
        if error.errno == errno.EROFS:
            raise TargetError(
                f"{where} is on a read-only filesystem; remount it read-write or choose "
                "a writable directory with --target"
            ) from None
        raise TargetError(
            f"{where} is not writable ({error.strerror}); choose a writable directory with --target"
        ) from None
    os.close(fd)
    probe.unlink()
