"""A drive's own account of itself, as smartctl reads it (targets.drive_health): identity,
temperature, lifetime writes, wear, spare, error counters and time spent hot; and what
changed between two readings (a set-up's cases, or one case).

Every figure carries its unit in its name (bytes, celsius, minutes, hours, percent). A figure
the drive does not report is None, never 0: NVMe reports one standard log, ATA drives name
their attributes as their vendor chose, and a hard disk has no wear.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from iolab.model import codec
from iolab.model.codec import spec

_SET = spec(omit="none")  # left out of the JSON when the drive does not report it


@codec.tolerant
@dataclass(frozen=True)
class DriveHealth:
    """One drive's account at one moment."""

    protocol: str = field(default="", metadata=spec(missing=""))  # NVMe, ATA, SCSI
    model: str | None = field(default=None, metadata=_SET)
    firmware: str | None = field(default=None, metadata=_SET)
    capacity_bytes: int | None = field(default=None, metadata=_SET)
    smart_passed: bool | None = field(default=None, metadata=_SET)  # the overall status
    temperature_c: int | None = field(default=None, metadata=_SET)
    sensors_c: tuple[int, ...] = field(default=(), metadata=spec(omit="empty"))  # NVMe's
    warning_temp_c: int | None = field(default=None, metadata=_SET)  # where reported
    critical_temp_c: int | None = field(default=None, metadata=_SET)
    host_written_bytes: int | None = field(default=None, metadata=_SET)  # in its life
    host_read_bytes: int | None = field(default=None, metadata=_SET)
    nand_written_bytes: int | None = field(default=None, metadata=_SET)  # flash writes
    percentage_used: int | None = field(default=None, metadata=_SET)  # of rated endurance
    available_spare_pct: int | None = field(default=None, metadata=_SET)
    spare_threshold_pct: int | None = field(default=None, metadata=_SET)
    media_errors: int | None = field(default=None, metadata=_SET)  # uncorrectable
    crc_errors: int | None = field(default=None, metadata=_SET)  # on the link (ATA)
    reallocated: int | None = field(default=None, metadata=_SET)  # sectors (ATA)
    pending: int | None = field(default=None, metadata=_SET)  # sectors awaiting it (ATA)
    unsafe_shutdowns: int | None = field(default=None, metadata=_SET)
    power_on_hours: int | None = field(default=None, metadata=_SET)
    warning_temp_minutes: int | None = field(default=None, metadata=_SET)  # above warning
    critical_temp_minutes: int | None = field(default=None, metadata=_SET)  # above critical
    throttle_events: int | None = field(default=None, metadata=_SET)  # thermal throttling
    throttle_s: int | None = field(default=None, metadata=_SET)  # time throttled (NVMe)
    throttling: bool | None = field(default=None, metadata=_SET)  # throttled now (ATA)

    @property
    def worn(self) -> str:
        """Why the drive is worn out ('' when it is not, or does not say)."""
        spare, least = self.available_spare_pct, self.spare_threshold_pct
        if spare is not None and least is not None and spare < least:
            return f"its spare ({spare}%) is below its threshold ({least}%)"
        if self.percentage_used is not None and self.percentage_used >= 100:
            return f"it has used {self.percentage_used}% of its rated endurance"
        return ""

    @property
    def errors(self) -> dict[str, int]:
        """The error counters the drive reports, by name."""
        counted = {
            "media errors": self.media_errors,
            "CRC errors": self.crc_errors,
            "reallocated sectors": self.reallocated,
            "pending sectors": self.pending,
        }
        return {name: value for name, value in counted.items() if value is not None}


@codec.tolerant
@dataclass(frozen=True)
class CacheSetting:
    """A plain disk's own write cache as a set-up set it (its `drive_cache`): the switch
    (sysfs' cache_type file, or the NVMe controller's feature 06h through nvme-cli), what it
    read before, what the plan asked, and what it read back once set, in sysfs' words."""

    device: str = field(default="", metadata=spec(missing=""))
    switch: str = field(default="", metadata=spec(missing=""))  # "nvme /dev/nvme0n1", ...
    before: str = field(default="", metadata=spec(missing=""))  # "write back"
    asked: str = field(default="", metadata=spec(missing=""))  # the plan's: "write-through"
    read_back: str = field(default="", metadata=spec(missing=""))  # "write through"


