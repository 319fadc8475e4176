"""fio job files as plans: `iolab run job.fio` runs the file as fio would, on a set-up "here"
(the current directory, or --target): every section a workload, [global] options applying to
the sections after them, and fio's own defaults for what the file leaves out. The safety rules
of plans apply line by line (only fio options classified safe in fio.options, so no
`include` or command; only local engines; plain text; an alias read as its option, readwrite
as rw), each fault one line naming the file and its line. Its `directory` and `filename` name
its target: the set-up then is that path (a directory, or a file), or that block device (raw,
written only with --yes-destroy), under the rules every set-up has; --target replaces them, and
iolab says so. A plan's [[workload]] may name a job file too (`jobfile = "mine.fio"`, see
plan.sources): its sections then run on the plan's set-ups (iolab says so of a section that
named its own target), each fault naming the section as well."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from iolab.errors import PlanError
from iolab.model import FioValue, Plan, Workload
from iolab.plan.checks import OPTION_NAME, check_clean, check_key, check_name, check_value
from iolab.plan.common import Overrides, Where
from iolab.plan.setups import setups as parse_setups
from iolab.plan.workloads import check_expansion
from iolab.plan.workloads import workloads as parse_workloads
from iolab.targets.path import TEST_FILE

SUFFIXES = (".fio", ".job")
# What fio does when a job file does not say: a job file runs as it would under fio itself.
# size "auto" is iolab's test file; log_avg_msec records per-second samples (it changes no I/O).
FIO_DEFAULTS: dict[str, FioValue] = {
    "rw": "read",
    "bs": "4k",
    "iodepth": 1,
    "numjobs": 1,
    "size": "auto",
    "runtime": 0,
    "time_based": 0,
    "direct": 0,
    "ioengine": "psync",
    "group_reporting": 0,
    "log_avg_msec": 1000,
}
_SECTION = re.compile(r"^\[([^\[\]]+)\]\s*$")
_PLAN_TABLES = ("defaults", "report", "steady", "setup", "workload")
Lines = Mapping[tuple[str | None, int, str | None], int]
NOT_A_LINE = (  # said of a line that does not read as one: never quoted (see _option)
    "not a line of an fio job file ([SECTION], or OPTION=VALUE with OPTION in lowercase "
    "letters, digits, '_' and '-')"
)


def is_job_file(source: str, text: str) -> bool:
    """By its name (.fio, .job), or, unless it is .toml, by its first line: a [section] that
    is not one of a plan's tables."""
    suffix = Path(source).suffix.lower()
    if suffix in SUFFIXES or suffix == ".toml":
        return suffix in SUFFIXES
    first = next((s for line in text.splitlines() if (s := line.strip()) and s[0] not in "#;"), "")
    found = _SECTION.match(first)
    return found is not None and found.group(1).strip() not in _PLAN_TABLES and "[[" not in text


@dataclass(frozen=True)
class JobWhere(Where):
    """Where a value sits in the job file: (table, index, key) -> its line; with `names`
    (the sections' names by index), messages name the section too."""

    lines: Lines = field(default_factory=dict)
    names: tuple[str, ...] = ()

    def fail(self, key: str | None, message: str) -> PlanError:
        line = self.lines.get((self.table, self.index, key)) or self.lines.get(
            (self.table, self.index, None)
        )
        named = self.table in (None, "workload") and self.index < len(self.names)
        said = f"section [{self.names[self.index]}]: {message}" if named else message
        return PlanError(f"{self.source}:{line}: {said}" if line else f"{self.source}: {said}")


def _at(source: str, line: int, section: str | None = None) -> JobWhere:
    names = (section,) if section is not None else ()
    return JobWhere(source, "", lines={(None, 0, None): line}, names=names)


TARGET_KEYS = ("directory", "filename")  # where a job file does its I/O: its set-up's target


