"""Checks of single plan values: each returns None, or the words that say what is wrong."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from iolab.analysis import peak
from iolab.plan.common import Where
from iolab.units import parse_seconds, parse_size

RW_NAMES = (
    "read", "write", "trim", "randread", "randwrite", "randtrim",
    "rw", "readwrite", "randrw", "trimwrite", "randtrimwrite",
)  # fmt: skip


MAX_NAME = 200  # characters in a set-up or workload name
MAX_JOBS = 4096  # fio's own ceiling on jobs in one run (numjobs included)
MAX_IODEPTH = 32768  # io_uring's ceiling on queue entries; libaio's is lower per host
# Engines that do local block or file I/O on the target iolab names; "auto" picks one.
ENGINES = (
    "auto", "libaio", "io_uring", "psync", "sync", "pvsync", "pvsync2", "vsync", "posixaio",
    "mmap", "splice", "null",
)  # fmt: skip
# fio options iolab refuses, with the reason: they name files or devices other than the
# target iolab gives fio, run commands, or change the host beyond the target.
REFUSED: dict[str, str] = {
    **dict.fromkeys(
        ("filename", "directory", "filename_format", "opendir", "unique_filename", "nrfiles"),
        "iolab names the file fio uses (the set-up's target); drop it",
    ),
    **dict.fromkeys(
        ("exec_prerun", "exec_postrun", "program", "arguments"),
        "it runs a command; run commands as a set-up's hooks (with --allow-hooks) instead",
    ),
    **dict.fromkeys(
        (
            "write_iolog", "read_iolog", "iolog", "replay_redirect", "merge_blktrace_file",
            "write_bw_log", "write_lat_log", "write_iops_log", "write_hist_log",
            "verify_state_load",
        ),
        "it names files outside the target; iolab records logs itself (log_avg_msec)",
    ),
    "ioscheduler": "it changes the device's scheduler; use the set-up's queue = { scheduler }",
    "cgroup": "it creates cgroups on this host; run iolab inside the cgroup instead",
    "cgroup_nodelete": "it leaves cgroups behind on this host",
    "trigger": "it runs a command",
    "uid": "it switches fio to another user, which may not reach the target",
    "gid": "it switches fio to another group, which may not reach the target",
}  # fmt: skip
_FILE_VALUED = ("mem", "iomem", "buffer_pattern", "verify_pattern")
_OPTION_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
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


def check_key(key: str, where: Where) -> None:
    """A workload key that is not iolab's must be a plain fio option that stays in the target."""
    if not _OPTION_NAME.match(key):
        raise where.fail(
            None, f"{key!r} is not an fio option name (lowercase letters, digits, '_' and '-')"
        )
    reason = REFUSED.get(key)
    if reason:
        raise where.fail(key, f"{key} is not allowed in a plan: {reason}")


def check_value(key: str, value: object, where: Where) -> None:
    check_clean(key, value, where)
    if key == "name":
        if not isinstance(value, str) or not value:
            raise where.fail(key, f"name must be a non-empty string, not {value!r}")
        if len(value) > MAX_NAME:
            raise where.fail(key, f"name is {len(value):,} characters; keep it to {MAX_NAME}")
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
    if value in ENGINES:
        return None
    return (
        f"is not an ioengine iolab runs; choose one of {', '.join(ENGINES)} "
        "(engines that reach other files, hosts or programs are refused)"
    )


def _no_file(value: object) -> str | None:
    """mem=mmap:FILE and buffer_pattern='FILE' name files: refused."""
    text = str(value)
    if ":" in text or "'" in text:
        return "names a file; iolab lets fio touch only the set-up's target"
    return None


CHECKS: dict[str, Callable[[object], str | None]] = {
    "rw": _one_of(RW_NAMES),
    "readwrite": _one_of(RW_NAMES),
    "bs": _size,
    "blocksize": _size,
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
    **dict.fromkeys(_FILE_VALUED, _no_file),
    "method": _one_of(peak.METHODS),
    "peak_margin": lambda v: None if peak.share(v) else 'must be a share such as "3%"',
}
