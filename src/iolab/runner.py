"""The campaign: check everything, then run each set-up's cases in order, saving after each."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from iolab.errors import Interrupted, PlanError, TargetError
from iolab.fio import jobfile, local, parse
from iolab.fio.info import FioInfo
from iolab.fio.parse import Status
from iolab.model import Case, CaseMetrics, FioValue, Plan, Result, Setup, Warning, Workload
from iolab.store import Store
from iolab.targets import devices, environment, lock, process, provision, safety
from iolab.targets.environment import JSONDict
from iolab.targets.path import FREE_SPACE_MARGIN, TEST_FILE, Prepared, prepare, writes
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
    """What the user allowed: devices (and files of their own) that may be overwritten,
    signature wiping, and running a plan's hook commands."""

    devices: frozenset[str] = frozenset()
    wipe_signatures: bool = False
    hooks: bool = False


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
    """Check every target before anything is written: paths, room, consent and device safety."""
    consent = consent or Consent()
    paths = {s.name: prepare(s, probe_write) for s in plan.setups if s.layout is None}
    for setup in plan.setups:
        if setup.layout is not None:
            provision.validate(setup.layout)
            _check_hooks(setup, consent)
            if probe_write:
                safety.check(setup.layout.devices, consent.devices, consent.wipe_signatures)
    campaign = Campaign(plan, fio, consent, paths)
    positions = {w.name: i for i, w in enumerate(plan.workloads)}
    campaign.steps = [Step(case, positions[case.workload.name]) for case in plan.cases()]
    for setup in plan.setups:
        _check_room(setup, plan.workloads, paths.get(setup.name), consent, probe_write)
    return campaign


def _largest(workloads: Iterable[Workload]) -> int:
    """The most bytes any workload's file reaches: its size (or filesize), past its offset."""
    return max((_footprint(w.options) for w in workloads), default=0)


def _footprint(options: Mapping[str, FioValue]) -> int:
    def bytes_of(key: str) -> int:
        value = str(options.get(key, "0"))
        top = re.split(r"[-:]", value)[-1]  # a range "1m-40m" reaches its top
        try:
            return parse_size(top)
        except ValueError:
            return 0  # "auto", percentages: sized by iolab or relative to the file

    return max(bytes_of("size"), bytes_of("filesize")) + bytes_of("offset")


def _check_hooks(setup: Setup, consent: Consent) -> None:
    layout = setup.layout
    if layout is None or consent.hooks or not (layout.setup_hook or layout.teardown_hook):
        return
    raise PlanError(
        f"set-up {setup.name!r} has hooks, which run shell commands as this user: a plan with "
        "hooks is code; read it, then pass --allow-hooks to run it"
    )


def _check_room(
    setup: Setup,
    workloads: tuple[Workload, ...],
    target: Prepared | None,
    consent: Consent,
    probe_write: bool,
) -> None:
    """The test area fits where it goes, and a user's own file is neither grown nor written
    without consent; the same rule for every kind of target."""
    size = _largest(workloads)
    if target is None:
        if setup.layout is not None and probe_write:
            capacity = provision.capacity(setup.layout)
            if capacity is not None and size > capacity * FREE_SPACE_MARGIN:
                raise TargetError(
                    f"set-up {setup.name!r}: size {human_bytes(size)} does not fit in the about "
                    f"{human_bytes(int(capacity * FREE_SPACE_MARGIN))} usable on "
                    f"{', '.join(setup.layout.devices)}; lower it with --size"
                )
        return
    target.check_room(size)
    if target.owned:
        return
    writer = next((w for w in workloads if writes(w.options)), None)
    confirmed = {os.path.realpath(d) for d in consent.devices}
    if writer is not None and str(target.filename) not in confirmed:
        raise TargetError(
            f"set-up {setup.name!r}: workload {writer.name!r} writes to your file "
            f"{target.filename}; confirm with --yes-destroy {target.filename}, or give a "
            "directory (iolab then makes and removes its own test file)"
        )


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
    """fio's own parse of every job, so a bad pass-through option stops the run before it starts,
    and the limits fio only meets at run time (this host's CPUs, engines, AIO contexts).

    Raises jobfile.Rejected; `rejected_workload` says which workload it was about.
    """
    for workload in campaign.plan.workloads:
        problem = host_problem(workload.options, campaign.fio)
        if problem:
            key, reason = problem
            first = next(i for i, s in enumerate(campaign.steps) if s.case.workload == workload)
            raise jobfile.Rejected(first, key, reason)
    jobs = []
    for step in campaign.steps:
        job = campaign.preview(step)
        if job.options.get("size") == "auto":
            job = jobfile.Job(job.name, {**job.options, "size": "1m"})
        jobs.append(job)
    jobfile.check(jobs, campaign.fio.path)


