"""Loading a plan: TOML, top-level keys, presets, and the report table."""

from __future__ import annotations

import stat
import tomllib
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from iolab import units
from iolab.choices import MAX_CASES
from iolab.errors import PlanError
from iolab.model import AutoRepeat, Plan, Setup, SteadyRounds, Workload
from iolab.plan import gate, jobfile_plan, methods, report_keys, sources
from iolab.plan import hosts as plan_hosts
from iolab.plan.checks import MAX_NAME, check_clean, check_name, check_value
from iolab.plan.common import (
    Overrides,
    Where,
    known_keys,
    line_of,
    read_toml,
    table_value,
    text_value,
)
from iolab.plan.setups import setups as parse_setups
from iolab.units import human_duration

METRICS = ("auto", "iops", "bw")
TOP_KEYS = (
    "name",
    "description",
    "origin",
    "repeat",
    "repeat_target",
    "repeat_max",
    "defaults",
    "setup",
    "workload",
    "report",
    "steady",
    "workloads",
    "jobfiles",
    "check",
    "order",
)
STEADY_KEYS = ("track", "rounds", "window", "data_excursion", "slope_excursion")
AUTO_FIRST = 3  # repetitions every case gets under repeat = "auto", before the interval decides
REPORT_KEYS = ("baseline", "metric", "charts")
MAX_PLAN_BYTES = 1024**2


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
        info = file.stat()
        if not stat.S_ISREG(info.st_mode):
            raise PlanError(f"{file} is not a regular file; a plan is a TOML file")
        if info.st_size > MAX_PLAN_BYTES:
            raise PlanError(
                f"{file} is {info.st_size:,} bytes; a plan is a TOML file of at most 1 MiB"
            )
        text = file.read_bytes()[: MAX_PLAN_BYTES + 1].decode()
    except FileNotFoundError:
        raise PlanError(f"{file}: no such plan file; give a path to a TOML plan") from None
    except UnicodeDecodeError:
        raise PlanError(f"{file} is not UTF-8 text; a plan is a TOML file") from None
    except OSError as error:
        raise PlanError(f"{file}: cannot read the plan ({error.strerror})") from None
    return parse_plan(text, str(file), overrides)


def load_preset(name: str, overrides: Overrides | None = None) -> Plan:
    return parse_plan(preset_text(name), f"preset:{name}", overrides)


def parse_plan(text: str, source: str, overrides: Overrides | None = None) -> Plan:
    """Validate a whole plan text and expand its workloads; raises PlanError on the first fault."""
    if jobfile_plan.is_job_file(source, text):  # an fio job file runs as it is
        return jobfile_plan.parse(text, source, overrides)
    data = read_toml(text, source)  # its nesting bounded before anything walks it
    top = Where(source, text)
    known_keys(data, (*TOP_KEYS, *plan_hosts.KEYS), top, "the plan")
    _check_clean(data, top)
    over = overrides or Overrides()
    for key, value in (("size", over.size), ("runtime", over.runtime)):
        if value is not None:
            check_value(key, value, Where(f"--{key}", ""))
    setups = parse_setups(data.get("setup", []), top, over)
    defaults = table_value(data.get("defaults", {}), top, "defaults")
    repeat = over.repeat if over.repeat is not None else data.get("repeat", 1)
    auto = _auto_repeat(data, top) if repeat == "auto" else None
    repeat = AUTO_FIRST if auto else repeat
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise top.fail(
            "repeat", f'repeat = {repeat!r} must be a whole number of at least 1, or "auto"'
        )
    most = _most_rounds(data) or (auto.most if auto else repeat)
    found = sources.gather(data, top, _preset(data, top))
    _check_count(sources.count(found, defaults), len(setups) * most, over, source)
    defaults_where = replace(top, table="defaults")
    workloads = sources.expand(found, defaults, top, defaults_where, over)
    report = table_value(data.get("report", {}), top, "report")
    known_keys(report, REPORT_KEYS, replace(top, table="report"), "[report]")
    charts = report_keys.chart_texts(report, replace(top, table="report"))
    rounds = _rounds(data, top, workloads, auto is not None)
    methods.check_plan(workloads, auto is not None, rounds is not None, top)
    if rounds:
        repeat = rounds.window
    plan = Plan(
        name=_name(data, top, source),
        description=text_value(data, "description", top, ""),
        origin=text_value(data, "origin", top, ""),
        source=source,
        text=sources.recorded(text, found.read),
        setups=setups,
        workloads=workloads,
        repeat=repeat,
        auto_repeat=auto,
        rounds=rounds,
        # --target replaces the set-ups, so a baseline that named one of them names none
        baseline=None if over.target is not None else report.get("baseline"),
        metric=report.get("metric", "auto"),
        hosts=plan_hosts.hosts(data, top, setups),
        check=gate.rules(data, top),
        notes=tuple(note for job in found.included.values() for note in job.notes),
        charts=charts,
        order=_order(
            data, top, (setups, workloads), repeat, auto is not None or rounds is not None
        ),
    )
    _check_report(plan, replace(top, table="report"))
    return plan


