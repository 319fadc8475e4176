"""Where a plan's workloads come from, in this order: a preset's (`workloads = "NAME"`), then
the plan's own [[workload]] tables, where a table with `jobfile = "mine.fio"` stands for every
section of that fio job file. The job files read are recorded with the plan as a [jobfiles]
table (name -> text), so the stored plan, and a run resumed from it, hold what ran."""

from __future__ import annotations

import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from iolab.model import Workload
from iolab.plan import jobfile_plan
from iolab.plan.checks import check_value
from iolab.plan.common import Overrides, Where, table_value
from iolab.plan.workloads import add_unique, check_defaults, table_points
from iolab.plan.workloads import count as count_points
from iolab.plan.workloads import workloads as parse_workloads

JOBFILE_KEYS = ("jobfile", "name")  # name: a prefix for the names of the job file's sections
MAX_JOB_BYTES = 1024**2
_ESCAPE = re.compile(r'[\\"\x00-\x08\x0b-\x1f\x7f]')


@dataclass(frozen=True)
class Preset:
    """A preset's workloads as its text gives them, with its [defaults]."""

    where: Where
    entries: list[Any]
    defaults: dict[str, Any]


@dataclass(frozen=True)
class Sources:
    """A plan's workloads before expansion: the preset's, then the [[workload]] tables (those
    naming a job file by their index), and the job files read from disk (to record)."""

    preset: Preset | None
    entries: list[Any]
    included: dict[int, jobfile_plan.Included]
    read: dict[str, str]


def gather(data: Mapping[str, Any], top: Where, preset: Preset | None) -> Sources:
    """The [[workload]] tables, and every job file they name, read and checked line by line."""
    raw = data.get("workload", [])
    if not isinstance(raw, list) or not (raw or preset):
        raise top.fail(
            None,
            'the plan has no [[workload]]; add one, e.g. [[workload]] rw = "randread", or take '
            'a preset\'s with workloads = "quick"',
        )
    given = _given(data, top)
    included: dict[int, jobfile_plan.Included] = {}
    read: dict[str, str] = {}
    for index, entry in enumerate(raw):
        if isinstance(entry, dict) and "jobfile" in entry:
            where = replace(top, table="workload", index=index)
            name, prefix = _jobfile_entry(entry, where)
            text = _job_text(name, given, read, where)
            included[index] = jobfile_plan.included(text, str(_path(top, name)), prefix)
    named = {str(e["jobfile"]) for e in raw if isinstance(e, dict) and "jobfile" in e}
    unused = sorted(set(given or ()) - named)
    if unused:
        raise replace(top, table="jobfiles").fail(
            None, f"[jobfiles] {unused[0]!r} is named by no [[workload]] jobfile; drop it"
        )
    return Sources(preset, raw, included, read)


def count(found: Sources, defaults: Mapping[str, Any]) -> tuple[int, float]:
    """How many points the workloads expand to, and their nominal fio seconds, unexpanded."""
    plain = [e for i, e in enumerate(found.entries) if i not in found.included]
    counts = [count_points(plain, defaults)]
    if found.preset:
        counts.append(count_points(found.preset.entries, {**found.preset.defaults, **defaults}))
    for job in found.included.values():
        counts.append(count_points(list(job.jobs), jobfile_plan.FIO_DEFAULTS))
    return sum(n for n, _ in counts), sum(s for _, s in counts)


def expand(
    found: Sources, defaults: Mapping[str, Any], top: Where, defaults_where: Where, over: Overrides
) -> tuple[Workload, ...]:
    """Every workload point, the preset's first; a point's `table` numbers its table among
    all of them (the preset's tables, then each [[workload]], each job file section one)."""
    if "jobfile" in defaults:
        raise defaults_where.fail("jobfile", "jobfile goes in a [[workload]] of its own")
    check_defaults(defaults, defaults_where)
    points: list[Workload] = []
    names: set[str] = set()
    base = 0
    for index, tables in _tables(found, top):
        new, first = _part(found, index, defaults, top, defaults_where, over)
        at = "workloads" if index is None else "workload"
        where = replace(top, table=at, index=index or 0)
        add_unique(points, names, [replace(w, table=base + w.table - first) for w in new], where)
        base += len(tables)
    return tuple(points)


def origin(found: Sources, top: Where, table: int) -> Where | None:
    """Where the table numbered `table` by `expand` sits: in the plan, the preset or a job file."""
    tables = [where for _, wheres in _tables(found, top) for where in wheres]
    return tables[table] if 0 <= table < len(tables) else None


