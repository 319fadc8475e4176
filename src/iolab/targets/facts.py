"""The facts recorded about a set-up's target, typed, and as the JSON the store keeps.

A set-up's stored environment is a `SetupFacts`: the target (file -> filesystem -> RAID ->
disks, with every device's facts), what the builder made (layout facts, queue changes) and
the log of its commands. Every shape has `to_json()` and `from_json()`: `from_json` reads what
any iolab version stored (a fact it lacks is None), and `to_json(from_json(x)) == x` for what
this version writes. Tool reports that vary by tool (xfs_info, md sysfs, lvs) stay mappings.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from iolab.model import JSON, JSONObject

# A JSON object as a shape's `to_json` builds it (read back as a `JSONObject`).
JSONDict = dict[str, JSON]


def _mapping(value: object) -> JSONObject:
    return value if isinstance(value, Mapping) else {}


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _names(value: object) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list | tuple) else ()


@dataclass(frozen=True)
class DeviceFacts:
    """What one block device is and how its queue is set (sysfs; smartctl and nvme-cli)."""

    name: str
    path: str
    kind: str
    disk: str
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
    read_only: bool
    partitions: tuple[str, ...]
    holders: tuple[str, ...]
    slaves: tuple[str, ...]
    backing_file: str | None
    smart: JSONObject | None = None  # smartctl's identity and health, when installed
    nvme: JSONObject | None = None  # nvme id-ctrl, for NVMe disks when installed

    def to_json(self) -> JSONDict:
        out = asdict(self)
        for key in ("partitions", "holders", "slaves"):
            out[key] = list(out[key])
        for key in ("smart", "nvme"):
            if out[key] is None:
                del out[key]
        return out

    @classmethod
    def from_json(cls, data: JSONObject) -> DeviceFacts:
        values: dict[str, Any] = {f.name: data.get(f.name) for f in fields(cls)}
        for key in ("name", "path", "kind", "disk"):
            values[key] = str(values[key] or "")
        for key in ("partitions", "holders", "slaves"):
            values[key] = _names(values[key])
        values["read_only"] = bool(values["read_only"])
        return cls(**values)


@dataclass(frozen=True)
class MountFacts:
    """The filesystem a target is on: its source, type, mount point and mount options."""

    source: str | None
    fstype: str | None
    options: str | None
    mountpoint: str | None = None

    def to_json(self) -> JSONDict:
        out: JSONDict = {"source": self.source, "fstype": self.fstype}
        if self.mountpoint is not None:
            out["mountpoint"] = self.mountpoint
        out["options"] = self.options
        return out

    @classmethod
    def from_json(cls, data: JSONObject) -> MountFacts | None:
        if not data:
            return None
        get = data.get
        return cls(
            _text(get("source")),
            _text(get("fstype")),
            _text(get("options")),
            _text(get("mountpoint")),
        )


@dataclass(frozen=True)
class Layer:
    """One layer of what a target is built on: file, filesystem, part, loop, md, dm or disk.

    device is the kernel name of a block device layer, path the file of a file layer;
    details are the layer's own facts (fstype and mount point, md level, loop backing file).
    """

    layer: str
    device: str | None = None
    path: str | None = None
    details: JSONObject = field(default_factory=dict)
    below: tuple[Layer, ...] = ()

    @property
    def name(self) -> str:
        return self.device or self.path or str(self.details.get("name") or "")

    def walk(self) -> Iterator[Layer]:
        """This layer and every one below it, top down."""
        yield self
        for child in self.below:
            yield from child.walk()

    def to_json(self) -> JSONDict:
        out: JSONDict = {"layer": self.layer}
        if self.device is not None:
            out["device"] = self.device
        if self.path is not None:
            out["path"] = self.path
        out.update(self.details)
        if self.below:
            out["below"] = [child.to_json() for child in self.below]
        return out

    @classmethod
    def from_json(cls, data: JSONObject) -> Layer:
        details = {k: v for k, v in data.items() if k not in ("layer", "device", "path", "below")}
        below = data.get("below")
        return cls(
            str(data.get("layer", "?")),
            _text(data.get("device")),
            _text(data.get("path")),
            details,
            tuple(cls.from_json(_mapping(c)) for c in below) if isinstance(below, list) else (),
        )


@dataclass(frozen=True)
class RaidFacts:
    """The RAID a target is on (or none): its kind, member devices, and what its tool says."""

    kind: str  # btrfs, mdadm, lvm or none
    members: tuple[str, ...]
    details: JSONObject = field(default_factory=dict)  # level, chunk, profiles, ...

    def to_json(self) -> JSONDict:
        return {"kind": self.kind, "members": list(self.members), **self.details}

    @classmethod
    def from_json(cls, data: JSONObject) -> RaidFacts | None:
        if not data:
            return None
        details = {k: v for k, v in data.items() if k not in ("kind", "members")}
        return cls(str(data.get("kind", "none")), _names(data.get("members")), details)


def _devices(data: object) -> dict[str, DeviceFacts]:
    return {str(k): DeviceFacts.from_json(_mapping(v)) for k, v in _mapping(data).items()}


def _device(data: object) -> DeviceFacts | None:
    return DeviceFacts.from_json(_mapping(data)) if data else None


@dataclass(frozen=True)
class TargetFacts:
    """Where a target path lives: its filesystem, the device under it, the whole stack down
    to the disks with every device's facts, the RAID, and the filesystem's parameters."""

    path: str
    filesystem: MountFacts | None
    device: DeviceFacts | None  # the mount source, when it is a block device
    stack: Layer
    devices: Mapping[str, DeviceFacts]
    disks: tuple[str, ...]
    raid: RaidFacts | None
    filesystem_params: JSONObject  # xfs_info / tune2fs -l / btrfs figures

    def to_json(self) -> JSONDict:
        return {
            "path": self.path,
            "filesystem": self.filesystem.to_json() if self.filesystem else {},
            "device": self.device.to_json() if self.device else {},
            "stack": self.stack.to_json(),
            "devices": {name: facts.to_json() for name, facts in self.devices.items()},
            "disks": list(self.disks),
            "raid": self.raid.to_json() if self.raid else None,
            "filesystem_params": dict(self.filesystem_params),
        }

    @classmethod
    def elsewhere(cls, path: str) -> TargetFacts:
        """A path on other hosts (fio's servers): nothing more is known of it here."""
        return cls(path, None, None, Layer("file", path=path), {}, (), None, {})

    @classmethod
    def from_json(cls, data: JSONObject) -> TargetFacts:
        path = str(data.get("path") or "")
        stack = data.get("stack")
        return cls(
            path,
            MountFacts.from_json(_mapping(data.get("filesystem"))),
            _device(data.get("device")),
            Layer.from_json(stack) if isinstance(stack, Mapping) else Layer("file", path=path),
            _devices(data.get("devices")),
            _names(data.get("disks")),
            RaidFacts.from_json(_mapping(data.get("raid"))),
            _mapping(data.get("filesystem_params")),
        )


@dataclass(frozen=True)
class QueueChange:
    """A queue setting iolab changed on a device: its value before, and after the change."""

    before: str | None
    after: str | None


@dataclass(frozen=True)
class LayoutFacts:
    """What the builder made: member devices, RAID, top device, mount, filesystem, queue."""

    devices: Mapping[str, DeviceFacts]
    raid: RaidFacts
    top: DeviceFacts | None = None  # the array or volume on the members
    mount: MountFacts | None = None
    filesystem: JSONObject | None = None  # xfs_info / tune2fs -l / btrfs figures
    queue: Mapping[str, Mapping[str, QueueChange]] | None = None  # device -> setting -> change
    raid_at_end: RaidFacts | None = None  # re-read after the set-up's cases: degraded by then?

    def to_json(self) -> JSONDict:
        out: JSONDict = {
            "devices": {name: facts.to_json() for name, facts in self.devices.items()},
            "raid": self.raid.to_json(),
        }
        if self.top is not None:
            out["top"] = self.top.to_json()
        if self.mount is not None:
            out["mount"] = self.mount.to_json()
        if self.filesystem is not None:
            out["filesystem"] = dict(self.filesystem)
        if self.queue is not None:
            out["queue"] = {
                dev: {key: asdict(change) for key, change in keys.items()}
                for dev, keys in self.queue.items()
            }
        if self.raid_at_end is not None:
            out["raid_at_end"] = self.raid_at_end.to_json()
        return out

    @classmethod
    def from_json(cls, data: JSONObject) -> LayoutFacts:
        return cls(
            _devices(data.get("devices")),
            RaidFacts.from_json(_mapping(data.get("raid"))) or RaidFacts("none", ()),
            _device(data.get("top")),
            MountFacts.from_json(_mapping(data.get("mount"))),
            _mapping(data["filesystem"]) if "filesystem" in data else None,
            _queue(data["queue"]) if "queue" in data else None,
            RaidFacts.from_json(_mapping(data.get("raid_at_end"))),
        )


def _queue(data: object) -> dict[str, dict[str, QueueChange]]:
    return {
        str(dev): {
            str(key): QueueChange(
                _text(_mapping(change).get("before")), _text(_mapping(change).get("after"))
            )
            for key, change in _mapping(keys).items()
        }
        for dev, keys in _mapping(data).items()
    }


@dataclass(frozen=True)
class LogLine:
    """One command the builder ran: what, its exit status and its output."""

    command: str
    returncode: int
    output: str


@dataclass(frozen=True)
class SetupFacts:
    """Everything stored about one set-up's environment (what the setups table holds)."""

    target: TargetFacts | None = None
    layout: LayoutFacts | None = None
    log: tuple[LogLine, ...] | None = None

    def to_json(self) -> JSONDict:
        out: JSONDict = {}
        if self.target is not None:
            out["target"] = self.target.to_json()
        if self.layout is not None:
            out["layout"] = self.layout.to_json()
        if self.log is not None:
            out["log"] = [asdict(line) for line in self.log]
        return out

    @classmethod
    def from_json(cls, data: JSONObject) -> SetupFacts:
        """Also reads target facts stored at the top level, as early versions did."""
        target = data.get("target")
        if target is None and "path" in data:
            return cls(TargetFacts.from_json(data), *cls._rest(data))
        return cls(
            TargetFacts.from_json(target) if isinstance(target, Mapping) else None, *cls._rest(data)
        )

    @staticmethod
    def _rest(data: JSONObject) -> tuple[LayoutFacts | None, tuple[LogLine, ...] | None]:
        """The layout and the log, wherever the target was stored."""
        layout = data.get("layout")
        log = data.get("log")
        return (
            LayoutFacts.from_json(layout) if isinstance(layout, Mapping) else None,
            _log(log) if isinstance(log, list) else None,
        )


def _log(entries: list[JSON]) -> tuple[LogLine, ...]:
    return tuple(
        LogLine(str(e.get("command", "")), _int(e.get("returncode", 0)), str(e.get("output", "")))
        for e in map(_mapping, entries)
    )


def _int(value: JSON) -> int:
    """A stored whole number (as fio and json write it: int, float or digits); else 0."""
    return int(value) if isinstance(value, int | float | str) else 0
