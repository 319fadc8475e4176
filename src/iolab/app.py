"""The use cases behind the commands, as functions of plain values: run a plan, open a store,
build a report, read the environment. The cli parses and prints; this module decides.

Everything that talks to the person at the keyboard goes through a `Ui`: a line to say, a
device to confirm, a progress listener. Errors are raised as iolab's typed errors.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from iolab import __version__, plan, runner
from iolab.errors import PlanError, StoreError, TargetError
from iolab.fio import info, jobfile
from iolab.fio.executor import Executor
from iolab.model import Plan, Result
from iolab.report import data as report_data
from iolab.report import document as report_document
from iolab.store import RunRow, Store
from iolab.targets import devices, environment, process, provision

DEFAULT_DB = "iolab.db"


class Ui(Protocol):
    """What a use case needs from whoever drives it."""

    def say(self, line: str) -> None:
        """A line of news for the person (a run started or resumed)."""

    def warn(self, line: str) -> None:
        """A line about something iolab did on its own (a dead run cleaned up)."""

    def confirm(self, device: str, description: str) -> bool | None:
        """Ask whether `device` may be destroyed; None when nobody can be asked."""

    def progress(self) -> contextlib.AbstractContextManager[runner.Listener]:
        """A listener that shows the run's progress while it is open."""


@dataclass(frozen=True)
class RunRequest:
    """`iolab run` as the user asked for it."""

    plan_file: str | None = None
    preset: str | None = None
    overrides: plan.Overrides = field(default_factory=plan.Overrides)
    db: str = DEFAULT_DB
    resume_id: int | None = None
    force_new: bool = False
    destroy: tuple[str, ...] = ()
    wipe_signatures: bool = False
    allow_hooks: bool = False


@dataclass(frozen=True)
class RunOutcome:
    run_id: int
    results: tuple[Result, ...]
    document: report_document.Document

    @property
    def failed(self) -> int:
        return sum(1 for r in self.results if r.status != "ok")


def load_plan(plan_file: str | None, preset: str | None, overrides: plan.Overrides) -> Plan:
    if plan_file and preset:
        raise PlanError("give a plan file or --preset NAME, not both")
    if plan_file:
        return plan.load_file(plan_file, overrides)
    return plan.load_preset(preset or "quick", overrides)


@contextlib.contextmanager
def open_store(db: str, ui: Ui, create: bool = False) -> Iterator[Store]:
    """The database, after cleaning up any run on it whose iolab died (said in one line each)."""
    with Store(db, create=create) as store:
        with contextlib.suppress(StoreError):  # a read-only database: nothing to clean
            for line in runner.recover(store):
                ui.warn(line)
        yield store


def _requested_plan(request: RunRequest, ui: Ui) -> tuple[Plan, plan.Overrides]:
    if request.resume_id is None:
        overrides = request.overrides
        return load_plan(request.plan_file, request.preset, overrides), overrides
    if request.plan_file or request.preset or request.overrides != plan.Overrides():
        raise PlanError("--resume RUN takes no plan or overrides: it reuses the run's own")
    with open_store(request.db, ui) as store:
        stored = store.run(request.resume_id)
    overrides = plan.Overrides(**stored.overrides)
    return plan.parse_plan(stored.plan_text, stored.plan_source, overrides), overrides


def run(request: RunRequest, ui: Ui, executor: Executor | None = None) -> RunOutcome:
    """Check everything, then run the plan's cases into the database (resuming where it can)
    and build the run's report document, the same one `iolab report` prints."""
    the_plan, overrides = _requested_plan(request, ui)
    Store.check_path(request.db)
    fio = info.probe()
    consent = _consent(the_plan, request, ui)
    campaign = runner.build(the_plan, fio, consent, executor=executor)
    _check_with_fio(campaign)
    with runner.locked(campaign), open_store(request.db, ui, create=True) as store:
        run_id = _pick_run(store, campaign, request, overrides, ui)
        with ui.progress() as listener:
            results = runner.execute(campaign, store, run_id, listener)
        document = run_document(store, run_id)
    return RunOutcome(run_id, tuple(results), document)


def run_document(store: Store, run_id: int) -> report_document.Document:
    stored = store.run(run_id)
    data = report_data.load(store, [run_id], samples=False, histograms=False)
    options = report_document.Options(metric=stored.metric, baseline=stored.baseline, charts=())
    return report_document.build(data, options)


