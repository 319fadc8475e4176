"""What a layout is: the RAID kinds, their levels, what each level needs and offers, the rules.

The plan (file:line messages) and the builder (TargetError) both check layouts here; a broken
rule is a LayoutError that names the [[setup]] key to change. Levels are kept as each tool
spells them: btrfs profiles "single", "dup", "raid0" ... "raid1c4"; mdadm and LVM "0" ... "10"
(LVM also "linear"). A plan may write either spelling ("raid5" or 5) in any case.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import get_args

from iolab.errors import IolabError
from iolab.model import FsKind, Layout, RaidKind
from iolab.units import parse_size

RAID_KINDS: tuple[RaidKind, ...] = get_args(RaidKind)
FILESYSTEMS: tuple[FsKind, ...] = get_args(FsKind)
QUEUE_KEYS = ("scheduler", "read_ahead_kb", "nr_requests", "rq_affinity")
_QUEUE_NAME = re.compile(r"^[a-z_]+$")
# What a queue setting's value and an md layout may be: a scheduler's name ("mq-deadline"), a
# number, an mdadm layout's name ("n2", "left-symmetric"); never a path, a space or a newline.
_SCHEDULER = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")
_QUEUE_NUMBER = re.compile(r"[0-9]{1,9}")
_MD_LAYOUT = re.compile(r"[a-z0-9][a-z0-9-]{0,31}")


class LayoutError(IolabError):
    """A layout that cannot be built; `key` is the [[setup]] key to change."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class Level:
    """A RAID level: the fewest devices it needs, and how much of their space it leaves."""

    fewest: int
    copies: int = 1  # copies of the data, spread over all devices
    parity: int = 0  # devices' worth of parity
    mirror: bool = False  # every device holds all the data (md and LVM raid1)

    def tolerates(self, count: int, copies: int | None = None) -> int:
        """How many of `count` devices may be gone, the last ones, with the data still whole.

        Mirrors keep one; parity levels lose their parity; copies spread over the devices
        (md raid10, `copies` from its md_layout) lose one fewer than their copies, since the
        last devices may hold every copy of some chunk.
        """
        if self.mirror:
            return count - 1
        if self.parity:
            return self.parity
        return max(0, (copies or self.copies) - 1)

    def usable(self, sizes: Sequence[int]) -> int:
        """Roughly how many bytes devices of these sizes offer at this level."""
        if self.mirror:
            return min(sizes)
        if self.parity:
            return (len(sizes) - self.parity) * min(sizes)
        return sum(sizes) // self.copies


PLAIN = Level(1)  # no RAID, or a level a tool picks itself: every byte of every device


@dataclass(frozen=True)
class Raid:
    """One RAID kind: its levels as its tool spells them, and what a level left out means."""

    kind: RaidKind
    levels: Mapping[str, Level]
    default: str  # the level a plan gets when it names none
    unset: str | None = None  # what the tool builds when given no level (None: its own pick)
    required: bool = False  # the tool needs a level
    aliases: Mapping[str, str] = field(default_factory=dict)

    def spell(self, raw: object) -> str:
        """A level as the tool spells it: "RAID5" and 5 are btrfs "raid5", mdadm "5"."""
        text = str(raw).strip().lower()
        if self.kind == "btrfs":
            return f"raid{text}" if text.isdigit() else text
        text = text.removeprefix("raid")
        return self.aliases.get(text, text)

    def choices(self) -> str:
        return ", ".join(self.levels)


_MD_LEVELS = {
    "0": Level(2),
    "1": Level(2, mirror=True),
    "4": Level(3, parity=1),
    "5": Level(3, parity=1),
    "6": Level(4, parity=2),
    "10": Level(4, copies=2),
}
_BTRFS_LEVELS = {
    "single": PLAIN,
    "dup": Level(1, copies=2),
    "raid0": Level(2),
    "raid1": Level(2, copies=2),
    "raid1c3": Level(3, copies=3),
    "raid1c4": Level(4, copies=4),
    "raid10": Level(4, copies=2),
    "raid5": Level(3, parity=1),
    "raid6": Level(4, parity=2),
}
RAIDS: Mapping[str, Raid] = {
    "btrfs": Raid("btrfs", _BTRFS_LEVELS, default="raid0"),
    "mdadm": Raid("mdadm", _MD_LEVELS, default="0", required=True),
    "lvm": Raid(
        "lvm",
        {"linear": PLAIN, **_MD_LEVELS},
        default="0",
        unset="linear",
        aliases={"": "linear", "striped": "0", "stripe": "0"},
    ),
}


