"""Sizes and durations as fio reads them, and as people read them (latencies too: in µs or
ms, whichever a set of values reads best in)."""

from __future__ import annotations

import functools
import re
import statistics
from collections.abc import Sequence

# ASCII only: Python's \d (and int(), float()) would read other scripts' digits, fullwidth
# and superscript ones as numbers, and int() and float() underscores ("5_0" as 50) too.
_SIZE = re.compile(r"^\s*([0-9]+)\s*([kmgtp]?)(i?)(b?)\s*$", re.IGNORECASE | re.ASCII)
_POWERS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
_TIME = re.compile(r"^\s*([0-9]+)\s*(us|ms|s|m|h)?\s*$", re.IGNORECASE | re.ASCII)
_WHOLE = re.compile(r"[0-9]+", re.ASCII)
_DECIMAL = re.compile(r"[0-9]*\.?[0-9]+", re.ASCII)
MAX_DIGITS = 100  # more is no number a person means (and int() refuses past 4,300)
NOT_DIGITS = "no sign, '_', exponent, inf or nan"


def whole(text: str) -> int:
    """A whole number as a person types it: "12". ASCII digits only, spaces around allowed;
    no sign, '_' (Python's int() reads "1_0" as 10), other scripts' or fullwidth digits
    (which int() reads too), and no more than MAX_DIGITS of them; the caller bounds it."""
    digits = text.strip(" \t")
    if not _WHOLE.fullmatch(digits):
        raise ValueError(f"{text!r} is not a whole number (ASCII digits only: {NOT_DIGITS})")
    if len(digits) > MAX_DIGITS:
        raise ValueError(f"{text!r} has more than {MAX_DIGITS} digits")
    return int(digits)


def number(text: str) -> float:
    """A number as a person types it: "12", "12.5", ".5". ASCII digits and one '.', spaces
    around allowed: no sign, '_', exponent ("1e-300"), inf or nan, which float() reads."""
    digits = text.strip(" \t")
    if not _DECIMAL.fullmatch(digits) or len(digits) > 2 * MAX_DIGITS:
        raise ValueError(f"{text!r} is not a number (ASCII digits, one '.' at most: {NOT_DIGITS})")
    return float(digits)


_TIME_MS = {"us": 0.001, "ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}


def parse_size(value: object) -> int:
    """Bytes from an fio size: 512, "4k", "1M", "5GiB" (k = 1024, as fio's default kb_base)."""
    if isinstance(value, str):
        return _parse_size_text(value)
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a size")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"{value} is negative")
        return value
    raise ValueError(f"{value!r} is not a size")


@functools.lru_cache(maxsize=1024)
def _parse_size_text(value: str) -> int:
    match = _SIZE.match(value)
    if not match:
        raise ValueError(f"{value!r} is not a size (examples: 512, 4k, 1m, 5g)")
    number, unit = int(match.group(1)), match.group(2).lower()
    return number * int(1024 ** _POWERS[unit])


def parse_seconds(value: object) -> int:
    """Whole seconds from an fio duration: 10, "10s", "2m"; fio reads a bare number as seconds."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a duration")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"{value} is negative")
        return value
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a duration")
    match = _TIME.match(value)
    if not match:
        raise ValueError(f"{value!r} is not a duration (examples: 10, 10s, 2m)")
    ms = int(match.group(1)) * _TIME_MS[(match.group(2) or "s").lower()]
    return int(ms // 1000)


def format_size(n: float) -> str:
    """Binary units, short: 4096 -> '4k', 1048576 -> '1m', 1536 -> '1536'."""
    for unit, power in (("p", 5), ("t", 4), ("g", 3), ("m", 2), ("k", 1)):
        step = 1024**power
        if n >= step and n % step == 0:
            return f"{int(n // step)}{unit}"
    return str(int(n))


def human_bytes(n: float) -> str:
    """Binary units with one decimal: 1536 -> '1.5 KiB'."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"


def decimal_bytes(n: float) -> str:
    """Decimal units with one decimal, as drives are sold: 94678652928000 -> '94.7 TB'."""
    value = float(n)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(value) < 1000 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} TB"


def human_duration(seconds: float) -> str:
    """'1m05s', '42s'."""
    total = max(0, round(seconds))
    minutes, secs = divmod(total, 60)
    hours, minutes = divmod(minutes, 60)
    if hours >= 48:
        return f"{hours // 24}d{hours % 24:02d}h"
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


LatencyUnit = tuple[str, float]
MICROSECONDS: LatencyUnit = ("µs", 1e3)
MILLISECONDS: LatencyUnit = ("ms", 1e6)


def latency_unit(values_ns: Sequence[float]) -> LatencyUnit:
    """One unit for one axis or table: ms when the typical value is 1 ms or more, else µs."""
    finite = [v for v in values_ns if v > 0]
    if finite and statistics.median(finite) >= 1e6:
        return MILLISECONDS
    return MICROSECONDS
