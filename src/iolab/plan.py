"""Plan files: TOML loading, validation with file:line errors, presets, matrix expansion.

Nothing here runs fio or touches a target; `fio.check_jobs` backs up the pass-through options.
"""

from __future__ import annotations

import itertools
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

from iolab.errors import PlanError
from iolab.model import FioValue, Plan, Setup, Workload
from iolab.units import format_size, parse_seconds, parse_size

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
MIXED_RW = ("rw", "readwrite", "randrw")
SYNC_ENGINES = ("sync", "psync", "vsync", "pvsync", "pvsync2", "mmap")
METRICS = ("auto", "iops", "bw")

# Defaults suited to SSD testing; a plan's [defaults] and each workload override them.
BUILTIN_DEFAULTS: dict[str, FioValue] = {
    "rw": "randread",
    "bs": "4k",
    "iodepth": 1,
    "numjobs": 1,
    "size": "auto",
    "runtime": 10,
    "time_based": 1,
    "direct": 1,
    "ioengine": "auto",
    "group_reporting": 1,
}

TOP_KEYS = ("name", "description", "origin", "repeat", "defaults", "setup", "workload", "report")
SETUP_KEYS = ("name", "path")
REPORT_KEYS = ("baseline", "metric")


@dataclass(frozen=True)
class Overrides:
    """Command-line overrides that let any preset be tried small."""

    target: str | None = None
    size: str | None = None
    runtime: str | int | None = None
    repeat: int | None = None


@dataclass(frozen=True)
class Where:
    """Where a value sits in the plan text, for file:line messages."""

    source: str
    text: str
    table: str | None = None
    index: int = 0

    def fail(self, key: str | None, message: str) -> PlanError:
        line = _line_of(self.text, self.table, self.index, key)
        place = f"{self.source}:{line}" if line else self.source
        return PlanError(f"{place}: {message}")


def _line_of(text: str, table: str | None, index: int, key: str | None) -> int | None:
    """The line of `key` inside the index-th [table] / [[table]] (top level when table is None)."""
    current: str | None = None
    seen = -1
    header = re.compile(r"^\s*\[\[?\s*([^\]\s]+)\s*\]\]?")
    for number, line in enumerate(text.splitlines(), start=1):
        found = header.match(line)
        if found:
            current = found.group(1)
            if table is None and key == current:
                return number
            if current == table:
                seen += 1
                if key is None and seen == index:
                    return number
            continue
        in_place = current == table and (table is None or seen == index)
        if in_place and key and re.match(rf"^\s*{re.escape(key)}\s*=", line):
            return number
    return None


# ---------------------------------------------------------------- presets


def preset_names() -> list[str]:
    files = resources.files("iolab.presets").iterdir()
    return sorted(p.name.removesuffix(".toml") for p in files if p.name.endswith(".toml"))


def preset_text(name: str) -> str:
    if name not in preset_names():
        raise PlanError(
            f"no preset named {name!r}: choose one of {', '.join(preset_names())} "
            "(iolab presets lists them)"
        )
    return resources.files("iolab.presets").joinpath(f"{name}.toml").read_text()


# ---------------------------------------------------------------- loading


def load_file(path: str | Path, overrides: Overrides | None = None) -> Plan:
    file = Path(path)
    try:
        text = file.read_text()
    except FileNotFoundError:
        raise PlanError(f"{file}: no such plan file; give a path to a TOML plan") from None
    except (OSError, UnicodeDecodeError) as error:
        raise PlanError(f"{file}: cannot read the plan ({error})") from None
    return parse_plan(text, str(file), overrides)


def load_preset(name: str, overrides: Overrides | None = None) -> Plan:
    return parse_plan(preset_text(name), f"preset:{name}", overrides)


