"""Set-ups: an existing path, or devices built into a RAID layout with a filesystem."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from iolab import layouts, names
from iolab.errors import ToolOptionError
from iolab.fio.hosts import HostError, address
from iolab.model import CardPolicy, FsKind, Layout, RaidKind, Setup
from iolab.plan.checks import check_name
from iolab.plan.common import Overrides, Where, known_keys
from iolab.targets import tool_options
from iolab.targets.controllers import apply, card_commands
from iolab.units import parse_size

PATH_KEYS = ("name", "path", "precondition", "cache", "hosts", "host_count", "factors")
PRECONDITIONS = ("none", "sequential", "random", "both")
DEVICE_KEYS = (
    "name",
    "devices",
    "device_count",
    "raid",
    "level",
    "metadata",
    "chunk",
    "md_layout",
    "filesystem",
    "mkfs_options",
    "mount_options",
    "queue",
    "discard",
    "setup_hook",
    "teardown_hook",
    "precondition",
    "cache",
    "degraded",
    "controller",
    "drive_cache",
    "factors",
)
CONTROLLER_KEYS = ("tool", "vd", *card_commands.FIELDS)
# A policy axis's value as it reads in a set-up's name, where the value alone is unclear.
SAID = {
    ("read_ahead", "none"): "no read-ahead",
    ("io_policy", "direct"): "direct I/O",
    ("io_policy", "cached"): "cached I/O",
    ("drive_cache", "on"): "drive cache on",
    ("drive_cache", "off"): "drive cache off",
    ("drive_cache", "default"): "drive cache default",
    **{("cache_ratio", r): f"cache {r}" for r in card_commands.RATIOS},
}


def setups(raw: object, top: Where, over: Overrides) -> tuple[Setup, ...]:
    """Every [[setup]], checked; a device_count list expands one set-up into several."""
    if over.target is not None:
        name = Path(over.target).name or over.target
        named = check_name("--target's last part (the set-up's name)", name, top, key=None)
        return (Setup(name=named, path=over.target),)
    if not isinstance(raw, list) or not raw:
        raise top.fail(
            None, 'the plan has no [[setup]]; add one with a path, e.g. [[setup]] path = "."'
        )
    found: list[Setup] = []
    for index, entry in enumerate(raw):
        where = replace(top, table="setup", index=index)
        if not isinstance(entry, dict):
            raise where.fail(None, "each [[setup]] must be a table")
        conditioned, cache = _precondition(entry, where), _cache(entry, where)
        given = _factors(entry, where)
        for plain in _with_policies(_one(entry, where, index), entry, where):
            setup = replace(
                plain,
                precondition=conditioned,
                cache_bytes=cache,
                factors=_merged(given, plain.factors, where),
            )
            if setup.name in (s.name for s in found):
                raise where.fail("name", f"set-up name {setup.name!r} is used twice")
            found.append(setup)
    return tuple(found)


def _factors(entry: Mapping[str, Any], where: Where) -> tuple[tuple[str, str], ...]:
    """factors = { card = "P420i", level = "raid5" }: what a report pivots by; names and
    values by the rule of names, without the marks that part factors (names.factor)."""
    table = entry.get("factors", {})
    if not isinstance(table, dict):
        raise where.fail("factors", 'factors is a table, e.g. factors = { card = "P420i" }')
    found = []
    for key, value in table.items():
        if not isinstance(value, str | int) or isinstance(value, bool):
            raise where.fail("factors", f"factor {key!r}: give its value as text or a number")
        try:
            found.append((names.factor(key), names.factor(str(value))))
        except names.BadName as error:
            raise where.fail("factors", f"a factor's name or value {error}") from None
    return tuple(found)


def _merged(
    given: tuple[tuple[str, str], ...], swept: tuple[tuple[str, str], ...], where: Where
) -> tuple[tuple[str, str], ...]:
    """The plan's factors, then the axes' (device_count, drive_cache, a card policy); a
    factor the plan names that an axis sets is refused (the axis gives each set-up its own)."""
    twice = {k for k, _ in given} & {k for k, _ in swept}
    if twice:
        raise where.fail(
            "factors",
            f"factor {sorted(twice)[0]!r} is an axis this set-up sweeps; "
            "its set-ups carry it already: leave it out of factors",
        )
    return (*given, *swept)


def _swept(setup: Setup, key: str, value: object) -> Setup:
    """The set-up with the factor an axis gave it ("device_count" = "2")."""
    return replace(setup, factors=(*setup.factors, (key, str(value))))


def _cache(entry: Mapping[str, Any], where: Where) -> int:
    """A cache the target sits behind (a RAID card's, say), as the plan declares it."""
    value = entry.get("cache")
    if value is None:
        return 0
    try:
        size = parse_size(value)
    except ValueError:
        size = 0
    if size <= 0:
        raise where.fail("cache", f'cache = {value!r} is not a size (e.g. cache = "1g")')
    return size


def _precondition(entry: Mapping[str, Any], where: Where) -> str:
    value = entry.get("precondition", "none")
    if value not in PRECONDITIONS:
        raise where.fail(
            "precondition",
            f"precondition = {value!r} is not allowed; choose one of {', '.join(PRECONDITIONS)}",
        )
    return str(value)


def _one(entry: Mapping[str, Any], where: Where, index: int) -> list[Setup]:
    if "devices" not in entry:
        known_keys(entry, PATH_KEYS, where, f"[[setup]] {index + 1}")
        path = entry.get("path")
        if not isinstance(path, str) or not path:
            raise where.fail(
                "path", 'a [[setup]] needs path = "DIRECTORY or FILE", or devices = ["/dev/..."]'
            )
        plain = Setup(_name(entry, where, path), path, host_paths=_host_paths(entry, where))
        return _by_host_count(plain, entry.get("host_count"), where)
    if "path" in entry:
        raise where.fail("path", "a [[setup]] takes path or devices, not both")
    known_keys(entry, DEVICE_KEYS, where, f"[[setup]] {index + 1}")
    devices = _devices(entry.get("devices"), where)
    name = _name(entry, where, " + ".join(Path(d).name for d in devices))
    counts = entry.get("device_count")
    if counts is None:
        return [Setup(name=name, layout=_layout(entry, devices, where))]
    if not isinstance(counts, list):
        counts = [counts]
    out = []
    for count in counts:
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= len(devices):
            raise where.fail(
                "device_count", f"device_count {count!r} must be between 1 and {len(devices)}"
            )
        swept = Setup(f"{name} x{count}", layout=_layout(entry, devices[:count], where))
        out.append(_swept(swept, "device_count", count))
    return out


def _by_host_count(setup: Setup, counts: object, where: Where) -> list[Setup]:
    """host_count = [1, 2, 4]: the set-up on the first 1, 2 and 4 hosts, one set-up each."""
    if counts is None:
        return [setup]
    listed = counts if isinstance(counts, list) else [counts]
    if not listed or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in listed
    ):
        raise where.fail("host_count", "host_count is a number of hosts, or a list of them")
    return [
        _swept(
            replace(setup, name=f"{setup.name} on {n} host{'s' if n > 1 else ''}", host_count=n),
            "host_count",
            n,
        )
        for n in dict.fromkeys(listed)
    ]


