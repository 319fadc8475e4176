"""RAID cards as their own tools describe them: plain frozen values, no I/O.

A `Controller` is one card as one tool (storcli, perccli, MegaCli, ssacli, arcconf) printed
it; each of its `VirtualDrive`s carries its cache policy twice, as configured and as in
effect, because a card whose battery is learning or has failed silently runs write-through
while its configuration still says write-back. Each `CachePolicy` keeps the tool's own words
beside iolab's reading of them. A fact the tool did not print is None, never a guess.

Every shape has `to_json()` and a tolerant `from_json()` (what it cannot read is None), as
`targets.facts` does for the facts recorded with a set-up.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from iolab.targets.facts import JSONDict

E = TypeVar("E", bound=StrEnum)


class Write(StrEnum):
    """Write cache: acknowledged from the card's cache, or once on the drives."""

    BACK = "write-back"  # cache while the battery protects it, through otherwise
    THROUGH = "write-through"
    ALWAYS_BACK = "always-write-back"  # cache whatever the battery's state


class Read(StrEnum):
    AHEAD = "read-ahead"
    NONE = "none"
    ADAPTIVE = "adaptive"


class Io(StrEnum):
    DIRECT = "direct"
    CACHED = "cached"


class DriveCache(StrEnum):
    """The member drives' own write cache, as the card sets it."""

    ON = "on"
    OFF = "off"
    DEFAULT = "drive default"  # the card leaves each drive as it is


class Health(StrEnum):
    OPTIMAL = "optimal"
    LEARNING = "learning"  # a learn cycle: the card writes through until it ends
    CHARGING = "charging"
    DEGRADED = "degraded"
    FAILED = "failed"
    UNKNOWN = "unknown"


# How a policy's parts read in a sentence.
_SAID = {Read.NONE: "no read-ahead", Io.DIRECT: "direct I/O", Io.CACHED: "cached I/O"}
_CAUSES = {
    Health.LEARNING: "the battery is learning",
    Health.CHARGING: "the battery is charging",
    Health.DEGRADED: "the battery is degraded",
    Health.FAILED: "the battery has failed",
}


def said(value: StrEnum) -> str:
    """A policy part as a sentence says it: "write-back", "no read-ahead", "direct I/O"."""
    return _SAID.get(value, str(value))


@dataclass(frozen=True)
class CachePolicy:
    """A VD's cache policy; a part the tool does not have or did not print is None."""

    write: Write | None
    read: Read | None
    io: Io | None
    words: str  # the tool's own words for it, e.g. "RWBD" or "WriteBack, ReadAhead, Direct"

    def parts(self) -> tuple[Write | None, Read | None, Io | None]:
        return (self.write, self.read, self.io)

    def summary(self) -> str:
        shown = [said(part) for part in self.parts() if part is not None]
        return ", ".join(shown) or "not read"

    def to_json(self) -> JSONDict:
        return {"write": self.write, "read": self.read, "io": self.io, "words": self.words}

    @classmethod
    def from_json(cls, value: object) -> CachePolicy | None:
        if not isinstance(value, Mapping):
            return None
        return cls(
            write=_enum(Write, value.get("write")),
            read=_enum(Read, value.get("read")),
            io=_enum(Io, value.get("io")),
            words=_text(value.get("words")) or "",
        )


@dataclass(frozen=True)
class Battery:
    """The card's battery or CacheVault (supercapacitor and flash)."""

    present: bool | None  # None: the tool did not say
    health: Health
    words: str | None = None  # the tool's own word for its state ("Optimal", "Recharging")
    kind: str | None = None  # what it is: "CacheVault CVPM02", "BBU iBBU08"

    def summary(self) -> str:
        if self.present is False:
            return "none"
        if self.present is None and self.health is Health.UNKNOWN:
            return "not reported"
        head = " ".join(part for part in (self.kind, str(self.health)) if part)
        own = self.words and self.words.lower() != self.health
        return f"{head} ({self.words})" if own else head

    def cause(self) -> str | None:
        """Why a card would write through against its configuration, from this battery."""
        if self.present is False:
            return "the card has no battery"
        return _CAUSES.get(self.health)

    def to_json(self) -> JSONDict:
        return {
            "present": self.present,
            "health": self.health,
            "words": self.words,
            "kind": self.kind,
        }

    @classmethod
    def from_json(cls, value: object) -> Battery:
        got = value if isinstance(value, Mapping) else {}
        present = got.get("present")
        return cls(
            present=present if isinstance(present, bool) else None,
            health=_enum(Health, got.get("health")) or Health.UNKNOWN,
            words=_text(got.get("words")),
            kind=_text(got.get("kind")),
        )


UNREPORTED = Battery(present=None, health=Health.UNKNOWN)


@dataclass(frozen=True)
class CacheRatio:
    """Smart Array's split of its cache between reads and writes, in percent."""

    read: int
    write: int

    def summary(self) -> str:
        return f"{self.read}% read / {self.write}% write"


