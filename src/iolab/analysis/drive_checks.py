"""What the drives said of a case: read before and after it (runner), the warnings their
change carries onto it. drive-hot: a drive spent time above its warning (or critical)
temperature, or throttled, during the case; drive-errors: a media, CRC, reallocation or
pending counter moved; drive-worn: a drive's spare is below its threshold or it has used
its rated endurance. A drive that does not report a figure is not judged on it."""

from __future__ import annotations

from collections.abc import Mapping

from iolab.model import CheckWarning, Code
from iolab.model.drive import DriveChange, DriveReading


def hot(changes: Mapping[str, DriveChange], mixed: bool = False) -> CheckWarning | None:
    """drive-hot: how long above the warning temperature, the highest seen, throttling."""
    heated = {name: c for name, c in changes.items() if c.hot}
    if not heated:
        return None
    said = "; ".join(f"{name}: {_heat(c)}" for name, c in heated.items())
    joined = (
        " The lasting change of speed this case shows (mixed-speeds) coincides with it."
        if mixed
        else ""
    )
    return CheckWarning(
        Code.DRIVE_HOT,
        f"the drive ran hot during the case ({said}): a drive past its warning temperature "
        f"throttles, and the figure shows its cooling, not the set-up.{joined}",
        "Cool the drive (airflow, a heatsink) or pause between cases, then run again.",
    )


def _heat(change: DriveChange) -> str:
    parts = []
    if change.warning_temp_minutes:
        parts.append(f"{change.warning_temp_minutes} min above its warning temperature")
    if change.critical_temp_minutes:
        parts.append(f"{change.critical_temp_minutes} min above its critical temperature")
    if change.throttle_events or change.throttle_s or change.throttling:
        parts.append("throttled")
    if change.highest_c is not None:
        parts.append(f"highest {change.highest_c} °C read")
    return ", ".join(parts)


def errors(changes: Mapping[str, DriveChange]) -> CheckWarning | None:
    """drive-errors: an error counter moved during the case."""
    moving = {name: c for name, c in changes.items() if c.errors}
    if not moving:
        return None
    said = "; ".join(
        f"{name}: " + ", ".join(f"{kind} +{n}" for kind, n in c.errors.items())
        for name, c in moving.items()
    )
    return CheckWarning(
        Code.DRIVE_ERRORS,
        f"a drive's error counters moved during the case ({said}): retries and remapping "
        "slow a drive, and the figure may show a failing drive.",
        "Check the drive (smartctl -a), its cable or slot; replace it before measuring again.",
    )


def worn(after: DriveReading) -> CheckWarning | None:
    """drive-worn: spare below its threshold, or rated endurance used up."""
    tired = {name: h.worn for name, h in after.drives.items() if h.worn}
    if not tired:
        return None
    said = "; ".join(f"{name}: {why}" for name, why in tired.items())
    return CheckWarning(
        Code.DRIVE_WORN,
        f"a drive is worn out ({said}): a drive past its endurance or spare writes slower "
        "and may turn read-only.",
        "Measure on a drive within its endurance, or say the figures are a worn drive's.",
    )


def warnings(
    before: DriveReading, after: DriveReading, changes: Mapping[str, DriveChange], mixed: bool
) -> tuple[CheckWarning, ...]:
    """The drives' warnings on a case read `before` and `after` it."""
    found = (hot(changes, mixed), errors(changes), worn(after))
    return tuple(w for w in found if w is not None)


def written_share(reading: DriveReading | None) -> float | None:
    """The least any drive has written in its life, as a share of its capacity."""
    shares = [
        h.host_written_bytes / h.capacity_bytes
        for h in (reading.drives.values() if reading else ())
        if h.host_written_bytes is not None and h.capacity_bytes
    ]
    return min(shares) if shares else None