def _order(
    data: dict[str, Any],
    top: Where,
    matrix: tuple[tuple[Setup, ...], tuple[Workload, ...]],
    repeat: int,
    decided: bool,
) -> Literal["setups", "interleaved"]:
    """order = "setups" (each set-up's cases in one go, the default) or "interleaved" (each
    repetition a round of every set-up, A B then B A: `iolab check --ab` pairs the rounds)."""
    order = data.get("order", "setups")
    if order == "setups":
        return "setups"
    if order != "interleaved":
        raise top.fail("order", f'order = {order!r} must be "setups" or "interleaved"')
    setups, workloads = matrix
    if len(setups) < 2:
        raise top.fail("order", 'order = "interleaved" alternates set-ups: give two or more')
    searched = next((w for w in workloads if w.method is not None), None)
    if searched is not None:
        raise top.fail(
            "order",
            f'order = "interleaved" runs every case once a round; workload {searched.name!r} '
            "searches its own cases (method): run it as a plan of its own",
        )
    if decided or repeat < 2:
        raise top.fail(
            "order",
            'order = "interleaved" pairs the set-ups repetition by repetition: give a whole '
            'repeat of at least 2 (6 or more to judge by; not "auto" or [steady] rounds)',
        )
    return "interleaved"


def _name(data: dict[str, Any], top: Where, source: str) -> str:
    """The plan's name (its file's, or preset's, when it gives none), by the rule of names."""
    given = text_value(data, "name", top, Path(source).stem.removeprefix("preset:"))
    return check_name("plan name", given, top)