def parse_plan(text: str, source: str, overrides: Overrides | None = None) -> Plan:
    """Validate a whole plan text and expand its workloads; raises PlanError on the first fault."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise PlanError(f"{source}: not valid TOML: {error}") from None
    top = Where(source, text)
    _known_keys(data, TOP_KEYS, top, "the plan")
    over = overrides or Overrides()
    for key, value in (("size", over.size), ("runtime", over.runtime)):
        if value is not None:
            _check_value(key, value, Where(f"--{key}", ""))
    setups = _setups(data.get("setup", []), top, over)
    defaults = _table(data.get("defaults", {}), top, "defaults")
    defaults_where = replace(top, table="defaults")
    workloads = _workloads(data.get("workload", []), defaults, top, defaults_where, over)
    report = _table(data.get("report", {}), top, "report")
    _known_keys(report, REPORT_KEYS, replace(top, table="report"), "[report]")
    repeat = over.repeat if over.repeat is not None else data.get("repeat", 1)
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise top.fail("repeat", f"repeat = {repeat!r} must be a whole number of at least 1")
    plan = Plan(
        name=_text(data, "name", top, Path(source).stem.removeprefix("preset:")),
        description=_text(data, "description", top, ""),
        origin=_text(data, "origin", top, ""),
        source=source,
        text=text,
        setups=setups,
        workloads=workloads,
        repeat=repeat,
        baseline=report.get("baseline"),
        metric=report.get("metric", "auto"),
    )
    _check_report(plan, replace(top, table="report"))
    return plan


def _text(data: Mapping[str, Any], key: str, where: Where, default: str) -> str:
    value = data.get(key, default)
    if not isinstance(value, str):
        raise where.fail(key, f"{key} must be a string, not {value!r}")
    return value


def _table(value: object, where: Where, name: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise where.fail(name, f"{name} must be a table ([{name}]), not {value!r}")
    return value


def _known_keys(data: Mapping[str, Any], allowed: tuple[str, ...], where: Where, what: str) -> None:
    for key in data:
        if key not in allowed:
            raise where.fail(
                key, f"unknown key {key!r} in {what}; allowed keys: {', '.join(allowed)}"
            )


def _check_report(plan: Plan, where: Where) -> None:
    names = [s.name for s in plan.setups]
    if plan.baseline is not None and plan.baseline not in names:
        raise where.fail(
            "baseline", f"baseline {plan.baseline!r} is not a set-up; set-ups: {', '.join(names)}"
        )
    if plan.metric not in METRICS:
        raise where.fail("metric", f"metric {plan.metric!r} must be one of {', '.join(METRICS)}")


# ---------------------------------------------------------------- set-ups


def _setups(raw: object, top: Where, over: Overrides) -> tuple[Setup, ...]:
    if over.target is not None:
        return (Setup(name=Path(over.target).name or over.target, path=over.target),)
    if not isinstance(raw, list) or not raw:
        raise top.fail(
            None, 'the plan has no [[setup]]; add one with a path, e.g. [[setup]] path = "."'
        )
    setups: list[Setup] = []
    for index, entry in enumerate(raw):
        where = replace(top, table="setup", index=index)
        if not isinstance(entry, dict):
            raise where.fail(None, "each [[setup]] must be a table")
        _known_keys(entry, SETUP_KEYS, where, f"[[setup]] {index + 1}")
        path = entry.get("path")
        if not isinstance(path, str) or not path:
            raise where.fail("path", 'a [[setup]] needs path = "DIRECTORY or FILE"')
        name = entry.get("name", path)
        if not isinstance(name, str) or not name:
            raise where.fail("name", f"set-up name must be a non-empty string, not {name!r}")
        if name in (s.name for s in setups):
            raise where.fail("name", f"set-up name {name!r} is used twice; names must be unique")
        setups.append(Setup(name=name, path=path))
    return tuple(setups)


# ---------------------------------------------------------------- workloads


def _workloads(
    raw: object,
    defaults: Mapping[str, Any],
    top: Where,
    defaults_where: Where,
    over: Overrides,
) -> tuple[Workload, ...]:
    if not isinstance(raw, list) or not raw:
        raise top.fail(
            None, 'the plan has no [[workload]]; add one, e.g. [[workload]] rw = "randread"'
        )
    points: list[Workload] = []
    for index, entry in enumerate(raw):
        where = replace(top, table="workload", index=index)
        if not isinstance(entry, dict):
            raise where.fail(None, "each [[workload]] must be a table")
        for key, value in defaults.items():
            _check_value(key, value, defaults_where)
        merged = {**BUILTIN_DEFAULTS, **defaults, **entry}
        if over.size is not None:
            merged["size"] = over.size
        if over.runtime is not None:
            merged["runtime"] = over.runtime
        for key, value in entry.items():
            _check_value(key, value, where)
        for point in _expand(merged, where):
            if point.name in (p.name for p in points):
                raise where.fail("name", f"workload {point.name!r} appears twice; give it a name")
            points.append(point)
    return tuple(points)


def _expand(merged: dict[str, Any], where: Where) -> list[Workload]:
    base = merged.pop("name", None)
    axes = [key for key, value in merged.items() if isinstance(value, list)]
    for key in axes:
        if not merged[key]:
            raise where.fail(key, f"{key} = [] is an empty sweep; give at least one value")
    values = [merged[key] if key in axes else [merged[key]] for key in merged]
    points = []
    for combo in itertools.product(*values):
        options = _normalise(dict(zip(merged, combo, strict=True)), where)
        named = isinstance(base, str)
        name = base if named else f"{options['bs']} {options['rw']}"
        shown = [key for key in axes if named or key not in ("bs", "rw")]
        suffix = " ".join(f"{key}={options[key]}" for key in shown)
        points.append(Workload(f"{name} {suffix}" if suffix else name, options, tuple(axes)))
    return points


def _check_value(key: str, value: object, where: Where) -> None:
    if key == "name":
        if not isinstance(value, str) or not value:
            raise where.fail(key, f"name must be a non-empty string, not {value!r}")
        return
    items = value if isinstance(value, list) else [value]
    for item in items:
        if not isinstance(item, str | int | float | bool):
            raise where.fail(key, f"{key} = {item!r}: fio options take a string, number or boolean")
        check = _CHECKS.get(key)
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


_CHECKS: dict[str, Callable[[object], str | None]] = {
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


def _normalise(options: dict[str, Any], where: Where) -> dict[str, FioValue]:
    """One point's options in fio's terms, with combinations that cannot work refused."""
    out: dict[str, FioValue] = {
        key: int(value) if isinstance(value, bool) else value for key, value in options.items()
    }
    if isinstance(out["bs"], int):
        out["bs"] = format_size(out["bs"])
    rw, bs = str(out["rw"]), parse_size(out["bs"])
    for mix in ("rwmixread", "rwmixwrite"):
        if mix in out and rw not in MIXED_RW:
            raise where.fail(
                mix, f"{mix} only applies to mixed rw ({', '.join(MIXED_RW)}), not rw = {rw!r}"
            )
    if out["direct"] == 1 and bs % 512:
        raise where.fail(
            "bs", f"bs = {out['bs']!r} with direct = 1: O_DIRECT needs a multiple of 512 bytes"
        )
    if out["ioengine"] in SYNC_ENGINES and parse_size(out["iodepth"]) > 1:
        raise where.fail(
            "iodepth",
            f"iodepth = {out['iodepth']} has no effect with ioengine = {out['ioengine']!r}; "
            'use ioengine = "libaio" or "io_uring", or raise numjobs instead',
        )
    if out["time_based"] == 1 and parse_seconds(out["runtime"]) < 1:
        raise where.fail("runtime", "time_based = 1 needs runtime of at least 1 s")
    if out["size"] != "auto" and parse_size(out["size"]) < bs:
        raise where.fail("size", f"size = {out['size']!r} is smaller than bs = {out['bs']!r}")
    return out
