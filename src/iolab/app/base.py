"""What every use case shares: the Ui they talk to the person through, opening a store
(and cleaning up after dead runs), loading a plan, picking a run."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from iolab.choices import DEFAULT_DB
from iolab.errors import PlanError, Resume
from iolab.model import JSON, Plan, Result
from iolab.model.host import checked
from iolab.plan.common import Overrides
from iolab.store import RunRow, Store
from iolab.version import __version__

if TYPE_CHECKING:  # the runner, the reports and the set-ups are imported where used
    from iolab.exchange.read_progress import Told
    from iolab.report import document as report_document
    from iolab.runner.campaign import Campaign
    from iolab.runner.listener import Listener


@dataclass(frozen=True)
class RunRequest:
    """`iolab run` as the user asked for it."""

    plan_file: str | None = None
    preset: str | None = None
    overrides: Overrides = field(default_factory=Overrides)
    db: str = DEFAULT_DB
    resume_id: int | None = None
    force_new: bool = False
    destroy: tuple[str, ...] = ()
    wipe_signatures: bool = False
    failing_drives: bool = False
    allow_hooks: bool = False
    lab: bool = False  # measure the device set-ups in the virtual lab (app.lab_run)


@dataclass(frozen=True)
class RunOutcome:
    run_id: int
    results: tuple[Result, ...]
    document: report_document.Document
    counted: tuple[int, int] | None = None  # (failed, cases) where results are not at hand

    @property
    def failed(self) -> int:
        if self.counted is not None:
            return self.counted[0]
        return sum(1 for r in self.results if r.status != "ok")

    @property
    def total(self) -> int:
        return self.counted[1] if self.counted is not None else len(self.results)


class Ui(Protocol):
    """What a use case needs from whoever drives it."""

    def say(self, line: str) -> None:
        """A line of news for the person (a run started or resumed)."""

    def warn(self, line: str, resume: Resume | None = None) -> None:
        """A line about something iolab did on its own (a dead run cleaned up, which the
        person can resume)."""

    def confirm(self, device: str, description: str) -> bool | None:
        """Ask whether `device` may be destroyed; None when nobody can be asked."""

    def progress(self) -> contextlib.AbstractContextManager[Listener]:
        """A listener that shows the run's progress while it is open."""

    def reading(self, path: Path, size: int) -> contextlib.AbstractContextManager[Told]:
        """While open, a callable told how many of the `size` bytes of `path` (a large file
        `iolab import` reads) have been read; it may show them."""


def load_plan(plan_file: str | None, preset: str | None, overrides: Overrides) -> Plan:
    from iolab.plan.load import load_file, load_preset  # here: every command loads app.base

    if plan_file and preset:
        raise PlanError("give a plan file or --preset NAME, not both")
    if plan_file:
        return load_file(plan_file, overrides)
    return load_preset(preset or "quick", overrides)


@contextlib.contextmanager
def open_store(db: str, ui: Ui, create: bool = False, clean: bool = False) -> Iterator[Store]:
    """The database, with a line for each run on it whose iolab died. With `clean` (`iolab
    run`, the one command that makes things on the machine), what this host's record of such
    a run says it made is removed, where it still carries iolab's proof, and the run marked
    interrupted; any other command only says so: the database is data, and reading it never
    deletes, unmounts or sets anything."""
    from iolab.runner.recovery import dead_runs, recover
    from iolab.targets import evidence

    if clean:
        evidence.ready()  # a run that could not keep its record is refused before anything
    with Store(db, create=create) as store:
        if clean:
            for found in recover(store):
                ui.warn(found.said, found.resume)
        else:
            for found in dead_runs(store):
                ui.warn(found.said, found.resume)
        yield store


@contextlib.contextmanager
def collector_paused(freeze: bool = False) -> Iterator[None]:
    """Python's cyclic garbage collector paused while a long history or a big report is read
    and built: they make hundreds of thousands of objects (rows, points, cells), next to none
    in a cycle, and each collection of the oldest generation walks them all again (a quarter
    of the CPU of a 1,000-run history). Reference counting still frees each one as it goes.
    With `freeze`, what was made is frozen after (never walked again, nor copied by the chart
    drawers' forked processes). Left as it was found."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if was:
            gc.enable()


def clean_up_dead_runs(db: str, ui: Ui) -> None:
    """`iolab run`, first of all: what a dead run of this database left (a mount, a card's
    policy, a test file) removed on proof, so that the checks of the devices that follow see
    them as they were before it (a set-up's device is then no longer mounted by it)."""
    if not Path(db).is_file():
        return  # a database not made yet has no runs
    with open_store(db, ui, clean=True):
        pass


def restores_pending() -> list[str]:
    """One line per card or disk policy a run changed and could not put back, with the
    command that puts it back: every command says them until a restore succeeds."""
    from iolab.targets.controllers import pending

    return pending.said_all(*pending.owed())


@contextlib.contextmanager
def restores_said(ui: Ui, run_id: int) -> Iterator[None]:
    """What this run changed and could not put back, said at its end (also when it stops)."""
    from iolab.targets.controllers import pending

    with pending.during(run_id):
        try:
            yield
        finally:
            mine = [entry for entry in pending.pending() if entry.of_run(run_id)]
            for line in pending.said_all(mine, len(mine)):
                ui.warn(f"warning: {line}")


def pick_run(
    store: Store,
    campaign: Campaign,
    request: RunRequest,
    overrides: Overrides,
    ui: Ui,
    hosts: list[dict[str, Any]],
) -> int:
    """The run to fill: the one asked for, an unfinished one of the same plan, or a new one."""
    from iolab.targets import environment, process

    the_plan = campaign.plan
    found: RunRow | None = None
    if request.resume_id is not None:
        found = store.run(request.resume_id)
    elif not request.force_new:
        found = store.resumable(the_plan.hash)
    if found is not None:
        retried = f"; {found.failed} failed will run again" if found.failed else ""
        ui.say(f"resuming run {found.id}: {found.tally(found.ok)} cases already stored{retried}")
        return found.id
    env = environment.host(campaign.fio.version)
    if hosts:  # fio's servers say this much of themselves; iolab's full view is this host's
        env = checked({**env, "hosts": list[JSON](hosts)})
    run_id = store.create_run(
        the_plan, env, __version__, dataclasses.asdict(overrides), process.me()
    )
    ui.say(f"run {run_id}: {the_plan.name}, {len(campaign.steps)} cases, results in {store.path}")
    return run_id