def _host_paths(entry: Mapping[str, Any], where: Where) -> tuple[tuple[str, str], ...]:
    """[setup.hosts]: the set-up's directory on hosts where it is not `path`."""
    table = entry.get("hosts", {})
    if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
        raise where.fail("hosts", 'hosts is a table of host = "/DIR", e.g. "10.0.0.3" = "/data"')
    found = []
    for host, path in table.items():
        try:
            found.append((address(host), path))
        except HostError as error:
            raise where.fail("hosts", str(error)) from None
    return tuple(found)


def _name(entry: Mapping[str, Any], where: Where, default: str) -> str:
    return check_name("set-up name", entry.get("name", default), where)


def _devices(value: object, where: Where) -> tuple[str, ...]:
    items = value if isinstance(value, list) else [value]
    if not items or not all(isinstance(d, str) and d.startswith("/dev/") for d in items):
        raise where.fail("devices", 'devices must list block devices, e.g. ["/dev/nvme0n1"]')
    if len(set(items)) != len(items):
        raise where.fail("devices", "devices lists a device twice")
    return tuple(items)


def _choice(entry: Mapping[str, Any], key: str, choices: tuple[str, ...], where: Where) -> str:
    value = entry.get(key, choices[0])
    if value not in choices:
        raise where.fail(
            key, f"{key} = {value!r} is not allowed; choose one of {', '.join(choices)}"
        )
    return str(value)


def _text(entry: Mapping[str, Any], key: str, where: Where) -> str | None:
    value = entry.get(key)
    if value is not None and not isinstance(value, str | int):
        raise where.fail(key, f"{key} must be a string, not {value!r}")
    return None if value is None else str(value)


