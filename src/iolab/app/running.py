"""Running a plan: `iolab run` (here or in the virtual lab), what it would provision, its job
files and plan text, and `iolab rehearse`."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from iolab import layouts
from iolab.app.base import (
    RunOutcome,
    RunRequest,
    Ui,
    clean_up_dead_runs,
    load_plan,
    open_store,
    pick_run,
    restores_said,
)
from iolab.errors import PlanError, StoreError, TargetError
from iolab.fio import info, jobfile
from iolab.fio.executor import Executor
from iolab.fio.parse import Status
from iolab.model import Plan
from iolab.plan.common import Overrides
from iolab.plan.load import locate, parse_plan, preset_text
from iolab.report import data as report_data
from iolab.report import document as report_document
from iolab.report import run as report_run
from iolab.runner.campaign import (
    Campaign,
    Consent,
    ask_hosts,
    check,
    locked,
    mountpoint,
    plan_campaign,
    rejected_workload,
)
from iolab.runner.executing import execute
from iolab.store import Store
from iolab.targets import devices, provision
from iolab.targets.controllers import apply, card_commands


def _requested_plan(request: RunRequest, ui: Ui) -> tuple[Plan, Overrides]:
    if request.resume_id is None:
        overrides = request.overrides
        return load_plan(request.plan_file, request.preset, overrides), overrides
    if request.plan_file or request.preset or request.overrides != Overrides():
        raise PlanError("--resume RUN takes no plan or overrides: it reuses the run's own")
    with Store(request.db, create=False) as store:  # a dead run is said once, by run_plan
        stored = store.run(request.resume_id)
    overrides = Overrides.from_json(stored.overrides)
    return parse_plan(stored.plan_text, stored.plan_source, overrides), overrides


def run(request: RunRequest, ui: Ui, executor: Executor | None = None) -> RunOutcome:
    """Check everything, then run the plan's cases into the database (resuming where it can)
    and build the run's report document, the same one `iolab report` prints."""
    if request.lab and request.resume_id is not None:
        raise PlanError("--lab runs a plan afresh; it cannot --resume a run")
    the_plan, overrides = _requested_plan(request, ui)
    if request.lab:
        return run_in_lab(the_plan, request, ui)
    return run_plan(the_plan, overrides, request, ui, executor)


def run_in_lab(the_plan: Plan, request: RunRequest, ui: Ui) -> RunOutcome:
    """`iolab run --lab`: the plan's device set-ups measured in the virtual lab, stored in
    the database as a new run whose every case carries the virtual-lab warning."""
    from iolab.app import lab_run  # the lab's modules, only for a run in the lab

    Store.check_path(request.db)
    with lab_run.measured(the_plan, ui.say) as (inside, backend), Store(inside) as lab_store:
        tables = lab_store.dump(lab_store.run().id)
    origin = lab_run.as_stored(tables, the_plan, backend)  # "lab", under the user's plan file
    with open_store(request.db, ui, create=True) as store:
        run_id = store.restore(tables, origin)
        failed = sum(1 for case in tables["cases"] if case["status"] != "ok")
        document = run_document(store, run_id)
    return RunOutcome(run_id, (), document, (failed, len(tables["cases"])))


def run_plan(
    the_plan: Plan, over: Overrides, request: RunRequest, ui: Ui, executor: Executor | None
) -> RunOutcome:
    """`run` once the plan is known (a file's, a preset's, or one a command made)."""
    Store.check_path(request.db)
    clean_up_dead_runs(request.db, ui)  # before the devices are checked: a mount it left
    for line in apply.retry_pending():  # what earlier runs could not put back on a card
        ui.warn(line)
    fio = info.probe()
    consent = _consent(the_plan, request, ui)
    campaign = plan_campaign(the_plan, fio, consent, executor=executor)
    _check_with_fio(campaign)
    hosts, warned = _ask_hosts(campaign, ui)
    with locked(campaign), open_store(request.db, ui, True, clean=True) as store:
        run_id = pick_run(store, campaign, request, over, ui, hosts)
        # said once nothing can refuse the run: a refusal stays its one line
        for note in the_plan.notes:
            ui.warn(note)
        for line in warned:  # fio versions that differ; hosts whose inventory is missing
            ui.say(f"warning: {line}")
        with restores_said(ui, run_id), ui.progress() as listener:
            results = execute(campaign, store, run_id, listener)
        document = run_document(store, run_id)
        store.own_until_now(run_id)  # the report built is the run's cost too
    return RunOutcome(run_id, tuple(results), document)