def is_btrfs(layout: Layout) -> bool:
    """A btrfs filesystem over the devices: btrfs RAID, or btrfs on one device."""
    return layout.raid == "btrfs" or layout.filesystem == "btrfs"


def mounted(layout: Layout) -> bool:
    """Whether the layout ends in a mounted filesystem (else fio writes the device raw)."""
    return is_btrfs(layout) or layout.filesystem != "none"


def mkfs_tool(layout: Layout) -> str | None:
    """The mkfs that formats the layout, or None when nothing is formatted."""
    if is_btrfs(layout):
        return "mkfs.btrfs"
    return None if layout.filesystem == "none" else f"mkfs.{layout.filesystem}"


def words(text: str, tool: str, key: str) -> list[str]:
    """Free-text options as words; a leading tool name ("mkfs.xfs -f ...") is dropped."""
    try:
        found = shlex.split(text)
    except ValueError as error:
        raise LayoutError(key, f"{key}: cannot parse {text!r}: {error}") from None
    family = tool.split(".", maxsplit=1)[0]
    if found and (found[0] == family or found[0].startswith(family + ".")):
        if found[0] not in (family, tool):
            raise LayoutError(key, f"{key} start with {found[0]} but the tool is {tool}")
        found = found[1:]
    return found


def spelled(layout: Layout) -> Layout:
    """The layout with its level and metadata profile as the tool spells them.

    An LVM layout without a level is linear; a btrfs RAID's filesystem is btrfs; LayoutError
    for a level the tool does not have.
    """
    raid = RAIDS.get(layout.raid)
    if raid is None:
        return layout
    level = layout.level
    if level is None and raid.required:
        raise LayoutError(
            "level", f"raid = {raid.kind} needs a level; choose one of {raid.choices()}"
        )
    level = raid.unset if level is None else _known(raid, "level", level)
    metadata = layout.metadata
    if metadata is not None and raid.kind == "btrfs":
        metadata = _known(raid, "metadata", metadata)
    filesystem = layout.filesystem
    if raid.kind == "btrfs" and filesystem == "none":
        filesystem = "btrfs"
    return replace(layout, level=level, metadata=metadata, filesystem=filesystem)


def _known(raid: Raid, key: str, raw: str) -> str:
    level = raid.spell(raw)
    if level not in raid.levels:
        what = "btrfs profile" if key == "metadata" else f"{raid.kind} level"
        raise LayoutError(key, f"{key} = {raw!r} is not a {what}; choose one of {raid.choices()}")
    return level


def present(layout: Layout) -> tuple[str, ...]:
    """The devices a layout is built on: all but the last `degraded`, which it leaves out."""
    return layout.devices[: len(layout.devices) - layout.degraded]


def one_device(layout: Layout) -> Layout:
    """One device of a RAID sweep is the plain device: btrfs with the single profile (metadata
    left to mkfs), or the device itself for mdadm and LVM."""
    if len(layout.devices) != 1 or layout.raid == "none":
        return layout
    if layout.raid == "btrfs":
        return replace(layout, level="single", metadata=None)
    return replace(layout, raid="none", level=None, md_layout=None, degraded=0)


def check_layout(layout: Layout, *, side_by_side: bool = True) -> Layout:
    """The layout, spelled (see `spelled`), if it can be built; LayoutError if not.

    side_by_side: several devices without a RAID may be written raw, side by side (fio joins
    them); a plan asks for a RAID instead.
    """
    count = len(layout.devices)
    if not count:
        raise LayoutError("devices", "no devices; name at least one block device")
    if layout.raid == "btrfs" and layout.filesystem not in ("btrfs", "none"):
        raise LayoutError(
            "filesystem",
            f'raid = "btrfs" builds a btrfs filesystem; drop filesystem = "{layout.filesystem}"',
        )
    if layout.raid == "none" and count > 1 and (mounted(layout) or not side_by_side):
        raise LayoutError("raid", f"{count} devices need raid = btrfs, mdadm or lvm, or one device")
    _needs_raid(layout)
    layout = spelled(layout)
    raid = RAIDS.get(layout.raid)
    for key, level in (("level", layout.level), ("metadata", layout.metadata)):
        fewest = raid.levels[level].fewest if raid and level else 1
        if count < fewest:
            raise LayoutError(
                key, f"{layout.raid} {level} needs at least {fewest} devices, not {count}"
            )
    _options(layout)
    _degraded(layout)
    return layout