def sections(
    text: str, source: str, named: bool = False
) -> tuple[list[dict[str, FioValue]], dict[tuple[str | None, int, str | None], int]]:
    """Each job section's options ([global] ones before it included, its name as `name`),
    checked line by line, and where each option sits; `named`: faults name their section.
    `directory` and `filename` are kept as they are written: they name the target, which
    iolab's set-up rules judge (target(), below), never fio's options."""
    jobs: list[dict[str, FioValue]] = []
    lines: dict[tuple[str | None, int, str | None], int] = {}
    common: dict[str, FioValue] = {}
    common_lines: dict[str, int] = {}
    current: dict[str, FioValue] | None = None
    section: str | None = None  # the section the next options belong to, when `named`
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line.startswith("["):  # fio cuts an option's line at ; or #, not a section's
            line = re.split("[;#]", line, maxsplit=1)[0].strip()
        if not line:
            continue
        header = _SECTION.match(line)
        if header:
            name = header.group(1).strip()
            _check_section(name, _at(source, number))
            section = name if named else None
            if name == "global":
                current = common
                continue
            current = {**common, "name": name}
            jobs.append(current)
            index = len(jobs) - 1
            lines[("workload", index, None)] = number
            lines.update({("workload", index, k): n for k, n in common_lines.items()})
            continue
        where = _at(source, number, section)
        key, value = _option(line, where, _at(source, number))
        if current is None:  # key is an option iolab classified (_option): quoting it is safe
            raise where.fail(
                None, f"{key} comes before any section; start with [global] or [JOBNAME]"
            )
        current[key] = value
        if current is common:
            common_lines[key] = number
        else:
            lines[("workload", len(jobs) - 1, key)] = number
    if not jobs:
        raise PlanError(f"{source}: no job section; add one, e.g. [randread] with rw=randread")
    return jobs, lines


def _check_section(name: str, where: JobWhere) -> None:
    check_clean("section", name, where)
    check_name("section name", name, where, key=None)


def _option(line: str, where: JobWhere, bare: JobWhere) -> tuple[str, FioValue]:
    """`key=value` (or a bare `key`, which fio reads as set), checked as a plan's value is.
    A line that is not one is named by its line alone (`bare`): the file may be no job file
    at all, and a message never quotes what such a file holds."""
    key, equals, text = (part.strip() for part in line.partition("="))
    if key.startswith("include") and not equals:
        raise where.fail(None, "include names another file; put its options in this file")
    if not OPTION_NAME.match(key):
        raise bare.fail(None, NOT_A_LINE)
    check_clean(key, key, where)
    if key in TARGET_KEYS and equals:
        check_clean(key, text, where)
        check_expansion(key, text, where)
        return key, text
    name = check_key(key, where, quote=False)  # fio's own name: an alias (readwrite) resolved
    digits = text.isascii() and text.isdigit() and len(text) < 19  # as units.whole reads
    value: FioValue = (int(text) if digits else text) if equals else 1
    check_value(key, value, where)
    return name, value


def parse(text: str, source: str, overrides: Overrides | None = None) -> Plan:
    """The job file as a plan on set-up "here" ("." or --target)."""
    over = overrides or Overrides()
    for key, value in (("size", over.size), ("runtime", over.runtime)):
        if value is not None:
            check_value(key, value, Where(f"--{key}", ""))
    jobs, lines = sections(text, source)
    top = JobWhere(source, text, lines=lines)
    named = target(jobs, top)
    fresh = over.target is None and _new_file(named, jobs)
    jobs, said = without_targets(jobs, "--target" if over.target is not None else None)
    if fresh and named is not None:
        folder = "the current folder" if named.parent == Path(".") else str(named.parent)
        said += (
            f"filename={named} does not exist yet: iolab writes its own test file in {folder} "
            f"instead ({TEST_FILE}), and removes it after",
        )
        named = named.parent if named.parent != Path(".") else None
    if over.target is not None or named is None:
        here = parse_setups([{"name": "here", "path": "."}], top, over)
    elif named.is_block_device():
        here = parse_setups([{"name": named.name, "devices": [str(named)]}], top, over)
    else:
        here = parse_setups([], top, replace(over, target=str(named)))
    workloads = parse_workloads(jobs, FIO_DEFAULTS, top, replace(top, table="defaults"), over)
    return Plan(
        name=Path(source).stem,
        description=f"the fio job file {Path(source).name}, run as it is",
        origin="fio job file",
        source=source,
        text=text,
        setups=here,
        workloads=workloads,
        repeat=over.repeat or 1,
        notes=said,
    )


