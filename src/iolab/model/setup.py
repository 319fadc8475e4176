"""A set-up as a plan names it: its layout, its RAID card's policy, its target."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from iolab.model.common import (
    JSON,
    JSONObject,
)

RaidKind = Literal["none", "btrfs", "mdadm", "lvm"]
FsKind = Literal["none", "xfs", "ext4", "btrfs"]


@dataclass(frozen=True)
class Layout:
    """How a set-up is built on block devices the plan names; provisioned, then torn down.

    raid "btrfs" means a btrfs filesystem over all devices with `level` as its data profile
    (raid0/raid1/raid10/raid5/raid6/single) and `metadata` as its metadata profile.
    raid "mdadm" and "lvm" build one block device (level 0/1/4/5/6/10, `chunk`, `md_layout`)
    that `filesystem` then formats, or that fio uses raw when filesystem is "none".
    `degraded` (mdadm only): the last that many devices are left out, "missing", so the array
    starts degraded; they are neither checked nor written (see `layouts.present`).
    """

    devices: tuple[str, ...]
    raid: RaidKind = "none"
    level: str | None = None
    metadata: str | None = None
    chunk: str | None = None
    md_layout: str | None = None
    filesystem: FsKind = "none"
    mkfs_options: str = ""
    mount_options: str = ""
    queue: Mapping[str, str] = field(default_factory=dict)
    discard: bool = False
    setup_hook: str | None = None
    teardown_hook: str | None = None
    degraded: int = 0

    def definition(self) -> dict[str, object]:
        out = {k: v for k, v in self.__dict__.items() if v not in (None, "", False, {})}
        out["devices"] = list(self.devices)
        out["queue"] = dict(self.queue)
        return out

    @classmethod
    def from_definition(cls, data: JSONObject) -> Layout:
        text = _texts(data)
        devices, queue = data.get("devices"), data.get("queue")
        raid, fs = text("raid"), text("filesystem")
        return cls(
            tuple(str(d) for d in devices) if isinstance(devices, list) else (),
            raid=raid if raid in ("btrfs", "mdadm", "lvm") else "none",  # type: ignore[arg-type]
            level=text("level"),
            metadata=text("metadata"),
            chunk=text("chunk"),
            md_layout=text("md_layout"),
            filesystem=fs if fs in ("xfs", "ext4", "btrfs") else "none",  # type: ignore[arg-type]
            mkfs_options=text("mkfs_options") or "",
            mount_options=text("mount_options") or "",
            queue={k: str(v) for k, v in queue.items()} if isinstance(queue, dict) else {},
            discard=data.get("discard") is True,
            setup_hook=text("setup_hook"),
            teardown_hook=text("teardown_hook"),
            degraded=_whole(data.get("degraded")),
        )


@dataclass(frozen=True)
class CardPolicy:
    """A RAID card's cache policy a set-up asks for on one virtual drive, through one tool
    (storcli, perccli, megacli, ssacli, arcconf); a part left None is left as it is."""

    tool: str
    vd: str  # as the tool names it: "/c0/v0", "-L0 -a0", "slot=0 ld 1", "1 LOGICALDRIVE 0"
    write_cache: str | None = None
    read_ahead: str | None = None
    io_policy: str | None = None
    drive_cache: str | None = None
    cache_ratio: str | None = None  # Smart Array's read/write split of its cache: "25/75"

    def fields(self) -> dict[str, str]:
        """The parts asked for, by their plan keys."""
        asked = {
            "write_cache": self.write_cache,
            "read_ahead": self.read_ahead,
            "io_policy": self.io_policy,
            "drive_cache": self.drive_cache,
            "cache_ratio": self.cache_ratio,
        }
        return {key: value for key, value in asked.items() if value is not None}

    def definition(self) -> dict[str, object]:
        return {"tool": self.tool, "vd": self.vd, **self.fields()}

    @classmethod
    def from_definition(cls, data: JSONObject) -> CardPolicy:
        text = _texts(data)
        return cls(
            text("tool") or "",
            text("vd") or "",
            text("write_cache"),
            text("read_ahead"),
            text("io_policy"),
            text("drive_cache"),
            text("cache_ratio"),
        )


@dataclass(frozen=True)
class Setup:
    """One named way to prepare a target: an existing path, or a layout built on devices."""

    name: str
    path: str = ""
    layout: Layout | None = None
    precondition: str = "none"  # none, sequential, random or both: filled before its cases
    cache_bytes: int = 0  # a cache in front of the target the plan declares (a RAID card's)
    facts: tuple[tuple[str, float], ...] = ()  # an import's: device_count, rated_iops, rated_bps
    host_paths: tuple[tuple[str, str], ...] = ()  # on hosts: (host, its path) where it differs
    host_count: int = 0  # on hosts: the first this many run its cases (0: all of them)
    controller: CardPolicy | None = None  # a RAID card's policy set before its cases
    drive_cache: str | None = None  # a plain disk's own write cache (sysfs cache_type)
    # named factors (name, value), e.g. (("card", "P420i"), ("level", "raid5")): what a
    # report pivots by (from the plan's `factors`, its axes, or an import's table and flags)
    factors: tuple[tuple[str, str], ...] = ()

    def factor(self, name: str) -> str | None:
        """This set-up's value of a factor; None when it has none of that name."""
        return dict(self.factors).get(name)

    @property
    def kind(self) -> str:
        return "path" if self.layout is None else "devices"

    def definition(self) -> dict[str, object]:
        extra: dict[str, object] = (
            {"precondition": self.precondition} if self.precondition != "none" else {}
        )
        if self.cache_bytes:
            extra["cache_bytes"] = self.cache_bytes
        extra.update(self.facts)
        if self.host_paths:
            extra["hosts"] = dict(self.host_paths)
        if self.host_count:
            extra["host_count"] = self.host_count
        if self.controller is not None:
            extra["controller"] = self.controller.definition()
        if self.drive_cache is not None:
            extra["drive_cache"] = self.drive_cache
        if self.factors:  # only when given: the hash of a set-up without factors is unchanged
            extra["factors"] = dict(self.factors)
        if self.layout is None:
            return {"name": self.name, "kind": "path", "path": self.path, **extra}
        return {"name": self.name, "kind": "devices", **self.layout.definition(), **extra}

    @classmethod
    def from_definition(cls, data: JSONObject) -> Setup:
        """The set-up as the store keeps its definition (any version's; what is missing or
        of another shape is left at its default): the report reads this, not the JSON."""
        text = _texts(data)
        facts = tuple(
            (key, float(v)) for key in FACT_KEYS if isinstance(v := data.get(key), int | float)
        )
        hosts = data.get("hosts")
        card = data.get("controller")
        return cls(
            text("name") or "",
            path=text("path") or "",
            layout=Layout.from_definition(data) if data.get("kind") == "devices" else None,
            precondition=text("precondition") or "none",
            cache_bytes=_whole(data.get("cache_bytes")),
            facts=facts,
            host_paths=tuple((k, str(v)) for k, v in hosts.items())
            if isinstance(hosts, dict)
            else (),
            host_count=_whole(data.get("host_count")),
            controller=CardPolicy.from_definition(card) if isinstance(card, dict) else None,
            drive_cache=text("drive_cache"),
            factors=_factors(data.get("factors")),
        )


def _factors(value: JSON) -> tuple[tuple[str, str], ...]:
    """Stored factors: a JSON object of texts; anything else is none."""
    if not isinstance(value, dict):
        return ()
    return tuple((str(k), str(v)) for k, v in value.items() if isinstance(v, str | int | float))


FACT_KEYS = ("device_count", "rated_iops", "rated_bps")  # an import's facts (exchange.run_builder)


def _texts(data: JSONObject) -> Callable[[str], str | None]:
    def text(key: str) -> str | None:
        value = data.get(key)
        return None if value is None or isinstance(value, dict | list) else str(value)

    return text


def _whole(value: JSON) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0