def _degraded(layout: Layout) -> None:
    """A degraded md array leaves out no more of its last devices than its level tolerates."""
    if not layout.degraded:
        return
    if layout.degraded < 0:
        raise LayoutError("degraded", f"degraded = {layout.degraded} must be 0 or more")
    if layout.raid != "mdadm":
        raise LayoutError("degraded", "degraded applies to raid = mdadm only")
    count, level = len(layout.devices), layout.level or ""
    copies = re.fullmatch(r"[nfo]([0-9]+)", layout.md_layout or "")
    most = RAIDS["mdadm"].levels[level].tolerates(count, int(copies[1]) if copies else None)
    if layout.degraded > most:
        raise LayoutError(
            "degraded",
            f"degraded = {layout.degraded}: mdadm {level} over {count} devices can run with at "
            f"most {most} of them missing",
        )


def _needs_raid(layout: Layout) -> None:
    if layout.raid == "none" and layout.level:
        raise LayoutError("level", 'level needs raid = "btrfs", "mdadm" or "lvm"')
    if layout.metadata and layout.raid != "btrfs":
        raise LayoutError("metadata", "metadata (a btrfs profile) applies to raid = btrfs only")
    if layout.md_layout and layout.raid != "mdadm":
        raise LayoutError("md_layout", "md_layout applies to raid = mdadm only")


def _chunk(layout: Layout) -> None:
    """A chunk is a power of two of at least 4 KiB, on a RAID that stripes."""
    if layout.chunk is None or layout.raid == "none":
        return  # one device of a device_count sweep: the plain device, nothing to stripe
    if layout.raid == "btrfs":
        raise LayoutError("chunk", "chunk applies to raid = mdadm or lvm; btrfs sets its own")
    try:
        size = parse_size(layout.chunk)
    except ValueError:
        size = 0
    if size < 4096 or size & (size - 1):
        raise LayoutError(
            "chunk", f"chunk = {layout.chunk!r} must be a power of two of at least 4k (e.g. 256k)"
        )


def _options(layout: Layout) -> None:
    _chunk(layout)
    _queue(layout)
    if layout.md_layout is not None and not _MD_LAYOUT.fullmatch(layout.md_layout):
        raise LayoutError(
            "md_layout",
            f"md_layout = {layout.md_layout[:40]!r} is not an mdadm layout's name; write one "
            'as mdadm spells it, e.g. "n2", "f2", "left-symmetric"',
        )
    tool = mkfs_tool(layout)
    if tool:
        words(layout.mkfs_options, tool, "mkfs_options")
    elif layout.mkfs_options:
        raise LayoutError("mkfs_options", "mkfs_options need a filesystem; set filesystem")
    if mounted(layout):
        words(layout.mount_options, "mount", "mount_options")
    elif layout.mount_options:
        raise LayoutError("mount_options", "mount_options need a filesystem; set filesystem")


def _queue(layout: Layout) -> None:
    """Queue settings are sysfs file names, and their values a scheduler's name or a number."""
    for key, value in layout.queue.items():
        if not _QUEUE_NAME.match(key):
            raise LayoutError("queue", f"queue setting {key!r} is not a sysfs queue file name")
        form, said = (
            (_SCHEDULER, "a scheduler's name (e.g. none, mq-deadline)")
            if key == "scheduler"
            else (_QUEUE_NUMBER, "a whole number")
        )
        if not form.fullmatch(value):
            raise LayoutError("queue", f"queue {key} = {value[:40]!r} must be {said}")


def settle(layout: Layout, *, side_by_side: bool = True) -> Layout:
    """A layout as the plan asks for it, made buildable: spelled, one device made plain
    (see `one_device`), and checked; LayoutError if it cannot be built."""
    return check_layout(one_device(spelled(layout)), side_by_side=side_by_side)


def capacity(layout: Layout, sizes: Sequence[int]) -> int:
    """Roughly how many bytes a layout over devices of these sizes offers."""
    raid = RAIDS.get(layout.raid)
    level = PLAIN
    if raid is not None:
        spelled_level = raid.unset if layout.level is None else raid.spell(layout.level)
        level = raid.levels.get(spelled_level or "", PLAIN)
    return level.usable(sizes)
