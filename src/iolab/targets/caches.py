"""What a target hides that makes numbers lie: never-written blocks, and loop devices whose
backing file sits in the host's page cache.

`written_share` asks the filesystem which parts of a file hold data (FIEMAP): holes and
fallocated ("unwritten") extents read back as zeros without touching the disk.
`hidden` walks from a target (a file, a directory, or block devices) down its stack
(`stack`: file -> filesystem -> btrfs/md/dm members -> loop -> backing file -> ...) and says
what it stands on that is not the storage it seems to be: every loop device that does
buffered I/O on its backing file (`loop_cache`: the host's page cache sits under it), and
memory (`ram`): tmpfs or ramfs, a zram or brd RAM disk, or a loop over a file in one.
"""

from __future__ import annotations

import array
import fcntl
import os
import re
import stat
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from iolab.model.facts import Layer
from iolab.targets import devices as dv
from iolab.targets import stack as stk

FIEMAP = 0xC020660B  # _IOWR('f', 11, struct fiemap)
FIEMAP_FLAG_SYNC = 0x1
EXTENT_LAST = 0x1
EXTENT_UNWRITTEN = 0x800
HEADER = struct.Struct("=QQIIII")  # start, length, flags, mapped, count, reserved
EXTENT = struct.Struct("=QQQQQIIII")  # logical, physical, length, 2 reserved, flags, 3 reserved
BATCH = 256
RAM_FILESYSTEMS = frozenset({"tmpfs", "ramfs"})
RAM_DISKS = (
    (re.compile(r"zram\d+"), "a compressed RAM disk"),
    (re.compile(r"ram\d+"), "a brd RAM disk"),
)


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
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO in its place never blocks
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


def never_written(devices: Iterable[str | Path]) -> bool:
    """Whether every device is a loop device over a regular file that holds no data yet (a
    sparse image just made): the one case where iolab can tell that a device it did not build
    was never written. Anything else (a disk, a partition, a loop over a written file): no."""
    found = False
    for device in devices:
        name = dv.try_kernel_name(device)
        backing = dv.backing_file(name) if name and name.startswith("loop") else None
        if backing is None:
            return False
        try:
            size = Path(backing).stat().st_size
        except OSError:
            return False
        share = written_share(Path(backing), size)
        if share is None or share > 0:
            return False
        found = True
    return found


@dataclass(frozen=True)
class Hidden:
    """What a target stands on that is not the storage it seems (each '' when nothing)."""

    loop_cache: str = ""  # 'loop3 over /var/tmp/a.img (buffered)'
    ram: str = ""  # 'tmpfs (mounted at /dev/shm)', 'zram1 (a compressed RAM disk)', ...


def tree(path: Path) -> Layer:
    """What `path` stands on: a block device's stack, or a file's (file -> filesystem ...)."""
    name = dv.try_kernel_name(path)
    return stk.stack(name) if name else stk.resolve(path)


def loop_cache_of(top: Layer) -> str:
    """'loop3 over /var/tmp/a.img and loop4 over /var/tmp/b.img (buffered)' for every loop
    device in the stack that does buffered I/O on its backing file; '' when there is none.
    A loop whose direct-I/O flag cannot be read counts as buffered (the kernel's default)."""
    loops = [
        f"{node.device} over {node.details.get('backing_file') or 'a file'}"
        for node in top.walk()
        if node.layer == "loop" and node.details.get("dio") != "1"
    ]
    return f"{' and '.join(dict.fromkeys(loops))} (buffered)" if loops else ""


def _ram_itself(node: Layer) -> str:
    """This layer's own memory, if it is memory: a RAM filesystem or a RAM disk."""
    fstype = str(node.details.get("fstype") or "")
    if node.layer == "filesystem" and fstype in RAM_FILESYSTEMS:
        return f"{fstype} (mounted at {node.details.get('mountpoint') or '?'})"
    for pattern, what in RAM_DISKS:
        if node.device and pattern.fullmatch(node.device):
            return f"{node.device} ({what})"
    return ""


def ram_of(top: Layer, above: tuple[str, ...] = ()) -> str:
    """The memory a stack ends in ('tmpfs (mounted at /r)', 'loop4 over /r/a.img, on tmpfs
    (mounted at /r)', 'zram1 (a compressed RAM disk)'); '' when it reaches none."""
    here = _ram_itself(top)
    if here:
        return ", on ".join((*above, here))
    if top.layer == "loop":
        above = (*above, f"{top.device} over {top.details.get('backing_file') or 'a file'}")
    return next(filter(None, (ram_of(child, above) for child in top.below)), "")


def hidden(paths: Iterable[Path]) -> Hidden:
    """Buffered loops and memory under any of `paths` (a set-up's devices, or its file)."""
    trees = [tree(path) for path in paths]
    loops = [found for found in map(loop_cache_of, trees) if found]
    ram = next(filter(None, map(ram_of, trees)), "")
    return Hidden("; ".join(dict.fromkeys(loops)), ram)
