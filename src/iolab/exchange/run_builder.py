"""Found jobs become one run: set-ups from folders (or --setup; or the ones a bench-fio tree or a
published table names), workloads from job names and options, repetitions from the same job
found again, and a Result per job as a live run would store it (fio's own parse, the steady
window, per-host windows, the methodology checks)."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from iolab import names
from iolab.analysis import check_context, levels, reading
from iolab.analysis.reading import Known
from iolab.errors import PlanError
from iolab.exchange import naming
from iolab.exchange.found_jobs import FoundJob
from iolab.exchange.logs import LOGS_ONLY
from iolab.exchange.named_jobs import Placed
from iolab.fio.document import FioDocument
from iolab.fio.outcome import errno_words
from iolab.model import Case, Code, FioValue, Plan, Result, Setup, Workload
from iolab.targets import caches
from iolab.units import parse_size

UNKNOWN_CORES = 1 << 20  # the importing host's cores say nothing of the host that ran fio


RATED_BLOCK = check_context.RATED_BLOCK


@dataclass(frozen=True)
class Facts:
    """What `iolab import` was told of the imported set-ups (--devices, --rated-iops,
    --rated-mbps, --cache): 0 where not given; each for every set-up, or for the one it names
    (`named`, which wins). A table's own columns win for its set-ups. Rated IOPS hold at a
    block size and pattern (4 KiB random unless told), and are compared only with cases alike."""

    devices: int = 0
    rated_iops: tuple[float, float] = (0.0, 0.0)  # one member's (read, write)
    rated_bps: tuple[float, float] = (0.0, 0.0)
    cache_bytes: int = 0
    rated_block: int = RATED_BLOCK  # the block size the rated IOPS were measured at
    rated_random: bool = True  # ... at random offsets (False: sequential)
    named: tuple[tuple[str, Facts], ...] = ()  # a set-up's own facts, by its name

    def for_setup(self, name: str) -> Facts:
        """The facts of the set-up `name`: its own where given, else everyone's."""
        own = dict(self.named).get(name)
        if own is None:
            return replace(self, named=())
        return Facts(
            own.devices or self.devices,
            own.rated_iops if any(own.rated_iops) else self.rated_iops,
            own.rated_bps if any(own.rated_bps) else self.rated_bps,
            own.cache_bytes or self.cache_bytes,
            own.rated_block if any(own.rated_iops) else self.rated_block,
            own.rated_random if any(own.rated_iops) else self.rated_random,
        )

    def stored(self, devices: int, writers: int = 0) -> tuple[tuple[str, float], ...]:
        """The set-up's facts as stored in its definition: what is known, nothing else."""
        rated = any(self.rated_iops)
        pairs = (
            ("device_count", devices or self.devices),
            ("write_device_count", writers),
            ("rated_read_iops", self.rated_iops[0]),
            ("rated_write_iops", self.rated_iops[1]),
            ("rated_read_bps", self.rated_bps[0]),
            ("rated_write_bps", self.rated_bps[1]),
            ("rated_iops_block", self.rated_block if rated else 0),
            ("rated_iops_sequential", 1.0 if rated and not self.rated_random else 0.0),
        )
        return tuple((key, float(value)) for key, value in pairs if value)


# Checks that need only the job and the set-up's facts: figures without fio's run (a table,
# dd, bonnie++) get these; the others need fio's timing and CPU figures.
FACT_CHECKS = (Code.CACHE_SIZE, Code.ABOVE_CEILING)


@dataclass(frozen=True)
class BuiltRun:
    plan: Plan
    results: tuple[tuple[Result, int], ...]  # each with its workload's position
    span: tuple[float, float]  # the first job's start and the last one's end


def setup_name(job: FoundJob, given: str | None) -> str:
    """--setup, else the set-up the job's source names, else its folder; a published table's
    set-ups are its own."""
    if isinstance(job, Placed) and job.setup and (job.fixed or not given):
        return job.setup
    return given or job.file.resolve().parent.name or "import"


def _setup(job: FoundJob, name: str, given: str | None, facts: Facts) -> Setup:
    own = isinstance(job, Placed) and job.setup and (job.fixed or not given)
    devices = job.devices if isinstance(job, Placed) and own else 0
    writers = job.write_devices if isinstance(job, Placed) and own else 0
    facts = facts.for_setup(name)
    cache = (job.cache_bytes if isinstance(job, Placed) and own else 0) or facts.cache_bytes
    path = job.setup_path if isinstance(job, Placed) and own else ""
    if not own and not given:
        path = str(job.file.resolve().parent)
    return Setup(name, path, cache_bytes=cache, facts=facts.stored(devices, writers))


def software(job: FoundJob) -> str:
    """What measured the job: fio's version, or the other tool's ("published" for a table)."""
    return job.tool if isinstance(job, Placed) and job.tool else job.fio_version


def _apart(jobs: Sequence[FoundJob]) -> dict[int, str]:
    """Published set-ups of one name from several tables, told apart by their file's name."""
    files: dict[str, set[Path]] = {}
    for job in jobs:
        if isinstance(job, Placed) and job.fixed:
            files.setdefault(job.setup, set()).add(job.file)
    return {
        id(job): f"{job.setup} ({names.shown(job.file.stem)})"
        for job in jobs
        if isinstance(job, Placed) and job.fixed and len(files[job.setup]) > 1
    }


def setup_names(jobs: Sequence[FoundJob], given_setup: str | None) -> list[str]:
    """The set-ups the jobs will be imported as, in order."""
    apart = _apart(jobs)
    return list(dict.fromkeys(apart.get(id(j)) or setup_name(j, given_setup) for j in jobs))


