"""fio's options that make it wait, read as fio reads them, and the bounds iolab holds them
to: a plan may not make fio run, ramp, wait to start or pause for longer than a storage test
ever needs, and every wait for fio ends at the case's longest planned time and a margin.

fio reads a duration as a whole number and a unit (us, usec, ms, msec, s, m, h, d; upper or
lower case); without one, runtime and its kin are seconds and thinktime is microseconds.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import NamedTuple

US = 1
SECOND = 1_000_000 * US
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
DAY = 24 * HOUR
UNITS = {
    "us": US,
    "usec": US,
    "ms": 1000,
    "msec": 1000,
    "s": SECOND,
    "m": MINUTE,
    "h": HOUR,
    "d": DAY,
}
_DURATION = re.compile(r"\s*([0-9]{1,30})\s*([a-z]*)\s*", re.ASCII | re.IGNORECASE)
MARGIN_S = 600.0  # beyond a case's longest planned time before fio is stopped
MARGIN_ENV = "IOLAB_CASE_MARGIN_S"


class Bound(NamedTuple):
    unit: int  # fio's unit for a bare number, in µs
    most: int  # the bound, in µs
    said: str  # the bound in words


WEEK = Bound(SECOND, 7 * DAY, "7 days")
ONE_DAY = Bound(SECOND, DAY, "1 day")
PAUSE = Bound(US, HOUR, "1 hour")
# The options that make fio run or wait, by fio's own names (aliases are resolved before).
BOUNDS: dict[str, Bound] = {
    "runtime": WEEK,  # a week of measuring: longer than any endurance run we know of
    "ramp_time": ONE_DAY,
    "startdelay": ONE_DAY,  # also a range, "1-10": both ends
    "steadystate_duration": WEEK,
    "steadystate_ramp_time": ONE_DAY,
    "thinktime_iotime": WEEK,
    "thinktime": PAUSE,  # a pause between I/Os
    "thinktime_spin": PAUSE,
}
RANGES = ("startdelay",)


def microseconds(key: str, value: object) -> int:
    """A duration option's value in µs, as fio reads it; ValueError when fio would read it
    otherwise than as a duration (iolab then cannot bound it)."""
    unit = BOUNDS[key].unit
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError("is not a duration")
    if isinstance(value, int):
        if value < 0:
            raise ValueError("is negative")
        return value * unit
    found = _DURATION.fullmatch(value)
    if found is None or found.group(2).lower() not in ("", *UNITS):
        raise ValueError("is not a duration (a whole number, then us, ms, s, m, h or d)")
    return int(found.group(1)) * UNITS.get(found.group(2).lower(), unit)


def longest(key: str, value: object) -> int:
    """The longest time, in µs, a duration option's value (or range) stands for."""
    if key in RANGES and isinstance(value, str) and "-" in value:
        low, high = value.split("-", 1)
        return max(microseconds(key, low), microseconds(key, high))
    return microseconds(key, value)


def problem(key: str, value: object) -> str | None:
    """Words after "KEY = VALUE" when the value is beyond its bound (or unreadable); None
    for an option that is not a duration, or a value within its bound."""
    bound = BOUNDS.get(key)
    if bound is None:
        return None
    try:
        found = longest(key, value)
    except ValueError as error:
        return str(error)
    if found <= bound.most:
        return None
    if bound is PAUSE:
        return f"is a longer pause between I/Os than iolab lets fio make ({bound.said} at most)"
    return (
        f"is longer than iolab lets fio run or wait ({key} at most {bound.said}); measure "
        "longer as several runs"
    )


def deadline_s(options: Mapping[str, object], margin_s: float) -> float:
    """How long fio may take for a job with these options before it is stopped: the start
    delay, ramp, runtime (a week when none bounds it) and one longest pause, plus the margin."""

    def seconds(key: str, default: object = 0) -> float:
        try:
            return longest(key, options.get(key, default)) / SECOND
        except ValueError:
            return BOUNDS[key].most / SECOND

    runtime = seconds("runtime") or WEEK.most / SECOND
    waits = seconds("startdelay") + seconds("ramp_time")
    pause = seconds("thinktime") + seconds("thinktime_spin")
    return waits + runtime + pause + margin_s


def margin_s() -> float:
    """The margin past a case's planned time (IOLAB_CASE_MARGIN_S changes it; tests set a
    short one)."""
    try:
        given = float(os.environ.get(MARGIN_ENV, MARGIN_S))
    except ValueError:
        return MARGIN_S
    return given if 0 < given <= MARGIN_S else MARGIN_S
