"""Workloads: defaults merged, values checked, sweeps expanded into named points."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from iolab import names
from iolab.fio import durations
from iolab.fio import options as fio_options
from iolab.model import FioValue, Workload
from iolab.plan import methods
from iolab.plan.checks import PLAN_KEYS, check_key, check_value
from iolab.plan.common import Overrides, Where
from iolab.units import format_size, parse_seconds, parse_size

MIXED_RW = ("rw", "readwrite", "randrw")
SYNC_ENGINES = ("sync", "psync", "vsync", "pvsync", "pvsync2", "mmap")

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
    "log_avg_msec": 1000,  # per-second samples of every case
}


def workloads(
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
    names: set[str] = set()
    check_defaults(defaults, defaults_where)
    for index, entry in enumerate(raw):
        where = replace(top, table="workload", index=index)
        add_unique(points, names, table_points(entry, defaults, where, over), where)
    return tuple(points)


def check_defaults(defaults: Mapping[str, Any], where: Where) -> None:
    _check_table(defaults, where)


def table_points(
    entry: object, defaults: Mapping[str, Any], where: Where, over: Overrides
) -> list[Workload]:
    """One [[workload]] table's points: defaults merged, values checked, sweeps expanded."""
    if not isinstance(entry, dict):
        raise where.fail(None, "each [[workload]] must be a table")
    _check_table(entry, where)
    merged = {**BUILTIN_DEFAULTS, **fio_names(defaults), **fio_names(entry)}
    if over.size is not None:
        merged["size"] = over.size
    if over.runtime is not None:
        check_duration("runtime", "runtime", over.runtime, Where("--runtime", ""))
        merged["runtime"] = over.runtime
    merged = methods.bounds(merged, where)  # method = "peak": numjobs, iodepth are bounds
    return methods.points(_expand(merged, where))


def add_unique(
    points: list[Workload], names: set[str], new: Iterable[Workload], where: Where
) -> None:
    """Append `new` to `points`; a name seen before is refused at `where`."""
    for point in new:
        if point.name in names:
            raise where.fail("name", f"workload {point.name!r} appears twice; give it a name")
        names.add(point.name)
        points.append(point)


def _check_table(table: Mapping[str, Any], where: Where) -> None:
    """Each key an iolab key or a safe fio option (fio.options), each value checked; an option
    given twice, by its name and an alias (rw and readwrite), is refused."""
    seen: dict[str, str] = {}
    for key, value in table.items():
        name = check_key(key, where)
        if key not in PLAN_KEYS:
            check_expansion(key, value, where)
        check_value(key, value, where)
        check_duration(name, key, value, where)
        if name in seen:
            raise where.fail(
                key, f"{seen[name]} and {key} are the same fio option ({name}); keep one"
            )
        seen[name] = key


def check_expansion(key: str, value: object, where: Where) -> None:
    """A value fio would not read as written (fio.options.expansion: '$') is refused at its
    line, before any other check of it, whatever the option."""
    for item in value if isinstance(value, list) else [value]:
        problem = fio_options.expansion(item)
        if problem:
            raise where.fail(key, f"{key} = {item!r} {problem}")


def check_duration(name: str, key: str, value: object, where: Where) -> None:
    """A duration that makes fio run or wait (fio.durations: runtime, ramp_time, startdelay,
    thinktime...) within its bound, each value of a sweep too."""
    for item in value if isinstance(value, list) else [value]:
        problem = durations.problem(name, item)
        if problem:
            raise where.fail(key, f"{key} = {item!r} {problem}")


def fio_names(table: Mapping[str, Any]) -> dict[str, Any]:
    """The table with fio's own name for each option given by an alias (readwrite: rw), so
    iolab's checks (writes, sizes, room) read what fio will do; a later key wins, as in fio."""
    return {fio_options.canonical(key): value for key, value in table.items()}


