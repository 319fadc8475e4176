"""Refuse to write to a block device that is in use, unconfirmed, or still carries data.

`check` reads sysfs, /proc and `wipefs --no-act`; it never writes. It raises TargetError with
one line naming the device, the rule it breaks and what to do. `pseudo_filesystem` says why a
path target is no storage at all (/dev, /proc, /sys...), by the mount it is on.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from iolab.errors import TargetError
from iolab.targets import devices as dv
from iolab.targets import stack

ROOT = "/"
PARTITION_TABLES = {"dos", "gpt", "PMBR", "atari", "bsd", "sun", "sgi", "mac"}
# Filesystems that are the kernel's interfaces, not storage: a test file there measures
# nothing (or writes to the kernel). tmpfs and ramfs hold files for real, in memory: allowed
# here (the methodology checks warn about them).
PSEUDO_FILESYSTEMS = frozenset(
    {
        "devtmpfs",
        "proc",
        "sysfs",
        "cgroup",
        "cgroup2",
        "securityfs",
        "debugfs",
        "tracefs",
        "configfs",
        "bpf",
        "pstore",
        "efivarfs",
        "mqueue",
        "hugetlbfs",
        "fusectl",
        "devpts",
        "binfmt_misc",
        "rpc_pipefs",
        "nfsd",
        "selinuxfs",
        "smackfs",
        "nsfs",
        "resctrl",
        "cpuset",
        "binder",
        "xenfs",
        "usbfs",
        "functionfs",
        "gadgetfs",
        "openpromfs",
        "spufs",
    }
)
# Whatever is mounted inside these is part of the kernel's tree too (the tmpfs that holds
# /sys/fs/cgroup, say). devtmpfs is not one: /dev/shm is a tmpfs for files.
KERNEL_TREES = frozenset({"proc", "sysfs"})
# Where the kernel's trees are mounted: a mount there is one whatever its type (a container's
# /dev is often a tmpfs of device nodes). /dev/shm is its own mount, so it is not caught.
SYSTEM_TREES = ("/dev", "/proc", "/sys")
_OCTAL = re.compile(r"\\([0-7]{3})")


def check_erasable(
    devices: Sequence[str], confirmed: Collection[str], wipe_signatures: bool
) -> None:
    """Raise TargetError unless every device may be erased by iolab.

    Rules, in order: each is a block device named once; none (nor a partition of it, nor a
    device built on it) holds the root filesystem, is mounted, is swap, is a member of an
    active RAID/LVM/btrfs/loop device; each is writable and not empty; each is confirmed
    (by any path to the same device); and none carries a filesystem, RAID or partition-table
    signature unless wipe_signatures is given.
    """
    if not devices:
        raise TargetError("no devices named; name at least one block device")
    named = _named(devices)
    root = root_devices()
    for dev, name in named:
        reason = in_use(name, root)
        if reason:
            raise TargetError(f"{dev}: refused, {reason}")
    allowed = {n for n in (dv.try_kernel_name(c) for c in confirmed) if n}
    for dev, name in named:
        if name not in allowed:
            raise TargetError(
                f"{dev}: not confirmed for writing; pass --yes-destroy {dev} to let iolab erase it"
            )
    if not wipe_signatures:
        for dev, name in named:
            found = signature_text(name)
            if found:
                raise TargetError(
                    f"{dev}: refused, it carries {found}; pass --wipe-signatures to erase "
                    "it, or name another device"
                )


def _named(devices: Sequence[str]) -> list[tuple[str, str]]:
    """(as given, kernel name) for each device; refuse non-devices and overlaps."""
    named: list[tuple[str, str]] = []
    for dev in devices:
        name = dv.kernel_name(dev)
        for other, other_name in named:
            if name == other_name:
                raise TargetError(f"{dev}: named twice (same device as {other}); name it once")
            if name in dv.family(other_name) or other_name in dv.family(name):
                raise TargetError(
                    f"{dev}: overlaps {other} (one is a partition of or built on the other); "
                    "name whole disks once"
                )
        named.append((str(dev), name))
    return named


def root_devices(root: str | None = None) -> set[str]:
    """Kernel names of the devices that hold the root filesystem, down to whole disks."""
    mount = dv.mount_of_target(root or ROOT)
    if mount is None:
        return set()
    names = set(mount.devices)
    if mount.fstype == "btrfs":
        for name in list(names):
            fs = dv.btrfs_of(name)
            names.update(fs.devices if fs else ())
    return {below for name in names for below in dv.underneath(name)}


def in_use(name: str, root: set[str]) -> str | None:
    """Why a device is in use (by itself, a partition, or a device built on it), or None."""
    family = dv.family(name)
    if root & set(family):
        return "it holds the root filesystem; name another device"
    for rule in (_mounted, _swap, _btrfs_member, _holder):
        for member in family:
            reason = rule(_who(name, member), member)
            if reason:
                return reason
    facts = dv.facts(name)
    if facts.read_only:
        return "it is read-only; name a writable device"
    if not facts.size_bytes:
        return "it is empty (size 0); name a device with capacity"
    return None


def rebuilt_arrays(members: Collection[str]) -> tuple[str, ...]:
    """md arrays assembled again, after iolab stopped its own, from nothing but the members
    iolab built it on (udev's incremental assembly reads the superblocks iolab wrote): the
    only arrays teardown may stop on its own. An array that holds any other device is left."""
    names = {name for member in members if (name := dv.try_kernel_name(member))}
    found: set[str] = set()
    for name in names:
        for holder in dv.holders(name):
            below = set(dv.slaves(holder))
            if dv.kind(holder) == "md" and below and below <= names:
                found.add(dv.dev_path(holder))
    return tuple(sorted(found))


def _who(name: str, member: str) -> str:
    if member == name:
        return "it"
    if dv.is_partition(member) and dv.disk_of(member) == name:
        return f"its partition {dv.dev_path(member)}"
    return f"{dv.dev_path(member)} (built on it)"


def _mounted(who: str, member: str) -> str | None:
    for mount in dv.mounts():
        if member in mount.devices:
            return f"{who} is mounted at {mount.target}; unmount it or name another device"
    return None


def _swap(who: str, member: str) -> str | None:
    if member in dv.swap_devices():
        return f"{who} is used as swap; swapoff it or name another device"
    return None


def _btrfs_member(who: str, member: str) -> str | None:
    fs = dv.btrfs_of(member)
    if fs is None:
        return None
    return (
        f"{who} is a member of the mounted btrfs filesystem {fs.uuid}; "
        "unmount it or name another device"
    )


def _holder(who: str, member: str) -> str | None:
    holders = dv.holders(member)
    return _held(who, holders[0]) if holders else None


def _held(who: str, holder: str) -> str:
    path = dv.dev_path(holder)
    layer = dv.kind(holder)
    if layer == "md":
        return (
            f"{who} is a member of the active RAID {path}; stop it (mdadm --stop {path}) "
            "or name another device"
        )
    if layer == "loop":
        return (
            f"{who} backs the loop device {path}; detach it (losetup -d {path}) "
            "or name another device"
        )
    if layer == "dm":
        facts = stack.dm_facts(holder)
        label = facts.get("dm_name") or holder
        if str(facts.get("dm_uuid") or "").startswith("LVM-"):
            return (
                f"{who} is a physical volume of the active LVM volume {label}; deactivate "
                "its volume group (vgchange -an) or name another device"
            )
        return (
            f"{who} is in use by device-mapper device {label}; remove it (dmsetup remove) "
            "or name another device"
        )
    return f"{who} is held by {path}; release it or name another device"


def signature_text(name: str) -> str:
    """The signatures on a device and its partitions, as words; empty when there are none."""
    found: list[str] = []
    for member in (name, *dv.partitions(name)):
        for sig in dv.signatures(member):
            what = f"a {sig.type} partition table" if sig.type in PARTITION_TABLES else sig.type
            where = "" if member == name else f" on {dv.dev_path(member)}"
            found.append(f"{what}{where}")
    unique = list(dict.fromkeys(found))
    if not unique:
        return ""
    return "signatures: " + ", ".join(unique) + " (wipefs -n)"


# -- what a path is on: refuse the kernel's pseudo filesystems ---------------------------------


@dataclass(frozen=True)
class MountPoint:
    """One line of /proc/self/mountinfo: its id, its parent's, where, and which filesystem."""

    id: int
    parent: int
    target: str
    fstype: str


def pseudo_filesystem(path: Path) -> str | None:
    """Why the file or directory `path` is not storage, as words after "it"; None if it is.

    Decided by the mount the path is on (the kernel's own answer, not its spelling): a pseudo
    filesystem (devtmpfs, proc, sysfs, cgroup...), the mount at /dev, /proc or /sys whatever
    its type, or any filesystem mounted inside a proc or sysfs mount.
    """
    table = mount_table()
    mount = _mount_of(path, table)
    if mount is None:
        return None
    if mount.fstype in PSEUDO_FILESYSTEMS:
        return f"is on {mount.fstype} (mounted at {mount.target}), a kernel pseudo filesystem"
    if mount.target in SYSTEM_TREES:
        return (
            f"is on {mount.fstype} mounted at {mount.target}, in place of a kernel pseudo "
            "filesystem"
        )
    for above in _ancestors(mount, table):
        if above.fstype in KERNEL_TREES:
            return (
                f"is on {mount.fstype} mounted at {mount.target}, inside {above.target} "
                f"({above.fstype}, a kernel pseudo filesystem)"
            )
    return None


def mount_table(text: str | None = None) -> dict[int, MountPoint]:
    """The mounts this process sees, by id (from /proc/self/mountinfo, or `text`)."""
    table: dict[int, MountPoint] = {}
    lines = (dv.sysfs_text(dv.MOUNTINFO) if text is None else text) or ""
    for line in lines.splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or not tail or not fields[0].isdigit() or not fields[1].isdigit():
            continue
        target = _OCTAL.sub(_unescaped, fields[4])
        table[int(fields[0])] = MountPoint(int(fields[0]), int(fields[1]), target, tail[0])
    return table


def _unescaped(found: re.Match[str]) -> str:
    """mountinfo's octal escape (\\040 for a space) as its character; a control character as
    '?', so that a mount point named with one cannot break a message's line."""
    code = int(found.group(1), 8)
    return "?" if code < 32 or code == 127 else chr(code)


def _mount_of(path: Path, table: dict[int, MountPoint]) -> MountPoint | None:
    """The mount `path` is on: by the mount id the kernel gives its open file, else (no
    /proc/self/fdinfo) the last mount over the longest prefix of the resolved path."""
    found = _mount_id(path)
    if found is not None and found in table:
        return table[found]
    text = str(path)
    holding = [
        m for m in table.values() if text == m.target or text.startswith(m.target.rstrip("/") + "/")
    ]
    return max(holding, key=lambda m: len(m.target), default=None)


def _mount_id(path: Path) -> int | None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = dv.sysfs_text(f"/proc/self/fdinfo/{fd}") or ""
    finally:
        os.close(fd)
    found = re.search(r"^mnt_id:\s*(\d+)", info, re.MULTILINE)
    return int(found.group(1)) if found else None


def _ancestors(mount: MountPoint, table: dict[int, MountPoint]) -> list[MountPoint]:
    """The mounts `mount` sits inside, nearest first."""
    out: list[MountPoint] = []
    seen = {mount.id}
    while mount.parent in table and mount.parent not in seen:
        mount = table[mount.parent]
        seen.add(mount.id)
        out.append(mount)
    return out
