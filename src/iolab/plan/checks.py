"""Checks of single plan values: each returns None, or the words that say what is wrong."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from iolab import names
from iolab.analysis import objective, peak
from iolab.fio import options as fio_options
from iolab.plan.common import Where
from iolab.units import parse_seconds, parse_size

RW_NAMES = (
    "read",
    "write",
    "trim",
    "randread",
    "randwrite",
    "randtrim",
    "rw",
    "readwrite",
    "randrw",
    "trimwrite",
    "randtrimwrite",
)


MAX_NAME = names.MAX_LENGTH  # characters in a set-up or workload name
MAX_JOBS = 4096  # fio's own ceiling on jobs in one run (numjobs included)
MAX_IODEPTH = 32768  # io_uring's ceiling on queue entries; libaio's is lower per host
# Engines that do local block or file I/O on the target iolab names; "auto" picks one.
ENGINES = (
    "auto",
    "libaio",
    "io_uring",
    "psync",
    "sync",
    "pvsync",
    "pvsync2",
    "vsync",
    "posixaio",
    "mmap",
    "splice",
    "null",
)
# fio options a plan may not set (fio.options holds the allow-list, and why each other is
# refused): iolab's own (the file, the logs) and those that reach beyond the target.
REFUSED: dict[str, str] = {**fio_options.OWN, **fio_options.REFUSED}
# A workload's keys that are iolab's, not fio's: its name and its method's settings.
PLAN_KEYS = ("name", *peak.IOLAB_ONLY)
OPTION_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def control_character(value: str) -> str | None:
    """The first control character in a string, spelled for a message; None if it has none."""
    found = _CONTROL.search(value)
    return None if found is None else repr(found.group(0)).strip("'")


def check_clean(key: str, value: object, where: Where, allow_newlines: bool = False) -> None:
    """No control character in any string of a value: job files are line-based."""
    if isinstance(value, Mapping):
        for inner_key, inner in value.items():
            check_clean(key, str(inner_key), where)
            check_clean(key, inner, where)
        return
    if isinstance(value, list):
        for item in value:
            check_clean(key, item, where, allow_newlines)
        return
    if not isinstance(value, str):
        return
    text = value.replace("\n", "").replace("\t", "") if allow_newlines else value
    found = control_character(text)
    if found:
        shown = repr(key) if control_character(key) else key
        raise where.fail(
            key, f"{shown} holds a control character ({found}); use plain printable text"
        )


def check_name(what: str, value: object, where: Where, key: str | None = "name") -> str:
    """A name by the one rule (iolab.names): normalised, or refused at its line."""
    try:
        return names.check(value)
    except names.BadName as error:
        raise where.fail(key, f"{what} {error}") from None


def check_key(key: str, where: Where, quote: bool = True) -> str:
    """A workload key is iolab's own (name, method...) or an fio option classified safe
    (fio.options: an allow-list); returns fio's own name for it (an alias resolved).
    `quote`: an unknown key may be quoted (not so from a file that may not be a plan)."""
    if not OPTION_NAME.match(key):
        raise where.fail(
            None, f"{key!r} is not an fio option name (lowercase letters, digits, '_' and '-')"
        )
    if key in PLAN_KEYS:
        return key
    option = fio_options.classify(key)
    if option is None:
        said = f"unknown key {key!r}" if quote else "an unknown key"
        raise where.fail(
            key,
            f"{said}: neither an iolab key nor an fio option iolab knows"
            f"{fio_options.suggestion(key)}; iolab passes fio only the options "
            f"it has classified ({fio_options.CLASSIFIED}'s); for another, run fio itself and "
            "bring its output in with 'iolab import'",
        )
    if option.kind != "safe":
        shown = key if key in fio_options.classified() else option.name  # include...: include
        raise where.fail(key, f"{shown} is not allowed in a plan: {option.reason}")
    return option.name


def check_value(key: str, value: object, where: Where) -> None:
    check_clean(key, value, where)
    if key == "name":
        check_name("workload name", value, where)
        return
    items = value if isinstance(value, list) else [value]
    for item in items:
        if not isinstance(item, str | int | float | bool):
            raise where.fail(key, f"{key} = {item!r}: fio options take a string, number or boolean")
        check = CHECKS.get(fio_options.canonical(key))
        problem = check(item) if check else fio_options.value_problem(key, item)
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
    if value in ENGINES:
        return None
    return (
        f"is not an ioengine iolab runs; choose one of {', '.join(ENGINES)} "
        "(engines that reach other files, hosts or programs are refused)"
    )


CHECKS: dict[str, Callable[[object], str | None]] = {
    "rw": _one_of(RW_NAMES),
    "bs": _size,
    "size": lambda v: _size(v, allow_auto=True),
    "iodepth": _whole(1, MAX_IODEPTH),
    "numjobs": _whole(1, MAX_JOBS),
    "rwmixread": _whole(0, 100),
    "rwmixwrite": _whole(0, 100),
    "runtime": _duration(0),
    "ramp_time": _duration(0),
    "log_avg_msec": _whole(0),  # 0: no samples
    "direct": _flag,
    "time_based": _flag,
    "group_reporting": _flag,
    "ioengine": _engine,
    "method": _one_of(peak.METHODS),
    "peak_margin": lambda v: None if peak.share(v) else 'must be a share such as "3%"',
    "slo": lambda v: None if objective.slo(v) else f"must be {objective.slo_problem(v)}",
}