@dataclass(frozen=True)
class VirtualDrive:
    """One virtual (logical) drive, named as its tool addresses it: "/c0/v0" (storcli,
    perccli), "-L0 -a0" (MegaCli), "slot=0 ld 1" (ssacli), "1 LOGICALDRIVE 0" (arcconf)."""

    id: str
    raid_level: str | None
    size_bytes: int | None
    block_device: str | None  # the OS's name for it, where the tool prints one
    configured: CachePolicy | None
    effective: CachePolicy | None
    drive_cache: DriveCache | None = None
    name: str | None = None
    state: str | None = None

    def to_json(self) -> JSONDict:
        return {
            "id": self.id,
            "raid_level": self.raid_level,
            "size_bytes": self.size_bytes,
            "block_device": self.block_device,
            "configured": self.configured.to_json() if self.configured else None,
            "effective": self.effective.to_json() if self.effective else None,
            "drive_cache": self.drive_cache,
            "name": self.name,
            "state": self.state,
        }

    @classmethod
    def from_json(cls, value: object) -> VirtualDrive | None:
        if not isinstance(value, Mapping) or _text(value.get("id")) is None:
            return None
        size = value.get("size_bytes")
        return cls(
            id=_text(value.get("id")) or "",
            raid_level=_text(value.get("raid_level")),
            size_bytes=size if isinstance(size, int) and not isinstance(size, bool) else None,
            block_device=_text(value.get("block_device")),
            configured=CachePolicy.from_json(value.get("configured")),
            effective=CachePolicy.from_json(value.get("effective")),
            drive_cache=_enum(DriveCache, value.get("drive_cache")),
            name=_text(value.get("name")),
            state=_text(value.get("state")),
        )


@dataclass(frozen=True)
class Controller:
    """One card. `index` is the number its tool addresses it by: storcli's /cN, MegaCli's
    -aN, ssacli's slot=N, arcconf's controller N."""

    tool: str  # "storcli", "perccli", "MegaCli", "ssacli", "arcconf"
    index: int
    model: str | None
    firmware: str | None
    serial: str | None
    cache_bytes: int | None  # the card's cache memory; 0 for a card without one
    battery: Battery
    drives: tuple[VirtualDrive, ...] = ()
    drive_cache: DriveCache | None = None  # card-wide drive write cache (Smart Array)
    cache_ratio: CacheRatio | None = None  # Smart Array
    cache_ok: bool | None = None  # False: the card says its cache is disabled (Smart Array)

    @property
    def address(self) -> str:
        return {"MegaCli": f"-a{self.index}", "ssacli": f"slot={self.index}"}.get(
            self.tool, str(self.index) if self.tool == "arcconf" else f"/c{self.index}"
        )

    def cause(self) -> str | None:
        """Why this card would run its drives otherwise than configured, if it says."""
        if self.cache_ok is False:
            return "the card's cache is disabled"
        return self.battery.cause()

    def to_json(self) -> JSONDict:
        return {
            "tool": self.tool,
            "index": self.index,
            "model": self.model,
            "firmware": self.firmware,
            "serial": self.serial,
            "cache_bytes": self.cache_bytes,
            "battery": self.battery.to_json(),
            "drive_cache": self.drive_cache,
            "cache_ratio": (
                {"read": self.cache_ratio.read, "write": self.cache_ratio.write}
                if self.cache_ratio
                else None
            ),
            "cache_ok": self.cache_ok,
            "drives": [{**vd.to_json(), "differs": differs(vd, self)} for vd in self.drives],
        }

    @classmethod
    def from_json(cls, value: object) -> Controller | None:
        """What `to_json` wrote (here or on another host); None when it is not that."""
        if not isinstance(value, Mapping) or _text(value.get("tool")) is None:
            return None
        drives = value.get("drives")
        found = [VirtualDrive.from_json(d) for d in drives] if isinstance(drives, list) else []
        ok = value.get("cache_ok")
        return cls(
            tool=_text(value.get("tool")) or "",
            index=_int(value.get("index")) or 0,
            model=_text(value.get("model")),
            firmware=_text(value.get("firmware")),
            serial=_text(value.get("serial")),
            cache_bytes=_int(value.get("cache_bytes")),
            battery=Battery.from_json(value.get("battery")),
            drives=tuple(vd for vd in found if vd is not None),
            drive_cache=_enum(DriveCache, value.get("drive_cache")),
            cache_ratio=_ratio(value.get("cache_ratio")),
            cache_ok=ok if isinstance(ok, bool) else None,
        )


def differs(vd: VirtualDrive, controller: Controller | None = None) -> str | None:
    """In words, how the policy in effect differs from the one configured (None if it does
    not, or if the tool printed only one of them), with the card's reason where it gives
    one: "configured write-back, in effect write-through: the battery is learning"."""
    if vd.configured is None or vd.effective is None:
        return None
    changes = [
        f"configured {said(was)}, in effect {said(now)}"
        for was, now in zip(vd.configured.parts(), vd.effective.parts(), strict=True)
        if was is not None and now is not None and was != now
    ]
    if not changes:
        return None
    cause = controller.cause() if controller else None
    return "; ".join(changes) + (f": {cause}" if cause else "")


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _enum(kind: type[E], value: object) -> E | None:
    try:
        return kind(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _ratio(value: object) -> CacheRatio | None:
    if not isinstance(value, Mapping):
        return None
    read, write = _int(value.get("read")), _int(value.get("write"))
    return CacheRatio(read, write) if read is not None and write is not None else None
