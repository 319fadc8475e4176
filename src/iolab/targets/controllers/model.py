"""RAID cards as their own tools describe them: plain frozen values, no I/O.

A `Controller` is one card as one tool (storcli, perccli, MegaCli, ssacli, arcconf) printed
it; each of its `VirtualDrive`s carries its cache policy twice, as configured and as in
effect, because a card whose battery is learning or has failed silently runs write-through
while its configuration still says write-back. Each `CachePolicy` keeps the tool's own words
beside iolab's reading of them. A fact the tool did not print is None, never a guess.

Every shape is stored through model.codec and read tolerantly (what it cannot read is None;
a card without its tool, or a drive without its id, is not one), as `model.facts` is;
`Controller.to_json` adds each drive's `differs`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from iolab.model import codec
from iolab.model.codec import spec
from iolab.model.facts import JSONDict


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


@codec.tolerant
@dataclass(frozen=True)
class CachePolicy:
    """A VD's cache policy; a part the tool does not have or did not print is None."""

    write: Write | None
    read: Read | None
    io: Io | None
    # the tool's own words for it, e.g. "RWBD" or "WriteBack, ReadAhead, Direct"
    words: str = field(metadata=spec(missing=""))

    def parts(self) -> tuple[Write | None, Read | None, Io | None]:
        return (self.write, self.read, self.io)

    def summary(self) -> str:
        shown = [said(part) for part in self.parts() if part is not None]
        return ", ".join(shown) or "not read"


@codec.tolerant
@dataclass(frozen=True)
class Battery:
    """The card's battery or CacheVault (supercapacitor and flash)."""

    present: bool | None  # None: the tool did not say
    health: Health = field(metadata=spec(missing=Health.UNKNOWN))
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


UNREPORTED = Battery(present=None, health=Health.UNKNOWN)


@dataclass(frozen=True)
class CacheRatio:
    """Smart Array's split of its cache between reads and writes, in percent."""

    read: int
    write: int

    def summary(self) -> str:
        return f"{self.read}% read / {self.write}% write"


@codec.tolerant
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


@codec.tolerant
@dataclass(frozen=True)
class Controller:
    """One card. `index` is the number its tool addresses it by: storcli's /cN, MegaCli's
    -aN, ssacli's slot=N, arcconf's controller N."""

    tool: str  # "storcli", "perccli", "MegaCli", "ssacli", "arcconf"
    index: int = field(metadata=spec(missing=0))
    model: str | None
    firmware: str | None
    serial: str | None
    cache_bytes: int | None  # the card's cache memory; 0 for a card without one
    battery: Battery = field(metadata=spec(missing=UNREPORTED))
    drives: tuple[VirtualDrive, ...] = ()  # a drive that cannot be read is left out
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
        """Its fields (model.codec), the drives last, each with how its policy `differs`:
        computed from the card, so written by hand."""
        out = codec.to_object(self)
        out.pop("drives")
        out["drives"] = [
            {**codec.to_object(vd), "differs": differs(vd, self)} for vd in self.drives
        ]
        return out


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
