"""The campaign: check everything, then run each set-up's cases in order, saving after each."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from iolab.errors import Interrupted, TargetError
from iolab.fio import jobfile, local, parse
from iolab.fio.info import FioInfo
from iolab.fio.parse import Status
from iolab.model import Case, CaseMetrics, FioValue, Plan, Result, Setup, Warning, Workload
from iolab.store import Store
from iolab.targets import environment, provision, safety
from iolab.targets.environment import JSONDict
from iolab.targets.path import TEST_FILE, Prepared, prepare
from iolab.units import human_bytes, parse_seconds, parse_size

ENDED_EARLY_SHARE = 0.95
CPU_BOUND_PERCENT = 90.0
TIMEOUT_MARGIN_S = 600
MOUNT_ROOT = Path("/run/iolab")


class Listener(Protocol):
    """What the runner tells whoever shows progress."""

    def case_started(self, index: int, total: int, case: Case, eta_s: float) -> None: ...
    def status(self, status: Status) -> None: ...
    def case_finished(self, result: Result) -> None: ...


@dataclass(frozen=True)
class Step:
    """One case in the matrix: its workload options, with "auto" values still to resolve."""

    case: Case
    position: int

    @property
    def planned_s(self) -> float:
        options = self.case.workload.options
        if options.get("time_based") != 1:
            return 0.0
        return float(
            parse_seconds(options.get("runtime", 0)) + parse_seconds(options.get("ramp_time", 0))
        )

    def job(self, target: Prepared, fio: FioInfo, built: bool = True) -> jobfile.Job:
        """The fio job for this case on a target (not yet `built`: size "auto" stays)."""
        case = self.case
        comment = (
            f"iolab case {case.key}: set-up {case.setup.name!r}, "
            f"workload {case.workload.name!r}, repetition {case.repetition}"
        )
        return jobfile.Job(case.workload.name, resolve(case, target, fio, built), comment)


@dataclass(frozen=True)
class Consent:
    """What the user allowed for block devices: which may be destroyed, and signature wiping."""

    devices: frozenset[str] = frozenset()
    wipe_signatures: bool = False


@dataclass
class Campaign:
    """A plan checked against this host: path targets prepared, device set-ups vetted."""

    plan: Plan
    fio: FioInfo
    consent: Consent
    paths: dict[str, Prepared]
    steps: list[Step] = field(default_factory=list)

    def preview(self, step: Step) -> jobfile.Job:
        """The job as it will run; on a set-up still to build, its planned file and sizes."""
        setup = step.case.setup
        if setup.name in self.paths:
            return step.job(self.paths[setup.name], self.fio)
        planned = Prepared(setup, mountpoint(setup) / TEST_FILE, owned=True, free_bytes=0)
        return step.job(planned, self.fio, built=False)


def mountpoint(setup: Setup) -> Path:
    """Where a set-up built on devices is mounted while its cases run."""
    return MOUNT_ROOT / jobfile.section_name(setup.name)


def build(
    plan: Plan, fio: FioInfo, consent: Consent | None = None, probe_write: bool = True
) -> Campaign:
    """Check every target before anything is written: paths, room, and device safety."""
    consent = consent or Consent()
    paths = {s.name: prepare(s, probe_write) for s in plan.setups if s.layout is None}
    for setup in plan.setups:
        if setup.layout is not None:
            provision.validate(setup.layout)
            if probe_write:
                safety.check(setup.layout.devices, consent.devices, consent.wipe_signatures)
    campaign = Campaign(plan, fio, consent, paths)
    positions = {w.name: i for i, w in enumerate(plan.workloads)}
    campaign.steps = [Step(case, positions[case.workload.name]) for case in plan.cases()]
    for name, target in paths.items():
        sizes = [
            s.case.workload.options.get("size") for s in campaign.steps if s.case.setup.name == name
        ]
        target.check_room(max((parse_size(v) for v in sizes if v != "auto"), default=0))
    return campaign


def resolve(case: Case, target: Prepared, fio: FioInfo, built: bool = True) -> dict[str, FioValue]:
    """A case's fio options with nothing left to decide: file, size, engine, logs.

    On a target not yet built, size "auto" stays: its free space is not known.
    """
    options: dict[str, FioValue] = {"filename": str(target.filename)}
    options.update(case.workload.options)
    if options.get("size") == "auto" and built:
        if target.raw:
            del options["size"]  # the whole device, as fio does by default
        else:
            options["size"] = f"{target.auto_size() // 1024**2}m"
    if options.get("ioengine") == "auto":
        options["ioengine"] = fio.default_engine
    return jobfile.with_logs(options, "samples")


def check(campaign: Campaign) -> None:
    """fio's own parse of every job, so a bad pass-through option stops the run before it starts.

    Raises jobfile.Rejected; `rejected_workload` says which workload it was about.
    """
    jobs = []
    for step in campaign.steps:
        job = campaign.preview(step)
        if job.options.get("size") == "auto":
            job = jobfile.Job(job.name, {**job.options, "size": "1m"})
        jobs.append(job)
    jobfile.check(jobs, campaign.fio.path)


def rejected_workload(campaign: Campaign, rejected: jobfile.Rejected) -> Workload:
    return campaign.steps[rejected.index].case.workload


@contextlib.contextmanager
def placed(
    setup: Setup, campaign: Campaign, record: Callable[[JSONDict], None]
) -> Iterator[Prepared]:
    """The set-up's target, ready for fio; removed or torn down afterwards, always."""
    if setup.layout is None:
        target = campaign.paths[setup.name]
        record({"target": environment.target(target.filename)})
        try:
            yield target
        finally:
            target.cleanup()
        return
    consent = campaign.consent
    built_log: list[provision.LogEntry] = []
    facts: JSONDict = {}
    try:
        with provision.build(
            setup.layout, mountpoint(setup), confirmed=consent.devices,
            wipe_signatures=consent.wipe_signatures,
        ) as built:  # fmt: skip
            built_log, facts = built.log, built.facts
            filename = Path(":".join(str(p) for p in built.paths)) if built.raw else built.path
            free = shutil.disk_usage(built.mountpoint).free if built.mountpoint else 0
            target = Prepared(setup, filename, owned=not built.raw, free_bytes=free, raw=built.raw)
            record(
                {"target": environment.target(built.path), "layout": facts, "log": _log(built_log)}
            )
            yield target
    finally:
        if built_log:
            record({"layout": facts, "log": _log(built_log)})


