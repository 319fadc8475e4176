"""What a target hides that makes numbers lie: never-written blocks, and loop devices whose
backing file sits in the host's page cache.

`written_share` asks the filesystem which parts of a file hold data (FIEMAP): holes and
fallocated ("unwritten") extents read back as zeros without touching the disk.
`loop_cache` walks from a file or device down its stack of block devices (sysfs `slaves`)
to any loop device that does buffered I/O on its backing file.
"""

from __future__ import annotations

import array
import fcntl
import os
import stat
import struct
from pathlib import Path

FIEMAP = 0xC020660B  # _IOWR('f', 11, struct fiemap)
FIEMAP_FLAG_SYNC = 0x1
EXTENT_LAST = 0x1
EXTENT_UNWRITTEN = 0x800
HEADER = struct.Struct("=QQIIII")  # start, length, flags, mapped, count, reserved
EXTENT = struct.Struct("=QQQQQIIII")  # logical, physical, length, 2 reserved, flags, 3 reserved
BATCH = 256
SYS_DEV_BLOCK = Path("/sys/dev/block")
SYS_BLOCK = Path("/sys/class/block")


def _extents(fd: int, length: int) -> list[tuple[int, int, int]]:
    """(logical start, length, flags) of every extent of the open file, up to `length`."""
    found: list[tuple[int, int, int]] = []
    start = 0
    while start < length:
        buffer = array.array("B", bytes(HEADER.size + EXTENT.size * BATCH))
        HEADER.pack_into(buffer, 0, start, length - start, FIEMAP_FLAG_SYNC, 0, BATCH, 0)
        fcntl.ioctl(fd, FIEMAP, buffer)
        mapped = HEADER.unpack_from(buffer, 0)[3]
        if not mapped:
            break
        for index in range(mapped):
            fields = EXTENT.unpack_from(buffer, HEADER.size + index * EXTENT.size)
            found.append((fields[0], fields[2], fields[5]))
        logical, size, flags = found[-1]
        if flags & EXTENT_LAST:
            break
        start = logical + size
    return found


def written_share(path: Path, size: int) -> float | None:
    """The share of the file's first `size` bytes that hold written data; None when it cannot
    be told (no such file, a device, a filesystem without FIEMAP)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode) or size <= 0:
            return None
        extents = _extents(fd, size)
    except OSError:
        return None
    finally:
        os.close(fd)
    written = 0
    for logical, length, flags in extents:
        if flags & EXTENT_UNWRITTEN:
            continue
        written += max(0, min(logical + length, size) - logical)
    return min(1.0, written / size)


def _device_name(path: Path) -> str | None:
    """The kernel name of a block device, or of the device holding a file's filesystem."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    number = info.st_rdev if stat.S_ISBLK(info.st_mode) else info.st_dev
    link = SYS_DEV_BLOCK / f"{os.major(number)}:{os.minor(number)}"
    return Path(os.path.realpath(link)).name if link.exists() else None


def _below(name: str, seen: set[str]) -> list[str]:
    """The device and every device under it (partitions' disks, RAID members, backing)."""
    if name in seen:
        return []
    seen.add(name)
    here = SYS_BLOCK / name
    out = [name]
    parent = Path(os.path.realpath(here)).parent.name
    if (here / "partition").exists() and parent != name:
        out += _below(parent, seen)
    slaves = here / "slaves"
    for member in sorted(p.name for p in slaves.iterdir()) if slaves.is_dir() else ():
        out += _below(member, seen)
    return out


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def loop_cache(path: Path) -> str:
    """'loop3 over /var/tmp/disk.img (buffered)' for the first loop device under `path` that
    does buffered I/O on its backing file; '' when there is none."""
    name = _device_name(path)
    for device in _below(name, set()) if name else []:
        loop = SYS_BLOCK / device / "loop"
        if device.startswith("loop") and loop.is_dir() and _read(loop / "dio") != "1":
            return f"{device} over {_read(loop / 'backing_file') or 'a file'} (buffered)"
    return ""