def recorded(text: str, read: Mapping[str, str]) -> str:
    """The plan's text with the job files it read appended as a [jobfiles] table: loading
    that text again reads no file and gives the same workloads."""
    if not read:
        return text
    lines = [
        "",
        "# the job files named above, as they were read: iolab added this table",
        "[jobfiles]",
        *(f'{_quoted(name)} = """\n{_escaped(body)}"""' for name, body in read.items()),
    ]
    return text + ("" if text.endswith("\n") or not text else "\n") + "\n".join(lines) + "\n"


def _tables(found: Sources, top: Where) -> list[tuple[int | None, tuple[Where, ...]]]:
    """Each part's index (None: the preset) and where each of its tables sits."""
    parts: list[tuple[int | None, tuple[Where, ...]]] = []
    if found.preset:
        at = found.preset.where
        entries = range(len(found.preset.entries))
        parts.append((None, tuple(replace(at, table="workload", index=j) for j in entries)))
    for index in range(len(found.entries)):
        job = found.included.get(index)
        if job:
            sections = range(len(job.jobs))
            parts.append(
                (index, tuple(replace(job.where, table="workload", index=s) for s in sections))
            )
        else:
            parts.append((index, (replace(top, table="workload", index=index),)))
    return parts


def _part(
    found: Sources,
    index: int | None,
    defaults: Mapping[str, Any],
    top: Where,
    defaults_where: Where,
    over: Overrides,
) -> tuple[Sequence[Workload], int]:
    """One part's points, and the table number its first table's points carry."""
    if found.preset and index is None:  # its [defaults], then the plan's, then its tables
        preset = found.preset
        merged = {**preset.defaults, **defaults}
        return parse_workloads(preset.entries, merged, preset.where, defaults_where, over), 0
    assert index is not None
    job = found.included.get(index)
    if job:
        return jobfile_plan.included_workloads(job, over), 0
    where = replace(top, table="workload", index=index)
    return table_points(found.entries[index], defaults, where, over), index


def _jobfile_entry(entry: Mapping[str, Any], where: Where) -> tuple[str, str | None]:
    """A [[workload]] with jobfile: the job file's name and the prefix for its sections' names."""
    for key in entry:
        if key not in JOBFILE_KEYS:
            raise where.fail(
                key,
                f"{key} does not go with jobfile: the job file's sections give their own options "
                "(beside jobfile, a [[workload]] takes only name, a prefix for their names)",
            )
    name, prefix = entry["jobfile"], entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise where.fail(
            "jobfile", f'jobfile = {name!r} must name an fio job file, e.g. "mine.fio"'
        )
    if prefix is not None:
        check_value("name", prefix, where)
    return name, prefix


def _given(data: Mapping[str, Any], top: Where) -> dict[str, str] | None:
    """The plan's own [jobfiles] table (as iolab records it), or None when it has none."""
    if "jobfiles" not in data:
        return None
    table = table_value(data["jobfiles"], top, "jobfiles")
    for name, text in table.items():
        if not isinstance(text, str):
            raise replace(top, table="jobfiles").fail(
                None, f"[jobfiles] {name!r} must be the job file's text, not {text!r}"
            )
    return table


def _job_text(name: str, given: dict[str, str] | None, read: dict[str, str], where: Where) -> str:
    if given is not None:
        if name not in given:
            raise where.fail(
                "jobfile",
                f"jobfile = {name!r} is not in the plan's [jobfiles] table; a plan with "
                "[jobfiles] gives there every job file it names",
            )
        return given[name]
    if name not in read:
        read[name] = _read(_path(where, name), name, where)
    return read[name]


def _path(where: Where, name: str) -> Path:
    """A job file's path: relative to the plan file's folder."""
    return Path(where.source).parent / name


def _read(path: Path, name: str, where: Where) -> str:
    said = f"jobfile = {name!r}: {path}"
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise where.fail("jobfile", f"{said} is not a regular file; name an fio job file")
        if info.st_size > MAX_JOB_BYTES:
            raise where.fail("jobfile", f"{said} is {info.st_size:,} bytes; at most 1 MiB")
        return path.read_bytes()[: MAX_JOB_BYTES + 1].decode()
    except FileNotFoundError:
        raise where.fail(
            "jobfile", f"{said}: no such file (a job file's path is relative to the plan's folder)"
        ) from None
    except UnicodeDecodeError:
        raise where.fail("jobfile", f"{said} is not UTF-8 text; a job file is text") from None
    except OSError as error:
        raise where.fail("jobfile", f"{said}: cannot read it ({error.strerror})") from None


def _escaped(text: str) -> str:
    """Text for a TOML basic string: backslashes, quotes and control characters escaped."""

    def escape(found: re.Match[str]) -> str:
        char = found.group(0)
        return f"\\{char}" if char in '\\"' else f"\\u{ord(char):04x}"

    return _ESCAPE.sub(escape, text)


def _quoted(text: str) -> str:
    return '"' + _escaped(text).replace("\n", "\\n").replace("\t", "\\t") + '"'
