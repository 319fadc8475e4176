"""How a target stacks: a path resolved to its filesystem, then btrfs/md/dm/loop, then disks.

The result is a tree of typed layers (see `facts.Layer`), read from sysfs and mountinfo.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from iolab.model import JSON
from iolab.model.facts import JSONDict, Layer
from iolab.targets import devices as dv

MAX_DEPTH = 8


def mount_containing(path: str | Path) -> dv.Mount | None:
    """The mount a path lives on: the longest mount point that prefixes its real path."""
    real = os.path.realpath(path)
    best: tuple[int, int, dv.Mount] | None = None
    for index, mount in enumerate(dv.mounts()):
        target = mount.target.rstrip("/") or "/"
        if real == target or real.startswith(target if target == "/" else target + "/"):
            key = (len(target), index, mount)
            if best is None or key[:2] > best[:2]:
                best = key
    return best[2] if best else None


def md_facts(name: str) -> JSONDict:
    """Level, chunk, layout and state of an md array, from /sys/block/mdN/md: `degraded` is
    how many members it lacks (None for raid0, which has no spare copy to run without), and
    `member_states` each member's state as md sees it ("in_sync", "faulty,write_error", ...)."""
    md = dv.sys_dir(name) / "md"
    members = list(dv.slaves(name))
    return {
        "level": dv.sysfs_text(md / "level"),
        "chunk_bytes": dv.read_int(md / "chunk_size"),
        "layout": dv.read_int(md / "layout"),
        "raid_disks": dv.read_int(md / "raid_disks"),
        "array_state": dv.sysfs_text(md / "array_state"),
        "sync_action": dv.sysfs_text(md / "sync_action"),
        "degraded": dv.read_int(md / "degraded"),
        "member_states": {m: dv.sysfs_text(md / f"dev-{m}" / "state") for m in members},
        "members": list[JSON](members),
    }


def dm_facts(name: str) -> JSONDict:
    """Name and uuid of a device-mapper device (an LVM volume's uuid starts with LVM-)."""
    dm = dv.sys_dir(name) / "dm"
    return {
        "dm_name": dv.sysfs_text(dm / "name"),
        "dm_uuid": dv.sysfs_text(dm / "uuid"),
        "members": list(dv.slaves(name)),
    }


def stack(name: str, depth: int = 0) -> Layer:
    """A device and what it is built on, as a tree of layers down to whole disks or files."""
    layer = dv.kind(name)
    if depth >= MAX_DEPTH:
        return Layer(layer, device=name)
    details: dict[str, Any] = {}
    below: list[Layer] = []
    if layer == "part":
        below.append(stack(dv.disk_of(name), depth + 1))
    elif layer == "md":
        details = md_facts(name)
    elif layer == "dm":
        details = dm_facts(name)
    elif layer == "loop":
        backing = dv.backing_file(name)
        details["backing_file"] = backing
        details["dio"] = dv.sysfs_text(dv.sys_dir(name) / "loop" / "dio")  # "1": direct I/O on it
        under = dv.try_kernel_name(backing) if backing else None
        if under:
            below.append(stack(under, depth + 1))
        elif backing:
            below.append(resolve(backing, depth + 1))
    below.extend(stack(s, depth + 1) for s in dv.slaves(name))
    return Layer(layer, device=name, details=details, below=tuple(below))


def resolve(path: str | Path, depth: int = 0) -> Layer:
    """file -> filesystem -> btrfs/md/dm/loop -> member disks, as a tree of layers; a block
    device (a set-up measured on its raw device) is its own stack, not a file in /dev."""
    real = os.path.realpath(path)
    name = dv.try_kernel_name(real)
    if name is not None and depth < MAX_DEPTH:
        return stack(name, depth)
    mount = mount_containing(real)
    if mount is None or depth >= MAX_DEPTH:
        return Layer("file", path=real)
    details: dict[str, Any] = {
        "fstype": mount.fstype,
        "source": mount.source,
        "mountpoint": mount.target,
        "options": mount.options,
    }
    members = list(mount.devices)
    btrfs = dv.btrfs_of(members[0]) if mount.fstype == "btrfs" and members else None
    if btrfs:
        details["btrfs_uuid"] = btrfs.uuid
        members = list(btrfs.devices)
    below = tuple(stack(m, depth + 1) for m in members)
    return Layer("file", path=real, below=(Layer("filesystem", details=details, below=below),))


def tree_devices(tree: Layer) -> list[str]:
    """Kernel names of every block device in a tree, top down, each once."""
    return list(dict.fromkeys(n.device for n in tree.walk() if n.device))


def tree_disks(tree: Layer) -> list[str]:
    """The whole disks at the bottom of a tree (the devices the I/O finally reaches)."""
    return list(dict.fromkeys(n.device for n in tree.walk() if n.layer == "disk" and n.device))
