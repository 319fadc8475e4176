"""The campaign: check everything, then run each set-up's cases in order, saving after each."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from iolab.errors import Interrupted
from iolab.fio import jobfile, local, parse
from iolab.fio.info import FioInfo
from iolab.fio.parse import Status
from iolab.model import Case, CaseMetrics, FioValue, Plan, Result, Warning
from iolab.store import Store
from iolab.targets import environment
from iolab.targets.path import Prepared, prepare
from iolab.units import parse_seconds, parse_size

ENDED_EARLY_SHARE = 0.95
CPU_BOUND_PERCENT = 90.0
TIMEOUT_MARGIN_S = 600


class Listener(Protocol):
    """What the runner tells whoever shows progress."""

    def case_started(self, index: int, total: int, case: Case, eta_s: float) -> None: ...
    def status(self, status: Status) -> None: ...
    def case_finished(self, result: Result) -> None: ...


@dataclass(frozen=True)
class Step:
    """One case ready to run: its fully resolved fio job."""

    case: Case
    position: int
    job: jobfile.Job

    @property
    def planned_s(self) -> float:
        options = self.job.options
        if options.get("time_based") != 1:
            return 0.0
        return float(
            parse_seconds(options.get("runtime", 0)) + parse_seconds(options.get("ramp_time", 0))
        )


@dataclass
class Campaign:
    """A plan checked against this host: targets prepared, jobs resolved."""

    plan: Plan
    fio: FioInfo
    targets: dict[str, Prepared]
    steps: list[Step] = field(default_factory=list)


def build(plan: Plan, fio: FioInfo, probe_write: bool = True) -> Campaign:
    """Check every target and resolve every job; raises before anything is written."""
    targets = {setup.name: prepare(setup, probe_write) for setup in plan.setups}
    campaign = Campaign(plan, fio, targets)
    positions = {w.name: i for i, w in enumerate(plan.workloads)}
    largest: dict[str, int] = {}
    for case in plan.cases():
        target = targets[case.setup.name]
        options = resolve(case, target, fio)
        largest[case.setup.name] = max(largest.get(case.setup.name, 0), parse_size(options["size"]))
        comment = (
            f"iolab case {case.key}: set-up {case.setup.name!r}, "
            f"workload {case.workload.name!r}, repetition {case.repetition}"
        )
        job = jobfile.Job(case.workload.name, options, comment)
        campaign.steps.append(Step(case, positions[case.workload.name], job))
    for name, size in largest.items():
        targets[name].check_room(size)
    return campaign


def resolve(case: Case, target: Prepared, fio: FioInfo) -> dict[str, FioValue]:
    """A case's fio options with nothing left to decide: file, size, engine, logs."""
    options: dict[str, FioValue] = {"filename": str(target.filename)}
    options.update(case.workload.options)
    if options.get("size") == "auto":
        options["size"] = f"{target.auto_size() // 1024**2}m"
    if options.get("ioengine") == "auto":
        options["ioengine"] = fio.default_engine
    return jobfile.with_logs(options, "samples")


def check(campaign: Campaign) -> None:
    """fio's own parse of every job, so a bad pass-through option stops the run before it starts."""
    places = [f"{campaign.plan.source}: workload {s.case.workload.name!r}" for s in campaign.steps]
    jobfile.check([s.job for s in campaign.steps], places, campaign.fio.path)


def execute(campaign: Campaign, store: Store, run_id: int, listener: Listener) -> list[Result]:
    """Run every case not yet stored for this run; teardown always runs."""
    done = store.done_keys(run_id)
    todo = [s for s in campaign.steps if s.case.key not in done]
    results: list[Result] = []
    overhead: list[float] = []
    try:
        for setup in campaign.plan.setups:
            steps = [s for s in todo if s.case.setup.name == setup.name]
            if not steps:
                continue
            target = campaign.targets[setup.name]
            store.set_setup_environment(run_id, setup.name, environment.target(target.filename))
            try:
                for step in steps:
                    index = len(done) + len(results) + 1
                    remaining = todo[todo.index(step) :]
                    listener.case_started(
                        index, len(campaign.steps), step.case, _eta(remaining, overhead)
                    )
                    result = run_step(step, campaign.fio, listener)
                    store.save(run_id, result, step.position)
                    results.append(result)
                    overhead.append(result.ended_at - result.started_at - step.planned_s)
                    listener.case_finished(result)
            finally:
                target.cleanup()
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


def _eta(remaining: Iterable[Step], overhead: list[float]) -> float:
    steps = list(remaining)
    per_case = sum(overhead) / len(overhead) if overhead else 1.0
    return sum(s.planned_s for s in steps) + per_case * len(steps)


def run_step(step: Step, fio: FioInfo, listener: Listener) -> Result:
    """Run one case's fio job in a scratch directory and turn what fio left into a Result."""
    workdir = Path(tempfile.mkdtemp(prefix="iolab-case-"))
    text = jobfile.render([step.job])
    job_path = workdir / "job.fio"
    job_path.write_text(text)
    started = time.time()
    timeout = step.planned_s + TIMEOUT_MARGIN_S if step.planned_s else None
    try:
        outcome = local.run(fio.path, job_path, workdir, listener.status, timeout)
        return _result(step, outcome, text, started)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _result(step: Step, outcome: local.Outcome, text: str, started: float) -> Result:
    base = {"case": step.case, "started_at": started, "ended_at": time.time(), "job_file": text}
    problem = failure(outcome)
    raw = outcome.json_text or None
    if problem:
        return Result(status="failed", error=problem, raw_json=raw, **base)  # type: ignore[arg-type]
    metrics = parse.metrics(parse.load_json(outcome.json_text))
    interval = step.job.options.get("log_avg_msec")
    samples = parse.samples(outcome.log_files, int(interval)) if isinstance(interval, int) else []
    return Result(
        status="ok",
        metrics=metrics,
        raw_json=raw,
        samples=tuple(samples),
        warnings=tuple(_warnings(step, metrics)),
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


def _warnings(step: Step, metrics: CaseMetrics) -> list[Warning]:
    found = []
    options = step.job.options
    if options.get("time_based") == 1:
        runtime_ms = parse_seconds(options.get("runtime", 0)) * 1000
        if metrics.runtime_ms < runtime_ms * ENDED_EARLY_SHARE:
            found.append(
                Warning(
                    "ended-early",
                    f"fio ran {metrics.runtime_ms / 1000:.1f} s "
                    f"of the {runtime_ms / 1000:.0f} s asked.",
                    "Look for errors, a too-small size, or a target that stopped accepting I/O.",
                )
            )
    cpu = metrics.usr_cpu + metrics.sys_cpu
    if cpu >= CPU_BOUND_PERCENT:
        found.append(
            Warning(
                "cpu-bound",
                f"fio's jobs used {cpu:.0f}% CPU each: "
                "the load generator may be the limit, not the device.",
                "Use an asynchronous ioengine with a deeper iodepth, or fewer jobs per core.",
            )
        )
    return found