def target(jobs: list[dict[str, FioValue]], top: JobWhere) -> Path | None:
    """Where the job file does its I/O (`directory`, `filename`, or both), the same for every
    section; None when it names none (the current directory, as fio would). One file only:
    fio's "a:b" lists and a target per section are refused in one line."""
    found: Path | None = None
    first = ""
    for index, job in enumerate(jobs):
        where = replace(top, table="workload", index=index)
        folder, name = job.get("directory"), job.get("filename")
        if folder is None and name is None:
            continue
        for key, value in (("directory", folder), ("filename", name)):
            if value is not None and (":" in str(value) or not str(value)):
                raise where.fail(
                    key,
                    f"{key} must name one path (not a ':' list): iolab runs "
                    "a job file on one target",
                )
        path = Path(str(folder or ".")) / str(name or "")
        if found is not None and path != found:
            raise where.fail(
                "filename" if name is not None else "directory",
                f"section [{job['name']}] runs on {path}, section [{first}] on {found}: iolab "
                "runs a job file on one target; split the file, or write a plan with a set-up "
                "each",
            )
        if found is None:
            found, first = path, str(job["name"])
    return found


def _new_file(named: Path | None, jobs: list[dict[str, FioValue]]) -> bool:
    """Whether the job file names, with `filename`, a file that does not exist yet in a folder
    that does (fio would create it; iolab makes its own test file there instead)."""
    if named is None or not any("filename" in job for job in jobs):
        return False
    try:
        return not named.exists() and not named.is_symlink() and named.parent.is_dir()
    except OSError:
        return False


def without_targets(
    jobs: list[dict[str, FioValue]], replaced_by: str | None
) -> tuple[list[dict[str, FioValue]], tuple[str, ...]]:
    """The sections without `directory` and `filename`, and a line for each section whose
    target something else replaces (`replaced_by`: --target, or a plan's set-ups)."""
    out, said = [], []
    for job in jobs:
        named = {k: job[k] for k in TARGET_KEYS if k in job}
        if named and replaced_by is not None:
            written = ", ".join(f"{k}={v}" for k, v in named.items())
            said.append(f"section [{job['name']}]: its {written} is replaced by {replaced_by}")
        out.append({k: v for k, v in job.items() if k not in TARGET_KEYS})
    return out, tuple(said)


@dataclass(frozen=True)
class Included:
    """A job file a plan's [[workload]] names (`jobfile = "mine.fio"`): its sections, checked
    line by line, each to be a workload named after it (after the table's `name`, if any)."""

    where: JobWhere
    jobs: tuple[dict[str, FioValue], ...]
    notes: tuple[str, ...] = ()  # its sections' targets, replaced by the plan's set-ups


def included(text: str, label: str, prefix: str | None) -> Included:
    jobs, lines = sections(text, label, named=True)
    jobs, said = without_targets(jobs, "the plan's set-ups")
    names = tuple(str(job["name"]) for job in jobs)
    if prefix is not None:
        jobs = [{**job, "name": f"{prefix} {job['name']}"} for job in jobs]
    return Included(JobWhere(label, text, lines=lines, names=names), tuple(jobs), said)


def included_workloads(job: Included, over: Overrides) -> tuple[Workload, ...]:
    """Its sections as workloads: fio's defaults for what the file leaves out, as `iolab run
    job.fio` runs them; only the overrides (--size, --runtime) apply, not the plan's defaults."""
    top = job.where
    return parse_workloads(list(job.jobs), FIO_DEFAULTS, top, replace(top, table="defaults"), over)


def locate(plan: Plan, workload: Workload, key: str | None, reason: str) -> PlanError:
    """A fault fio found later in one section, placed at its line in the job file."""
    _, lines = sections(plan.text, plan.source)
    where = JobWhere(plan.source, plan.text, "workload", workload.table, lines)
    return where.fail(key, f"workload {workload.name!r}: {reason}")