@codec.tolerant
@dataclass(frozen=True)
class DriveReading:
    """Every whole disk of a set-up read at one moment (a Unix time); problems are the tools'
    one-line failures (a smartctl that hung or printed what cannot be read)."""

    at: float = field(default=0.0, metadata=spec(missing=0.0))
    drives: Mapping[str, DriveHealth] = field(default_factory=dict, metadata=spec(missing={}))
    problems: tuple[str, ...] = field(default=(), metadata=spec(omit="empty"))


@codec.tolerant
@dataclass(frozen=True)
class DriveChange:
    """What one drive's account moved by between two readings; None where either lacks it."""

    written_bytes: int | None = field(default=None, metadata=_SET)  # host writes added
    nand_written_bytes: int | None = field(default=None, metadata=_SET)
    temperature_rise_c: int | None = field(default=None, metadata=_SET)
    highest_c: int | None = field(default=None, metadata=_SET)  # the higher of the two
    warning_temp_minutes: int | None = field(default=None, metadata=_SET)  # added
    critical_temp_minutes: int | None = field(default=None, metadata=_SET)
    throttle_events: int | None = field(default=None, metadata=_SET)
    throttle_s: int | None = field(default=None, metadata=_SET)
    throttling: bool = field(default=False, metadata=spec(missing=False))  # at the end
    errors: Mapping[str, int] = field(default_factory=dict, metadata=spec(missing={}))

    @property
    def hot(self) -> bool:
        """It spent time above its warning temperature, or throttled, in between."""
        added = (self.warning_temp_minutes, self.critical_temp_minutes)
        throttled = (self.throttle_events, self.throttle_s)
        return any(v for v in added + throttled) or self.throttling

    @property
    def write_amplification(self) -> float | None:
        """The flash's writes over the host's, where both are known and the host wrote."""
        if self.nand_written_bytes is None or not self.written_bytes:
            return None
        return self.nand_written_bytes / self.written_bytes


def _grew(before: int | None, after: int | None) -> int | None:
    return after - before if before is not None and after is not None else None


def change(before: DriveHealth, after: DriveHealth) -> DriveChange:
    """What moved between two readings of one drive."""
    temps = [t for t in (before.temperature_c, after.temperature_c) if t is not None]
    errors = {
        name: grown
        for name, value in after.errors.items()
        if (grown := value - before.errors.get(name, value)) > 0
    }
    return DriveChange(
        written_bytes=_grew(before.host_written_bytes, after.host_written_bytes),
        nand_written_bytes=_grew(before.nand_written_bytes, after.nand_written_bytes),
        temperature_rise_c=_grew(before.temperature_c, after.temperature_c),
        highest_c=max(temps) if temps else None,
        warning_temp_minutes=_grew(before.warning_temp_minutes, after.warning_temp_minutes),
        critical_temp_minutes=_grew(before.critical_temp_minutes, after.critical_temp_minutes),
        throttle_events=_grew(before.throttle_events, after.throttle_events),
        throttle_s=_grew(before.throttle_s, after.throttle_s),
        throttling=bool(after.throttling),
        errors=errors,
    )


def changes(before: DriveReading, after: DriveReading) -> dict[str, DriveChange]:
    """Each drive read both times: what moved."""
    return {
        name: change(before.drives[name], health)
        for name, health in after.drives.items()
        if name in before.drives
    }


@codec.tolerant
@dataclass(frozen=True)
class DriveLog:
    """A set-up's drives read after it was built (before its preconditioning and cases) and
    after each case since: `after` is the latest. `interval` says when they were read."""

    before: DriveReading | None = field(default=None, metadata=_SET)
    after: DriveReading | None = field(default=None, metadata=_SET)
    interval: str = field(default="", metadata=spec(missing=""))

    def changes(self) -> dict[str, DriveChange]:
        """What moved over the set-up's preconditioning and cases."""
        if self.before is None or self.after is None:
            return {}
        return changes(self.before, self.after)