def check_named(facts: Facts, jobs: Sequence[FoundJob], given_setup: str | None) -> None:
    """Every set-up a fact names is one the import has (PlanError naming the ones it has)."""
    have = setup_names(jobs, given_setup)
    missing = [name for name, _ in facts.named if name not in have]
    if missing:
        raise PlanError(
            f"a fact names set-up {missing[0]!r}, which this import does not have; its set-ups "
            f"are {', '.join(map(repr, have)) or 'none'} (SETUP=VALUE names one of them)"
        )


def build_run(
    jobs: Sequence[FoundJob], given_setup: str | None, files: Sequence[str], facts: Facts = Facts()
) -> BuiltRun:
    setups: dict[str, Setup] = {}
    workloads: dict[tuple[str, Any], Workload] = {}
    counts: dict[tuple[str, str], int] = {}
    placed: list[tuple[FoundJob, Case]] = []
    jobs = naming.in_order(jobs)
    apart = _apart(jobs)
    named = naming.workload_names(jobs)
    for job in jobs:
        name = apart.get(id(job)) or setup_name(job, given_setup)
        setup = setups.setdefault(name, _setup(job, name, given_setup, facts))
        workload = workloads.get(job.identity())
        if workload is None and not job.options:  # terse and logs say nothing but the name
            workload = next((w for w in workloads.values() if w.name == job.name), None)
        if workload is None:
            taken = {w.name for w in workloads.values()}
            own = naming.unique(named[id(job)], job, taken)
            workload = Workload(own, _sized(job.options), (), len(workloads))
            workloads[job.identity()] = workload
        repetition = counts[(name, workload.name)] = counts.get((name, workload.name), 0) + 1
        placed.append((job, Case(setup, workload, repetition)))
    results = tuple(
        (
            result(job, case, counts[(case.setup.name, case.workload.name)]),
            case.workload.table,
        )
        for job, case in placed
    )
    stamps = [t for r, _ in results for t in (r.started_at, r.ended_at)]
    plan = Plan(
        name=_plan_name(jobs, setups),
        description=f"{len(results)} results imported from {len(files)} files",
        origin="import",
        source="import",
        text="".join(f"{line}\n" for line in files),
        setups=tuple(setups.values()),
        workloads=tuple(workloads.values()),
        repeat=max(counts.values(), default=1),
    )
    return BuiltRun(plan, results, (min(stamps), max(stamps)))


def _plan_name(jobs: Sequence[FoundJob], setups: Mapping[str, Setup]) -> str:
    """The run's name: "import SETUP" (or "import"), "published FILE" for tables alone."""
    if all(software(job) == "published" for job in jobs):
        return "published " + ", ".join(dict.fromkeys(names.shown(j.file.name) for j in jobs))
    return f"import {next(iter(setups))}" if len(setups) == 1 else "import"


def _sized(options: Mapping[str, FioValue]) -> dict[str, FioValue]:
    """fio's options as iolab reads them: a bs per direction ("4k,64k") is read's block size
    for iolab's metric (IOPS or MB/s), and the whole text is kept as bs_per_direction."""
    out = dict(options)
    bs = out.get("bs")
    if isinstance(bs, str) and "," in bs:
        out["bs"], out["bs_per_direction"] = bs.split(",")[0] or "4k", bs
    try:
        parse_size(out.get("bs", "4k"))
    except ValueError:
        out["bs_given"] = out.pop("bs")  # not a size iolab reads: kept, out of its way
    return out


def result(job: FoundJob, case: Case, repeat: int = 1) -> Result:
    """One job's Result, as a live run would have stored the same fio output."""
    ended = job.timestamp or job.file.stat().st_mtime
    base: dict[str, Any] = {"case": case, "ended_at": ended, "samples": tuple(job.samples)}
    if job.metrics is not None:  # known from its logs alone, or another tool's figures
        start = ended - job.metrics.runtime_ms / 1000
        notes = job.notes if isinstance(job, Placed) else (LOGS_ONLY,)
        known = reading.context(case.workload.options, case.setup, Known(), job.metrics)
        flagged = tuple(w for w in reading.warnings(known) if w.code in FACT_CHECKS)
        flagged += levels.warnings(job.samples, job.metrics)
        return Result(
            status="ok", started_at=start, metrics=job.metrics, warnings=notes + flagged, **base
        )
    raw = job.raw
    if raw is None:
        raw = json.dumps({**job.header, "jobs": job.entries}, indent=2)
    said = Known(cpus=UNKNOWN_CORES, repeat=repeat, written_share=_written_share(job, ended))
    known = reading.context(case.workload.options, case.setup, said)
    found = reading.read_document(FioDocument(job.header, tuple(job.entries)), known)
    start = ended - found.whole.runtime_ms / 1000
    if found.whole.error:
        error = f"{errno_words(found.whole.error)} (fio's job {job.name!r} in {job.file})"
        return Result(status="failed", started_at=start, error=error, raw_json=raw, **base)
    return Result(
        status="ok",
        started_at=start,
        metrics=found.metrics,
        raw_json=raw,
        warnings=found.warnings + levels.warnings(job.samples, found.metrics),
        windows=found.windows,
        **base,
    )


def _written_share(job: FoundJob, ended: float) -> float | None:
    """How much of the file a read job read had been written, when the job named one file on
    this host that nothing has written to since the job ended (its mtime is older): a
    fallocated or sparse file then says now what it said then. None otherwise (unknown). The
    file is only looked at (lstat, its extent map), never followed through a link or read."""
    name = job.options.get("filename")
    size = job.options.get("size")
    if not isinstance(name, str) or ":" in name or not name.startswith("/") or size is None:
        return None
    try:
        found = os.lstat(name)
        area = parse_size(size)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(found.st_mode) or found.st_mtime > ended:
        return None
    return caches.written_share(Path(name), area)