def _log(entries: Iterable[provision.LogEntry]) -> list[JSONDict]:
    return [{"command": c, "returncode": rc, "output": out} for c, rc, out in entries]


def execute(campaign: Campaign, store: Store, run_id: int, listener: Listener) -> list[Result]:
    """Run every case not yet stored for this run, set-up by set-up; teardown always runs."""
    done = store.done_keys(run_id)
    todo = [s for s in campaign.steps if s.case.key not in done]
    results: list[Result] = []
    overhead: list[float] = []
    environments: dict[str, JSONDict] = {}

    def record(name: str) -> Callable[[JSONDict], None]:
        def save(facts: JSONDict) -> None:
            environments.setdefault(name, {}).update(facts)
            store.set_setup_environment(run_id, name, environments[name])

        return save

    try:
        for setup in campaign.plan.setups:
            steps = [s for s in todo if s.case.setup.name == setup.name]
            if not steps:
                continue
            ran: list[Step] = []
            try:
                with placed(setup, campaign, record(setup.name)) as target:
                    for step in steps:
                        index = len(done) + len(results) + 1
                        eta = _eta(todo[todo.index(step) :], overhead)
                        listener.case_started(index, len(campaign.steps), step.case, eta)
                        result = run_step(
                            step, step.job(target, campaign.fio), campaign.fio.path, listener
                        )
                        store.save(run_id, result, step.position)
                        results.append(result)
                        ran.append(step)
                        overhead.append(result.ended_at - result.started_at - step.planned_s)
                        listener.case_finished(result)
            except TargetError as error:
                left = [s for s in steps if s not in ran]
                if not left:
                    raise
                for step in left:
                    result = _setup_failed(step, f"set-up {setup.name!r} failed: {error}")
                    store.save(run_id, result, step.position)
                    results.append(result)
                    listener.case_finished(result)
    except KeyboardInterrupt:
        store.finish_run(run_id, "interrupted")
        kept = len(done) + len(results)
        raise Interrupted(
            f"interrupted: {kept} of {len(campaign.steps)} cases are stored in {store.path}; "
            f"resume with: iolab run --resume {run_id} --db {store.path}",
            run_id,
        ) from None
    store.finish_run(run_id, "done")
    return results


def _setup_failed(step: Step, message: str) -> Result:
    now = time.time()
    return Result(case=step.case, status="failed", started_at=now, ended_at=now, error=message)


