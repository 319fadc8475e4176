"""The facts recorded about a set-up's target, typed, and as the JSON the store keeps.

A set-up's stored environment is a `SetupFacts`: the target (file -> filesystem -> RAID ->
disks, with every device's facts), what the builder made (layout facts, queue changes) and
the log of its commands. Each is stored through model.codec (`codec.to_json`, `codec.from_json`),
every shape read tolerantly: what any iolab version stored reads (a fact it lacks, or one it
cannot read, is None), and `to_json(from_json(x)) == x` for what this version writes. Tool
reports that vary by tool (xfs_info, md sysfs, lvs) stay mappings.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from iolab.model import JSON, JSONObject, codec
from iolab.model.codec import spec
from iolab.model.drive import DriveHealth

# A JSON object as a shape's `to_json` builds it (read back as a `JSONObject`).
JSONDict = dict[str, JSON]

_TEXT = spec(missing="")  # a text older JSON may lack
_NONE_YET = spec(missing=())  # names older JSON may lack
_WHEN_SET = spec(omit="none")  # left out when None
_SET_NOT_EMPTY = spec(omit="none", empty_none=True)  # left out when None; {} read as None
_EMPTY_WHEN_NONE = spec(empty_none=True, none_as={})  # None stored as {}


@codec.tolerant
@dataclass(frozen=True)
class DeviceFacts:
    """What one block device is and how its queue is set (sysfs; smartctl and nvme-cli)."""

    name: str = field(metadata=_TEXT)
    path: str = field(metadata=_TEXT)
    kind: str = field(metadata=_TEXT)
    disk: str = field(metadata=_TEXT)
    majmin: str | None
    size_bytes: int | None
    model: str | None
    vendor: str | None
    firmware: str | None
    serial: str | None
    wwn: str | None
    transport: str | None
    rotational: bool | None
    logical_block_size: int | None
    physical_block_size: int | None
    scheduler: str | None
    read_ahead_kb: int | None
    nr_requests: int | None
    rq_affinity: int | None
    write_cache: str | None
    discard_granularity: int | None
    start_bytes: int | None
    alignment_offset: int | None
    aligned_1mib: bool | None
    read_only: bool = field(metadata=spec(missing=False))
    partitions: tuple[str, ...] = field(metadata=_NONE_YET)
    holders: tuple[str, ...] = field(metadata=_NONE_YET)
    slaves: tuple[str, ...] = field(metadata=_NONE_YET)
    backing_file: str | None
    # smartctl's identity and health, when installed; nvme id-ctrl, for NVMe disks
    smart: JSONObject | None = field(default=None, metadata=_WHEN_SET)
    nvme: JSONObject | None = field(default=None, metadata=_WHEN_SET)
    # the drive's own account (smartctl -j -a), or why it could not be read
    health: DriveHealth | None = field(default=None, metadata=_WHEN_SET)
    health_problem: str | None = field(default=None, metadata=_WHEN_SET)


@codec.tolerant
@dataclass(frozen=True)
class MountFacts:
    """The filesystem a target is on: its source, type, mount point and mount options."""

    source: str | None
    fstype: str | None
    mountpoint: str | None = field(default=None, metadata=_WHEN_SET)
    options: str | None = None


@codec.tolerant
@dataclass(frozen=True)
class Layer:
    """One layer of what a target is built on: file, filesystem, part, loop, md, dm or disk.

    device is the kernel name of a block device layer, path the file of a file layer;
    details are the layer's own facts (fstype and mount point, md level, loop backing file),
    stored beside its other keys.
    """

    layer: str = field(metadata=spec(missing="?"))
    device: str | None = field(default=None, metadata=_WHEN_SET)
    path: str | None = field(default=None, metadata=_WHEN_SET)
    details: JSONObject = field(default_factory=dict, metadata=spec(rest=True))
    below: tuple[Layer, ...] = field(default=(), metadata=spec(omit="empty"))

    @property
    def name(self) -> str:
        return self.device or self.path or str(self.details.get("name") or "")

    def walk(self) -> Iterator[Layer]:
        """This layer and every one below it, top down."""
        yield self
        for child in self.below:
            yield from child.walk()


@codec.tolerant
@dataclass(frozen=True)
class RaidFacts:
    """The RAID a target is on (or none): its kind, member devices, and what its tool says
    (stored beside them)."""

    kind: str = field(metadata=spec(missing="none"))  # btrfs, mdadm, lvm or none
    members: tuple[str, ...] = field(metadata=_NONE_YET)
    details: JSONObject = field(default_factory=dict, metadata=spec(rest=True))  # level, ...


def _file_layer(data: Mapping[str, object]) -> Layer:
    """The stack of a target stored without one: the file itself."""
    path = data.get("path")
    return Layer("file", path=path if isinstance(path, str) else "")


@codec.tolerant
@dataclass(frozen=True)
class TargetFacts:
    """Where a target path lives: its filesystem, the device under it, the whole stack down
    to the disks with every device's facts, the RAID, and the filesystem's parameters."""

    path: str = field(metadata=_TEXT)
    filesystem: MountFacts | None = field(metadata=_EMPTY_WHEN_NONE)
    device: DeviceFacts | None = field(metadata=_EMPTY_WHEN_NONE)  # the mount source's
    stack: Layer = field(metadata=spec(missing_from=_file_layer))
    devices: Mapping[str, DeviceFacts] = field(metadata=spec(missing={}))
    disks: tuple[str, ...] = field(metadata=_NONE_YET)
    raid: RaidFacts | None = field(metadata=spec(empty_none=True))
    filesystem_params: JSONObject = field(metadata=spec(missing={}))  # xfs_info / tune2fs -l

    @classmethod
    def elsewhere(cls, path: str) -> TargetFacts:
        """A path on other hosts (fio's servers): nothing more is known of it here."""
        return cls(path, None, None, Layer("file", path=path), {}, (), None, {})


@codec.tolerant
@dataclass(frozen=True)
class QueueChange:
    """A queue setting iolab changed on a device: its value before, and after the change."""

    before: str | None
    after: str | None


@codec.tolerant
@dataclass(frozen=True)
class LayoutFacts:
    """What the builder made: member devices, RAID, top device, mount, filesystem, queue."""

    devices: Mapping[str, DeviceFacts] = field(metadata=spec(missing={}))
    raid: RaidFacts = field(metadata=spec(missing=RaidFacts("none", ())))
    top: DeviceFacts | None = field(default=None, metadata=_SET_NOT_EMPTY)  # array or volume
    mount: MountFacts | None = field(default=None, metadata=_SET_NOT_EMPTY)
    filesystem: JSONObject | None = field(default=None, metadata=_WHEN_SET)  # xfs_info, ...
    # device -> setting -> change
    queue: Mapping[str, Mapping[str, QueueChange]] | None = field(default=None, metadata=_WHEN_SET)
    # re-read after the set-up's cases: degraded by then?
    raid_at_end: RaidFacts | None = field(default=None, metadata=_SET_NOT_EMPTY)


@codec.tolerant
@dataclass(frozen=True)
class LogLine:
    """One command the builder ran: what, its exit status and its output."""

    command: str = field(metadata=_TEXT)
    returncode: int = field(metadata=spec(missing=0))
    output: str = field(metadata=_TEXT)


def _top_level_target(data: Mapping[str, object]) -> TargetFacts | None:
    """Target facts stored at the top level, as early versions did."""
    return codec.from_json(TargetFacts, data) if "path" in data else None


@codec.tolerant
@dataclass(frozen=True)
class SetupFacts:
    """Everything stored about one set-up's environment (what the setups table holds)."""

    target: TargetFacts | None = field(
        default=None, metadata=spec(omit="none", missing_from=_top_level_target)
    )
    layout: LayoutFacts | None = field(default=None, metadata=_WHEN_SET)
    log: tuple[LogLine, ...] | None = field(default=None, metadata=_WHEN_SET)