def _share(value: object, where: Where, key: str, default: str) -> float:
    text = str(default if value is None else value).strip()
    try:
        share = units.number(text.removesuffix("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        share = 0.0
    if not 0 < share < 1:
        raise where.fail(key, f'{key} = {value!r} must be a share such as "{default}"')
    return share


def _rounds(
    data: dict[str, Any], top: Where, workloads: tuple[Workload, ...], auto: bool
) -> SteadyRounds | None:
    """The [steady] table: SNIA PTS rounds until the tracked workload is steady."""
    raw = data.get("steady")
    if raw is None:
        return None
    where = replace(top, table="steady")
    table = table_value(raw, top, "steady")
    known_keys(table, STEADY_KEYS, where, "[steady]")
    if auto or "repeat" in data:
        raise where.fail(
            None, "[steady] rounds replace repeat (a round is a repetition): drop repeat"
        )
    names = [w.name for w in workloads]
    track = table.get("track", names[0])
    if track not in names:
        raise where.fail(
            "track", f"track = {track!r} is not a workload; workloads: {', '.join(names)}"
        )
    window, most = table.get("window", 5), table.get("rounds", 25)
    for key, value, low in (("window", window, 2), ("rounds", most, window)):
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= 100:
            raise where.fail(key, f"{key} = {value!r} must be a whole number from {low} to 100")
    return SteadyRounds(
        str(track),
        window,
        _share(table.get("data_excursion"), where, "data_excursion", "20%"),
        _share(table.get("slope_excursion"), where, "slope_excursion", "10%"),
        most,
    )


def _auto_repeat(data: dict[str, object], top: Where) -> AutoRepeat:
    """repeat = "auto" with repeat_target (e.g. "2%") and repeat_max (e.g. 10)."""
    raw_target = data.get("repeat_target", "2%")
    text = str(raw_target).strip()
    try:
        target = units.number(text.removesuffix("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        target = 0.0
    if not 0 < target < 1:
        raise top.fail(
            "repeat_target", f'repeat_target = {raw_target!r} must be a share such as "2%"'
        )
    most = data.get("repeat_max", 10)
    if isinstance(most, bool) or not isinstance(most, int) or not AUTO_FIRST <= most <= 100:
        raise top.fail(
            "repeat_max", f"repeat_max = {most!r} must be a whole number from {AUTO_FIRST} to 100"
        )
    return AutoRepeat(target, most)


def _preset(data: dict[str, Any], top: Where) -> sources.Preset | None:
    """`workloads = "NAME"`: the preset whose workloads come first."""
    name = data.get("workloads")
    if name is None:
        return None
    if name not in preset_names():
        raise top.fail(
            "workloads",
            f"workloads = {name!r} is not a preset; choose one of {', '.join(preset_names())}",
        )
    text = preset_text(name)
    preset = tomllib.loads(text)
    entries, defaults = preset.get("workload", []), preset.get("defaults", {})
    return sources.Preset(Where(f"preset:{name}", text), entries, defaults)


def _most_rounds(data: dict[str, Any]) -> int | None:
    """[steady] rounds, before they are checked: each may run every case once more."""
    steady = data.get("steady")
    if not isinstance(steady, dict):
        return None
    most = steady.get("rounds", 25)
    whole = isinstance(most, int) and not isinstance(most, bool) and most > 0
    return min(most, 100) if whole else 25


def _check_count(counted: tuple[int, float], per_point: int, over: Overrides, source: str) -> None:
    """Refuse a matrix too big to run before expanding it."""
    points, seconds = counted
    limit = over.max_cases if over.max_cases is not None else MAX_CASES
    cases = points * per_point
    if cases > limit:
        raise PlanError(
            f"{source}: the plan expands to {cases:,} cases (about "
            f"{human_duration(seconds * per_point)} of fio time), over the limit of {limit:,}; "
            "shrink its sweeps, or raise the limit with --max-cases N"
        )


def _check_clean(data: dict[str, object], top: Where) -> None:
    """No control character anywhere: names and values end up in job files and commands."""
    for key, value in data.items():
        if key == "jobfiles":
            continue  # job files' texts: checked line by line as job files (sources.gather)
        if isinstance(value, dict):
            _check_table(value, replace(top, table=key))
        elif key in ("setup", "workload") and isinstance(value, list):
            for index, entry in enumerate(value):
                if isinstance(entry, dict):
                    _check_table(entry, replace(top, table=key, index=index))
        else:
            check_clean(key, value, top, allow_newlines=key == "description")


def _check_table(table: dict[str, object], where: Where) -> None:
    for key, value in table.items():
        check_clean(key, key, where)
        check_clean(key, value, where)
        if key == "name" and isinstance(value, str) and len(value) > MAX_NAME:
            raise where.fail(key, f"name is {len(value):,} characters; keep it to {MAX_NAME}")


def _check_report(plan: Plan, where: Where) -> None:
    names = [s.name for s in plan.setups]
    if plan.baseline is not None and plan.baseline not in names:
        raise where.fail(
            "baseline", f"baseline {plan.baseline!r} is not a set-up; set-ups: {', '.join(names)}"
        )
    if plan.metric not in METRICS:
        raise where.fail("metric", f"metric {plan.metric!r} must be one of {', '.join(METRICS)}")


def locate(plan: Plan, workload: Workload, key: str | None, reason: str) -> PlanError:
    """A fault found later (by fio) in one workload, placed at its line in the plan text."""
    if jobfile_plan.is_job_file(plan.source, plan.text):
        return jobfile_plan.locate(plan, workload, key, reason)
    message = f"workload {workload.name!r}: {reason}"
    origin = _origin(plan, workload)
    if isinstance(origin, jobfile_plan.JobWhere):
        return origin.fail(key, message)
    for where in (origin, Where(plan.source, plan.text, "defaults")):
        if where and key and line_of(where.text, where.table, where.index, key):
            return where.fail(key, message)
    return PlanError(f"{plan.source}: {message}")


def _origin(plan: Plan, workload: Workload) -> Where | None:
    """Where a workload's table sits: the plan's text again gives its preset and job files."""
    top = Where(plan.source, plan.text)
    try:
        data = read_toml(plan.text, plan.source)
        found = sources.gather(data, top, _preset(data, top))
    except PlanError:
        return None
    return sources.origin(found, top, workload.table)