def _layout(entry: Mapping[str, Any], devices: tuple[str, ...], where: Where) -> Layout:
    """The layout a [[setup]] asks for, over these devices, checked by `layouts.settle`."""
    raid: RaidKind = _choice(entry, "raid", layouts.RAID_KINDS, where)  # type: ignore[assignment]
    default_fs = "btrfs" if raid == "btrfs" else "none"
    fs_choices = (default_fs, *(f for f in layouts.FILESYSTEMS if f != default_fs))
    filesystem: FsKind = _choice(entry, "filesystem", fs_choices, where)  # type: ignore[assignment]
    queue = entry.get("queue", {})
    if not isinstance(queue, dict):
        raise where.fail("queue", 'queue must be a table, e.g. queue = { scheduler = "none" }')
    known_keys(queue, layouts.QUEUE_KEYS, where, "queue")
    discard = entry.get("discard", False)
    if not isinstance(discard, bool):
        raise where.fail("discard", "discard must be true or false")
    degraded = entry.get("degraded", 0)
    if not isinstance(degraded, int) or isinstance(degraded, bool) or degraded < 0:
        raise where.fail(
            "degraded", f"degraded = {degraded!r} must be a count of devices: 0, 1, ..."
        )
    raid_kind = layouts.RAIDS.get(raid)
    level = entry.get("level", raid_kind.default if raid_kind else None)
    asked = Layout(
        devices=devices,
        raid=raid,
        level=None if level is None else str(level),
        metadata=_text(entry, "metadata", where),
        chunk=_text(entry, "chunk", where),
        md_layout=_text(entry, "md_layout", where),
        filesystem=filesystem,
        mkfs_options=_text(entry, "mkfs_options", where) or "",
        mount_options=_text(entry, "mount_options", where) or "",
        queue={key: str(value) for key, value in queue.items()},
        discard=discard,
        setup_hook=_text(entry, "setup_hook", where),
        teardown_hook=_text(entry, "teardown_hook", where),
        degraded=degraded,
    )
    try:
        settled = layouts.settle(asked, side_by_side=False)
        tool_options.check_tool_options(settled)
    except layouts.LayoutError as error:
        raise where.fail(error.key, str(error)) from None
    except ToolOptionError as error:
        raise where.fail(error.key, str(error)) from None
    return settled


def _axis(value: object, key: str, where: Where) -> list[str]:
    """A policy value, or a list of them (a sweep axis), as a list of strings without repeats."""
    items = value if isinstance(value, list) else [value]
    if not items or not all(isinstance(v, str) for v in items):
        raise where.fail(key, f'{key} is a word or a list of words, e.g. {key} = ["a", "b"]')
    return list(dict.fromkeys(str(v) for v in items))


def _renamed(setup: Setup, value: str, count: int, factor: tuple[str, str]) -> Setup:
    """A set-up of a policy axis is named after its value: "NAME write-back"; with several
    values, the axis is its factor (key, value)."""
    if count <= 1:
        return setup
    return _swept(replace(setup, name=f"{setup.name} {value}"), *factor)


def _with_policies(plain: list[Setup], entry: Mapping[str, Any], where: Where) -> list[Setup]:
    """drive_cache and controller = {...}: a list in a policy part is a sweep axis, one set-up
    per value (several axes: their product, named "NAME write-back none")."""
    out = plain
    if "drive_cache" in entry:
        values = _axis(entry["drive_cache"], "drive_cache", where)
        for value in values:
            if value not in apply.DISK_CACHE:
                raise where.fail(
                    "drive_cache",
                    f"drive_cache = {value!r} is not allowed; choose "
                    f"one of {', '.join(apply.DISK_CACHE)}",
                )
        out = [
            _renamed(replace(s, drive_cache=v), v, len(values), ("drive_cache", v))
            for s in out
            for v in values
        ]
    table = entry.get("controller")
    if table is None:
        return out
    if not isinstance(table, dict):
        raise where.fail(
            "controller",
            "controller is a table, e.g. controller = { tool = "
            '"storcli", vd = "/c0/v0", write_cache = "write-back" }',
        )
    known_keys(table, CONTROLLER_KEYS, where, "controller")
    tool, vd = table.get("tool"), table.get("vd")
    found = card_commands.problem(tool, vd, {})
    if found:
        raise where.fail("controller", f"controller {found[1]}")
    out = [replace(s, controller=CardPolicy(str(tool), str(vd))) for s in out]
    for key in card_commands.FIELDS:
        if key not in table:
            continue
        values = _axis(table[key], f"controller {key}", where)
        for value in values:
            found = card_commands.problem(tool, vd, {key: value})
            if found:
                raise where.fail("controller", f"controller {found[1]}")
        out = [
            _renamed(
                replace(s, controller=replace(s.controller, **{key: v})),
                SAID.get((key, v), v),
                len(values),
                (key, v),
            )
            for s in out
            if s.controller is not None
            for v in values
        ]
    return out
