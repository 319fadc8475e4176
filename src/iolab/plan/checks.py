"""Checks of single plan values: each returns None, or the words that say what is wrong."""

from __future__ import annotations

from collections.abc import Callable

from iolab.plan.common import Where
from iolab.units import parse_seconds, parse_size

RW_NAMES = (
    "read", "write", "trim", "randread", "randwrite", "randtrim",
    "rw", "readwrite", "randrw", "trimwrite", "randtrimwrite",
)  # fmt: skip


def check_value(key: str, value: object, where: Where) -> None:
    if key == "name":
        if not isinstance(value, str) or not value:
            raise where.fail(key, f"name must be a non-empty string, not {value!r}")
        return
    items = value if isinstance(value, list) else [value]
    for item in items:
        if not isinstance(item, str | int | float | bool):
            raise where.fail(key, f"{key} = {item!r}: fio options take a string, number or boolean")
        check = CHECKS.get(key)
        if check is None:
            continue
        problem = check(item)
        if problem:
            raise where.fail(key, f"{key} = {item!r} {problem}")


def _one_of(choices: tuple[str, ...]) -> Callable[[object], str | None]:
    def check(value: object) -> str | None:
        if value in choices:
            return None
        return f"is not allowed; choose one of {', '.join(choices)}"

    return check


def _whole(low: int, high: int | None = None) -> Callable[[object], str | None]:
    def check(value: object) -> str | None:
        whole = isinstance(value, int) and not isinstance(value, bool)
        if whole and low <= value and (high is None or value <= high):  # type: ignore[operator]
            return None
        top = f" and at most {high}" if high is not None else ""
        return f"must be a whole number of at least {low}{top}"

    return check


def _flag(value: object) -> str | None:
    return None if value in (0, 1, True, False) else "must be 0 or 1 (or true/false)"


def _size(value: object, allow_auto: bool = False) -> str | None:
    if allow_auto and value == "auto":
        return None
    try:
        if parse_size(value) > 0:
            return None
    except (ValueError, TypeError):
        return "is not a size (examples: 512, 4k, 1m, 5g)"
    return "must be larger than 0"


def _duration(minimum: int) -> Callable[[object], str | None]:
    def check(value: object) -> str | None:
        try:
            seconds = parse_seconds(value)
        except (ValueError, TypeError):
            return "is not a duration in seconds (examples: 10, 30s, 2m)"
        return None if seconds >= minimum else f"must be at least {minimum} s"

    return check


def _engine(value: object) -> str | None:
    return None if isinstance(value, str) and value else "must name an fio ioengine, or auto"


CHECKS: dict[str, Callable[[object], str | None]] = {
    "rw": _one_of(RW_NAMES),
    "readwrite": _one_of(RW_NAMES),
    "bs": _size,
    "blocksize": _size,
    "size": lambda v: _size(v, allow_auto=True),
    "iodepth": _whole(1),
    "numjobs": _whole(1),
    "rwmixread": _whole(0, 100),
    "rwmixwrite": _whole(0, 100),
    "runtime": _duration(0),
    "ramp_time": _duration(0),
    "log_avg_msec": _whole(1),
    "direct": _flag,
    "time_based": _flag,
    "group_reporting": _flag,
    "ioengine": _engine,
}