def _ask_hosts(campaign: Campaign, ui: Ui) -> tuple[list[dict[str, Any]], list[str]]:
    """The hosts asked before the run, a progress line counting them as they answer."""
    if campaign.plan.hosts is None:
        return [], []
    with ui.progress() as listener:

        def told(line: str) -> None:
            listener.status(Status(0.0, 0.0, hosts=(("pre-flight:", line),)))

        return ask_hosts(campaign, told)


def run_document(store: Store, run_id: int) -> report_document.Document:
    stored = store.run(run_id)
    data = report_data.load(store, [run_id], samples=False, histograms=False)
    options = report_run.Options(metric=stored.metric, baseline=stored.baseline, charts=())
    return report_document.assemble(data, options)


def _check_with_fio(campaign: Campaign) -> None:
    """fio's own parse of the jobs; a refusal is placed at its line in the plan."""
    try:
        check(campaign)
    except jobfile.Rejected as rejected:
        workload = rejected_workload(campaign, rejected)
        raise locate(campaign.plan, workload, rejected.key, rejected.reason) from None


def _consent(the_plan: Plan, request: RunRequest, ui: Ui) -> Consent:
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
    written = {d for s in the_plan.setups if s.layout for d in layouts.present(s.layout)}
    for device in (d for d in dict.fromkeys(wanted) if d in written):
        if device in confirmed:
            continue
        answer = ui.confirm(device, devices.describe(device))
        if answer is False:
            raise TargetError(f"{device} was not confirmed; nothing was written")
        if answer:
            confirmed.add(device)
    return Consent(
        frozenset(confirmed), request.wipe_signatures, request.allow_hooks, request.failing_drives
    )


def provision_commands(the_plan: Plan) -> list[tuple[str, list[list[str]]]]:
    """Per set-up built on devices, every command that builds and tears it down."""
    return [
        (
            setup.name,
            card_commands.commands(setup) + provision.commands(setup.layout, mountpoint(setup)),
        )
        for setup in the_plan.setups
        if setup.layout is not None
    ]


def job_files(the_plan: Plan) -> list[str]:
    """The exact fio job file of every case, as it will run; nothing is written."""
    campaign = plan_campaign(the_plan, info.probe(), probe_write=False)
    return [jobfile.render([campaign.preview(step)]) for step in campaign.steps]


def plan_toml(plan_file: str | None, preset: str | None) -> str:
    """The plan's own text to copy: a preset's TOML, or the plan file's."""
    if plan_file and not preset:
        return load_plan(plan_file, None, Overrides()).text
    return preset_text(preset or "quick")


def rehearse(plan_file: str, ui: Ui) -> bool:
    """`iolab rehearse`: every set-up of the plan built, run briefly and torn down on sparse
    images in the lab kernel (`app.rehearsal`), one line each; True when all of them were."""
    from iolab.app import rehearsal  # the lab's modules, only for a rehearsal

    the_plan = load_plan(plan_file, None, Overrides())
    return all(v.ok for v in rehearsal.rehearse(the_plan, ui.say, _stored_cases))


def _stored_cases(db: Path) -> list[tuple[str, str | None]]:
    """(status, error) of each case of the latest run in a database; none if it has no run."""
    with Store(db, create=False) as store, contextlib.suppress(StoreError):
        return [(c.status, c.error) for c in store.cases(store.run().id)]
    return []
