"""Block devices: their names, what they are built on and hold, mounts, and their facts.

Devices are named by their kernel name (``loop0``, ``sda1``, ``md0``, ``dm-3``); any path the
user gives (``/dev/loop0``, a ``/dev/disk/by-id`` link) is resolved through its major:minor
number, so two spellings of one device compare equal. How a path stacks down to its disks, as
a tree, is `stack.resolve`.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from iolab.errors import TargetError
from iolab.model.facts import DeviceFacts
from iolab.units import human_bytes

SYS_BLOCK = Path("/sys/class/block")
SYS_DEV_BLOCK = Path("/sys/dev/block")
SYS_BTRFS = Path("/sys/fs/btrfs")
MOUNTINFO = Path("/proc/self/mountinfo")
SWAPS = Path("/proc/swaps")
SECTOR = 512
MIB = 1024**2
_OCTAL = re.compile(r"\\([0-7]{3})")


def sysfs_text(path: str | Path) -> str | None:
    """A sysfs or proc file's text, stripped; None when it cannot be read."""
    try:
        return Path(path).read_text(errors="replace").strip()
    except OSError:
        return None


def read_int(path: str | Path) -> int | None:
    text = sysfs_text(path)
    return int(text) if text and text.lstrip("-").isdigit() else None


# -- names ----------------------------------------------------------------------------------


def majmin_of(dev: str | Path) -> str | None:
    """The "major:minor" of a block device path (symlinks followed); None if not one."""
    try:
        st = os.stat(dev)
    except OSError:
        return None
    if not stat.S_ISBLK(st.st_mode):
        return None
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"


def name_of_majmin(majmin: str) -> str | None:
    """The kernel name of the block device with this major:minor, from /sys/dev/block."""
    link = SYS_DEV_BLOCK / majmin
    return Path(os.path.realpath(link)).name if link.exists() else None


def kernel_name(dev: str | Path) -> str:
    """The kernel name of a block device given as any path; TargetError if it is not one."""
    if not os.path.exists(dev):
        raise TargetError(f"{dev}: no such device; check the name (lsblk, ls /dev/disk/by-id)")
    majmin = majmin_of(dev)
    name = name_of_majmin(majmin) if majmin else None
    if name is None:
        raise TargetError(f"{dev}: not a block device; name a disk such as /dev/sdb")
    return name


def try_kernel_name(dev: str | Path) -> str | None:
    majmin = majmin_of(dev)
    return name_of_majmin(majmin) if majmin else None


def dev_path(name: str) -> str:
    return f"/dev/{name}"


def sys_dir(name: str) -> Path:
    return SYS_BLOCK / name


def is_partition(name: str) -> bool:
    return (sys_dir(name) / "partition").exists()


def disk_of(name: str) -> str:
    """The whole disk a partition belongs to (the device itself when it is a whole disk)."""
    if is_partition(name):
        return Path(os.path.realpath(sys_dir(name))).parent.name
    return name


def kind(name: str) -> str:
    """disk, part, loop, md, dm or other stacked kinds, from sysfs."""
    base = sys_dir(name)
    if (base / "partition").exists():
        return "part"
    if (base / "loop").exists():
        return "loop"
    if (base / "md").exists():
        return "md"
    if (base / "dm").exists():
        return "dm"
    return "disk"


def _listdir(path: Path) -> tuple[str, ...]:
    try:
        return tuple(sorted(p.name for p in path.iterdir()))
    except OSError:
        return ()


def partitions(name: str) -> tuple[str, ...]:
    """Kernel names of the partitions of a whole disk."""
    base = sys_dir(name)
    return tuple(p for p in _listdir(base) if (base / p / "partition").exists())


def slaves(name: str) -> tuple[str, ...]:
    """Devices this stacked device (md, dm) is built on."""
    return _listdir(sys_dir(name) / "slaves")


def backing_file(name: str) -> str | None:
    """What a loop device reads and writes: a file or another block device."""
    return sysfs_text(sys_dir(name) / "loop" / "backing_file") or None


def loop_backed_by(name: str) -> tuple[str, ...]:
    """Loop devices whose backing file is this block device."""
    found = []
    for loop in _listdir(SYS_BLOCK):
        backing = backing_file(loop) if loop.startswith("loop") else None
        if backing and try_kernel_name(backing) == name:
            found.append(loop)
    return tuple(found)