def count(raw: object, defaults: Mapping[str, Any]) -> tuple[int, float]:
    """How many points the workloads expand to, and their nominal fio seconds, unexpanded."""
    points, seconds = 0, 0.0
    for entry in raw if isinstance(raw, list) else ():
        if not isinstance(entry, dict):
            continue
        merged = {**BUILTIN_DEFAULTS, **fio_names(defaults), **fio_names(entry)}
        n = 1
        for value in merged.values():
            n *= max(1, len(value)) if isinstance(value, list) else 1
        points += n
        seconds += n * (_longest(merged.get("runtime")) + _longest(merged.get("ramp_time")))
    return points, seconds


def _longest(value: object) -> float:
    values = value if isinstance(value, list) else [value]
    try:
        return float(max((parse_seconds(v) for v in values if v is not None), default=0))
    except (ValueError, TypeError):
        return 0.0


def _expand(merged: dict[str, Any], where: Where) -> list[Workload]:
    base = merged.pop("name", None)
    base = names.normal(base) if isinstance(base, str) else base  # checked: check_value
    axes = [key for key, value in merged.items() if isinstance(value, list)]
    for key in axes:
        if not merged[key]:
            raise where.fail(key, f"{key} = [] is an empty sweep; give at least one value")
    values = [
        [_fio_terms(key, v) for v in (merged[key] if key in axes else [merged[key]])]
        for key in merged
    ]
    named = isinstance(base, str)
    keys = list(merged)
    shown = [keys.index(key) for key in axes if named or key not in ("bs", "rw")]
    decisive = [keys.index(key) for key in DECISIVE if key in merged]
    axes_t = tuple(axes)
    points = []
    checked: set[tuple[object, ...]] = set()
    for combo in itertools.product(*values):  # linear in the points: nothing is searched
        options = dict(zip(keys, combo, strict=True))
        seen = tuple([combo[i] for i in decisive])
        if seen not in checked:  # the combination checks read only the decisive keys
            _check_combination(options, where)
            checked.add(seen)
        name = base if named else f"{options['bs']} {options['rw']}"
        suffix = " ".join([f"{keys[i]}={combo[i]}" for i in shown])
        label = f"{name} {suffix}" if suffix else name
        points.append(Workload(label, options, axes_t, where.index))
    return points


def _fio_terms(key: str, value: Any) -> FioValue:
    """A value in fio's terms: booleans as 0/1, a bs given in bytes as a size."""
    if isinstance(value, bool):
        return int(value)
    if key == "bs" and isinstance(value, int):
        return format_size(value)
    return value  # type: ignore[no-any-return]


DECISIVE = (
    "rw",
    "bs",
    "rwmixread",
    "rwmixwrite",
    "direct",
    "ioengine",
    "iodepth",
    "time_based",
    "runtime",
    "size",
)


def _check_mix(out: dict[str, FioValue], where: Where) -> None:
    """rwmixread and rwmixwrite together add up to 100: fio keeps whichever it reads last."""
    read, write = (str(out.get(key, "")).strip() for key in ("rwmixread", "rwmixwrite"))
    if read.isdigit() and write.isdigit() and int(read) + int(write) != 100:
        raise where.fail(
            "rwmixwrite",
            f"rwmixread = {read} and rwmixwrite = {write} add up to {int(read) + int(write)}, "
            "not 100: fio would keep whichever it reads last; give one of them",
        )


def _check_combination(out: dict[str, FioValue], where: Where) -> None:
    """Refuse one point's combinations that cannot work; reads only the DECISIVE keys."""
    rw, bs = str(out["rw"]), parse_size(out["bs"])
    for mix in ("rwmixread", "rwmixwrite"):
        if mix in out and rw not in MIXED_RW:
            raise where.fail(
                mix, f"{mix} only applies to mixed rw ({', '.join(MIXED_RW)}), not rw = {rw!r}"
            )
    _check_mix(out, where)
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