def _eta(remaining: Iterable[Step], overhead: list[float]) -> float:
    steps = list(remaining)
    per_case = sum(overhead) / len(overhead) if overhead else 1.0
    return sum(s.planned_s for s in steps) + per_case * len(steps)


def run_step(step: Step, job: jobfile.Job, fio: str, listener: Listener) -> Result:
    """Run one case's fio job in a scratch directory and turn what fio left into a Result."""
    workdir = Path(tempfile.mkdtemp(prefix="iolab-case-"))
    text = jobfile.render([job])
    job_path = workdir / "job.fio"
    job_path.write_text(text)
    started = time.time()
    timeout = step.planned_s + TIMEOUT_MARGIN_S if step.planned_s else None
    try:
        outcome = local.run(fio, job_path, workdir, listener.status, timeout)
        return _result(step, job, outcome, text, started)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _result(
    step: Step, job: jobfile.Job, outcome: local.Outcome, text: str, started: float
) -> Result:
    base = {"case": step.case, "started_at": started, "ended_at": time.time(), "job_file": text}
    problem = failure(outcome)
    raw = outcome.json_text or None
    if problem:
        return Result(status="failed", error=problem, raw_json=raw, **base)  # type: ignore[arg-type]
    metrics = parse.metrics(parse.load_json(outcome.json_text))
    interval = job.options.get("log_avg_msec")
    samples = parse.samples(outcome.log_files, int(interval)) if isinstance(interval, int) else []
    return Result(
        status="ok",
        metrics=metrics,
        raw_json=raw,
        samples=tuple(samples),
        warnings=tuple(_warnings(job, metrics)),
        **base,  # type: ignore[arg-type]
    )


def failure(outcome: local.Outcome) -> str | None:
    """One line saying why fio failed this case, in fio's own words; None when it did not."""
    if outcome.timed_out:
        return "fio did not finish in time and was stopped"
    error = 0
    with contextlib.suppress(parse.ParseError):
        error = parse.metrics(parse.load_json(outcome.json_text)).error
        if outcome.returncode == 0 and error == 0:
            return None
    lines = [line.strip() for line in outcome.stderr.splitlines() if line.strip()]
    told = [line for line in lines if "error" in line.lower() or line.startswith("fio:")]
    if told:
        return told[0]
    if lines:
        return lines[0]
    return f"fio exited with code {outcome.returncode} (job error {error})"


def _warnings(job: jobfile.Job, metrics: CaseMetrics) -> list[Warning]:
    """Methodology checks on one finished case; each says what to do next."""
    checks = (_ended_early, _cpu_bound, _page_cache)
    return [found for check in checks if (found := check(job.options, metrics)) is not None]


def _ended_early(options: Mapping[str, FioValue], metrics: CaseMetrics) -> Warning | None:
    if options.get("time_based") != 1:
        return None
    runtime_ms = parse_seconds(options.get("runtime", 0)) * 1000
    if metrics.runtime_ms >= runtime_ms * ENDED_EARLY_SHARE:
        return None
    return Warning(
        "ended-early",
        f"fio ran {metrics.runtime_ms / 1000:.1f} s of the {runtime_ms / 1000:.0f} s asked.",
        "Look for errors, a too-small size, or a target that stopped accepting I/O.",
    )


def _cpu_bound(options: Mapping[str, FioValue], metrics: CaseMetrics) -> Warning | None:
    cpu = metrics.usr_cpu + metrics.sys_cpu
    if cpu < CPU_BOUND_PERCENT:
        return None
    return Warning(
        "cpu-bound",
        f"fio's jobs used {cpu:.0f}% CPU each: the load generator may be the limit, "
        "not the device.",
        "Use an asynchronous ioengine with a deeper iodepth, or fewer jobs per core.",
    )


def _page_cache(options: Mapping[str, FioValue], metrics: CaseMetrics) -> Warning | None:
    """Buffered I/O over less data than the memory measures the page cache (study C's trap)."""
    if options.get("direct") != 0 or "size" not in options:
        return None
    size, memory = parse_size(options["size"]), environment.memory_bytes()
    if not memory or size >= 2 * memory:
        return None
    return Warning(
        "page-cache",
        f"direct=0 over {human_bytes(size)}, and this host has {human_bytes(memory)} of "
        "memory: much of the I/O may hit the page cache, not the device.",
        "Use direct=1, or a size of at least twice the memory.",
    )