def holders(name: str) -> tuple[str, ...]:
    """Devices built directly on this one: sysfs holders (md, dm) and loop devices over it."""
    return tuple(sorted({*_listdir(sys_dir(name) / "holders"), *loop_backed_by(name)}))


def _closure(name: str, step: Callable[[str], Iterable[str]]) -> tuple[str, ...]:
    """`name` and every device reached from it by `step`, breadth first, at most 64."""
    seen: list[str] = []
    todo = [name]
    while todo:
        current = todo.pop(0)
        if current in seen or len(seen) > 64:
            continue
        seen.append(current)
        todo.extend(step(current))
    return tuple(seen)


def family(name: str) -> tuple[str, ...]:
    """The device, its partitions, and everything stacked on them, transitively."""
    return _closure(name, lambda current: (*partitions(current), *holders(current)))


def leaves(name: str) -> tuple[str, ...]:
    """The whole disks at the bottom of a stacked device (md, dm, partitions; not loop files)."""
    below = slaves(name)
    if below:
        return tuple(sorted({leaf for s in below for leaf in leaves(s)}))
    if kind(name) == "part":
        return (disk_of(name),)
    return (name,)


def underneath(name: str) -> tuple[str, ...]:
    """The device and all it is built on: a partition's disk, md/dm slaves, a loop's device."""
    return _closure(name, _below)


def _below(name: str) -> list[str]:
    found = [disk_of(name)] if is_partition(name) else []
    found += slaves(name)
    backing = backing_file(name)
    below = try_kernel_name(backing) if backing else None
    return [*found, below] if below else found


# -- mounts, swap, btrfs --------------------------------------------------------------------


@dataclass(frozen=True)
class Mount:
    """One line of /proc/self/mountinfo; options are the mount's and the filesystem's."""

    target: str
    fstype: str
    source: str
    options: str
    devices: tuple[str, ...]


