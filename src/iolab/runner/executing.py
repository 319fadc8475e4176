"""Running a campaign: set-up by set-up, case by case, saving after each; clean-up always.

What a run makes (test files, scratch folders, mounts, a card's policy) is written down as
it goes in this host's record of the run (targets.evidence), outside the database, so that the
next `iolab run` on the database can clean up after one whose process died (`recover`); the
database's `leftovers` rows are kept for the reader and never cause anything.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path

from iolab.analysis import levels, reading
from iolab.errors import ControllerError, FioError, Interrupted, Resume, Stopped, TargetError
from iolab.fio import durations, jobfile, parse
from iolab.fio import reach as fio_reach
from iolab.fio.executor import Executor, HostLimits
from iolab.fio.hosts import NAMED_HOSTS, Cluster
from iolab.fio.outcome import Outcome, failure
from iolab.model import (
    HOST_LOST,
    CaseMetrics,
    CheckWarning,
    JSONObject,
    Result,
    Setup,
    Window,
    codec,
)
from iolab.model.facts import LayoutFacts, LogLine, TargetFacts
from iolab.model.setup_record import Fill, Recorder
from iolab.model.telemetry import Telemetry
from iolab.runner import precondition, telemetry
from iolab.runner.campaign import Campaign, CampaignStep, footprint, mountpoint
from iolab.runner.drives import Drives
from iolab.runner.listener import Listener
from iolab.runner.recovery import remove_made
from iolab.runner.repeats import Repeats
from iolab.runner.search import Search
from iolab.store import Store
from iolab.store.rows import tally
from iolab.targets import caches, environment, evidence, evidence_mounts, process, provision
from iolab.targets.controllers import apply
from iolab.targets.path import Prepared
from iolab.units import parse_seconds, parse_size


class HostsLost(FioError):
    """A host sent no result and the plan says to stop (on_host_lost = "stop")."""


class Ledger:
    """What a run has made and must remove (test files, scratch folders, mounts, a card's
    policy): each written in this host's record of the run before it is made (and in the
    store's leftovers, for the reader), removed with proof that it is still the run's."""

    def __init__(self, store: Store, run_id: int) -> None:
        self.store, self.run_id = store, run_id
        self.record = evidence.Record.begin(store.path, run_id)
        self.files: dict[str, evidence.Made] = {}  # the test files held, by path
        self.laid_s = 0.0  # spent laying out test files: fio's own work when it runs alone

    @contextlib.contextmanager
    def holding(self, kind: str, path: Path | str) -> Iterator[None]:
        where = str(path)
        self.store.add_leftover(self.run_id, kind, where)
        try:
            made = self._make(kind, where)
            try:
                yield
            finally:
                self._unmake(made)
        finally:
            self.store.drop_leftover(self.run_id, kind, where)

    def _make(self, kind: str, where: str) -> evidence.Made:
        """Write the thing down, then make it (a test file, marked; a scratch folder's token)."""
        token = self.record.token
        if kind == evidence.FILE:
            entry = self.record.add(evidence.file_entry(Path(where)))
            try:
                claimed = evidence.claim_file(Path(where), token, entry)
            except BaseException:
                self.record.drop(entry)  # not made: the record must not vouch for what is there
                raise
            self.files[where] = self.record.change(entry, claimed)
            return self.files[where]
        if kind == evidence.DIR:
            entry = self.record.add(evidence_mounts.dir_entry(Path(where)))
            return self.record.change(entry, evidence_mounts.claim_dir(Path(where), token))
        if kind == evidence.MOUNT:
            return self.record.add(evidence_mounts.mount_entry(Path(where)))
        if kind == evidence.USER_FILE:
            return self.record.add(evidence.file_entry(Path(where), kind))
        return self.record.add(evidence.Made(kind, where))

    def _unmake(self, made: evidence.Made) -> None:
        """Remove a test file or scratch folder (with proof it is still the run's); others'
        owners (provision, the card's policy) undo theirs. Then off the record."""
        self.files.pop(made.path, None)
        same = (made.kind, made.path)
        current = next((m for m in self.record.made if (m.kind, m.path) == same), made)
        if current.kind in (evidence.FILE, evidence.DIR):
            remove_made(current, self.record.token, live=True)
        self.record.drop(current)

    def mounting(self, mountpoint: Path, source: str) -> None:
        """The set-up's filesystem is about to be mounted there from `source`: written down
        first (a kill -9 before the mount ends leaves a mount the record names)."""
        entry = self._mount_entry(mountpoint)
        if entry is not None:
            self.record.change(entry, replace(entry, source=source))

    def mounted(self, mountpoint: Path) -> None:
        """The set-up's filesystem is now mounted there: its source written down."""
        entry = self._mount_entry(mountpoint)
        if entry is not None:
            self.record.change(entry, evidence_mounts.mounted(entry))

    def _mount_entry(self, mountpoint: Path) -> evidence.Made | None:
        mounts = (m for m in self.record.made if m.kind == evidence.MOUNT)
        return next((m for m in mounts if m.path == str(mountpoint)), None)

    @contextlib.contextmanager
    def fio_on(self, target: Prepared, job: jobfile.Job) -> Iterator[None]:
        """fio writes the test file meanwhile: iolab lays it out first, as large as the job
        reaches (so fio never lays it out anew, as a new file without iolab's mark), and
        marks it again after should fio have made a new one all the same.

        The record says so once, before the set-up's first case, and stays so until the file
        is removed: a case writes no record, unless fio left another file (inode, mark) than
        the record names (issue 47)."""
        made = self.files.get(str(target.filename))
        if made is None:
            yield
            return
        problem = evidence.replaced(made, self.record.token)
        if problem:
            raise TargetError(
                f"iolab's test file {made.path} was replaced while the run went on: {problem}; "
                "fio writes only to iolab's own test file, so this set-up's cases stop here"
            )
        started = time.monotonic()
        if evidence.lay_out(made, self.record.token, _reach(job, made)):
            self.laid_s += time.monotonic() - started
        if not made.busy:
            made = self.record.change(made, replace(made, busy=True))
        self.files[made.path] = made
        try:
            yield
        finally:
            again = replace(evidence.remark_file(made, self.record.token), busy=True)
            self.files[made.path] = made if again == made else self.record.change(made, again)

    def close(self) -> None:
        """The run ended here, having removed what it made: its record goes too."""
        self.record.delete()


def _reach(job: jobfile.Job, made: evidence.Made) -> int:
    """The size fio's file reaches under this job (fio's reach model), from its size now."""
    try:
        size = os.stat(made.path, follow_symlinks=False).st_size
        return fio_reach.reach(job.options, size)
    except (OSError, fio_reach.Unreadable):
        return 0  # fio's own check (and the room check before the run) say what is wrong


@contextlib.contextmanager
def placed(
    setup: Setup, campaign: Campaign, record: Recorder, ledger: Ledger
) -> Iterator[Prepared]:
    """The set-up's target, ready for fio; removed or torn down afterwards, always."""
    if setup.layout is None and campaign.paths[setup.name].remote:
        with _on_hosts(campaign, campaign.paths[setup.name], record) as target:
            yield target
        return
    if setup.layout is None:
        target = campaign.paths[setup.name]
        record.target(environment.target_facts(target.filename, campaign.answers))
        kind = evidence.FILE if target.owned else evidence.USER_FILE
        with ledger.holding(kind, target.filename):
            yield target
        return
    consent = campaign.consent
    built_log: list[provision.LogEntry] = []
    layout: LayoutFacts | None = None
    try:
        with (
            ledger.holding("mount", mountpoint(setup)),
            provision.build(
                setup.layout,
                mountpoint(setup),
                confirmed=consent.devices,
                wipe_signatures=consent.wipe_signatures,
                mounting=lambda source: ledger.mounting(mountpoint(setup), source),
            ) as built,
        ):
            built_log, layout = built.log, built.layout
            ledger.mounted(mountpoint(setup))
            filename = Path(":".join(str(p) for p in built.paths)) if built.raw else built.path
            free = shutil.disk_usage(built.mountpoint).free if built.mountpoint else 0
            target = Prepared(setup, filename, not built.raw, free, built.raw)
            record.target(environment.target_facts(built.path))
            record.built(layout, _log(built_log))
            if not built.raw:
                target.check_room(footprint(campaign.plan.workloads, target))
            try:
                yield target
            finally:
                # a member that failed meanwhile
                layout = codec.from_json(LayoutFacts, built.at_end(), "the layout's facts")
    finally:
        if built_log and layout is not None:
            record.built(layout, _log(built_log))


@contextlib.contextmanager
def _on_hosts(campaign: Campaign, target: Prepared, record: Recorder) -> Iterator[Prepared]:
    """A directory on fio servers: fio makes the test file there; removed there afterwards."""
    record.target(TargetFacts.elsewhere(str(target.filename.parent)))
    try:
        yield target
    finally:
        if isinstance(campaign.executor, Cluster):
            with tempfile.TemporaryDirectory(prefix="iolab-remove-") as workdir:
                campaign.executor.remove(str(target.filename), Path(workdir))


def _log(entries: Iterable[provision.LogEntry]) -> tuple[LogLine, ...]:
    return tuple(LogLine(command, code, output) for command, code, output in entries)


def start(store: Store, run_id: int) -> None:
    """This process now runs the run: recorded so a later iolab can tell if it died."""
    store.claim(run_id, process.me())


class _Run:
    """One execution of a campaign's remaining cases into a run of the store."""

    def __init__(
        self,
        campaign: Campaign,
        store: Store,
        run_id: int,
        listener: Listener,
        scratch: Path,
        ledger: Ledger,
    ) -> None:
        self.campaign, self.store, self.run_id = campaign, store, run_id
        self.listener, self.scratch, self.ledger = listener, scratch, ledger
        self.done = store.done_keys(run_id)
        self.todo = [s for s in campaign.steps if s.case.key not in self.done]
        self.order = {id(s): n for n, s in enumerate(self.todo)}
        self.cursor = 0
        self.results: list[Result] = []
        self.overhead: list[float] = []
        self.fio_s = 0.0  # fio's own wall time, every case's and fill's that this process ran
        self.cards: dict[str, apply.Card] = {}  # by set-up: the card policy its cases ran under
        self.devices: dict[str, tuple[str, ...]] = {}  # by set-up: the devices its target uses
        self.drives: dict[str, Drives] = {}  # by set-up: its drives, read after each case
        self.repeats = Repeats(campaign, store, run_id, listener, self.case)
        self.search = Search(campaign, store, run_id, listener, self.case)

    def record(self, name: str) -> Recorder:
        """The set-up's record for this run, saved whole after each change."""
        return Recorder(lambda record: self.store.set_setup_record(self.run_id, name, record))

    def setup(self, setup: Setup, repetition: int | None = None) -> None:
        """Build the set-up, run its cases (of one `repetition`: an interleaved plan's round),
        tear it down; if it fails, its cases fail."""
        steps = [
            s
            for s in self.todo
            if s.case.setup.name == setup.name
            and (repetition is None or s.case.repetition == repetition)
        ]
        if not steps:
            return
        ran = 0
        record = self.record(setup.name)
        try:
            with (
                apply.applied(setup, self.ledger.holding) as policies,
                placed(setup, self.campaign, record, self.ledger) as target,
            ):
                if policies.card is not None:
                    record.controller(policies.card.facts)
                    self.cards[setup.name] = policies.card
                if policies.disks:
                    record.drive_cache(policies.disks)
                self.read_drives(setup, target, record, policies.card)
                state = self.precondition(setup, steps[0], target, record)
                for step in steps:
                    self.case(step, target, state)
                    state = precondition.after(state, step.case.workload.options)
                    ran += 1
                    state = self.repeats.repeat_more(step, target, state)
                    state = self.repeats.rounds_more(step, target, state, record)
                    state = self.search.search_more(step, target, state, record)
        except (TargetError, ControllerError) as error:
            if ran == len(steps):
                raise
            for step in steps[ran:]:
                self.keep(_setup_failed(step, f"set-up {setup.name!r} failed: {error}"), step)
        finally:
            self.campaign.answers.clear()  # asked before any case: the next set-up asks anew
            drives = self.drives.pop(setup.name, None)
            if drives is not None:
                drives.keep()

    def read_drives(
        self, setup: Setup, target: Prepared, record: Recorder, card: apply.Card | None
    ) -> None:
        """The set-up's drives (and a RAID card's members), read before its preconditioning
        and cases (a failing one was refused before anything was made: the pre-flight)."""
        if target.remote:
            return
        drives = Drives.of(record.record.facts.target, record, self.listener, card)
        if drives is not None:
            self.drives[setup.name] = drives

    def precondition(
        self,
        setup: Setup,
        first: CampaignStep,
        target: Prepared,
        record: Recorder,
    ) -> str:
        """Fill the target as the set-up asks; the state it leaves the target in."""
        state = precondition.initial_state(setup, target)
        jobs = precondition.fill_jobs(setup, first.job(target, self.campaign.fio), target)
        fills: list[Fill] = []
        for job in jobs:
            self.listener.note(f"preconditioning {setup.name}: {job.comment.split(': ')[-1]}")
            workdir = Path(tempfile.mkdtemp(prefix="iolab-fill-", dir=self.scratch))
            try:
                with self.ledger.fio_on(target, job):
                    outcome = self.campaign.executor_for(setup).run(
                        jobfile.render([job]), workdir, self.listener.status, None
                    )
            finally:
                shutil.rmtree(workdir, ignore_errors=True)
            self.fio_s += outcome.fio_s or 0.0
            problem, document = failure(outcome), outcome.document
            if problem or document is None:
                raise TargetError(f"preconditioning ({job.name}) failed: {problem}")
            metrics = document.metrics
            written = sum(d.io_bytes for d in metrics.directions)
            fills.append(Fill(job.name, written, metrics.runtime_ms / 1000, metrics.total_bw_bytes))
        if fills:
            record.filled(fills)
        kinds = precondition.FILLS[setup.precondition]
        return precondition.filled(state, kinds)

    def case(self, step: CampaignStep, target: Prepared, state: str = "") -> None:
        campaign = self.campaign
        index = len(self.done) + len(self.results) + 1
        start = self.order.get(id(step))  # None: an extra repetition of repeat = "auto"
        self.cursor = start if start is not None else self.cursor
        rest = self.todo[self.cursor + (start is None) :]
        ahead = [step, *rest] if start is None else rest  # this case and the planned ones left
        total = index - 1 + len(ahead)  # grows as a search or repeat = "auto" adds cases
        self.listener.case_started(index, total, step.case, _eta(ahead, self.overhead))
        job = step.job(target, campaign.fio)
        known = replace(_known(campaign, job, target, state), target_state=state)
        card = self.cards.get(step.case.setup.name)
        if card is not None:
            known = replace(known, cache_policy=card.differs or "", card_cache=card.cache_bytes)
        drives = self.drives.get(step.case.setup.name)
        if drives is not None:
            known = replace(known, drive_written=drives.written_share)
        executor = campaign.executor_for(step.case.setup)
        watched = None if target.remote else self.watched(step.case.setup.name, target)
        with self.ledger.fio_on(target, job):
            result = run_step(step, job, executor, self.listener, self.scratch, known, watched)
        if drives is not None:
            result = drives.judged(result)
        self.overhead.append(result.ended_at - result.started_at - step.planned_s)
        self.fio_s += result.ended_at - result.started_at  # fio's span (run_step)
        self.keep(result, step)
        hosts = campaign.plan.hosts
        if hosts and hosts.on_lost == "stop" and any(w.code == HOST_LOST for w in result.warnings):
            raise HostsLost(f'{result.error}; the run stopped there (on_host_lost = "stop")')

    def watched(self, name: str, target: Prepared) -> tuple[str, ...]:
        """The set-up's devices for the telemetry (its target's device and members)."""
        if name not in self.devices:
            self.devices[name] = telemetry.devices_of(target.paths())
        return self.devices[name]

    def owner(self) -> JSONObject | None:
        """This process at the run's end, with its own time outside fio: its wall time since
        it started, less fio's and less laying out its test files (`laid_s`, beside it: the
        writes fio makes in its own wall time when it runs alone, as plain fio does in
        bench/overhead.py's loop) (issue 47); None when it ran no case."""
        if not self.results:
            return None
        laid = self.ledger.laid_s
        own = time.time() - process.started_at() - self.fio_s - laid
        return {
            **process.me(),
            "own_s": round(max(own, 0.0), 4),
            "laid_s": round(laid, 4),
            "cases": len(self.results),
        }

    def keep(self, result: Result, step: CampaignStep) -> None:
        self.store.save(self.run_id, result, step.position)
        self.results.append(result)
        self.listener.case_finished(result)


def execute(campaign: Campaign, store: Store, run_id: int, listener: Listener) -> list[Result]:
    """Run every case not yet stored for this run, set-up by set-up; teardown always runs."""
    start(store, run_id)
    ledger = Ledger(store, run_id)  # this host's record of the run, before anything is made
    scratch = Path(tempfile.mkdtemp(prefix=f"iolab-run{run_id}-"))
    run = _Run(campaign, store, run_id, listener, scratch, ledger)
    try:
        with ledger.holding(evidence.DIR, scratch):
            for setup, repetition in campaign.plan.blocks():
                run.setup(setup, repetition)
    except HostsLost as error:
        store.finish_run(run_id, "interrupted")
        error.resume = Resume(run_id, str(store.path))
        raise
    except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM/SIGHUP/SIGQUIT (errors.Stopped)
        store.finish_run(run_id, "interrupted")
        kept = tally(len(run.done) + len(run.results), len(campaign.steps))
        by = f" by {stop.name}" if isinstance(stop, Stopped) else ""
        raise Interrupted(
            f"interrupted{by}: {kept} cases are stored in {store.path}",
            Resume(run_id, str(store.path)),
            stop.signum if isinstance(stop, Stopped) else signal.SIGINT,
        ) from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        ledger.close()
    store.finish_run(run_id, "done", run.owner())
    return run.results


def _setup_failed(step: CampaignStep, message: str) -> Result:
    now = time.time()
    return Result(case=step.case, status="failed", started_at=now, ended_at=now, error=message)


def _eta(remaining: Iterable[CampaignStep], overhead: list[float]) -> float:
    steps = list(remaining)
    per_case = sum(overhead) / len(overhead) if overhead else 1.0
    return sum(s.planned_s for s in steps) + per_case * len(steps)


def _hidden(target: Prepared) -> caches.Hidden:
    """Buffered loops and memory under the target, followed down its device stack: a
    set-up's devices (fio's ':' list), or the file on its filesystem; nothing is known of a
    target on fio servers."""
    if target.remote:
        return caches.Hidden()
    return caches.hidden(target.paths())


def _laid_out(path: Path) -> bool:
    """Whether a test file holds anything yet: the Ledger makes it empty (to mark it), and fio
    lays an empty one out whole before the case reads it."""
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


def _known(campaign: Campaign, job: jobfile.Job, target: Prepared, state: str) -> reading.Known:
    size = job.options.get("size")
    written = None
    if not target.raw and size is not None and _laid_out(target.filename):
        written = caches.written_share(target.filename, parse_size(size))
    if target.raw and state in ("fresh", "trimmed"):
        written = 0.0  # a device nothing was written to since it was built
    hidden = _hidden(target)
    return reading.Known(
        repeat=campaign.plan.repeat,
        written_share=written,
        loop_cache=hidden.loop_cache,
        ram_target=hidden.ram,
    )


def run_step(
    step: CampaignStep,
    job: jobfile.Job,
    executor: Executor,
    listener: Listener,
    scratch: Path | None,
    known: reading.Known | None = None,
    watched: tuple[str, ...] | None = None,
) -> Result:
    """Run one case's fio job in a scratch directory and turn what fio left into a Result;
    with `watched` (the set-up's devices: a local case), the host's CPUs and those devices
    are sampled beside it (runner.telemetry)."""
    workdir = Path(tempfile.mkdtemp(prefix="iolab-case-", dir=scratch))
    text = jobfile.render([job])
    started = time.time()
    timeout = durations.deadline_s(job.options, durations.margin_s())
    try:
        if watched is None:
            outcome, seen = executor.run(text, workdir, listener.status, timeout), None
            ended = time.time()
        else:
            skip = parse_seconds(job.options.get("ramp_time", 0)) + telemetry.STARTUP_MS
            cpus = telemetry.allowed_cpus(job.options)
            with telemetry.Sampler(cpus, watched, skip) as sampler:
                outcome = executor.run(text, workdir, listener.status, timeout)
                ended = time.time()
            seen = sampler.telemetry()
        known = known or reading.Known()
        span = _span(started, ended, outcome.fio_s)
        return _result(step, job, outcome, text, span, executor.limits(), known, seen)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _span(started: float, ended: float, fio_s: float | None) -> tuple[float, float]:
    """When the case started and ended: fio's own start and end where its keeper timed it
    (then a run's time outside its cases is what iolab cost around fio), else iolab's."""
    if fio_s is None or fio_s > ended - started:
        return started, ended
    return ended - fio_s, ended


def _result(
    step: CampaignStep,
    job: jobfile.Job,
    outcome: Outcome,
    text: str,
    span: tuple[float, float],
    limits: HostLimits,
    known: reading.Known,
    seen: Telemetry | None = None,
) -> Result:
    started, ended = span
    base = {"case": step.case, "started_at": started, "ended_at": ended, "job_file": text}
    raw = outcome.json_text or None
    if outcome.lost:
        return _partial(outcome, base)
    problem, document = failure(outcome), outcome.document
    if problem or document is None:
        return Result(status="failed", error=problem, raw_json=raw, **base)  # type: ignore[arg-type]
    interval = job.options.get("log_avg_msec")
    samples = parse.samples(outcome.log_files, int(interval)) if isinstance(interval, int) else []
    known = replace(known, cpus=limits.cpus, memory_bytes=limits.memory_bytes, telemetry=seen)
    found = reading.read_document(document, reading.context(job.options, step.case.setup, known))
    return Result(
        status="ok",
        metrics=found.metrics,
        raw_json=raw,
        samples=tuple(samples),
        warnings=found.warnings + levels.warnings(samples, found.metrics),
        windows=found.windows,
        target_state=known.target_state,
        telemetry=found.telemetry,
        **base,  # type: ignore[arg-type]
    )


def _partial(outcome: Outcome, base: dict[str, object]) -> Result:
    """A case some hosts did not finish: failed, with what the others measured kept."""
    hosts: dict[str, CaseMetrics] = outcome.document.by_host if outcome.document else {}
    said = "; ".join(why for _, why in outcome.lost)
    named = ", ".join(hosts) if len(hosts) <= NAMED_HOSTS else f"the {len(hosts)} other hosts"
    kept = f"; the results of {named} are kept" if hosts else ""
    names = tuple(host for host, _ in outcome.lost)
    lost = CheckWarning(
        HOST_LOST,
        f"{', '.join(names)} sent no result.",
        "Check those hosts and their fio servers; resume runs the case again on every host.",
        names,
    )
    return Result(
        status="failed",
        error=f"{said}{kept}; resume runs the case again on every host",
        raw_json=outcome.json_text or None,
        warnings=(lost,),
        windows=tuple(Window(m, host=host) for host, m in hosts.items()),
        **base,  # type: ignore[arg-type]
    )
