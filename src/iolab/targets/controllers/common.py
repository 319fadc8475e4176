"""What the tools' parsers share: sizes, battery words, "key: value" lines, typed errors.

The tools print sizes in binary units whatever they call them: MegaRAID's "1.745 TB" for a
RAID6 of four 893.750 GB drives is 2 x 893.750 / 1024, Smart Array's "2.0 GB" cache is 2 GiB.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from iolab.errors import ControllerError
from iolab.targets.controllers.model import DriveCache, Health

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGTP]?)i?B?\s*$", re.IGNORECASE | re.ASCII)
MAX_SIZE = float(2**63)  # bytes: what SQLite's integers hold
_POWERS = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5}
_PAIR = re.compile(r"^\s*([^:]*?)\s*:\s*(.*?)\s*$")
# A battery's state in the tools' words, by the first pattern found (case ignored).
_HEALTH = (
    (r"learn", Health.LEARNING),
    (r"charg", Health.CHARGING),
    (r"fail|replace|broken|missing", Health.FAILED),
    (r"degrad|dgd|attention|\blow\b", Health.DEGRADED),
    (r"optimal|\bok\b|\bgood\b|\bready\b", Health.OPTIMAL),
)
_DRIVE_CACHE = {
    "disk's default": DriveCache.DEFAULT,
    "default": DriveCache.DEFAULT,
    "dflt": DriveCache.DEFAULT,
    "unchanged": DriveCache.DEFAULT,
    "enabled": DriveCache.ON,
    "enable": DriveCache.ON,
    "enbl": DriveCache.ON,
    "on": DriveCache.ON,
    "disabled": DriveCache.OFF,
    "disable": DriveCache.OFF,
    "dsbl": DriveCache.OFF,
    "off": DriveCache.OFF,
}


def fail(tool: str, what: str) -> ControllerError:
    """The one error a parser raises: the tool, then what could not be read."""
    return ControllerError(f"{tool}: {what}")


def nonempty(text: str, tool: str, command: str) -> str:
    if not text.strip():
        raise fail(tool, f"`{command}` printed nothing")
    return text


def size_bytes(text: str | None, bare: str = "") -> int | None:
    """ "3.491 TB", "2048MB", "915446 MB" as bytes (binary units); a bare number is in
    `bare` units ("G" for Smart Array's cache size); None when it is not a size."""
    found = _SIZE.match(text or "")
    if found is None or (not found.group(2) and not bare and "b" not in (text or "").lower()):
        return None
    power = _POWERS[(found.group(2) or bare).upper()]
    size = float(found.group(1)) * float(1024**power)
    return round(size) if size < MAX_SIZE else None  # past 8 EiB (or infinite): no size


def health(words: str | None) -> Health:
    text = words or ""
    found = (state for part, state in _HEALTH if re.search(part, text, re.IGNORECASE))
    return next(found, Health.UNKNOWN)


def drive_cache(words: str | None) -> DriveCache | None:
    return _DRIVE_CACHE.get((words or "").strip().lower())


def pair(line: str) -> tuple[str, str] | None:
    """ "Key   : value" as (key, value); None for a line that is not one."""
    found = _PAIR.match(line)
    return (found.group(1), found.group(2) or "") if found and found.group(1) else None


def lines(text: str) -> Iterator[str]:
    return (line.rstrip() for line in text.splitlines())


def raid_level(words: str | None) -> str | None:
    """ "10", "1+0", "RAID 6 (ADG)" as "RAID10", "RAID10", "RAID6"."""
    if not words:
        return None
    plain = re.sub(r"\(?ADG\)?", "6" if "6" not in words else "", words, flags=re.IGNORECASE)
    plain = re.sub(r"(?i)raid|[\s+()]", "", plain)
    return f"RAID{plain}" if re.fullmatch(r"\d{1,3}", plain) else words.strip()