def _check_with_fio(campaign: runner.Campaign) -> None:
    """fio's own parse of the jobs; a refusal is placed at its line in the plan."""
    try:
        runner.check(campaign)
    except jobfile.Rejected as rejected:
        workload = runner.rejected_workload(campaign, rejected)
        raise plan.locate(campaign.plan, workload, rejected.key, rejected.reason) from None


def _consent(the_plan: Plan, request: RunRequest, ui: Ui) -> runner.Consent:
    """The devices (and files) the user agreed to destroy: by flag, or asked one by one."""
    wanted = [d for s in the_plan.setups if s.layout for d in s.layout.devices]
    files = {str(Path(s.path).resolve()) for s in the_plan.setups if s.layout is None}
    for device in request.destroy:
        if device not in wanted and str(Path(device).resolve()) not in files:
            raise TargetError(
                f"--yes-destroy {device}: the plan does not use it; name only the plan's devices "
                "or files"
            )
    confirmed = set(request.destroy)
    for device in dict.fromkeys(wanted):
        if device in confirmed:
            continue
        answer = ui.confirm(device, devices.describe(device))
        if answer is False:
            raise TargetError(f"{device} was not confirmed; nothing was written")
        if answer:
            confirmed.add(device)
    return runner.Consent(frozenset(confirmed), request.wipe_signatures, request.allow_hooks)


def _pick_run(
    store: Store,
    campaign: runner.Campaign,
    request: RunRequest,
    overrides: plan.Overrides,
    ui: Ui,
) -> int:
    """The run to fill: the one asked for, an unfinished one of the same plan, or a new one."""
    the_plan = campaign.plan
    found: RunRow | None = None
    if request.resume_id is not None:
        found = store.run(request.resume_id)
    elif not request.force_new:
        found = store.resumable(the_plan.hash)
    if found is not None:
        retried = f"; {found.failed} failed will run again" if found.failed else ""
        ui.say(
            f"resuming run {found.id}: {found.ok} of {found.case_count} cases already stored"
            f"{retried}"
        )
        return found.id
    env = environment.host(campaign.fio.version)
    run_id = store.create_run(
        the_plan, env, __version__, dataclasses.asdict(overrides), process.me()
    )
    ui.say(f"run {run_id}: {the_plan.name}, {len(campaign.steps)} cases, results in {store.path}")
    return run_id


def provision_commands(the_plan: Plan) -> list[tuple[str, list[list[str]]]]:
    """Per set-up built on devices, every command that builds and tears it down."""
    return [
        (setup.name, provision.commands(setup.layout, runner.mountpoint(setup)))
        for setup in the_plan.setups
        if setup.layout is not None
    ]


def job_files(the_plan: Plan) -> list[str]:
    """The exact fio job file of every case, as it will run; nothing is written."""
    campaign = runner.build(the_plan, info.probe(), probe_write=False)
    return [jobfile.render([campaign.preview(step)]) for step in campaign.steps]


def report(
    db: str, run_ids: Sequence[int], options: report_document.Options, drawn: bool, ui: Ui
) -> report_document.Document:
    """Stored runs (default: the latest) as one document; `drawn` loads samples and histograms
    for charts. A single run's own metric and baseline are the defaults."""
    with open_store(db, ui) as store:
        data = report_data.load(store, list(run_ids), samples=drawn, histograms=drawn)
    single = data.runs[0] if len(data.runs) == 1 else None
    if single is not None:
        options = dataclasses.replace(
            options,
            metric=single.metric if options.metric == "auto" else options.metric,
            baseline=options.baseline or single.baseline,
        )
    return report_document.build(data, options)


def compare(db: str, run_ids: Sequence[int], metric: str, ui: Ui) -> report_document.Document:
    with open_store(db, ui) as store:
        data = report_data.load(store, list(run_ids), samples=False, histograms=False)
    return report_document.compare(data, metric)


def runs(db: str, ui: Ui) -> list[RunRow]:
    with open_store(db, ui) as store:
        return store.runs()


def environment_of(path: str) -> dict[str, Any]:
    """The host, and what `path` lives on: filesystem, RAID, devices and their settings."""
    target = Path(path)
    if not target.exists():
        raise TargetError(f"{path} does not exist; give a file, directory or device")
    return {"host": environment.host(info.probe().version), "target": environment.target(target)}