def _unescape(text: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes (\\040)."""
    return _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), text)


def mounts() -> list[Mount]:
    """Every mount this process can see, with the kernel names of its block devices."""
    out = []
    for line in (sysfs_text(MOUNTINFO) or "").splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 6 or len(tail) < 3:
            continue
        names = {name_of_majmin(fields[2])} if not fields[2].startswith("0:") else set()
        source = _unescape(tail[1])
        if source.startswith("/dev/"):
            names.add(try_kernel_name(source))
        devices = tuple(sorted(n for n in names if n))
        options = ",".join(dict.fromkeys(fields[5].split(",") + tail[2].split(",")[:64]))
        out.append(Mount(_unescape(fields[4]), tail[0], source, options, devices))
    return out


def mount_of_target(target: str) -> Mount | None:
    return next((m for m in reversed(mounts()) if m.target == target), None)


def swap_devices() -> tuple[str, ...]:
    """Kernel names of block devices in use as swap."""
    lines = (sysfs_text(SWAPS) or "").splitlines()[1:]
    names = (try_kernel_name(_unescape(line.split()[0])) for line in lines if line.split())
    return tuple(n for n in names if n)


@dataclass(frozen=True)
class BtrfsFs:
    """A btrfs filesystem the kernel has open (mounted), with its member devices."""

    uuid: str
    devices: tuple[str, ...]


def btrfs_filesystems() -> list[BtrfsFs]:
    out = []
    for uuid in _listdir(SYS_BTRFS):
        devices = _listdir(SYS_BTRFS / uuid / "devices")
        if devices:
            out.append(BtrfsFs(uuid, devices))
    return out


def btrfs_of(name: str) -> BtrfsFs | None:
    return next((fs for fs in btrfs_filesystems() if name in fs.devices), None)


# -- facts ----------------------------------------------------------------------------------


def active_scheduler(text: str | None) -> str | None:
    """The bracketed entry of a queue/scheduler file ("[none] mq-deadline" -> "none")."""
    if not text:
        return None
    words = text.split()
    return next((w.strip("[]") for w in words if w.startswith("[")), words[0] if words else None)


def _device_dir(disk: str) -> Path:
    base = sys_dir(disk) / "device"
    # NVMe namespaces keep model/serial/firmware on the controller one level up.
    if not (base / "model").exists() and (base / "device" / "model").exists():
        return base / "device"
    return base


def _serial(disk: str, device: Path) -> str | None:
    for path in (device / "serial", sys_dir(disk) / "serial"):
        text = sysfs_text(path)
        if text:
            return text
    raw = _read_bytes(device / "vpd_pg80")
    if raw and len(raw) > 4:
        return raw[4:].decode(errors="replace").strip() or None
    return None


def _read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _wwn(disk: str, device: Path) -> str | None:
    for path in (sys_dir(disk) / "wwid", device / "wwid"):
        text = sysfs_text(path)
        if text:
            return text
    return None


def _transport(disk: str) -> str | None:
    if disk.startswith("nvme"):
        return "nvme"
    target = os.path.realpath(sys_dir(disk))
    for word in ("virtio", "usb", "ata", "mmc", "nvme"):
        if f"/{word}" in target:
            return word
    if "/host" in target:
        return "scsi"
    return None


def facts(name: str) -> DeviceFacts:
    """Everything sysfs tells about one block device (a partition reads its disk's queue)."""
    base = sys_dir(name)
    disk = disk_of(name)
    queue = sys_dir(disk) / "queue"
    device = _device_dir(disk)
    sectors = read_int(base / "size")
    start = read_int(base / "start") if is_partition(name) else None
    rotational = sysfs_text(queue / "rotational")
    return DeviceFacts(
        name=name,
        path=dev_path(name),
        kind=kind(name),
        disk=disk,
        majmin=sysfs_text(base / "dev"),
        size_bytes=sectors * SECTOR if sectors is not None else None,
        model=sysfs_text(device / "model") or None,
        vendor=sysfs_text(device / "vendor") or None,
        firmware=sysfs_text(device / "firmware_rev") or sysfs_text(device / "rev") or None,
        serial=_serial(disk, device),
        wwn=_wwn(disk, device),
        transport=_transport(disk),
        rotational=None if rotational is None else rotational == "1",
        logical_block_size=read_int(queue / "logical_block_size"),
        physical_block_size=read_int(queue / "physical_block_size"),
        scheduler=active_scheduler(sysfs_text(queue / "scheduler")),
        read_ahead_kb=read_int(queue / "read_ahead_kb"),
        nr_requests=read_int(queue / "nr_requests"),
        rq_affinity=read_int(queue / "rq_affinity"),
        write_cache=sysfs_text(queue / "write_cache"),
        discard_granularity=read_int(queue / "discard_granularity"),
        start_bytes=start * SECTOR if start is not None else None,
        alignment_offset=read_int(base / "alignment_offset"),
        aligned_1mib=None if start is None else (start * SECTOR) % MIB == 0,
        read_only=sysfs_text(base / "ro") == "1",
        partitions=partitions(name),
        holders=holders(name),
        slaves=slaves(name),
        backing_file=backing_file(name),
    )


def describe(dev: str | Path) -> str:
    """One line for a confirmation prompt: path, model, size and serial (or what it is)."""
    name = kernel_name(dev)
    f = facts(name)
    what = " ".join(x for x in (f.vendor, f.model) if x) if f.model else f"{f.kind} device"
    if f.kind == "loop" and f.backing_file:
        what = f"loop device over {f.backing_file}"
    ident = f"serial {f.serial}" if f.serial else f"wwn {f.wwn}" if f.wwn else "no serial"
    shown = str(dev) if str(dev) == f.path else f"{dev} ({f.path})"
    size = "size unknown" if f.size_bytes is None else human_bytes(f.size_bytes)
    return f"{shown}: {what}, {size}, {ident}"


# -- signatures -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Signature:
    """A filesystem, RAID or partition-table signature found by wipefs."""

    device: str
    type: str
    offset: str


def signatures(name: str) -> list[Signature]:
    """Signatures on a device (not its partitions) by `wipefs --no-act`; nothing is written."""
    argv = ["wipefs", "--no-act", "--json", dev_path(name)]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL
        )
    except FileNotFoundError:
        raise TargetError(
            "cannot check devices for signatures: wipefs is not installed; install util-linux"
        ) from None
    if done.returncode != 0:
        reason = last_line(done.stderr) or f"exit status {done.returncode}"
        raise TargetError(f"{dev_path(name)}: cannot probe signatures (wipefs: {reason})")
    try:
        found = json.loads(done.stdout or "{}").get("signatures", [])
    except ValueError:
        raise TargetError(
            f"{dev_path(name)}: cannot probe signatures (wipefs printed no JSON)"
        ) from None
    return [Signature(name, str(s.get("type")), str(s.get("offset"))) for s in found]


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""