def _cpus(text: str) -> list[int]:
    """CPU numbers in fio's list syntax: "0-3,6"."""
    out: list[int] = []
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        if low.isdigit() and (not high or high.isdigit()):
            out += range(int(low), int(high or low) + 1)
    return out


def host_problem(options: Mapping[str, FioValue], fio: FioInfo) -> tuple[str, str] | None:
    """(key, reason) for a value this host cannot run, which fio's parse-only lets through."""
    engine = options.get("ioengine")
    if engine not in (None, "auto") and engine not in fio.engines:
        return "ioengine", f"ioengine {engine!r} is not built into {fio.version} on this host"
    count = os.cpu_count() or 1
    for key in ("cpus_allowed", "verify_async_cpus", "log_compression_cpus"):
        wanted = _cpus(str(options.get(key, "")))
        if wanted and max(wanted) >= count:
            return key, f"{key} names CPU {max(wanted)}, and this host has CPUs 0-{count - 1}"
    if (engine == "libaio" or (engine == "auto" and fio.default_engine == "libaio")) and (
        depth := int(options.get("iodepth", 1)) * int(options.get("numjobs", 1))
    ) > (room := _aio_room()):
        return "iodepth", (
            f"iodepth x numjobs = {depth:,} AIO contexts, and this host allows {room:,} "
            "(/proc/sys/fs/aio-max-nr); lower them or use ioengine io_uring"
        )
    return None


def _aio_room() -> int:
    limit = devices.read_int("/proc/sys/fs/aio-max-nr") or 65536
    used = devices.read_int("/proc/sys/fs/aio-nr") or 0
    return max(0, limit - used)


def rejected_workload(campaign: Campaign, rejected: jobfile.Rejected) -> Workload:
    return campaign.steps[rejected.index].case.workload


class Ledger:
    """What a run has made and must remove (test files, scratch folders, mounts), kept in the
    store as it goes, so that a later iolab can clean up after a run whose process died."""

    def __init__(self, store: Store, run_id: int) -> None:
        self.store, self.run_id = store, run_id

    @contextlib.contextmanager
    def holding(self, kind: str, path: Path | str) -> Iterator[None]:
        self.store.add_leftover(self.run_id, kind, str(path))
        try:
            yield
        finally:
            self.store.drop_leftover(self.run_id, kind, str(path))


@contextlib.contextmanager
def placed(
    setup: Setup, campaign: Campaign, record: Callable[[JSONDict], None], ledger: Ledger
) -> Iterator[Prepared]:
    """The set-up's target, ready for fio; removed or torn down afterwards, always."""
    if setup.layout is None:
        target = campaign.paths[setup.name]
        record({"target": environment.target(target.filename)})
        kind = "file" if target.owned else "user-file"
        with ledger.holding(kind, target.filename):
            try:
                yield target
            finally:
                target.cleanup()
        return
    consent = campaign.consent
    built_log: list[provision.LogEntry] = []
    facts: JSONDict = {}
    try:
        with ledger.holding("mount", mountpoint(setup)), provision.build(
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
            if not built.raw:
                target.check_room(_largest(campaign.plan.workloads))
            yield target
    finally:
        if built_log:
            record({"layout": facts, "log": _log(built_log)})


def _log(entries: Iterable[provision.LogEntry]) -> list[JSONDict]:
    return [{"command": c, "returncode": rc, "output": out} for c, rc, out in entries]


def targets(campaign: Campaign) -> list[tuple[str, str]]:
    """What a campaign writes to, as (real path, description) for locking."""
    out = []
    for setup in campaign.plan.setups:
        if setup.layout is None:
            file = campaign.paths[setup.name].filename
            out.append((str(file), f"set-up {setup.name!r}: target {file}"))
        else:
            out += [
                (os.path.realpath(d), f"set-up {setup.name!r}: device {d}")
                for d in setup.layout.devices
            ]
    return out


def locked(campaign: Campaign) -> contextlib.AbstractContextManager[None]:
    """Hold every target of the campaign for this process; refuse if another iolab has one."""
    return lock.held(targets(campaign))


def start(store: Store, run_id: int) -> None:
    """This process now runs the run: recorded so a later iolab can tell if it died."""
    store.claim(run_id, process.me())


def execute(campaign: Campaign, store: Store, run_id: int, listener: Listener) -> list[Result]:
    """Run every case not yet stored for this run, set-up by set-up; teardown always runs."""
    done = store.done_keys(run_id)
    todo = [s for s in campaign.steps if s.case.key not in done]
    order = {id(s): n for n, s in enumerate(todo)}
    results: list[Result] = []
    overhead: list[float] = []
    environments: dict[str, JSONDict] = {}
    ledger = Ledger(store, run_id)
    start(store, run_id)

    def record(name: str) -> Callable[[JSONDict], None]:
        def save(facts: JSONDict) -> None:
            environments.setdefault(name, {}).update(facts)
            store.set_setup_environment(run_id, name, environments[name])

        return save

    scratch = Path(tempfile.mkdtemp(prefix=f"iolab-run{run_id}-"))
    try:
        with ledger.holding("dir", scratch):
            for setup in campaign.plan.setups:
                steps = [s for s in todo if s.case.setup.name == setup.name]
                if not steps:
                    continue
                ran = 0
                try:
                    with placed(setup, campaign, record(setup.name), ledger) as target:
                        for step in steps:
                            index = len(done) + len(results) + 1
                            eta = _eta(todo[order[id(step)] :], overhead)
                            listener.case_started(index, len(campaign.steps), step.case, eta)
                            job = step.job(target, campaign.fio)
                            result = run_step(step, job, campaign.fio.path, listener, scratch)
                            store.save(run_id, result, step.position)
                            results.append(result)
                            ran += 1
                            overhead.append(result.ended_at - result.started_at - step.planned_s)
                            listener.case_finished(result)
                except TargetError as error:
                    if ran == len(steps):
                        raise
                    for step in steps[ran:]:
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
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    store.finish_run(run_id, "done")
    return results


def recover(store: Store) -> list[str]:
    """Runs left 'running' by an iolab on this host that died: marked interrupted, their test
    files, scratch folders and mounts removed. One line per run, saying so."""
    said = []
    for run_id, owner in store.running():
        if process.alive(owner) is not False:
            continue
        left = store.leftovers(run_id)
        removed = [where for kind, where in left if _remove(kind, where)]
        for kind, where in left:
            store.drop_leftover(run_id, kind, where)
        store.finish_run(run_id, "interrupted")
        what = f"; removed {', '.join(removed)}" if removed else ""
        said.append(
            f"run {run_id} was left running by process {owner.get('pid')}, which is gone: "
            f"marked interrupted{what}; resume with: iolab run --resume {run_id} --db {store.path}"
        )
    return said


def _remove(kind: str, path: str) -> bool:
    """Remove one thing a dead run left, if it is still there and is what iolab made."""
    target = Path(path)
    if kind == "file" and target.name == TEST_FILE and target.is_file():
        target.unlink()
        return True
    if kind == "dir" and target.name.startswith("iolab-run") and target.is_dir():
        shutil.rmtree(target, ignore_errors=True)
        return True
    if kind == "mount" and devices.mount_of_target(str(target)) is not None:
        done = subprocess.run(["umount", str(target)], capture_output=True, check=False)
        return done.returncode == 0
    return False


def _setup_failed(step: Step, message: str) -> Result:
    now = time.time()
    return Result(case=step.case, status="failed", started_at=now, ended_at=now, error=message)


def _eta(remaining: Iterable[Step], overhead: list[float]) -> float:
    steps = list(remaining)
    per_case = sum(overhead) / len(overhead) if overhead else 1.0
    return sum(s.planned_s for s in steps) + per_case * len(steps)


def run_step(
    step: Step, job: jobfile.Job, fio: str, listener: Listener, scratch: Path | None = None
) -> Result:
    """Run one case's fio job in a scratch directory and turn what fio left into a Result."""
    workdir = Path(tempfile.mkdtemp(prefix="iolab-case-", dir=scratch))
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
    line = told[0] if told else lines[0] if lines else ""
    number = re.search(r"\berr=(\d+)", line)
    code = int(number.group(1)) if number else error
    if code:
        return (
            f"{_errno_words(code)}: {line}"
            if line
            else f"fio's job stopped with {_errno_words(code)}"
        )
    return line or f"fio exited with code {outcome.returncode}"


def _errno_words(code: int) -> str:
    """22 -> 'EINVAL: Invalid argument'."""
    return f"{errno.errorcode.get(code, f'error {code}')}: {os.strerror(code)}"


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
