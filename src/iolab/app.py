"""The use cases behind the commands, as functions of plain values: run a plan, open a store,
build a report, read the environment. The cli parses and prints; this module decides.

Everything that talks to the person at the keyboard goes through a `Ui`: a line to say, a
device to confirm, a progress listener. Errors are raised as iolab's typed errors.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from iolab import exchange, layouts, outputs, plan, runner, units
from iolab.analysis import history, raid_model
from iolab.errors import PlanError, ReportError, Resume, StoreError, TargetError
from iolab.fio import info, jobfile
from iolab.fio.executor import Executor
from iolab.model import Plan, Result
from iolab.plan import gate, methods
from iolab.report import advice as report_advice
from iolab.report import data as report_data
from iolab.report import document as report_document
from iolab.report.views import figures as report_figures
from iolab.report.views import raid_view
from iolab.store import RunRow, Store
from iolab.store.rows import PLAN_ORIGIN
from iolab.targets import (
    controllers,
    devices,
    environment,
    evidence,
    process,
    provision,
    rehearsal,
)
from iolab.targets import lab_run as lab_run_module
from iolab.targets.controllers import apply, pending
from iolab.units import parse_size
from iolab.version import __version__

DEFAULT_DB = "iolab.db"


class Ui(Protocol):
    """What a use case needs from whoever drives it."""

    def say(self, line: str) -> None:
        """A line of news for the person (a run started or resumed)."""

    def warn(self, line: str, resume: Resume | None = None) -> None:
        """A line about something iolab did on its own (a dead run cleaned up, which the
        person can resume)."""

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
    lab: bool = False  # measure the device set-ups in the virtual lab (targets.lab_run)


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


def load_plan(plan_file: str | None, preset: str | None, overrides: plan.Overrides) -> Plan:
    if plan_file and preset:
        raise PlanError("give a plan file or --preset NAME, not both")
    if plan_file:
        return plan.load_file(plan_file, overrides)
    return plan.load_preset(preset or "quick", overrides)


@contextlib.contextmanager
def open_store(db: str, ui: Ui, create: bool = False, clean: bool = False) -> Iterator[Store]:
    """The database, with a line for each run on it whose iolab died. With `clean` (`iolab
    run`, the one command that makes things on the machine), what this host's record of such
    a run says it made is removed, where it still carries iolab's proof, and the run marked
    interrupted; any other command only says so: the database is data, and reading it never
    deletes, unmounts or sets anything."""
    if clean:
        evidence.ready()  # a run that could not keep its record is refused before anything
    with Store(db, create=create) as store:
        if clean:
            for found in runner.recover(store):
                ui.warn(found.said, found.resume)
        else:
            for found in runner.dead_runs(store):
                ui.warn(found.said, found.resume)
        yield store


def restores_pending() -> list[str]:
    """One line per card or disk policy a run changed and could not put back, with the
    command that puts it back: every command says them until a restore succeeds."""
    return [entry.said() for entry in pending.pending()]


@contextlib.contextmanager
def _restores_said(ui: Ui, run_id: int) -> Iterator[None]:
    """What this run changed and could not put back, said at its end (also when it stops)."""
    with pending.during(run_id):
        try:
            yield
        finally:
            for entry in pending.pending():
                if entry.of_run(run_id):
                    ui.warn(f"warning: {entry.said()}")


def _requested_plan(request: RunRequest, ui: Ui) -> tuple[Plan, plan.Overrides]:
    if request.resume_id is None:
        overrides = request.overrides
        return load_plan(request.plan_file, request.preset, overrides), overrides
    if request.plan_file or request.preset or request.overrides != plan.Overrides():
        raise PlanError("--resume RUN takes no plan or overrides: it reuses the run's own")
    with Store(request.db, create=False) as store:  # a dead run is said once, by run_plan
        stored = store.run(request.resume_id)
    overrides = plan.Overrides.from_json(stored.overrides)
    return plan.parse_plan(stored.plan_text, stored.plan_source, overrides), overrides


def run(request: RunRequest, ui: Ui, executor: Executor | None = None) -> RunOutcome:
    """Check everything, then run the plan's cases into the database (resuming where it can)
    and build the run's report document, the same one `iolab report` prints."""
    if request.lab and request.resume_id is not None:
        raise PlanError("--lab runs a plan afresh; it cannot --resume a run")
    the_plan, overrides = _requested_plan(request, ui)
    if request.lab:
        return lab_run(the_plan, request, ui)
    return run_plan(the_plan, overrides, request, ui, executor)


def lab_run(the_plan: Plan, request: RunRequest, ui: Ui) -> RunOutcome:
    """`iolab run --lab`: the plan's device set-ups measured in the virtual lab, stored in
    the database as a new run whose every case carries the virtual-lab warning."""
    Store.check_path(request.db)
    with lab_run_module.measured(the_plan, ui.say) as inside, Store(inside) as lab_store:
        tables = lab_store.dump(lab_store.run().id)
    for case in tables["cases"]:
        kept = case["warnings"]
        case["warnings"] = [*(kept if isinstance(kept, list) else []), lab_run_module.LAB.stored()]
    with open_store(request.db, ui, create=True) as store:
        run_id = store.restore(tables, PLAN_ORIGIN)
        failed = sum(1 for case in tables["cases"] if case["status"] != "ok")
        document = run_document(store, run_id)
    return RunOutcome(run_id, (), document, (failed, len(tables["cases"])))


def run_plan(
    the_plan: Plan, over: plan.Overrides, request: RunRequest, ui: Ui, executor: Executor | None
) -> RunOutcome:
    """`run` once the plan is known (a file's, a preset's, or one a command made)."""
    Store.check_path(request.db)
    for note in the_plan.notes:
        ui.warn(note)
    for line in apply.retry_pending():  # what earlier runs could not put back on a card
        ui.warn(line)
    fio = info.probe()
    consent = _consent(the_plan, request, ui)
    campaign = runner.build(the_plan, fio, consent, executor=executor)
    _check_with_fio(campaign)
    hosts, differ = runner.ask_hosts(campaign)
    if differ:
        ui.say(f"warning: {differ}")
    with runner.locked(campaign), open_store(request.db, ui, True, clean=True) as store:
        run_id = _pick_run(store, campaign, request, over, ui, hosts)
        with _restores_said(ui, run_id), ui.progress() as listener:
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
    written = {d for s in the_plan.setups if s.layout for d in layouts.present(s.layout)}
    for device in (d for d in dict.fromkeys(wanted) if d in written):
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
    hosts: list[dict[str, Any]],
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
        ui.say(f"resuming run {found.id}: {found.tally(found.ok)} cases already stored{retried}")
        return found.id
    env = environment.host(campaign.fio.version)
    if hosts:  # fio's servers say this much of themselves; iolab's full view is this host's
        env["hosts"] = hosts
    run_id = store.create_run(
        the_plan, env, __version__, dataclasses.asdict(overrides), process.me()
    )
    ui.say(f"run {run_id}: {the_plan.name}, {len(campaign.steps)} cases, results in {store.path}")
    return run_id


def provision_commands(the_plan: Plan) -> list[tuple[str, list[list[str]]]]:
    """Per set-up built on devices, every command that builds and tears it down."""
    return [
        (
            setup.name,
            apply.commands(setup) + provision.commands(setup.layout, runner.mountpoint(setup)),
        )
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
    if options.pool and len(set(run_ids)) < 2:
        raise ReportError("--pool reads several runs as one: name two runs or more")
    with open_store(db, ui) as store:
        data = report_data.load(store, list(run_ids), drawn, drawn, options.pool)
    _check_chart_options(data, options, drawn)
    if not drawn:
        options = dataclasses.replace(options, charts=())
    single = data.runs[0] if len(data.runs) == 1 or data.pooled else None
    if single is not None:
        options = dataclasses.replace(
            options,
            metric=single.metric if options.metric == "auto" else options.metric,
            baseline=options.baseline or single.baseline,
        )
    return report_document.build(data, options)


def _check_chart_options(
    data: report_data.Dataset, options: report_document.Options, drawn: bool
) -> None:
    """Options that shape charts are refused where no chart they shape is drawn, rather than
    ignored; --x, first, names a numeric field the runs sweep (scaling charts check it when
    drawn)."""
    swept = report_figures.swept_fields(data)
    if not drawn and options.x is not None and options.x not in swept:
        choose = f"choose one of {', '.join(swept)}" if swept else "they sweep none: leave --x out"
        raise ReportError(f"--x {options.x!r} is not a numeric field these runs sweep; {choose}")
    shaping = [
        flag
        for flag, given in (
            ("--x", options.x is not None),
            ("--y", options.y != "auto"),
            ("--lines", options.lines != "auto"),
        )
        if given
    ]
    if shaping and options.charts is not None and "scaling" not in options.charts:
        raise ReportError(f"{shaping[0]} shapes scaling charts: add scaling to --charts")
    charting = [*shaping, *(["--charts"] if options.charts else []),
                *(["--skip-charts"] if options.skip else [])]  # fmt: skip
    if charting and not drawn:
        raise ReportError(
            f"{charting[0]} shapes charts, and the table and CSV formats draw none: add "
            f"--format markdown or html, or --export DIR; or leave {charting[0]} out"
        )


def compare(db: str, run_ids: Sequence[int], metric: str, ui: Ui) -> report_document.Document:
    with open_store(db, ui) as store:
        data = report_data.load(store, list(run_ids), samples=False, histograms=False)
    return report_document.compare(data, metric)


def runs(db: str, ui: Ui) -> list[RunRow]:
    with open_store(db, ui) as store:
        return store.runs()


@dataclass(frozen=True)
class History:
    plan_name: str
    runs: tuple[RunRow, ...]
    series: tuple[history.Series, ...]


def plan_history(db: str, plan_name: str | None, ui: Ui, run_ids: Sequence[int] = ()) -> History:
    """Every run of one plan (by name; default: the plan of the latest run measured here, not
    imported), and every imported run
    whose cases are the plan's (history.joins), oldest first, as series (analysis.history);
    or the runs named by `run_ids`, whatever their plans."""
    with open_store(db, ui) as store:
        stored = store.runs()
        if not stored:
            raise StoreError(f"{db} holds no runs yet; run a plan first")
        if run_ids:
            named = sorted((store.run(i) for i in dict.fromkeys(run_ids)),
                           key=lambda r: r.started_at)  # fmt: skip
            chosen = [(r, store.cases(r.id)) for r in named]
            title = " and ".join(dict.fromkeys(r.plan_name for r in named))
            return History(title, tuple(named), tuple(history.series(chosen)))
        measured = [r for r in stored if r.origin.kind != "import"] or stored
        name = plan_name if plan_name is not None else measured[-1].plan_name
        mine = [r for r in stored if r.plan_name == name]
        read = store.cases_of_runs([r.id for r in mine], percentiles=(history.P99,))
        own = [(r, read[r.id]) for r in mine]
        if not own:
            plans = ", ".join(sorted({r.plan_name for r in stored}))
            raise StoreError(f"{db} holds no run of a plan named {name!r}; its plans: {plans}")
        latest = max(own, key=lambda found: found[0].started_at)[1]
        setups = {c.setup for c in latest}  # an import's cases are read only if it may join
        imported = [
            (r, store.cases(r.id)) for r in stored
            if r.plan_name != name and r.origin.kind == "import"
            and {n for n, _, _ in store.setups(r.id)} <= setups
        ]  # fmt: skip
        joined = [(r, cases) for r, cases in imported if history.joins(latest, cases)]
        chosen = sorted([*own, *joined], key=lambda found: found[0].started_at)
        window = gate.recorded_settings(chosen[-1][0].plan_text)[0] or history.WINDOW
        found = history.series(chosen, window)
    return History(name, tuple(r for r, _ in chosen), tuple(found))


@dataclass(frozen=True)
class CheckRequest:
    """`iolab check`'s flags: None where not given (the plan's [check], then the defaults)."""

    run_id: int | None
    baseline: int | None
    rules: Mapping[history.Metric, float]
    window: int | None = None
    strict: bool | None = None


CHECK_RUNS = 60  # the earlier runs a check reads, at least: its windows and change points


def check(
    db: str, request: CheckRequest, ui: Ui
) -> tuple[int, history.Gate, list[history.Verdict]]:
    """`iolab check`: the latest run (or RUN) of its plan against the runs of the plan before
    it (or up to and including --baseline), under the rules, window and strictness given,
    then its plan's [check], then the defaults: (the run, how it was judged, verdicts)."""
    with open_store(db, ui) as store:
        latest = store.run(request.run_id)
        base = store.run(request.baseline) if request.baseline is not None else None
        if base is not None and base.id == latest.id:  # every series would match itself
            raise ReportError(
                f"--baseline {base.id} is run {latest.id} itself, which cannot be judged against "
                "itself; give an earlier run of its plan"
            )
        window, strict = gate.recorded_settings(latest.plan_text)
        how = history.Gate(
            {**history.DEFAULT_RULES, **gate.recorded_rules(latest.plan_text), **request.rules},
            request.window or window or history.WINDOW,
            bool(request.strict or strict),
        )
        mine = _history_runs(store, latest, base, max(CHECK_RUNS, 3 * how.window))
        read = store.cases_of_runs([r.id for r in mine], percentiles=(history.P99,))
        runs = [(r, read[r.id]) for r in mine]
    found = history.series(runs, how.window, marks=False)
    return latest.id, how, history.gate(found, latest.id, request.baseline, how)


def _history_runs(store: Store, latest: RunRow, base: RunRow | None, most: int) -> list[RunRow]:
    """The runs a check reads, oldest first: the plan's latest `most` runs before the latest
    (or up to and including --baseline), and the latest."""
    until = base.started_at if base is not None else latest.started_at
    earlier = [r for r in store.runs() if r.plan_name == latest.plan_name and r.id != latest.id
               and r.started_at <= until]  # fmt: skip
    if base is not None and base.id not in {r.id for r in earlier}:
        earlier.append(base)  # another plan's run, named: judged against it alone
    if not earlier:
        raise StoreError(
            f"run {latest.id} is the first run of plan {latest.plan_name!r}; give --baseline RUN"
        )
    earlier.sort(key=lambda r: r.started_at)
    return [*earlier[-most:], latest]


def environment_of(path: str) -> dict[str, Any]:
    """The host, and what `path` lives on: filesystem, RAID, devices and their settings;
    and the RAID cards that an installed tool (storcli, MegaCli, ssacli, arcconf) lists."""
    target = Path(path)
    if not target.exists():
        raise TargetError(f"{path} does not exist; give a file, directory or device")
    host, facts = environment.host(info.probe().version), environment.target(target)
    return {"host": host, "target": facts, **controllers.probe().to_json()}


@dataclass(frozen=True)
class AdviseRequest:
    """`iolab advise`: the array's size, and one device's figures from a run's set-up or given
    (None: not given)."""

    devices: int = 4
    setup: str | None = None
    workloads: tuple[str, ...] = ()  # RW:BS[:QD[:READ%]]
    read_iops: float | None = None
    write_iops: float | None = None
    read_mbps: float | None = None
    write_mbps: float | None = None

    @property
    def figures(self) -> dict[str, float | None]:
        """The figures given, by their flags' names (report.advice's keys)."""
        return {
            key: getattr(self, key.replace("-", "_")) for key in report_advice.DEFAULT_WORKLOADS
        }


def advise(db: str, run_id: int | None, given: AdviseRequest, ui: Ui) -> report_document.Document:
    """RAID levels ranked for one device's figures: a stored run's, or those given."""
    devices = given.devices
    if not 2 <= devices <= 64:
        raise ReportError(f"--devices {devices}: give 2 to 64 devices")
    figures = given.figures
    for key, value in figures.items():
        if value is not None and not (math.isfinite(value) and value > 0):
            raise ReportError(f"--{key} {value:g}: give a positive figure (a finite number)")
    try:
        workloads = [raid_model.parse_workload(text) for text in given.workloads]
    except raid_model.ModelError as error:
        raise ReportError(f"--workload: {error}") from None
    if any(value is not None for value in figures.values()):
        if run_id is not None or given.setup:
            raise ReportError("give a RUN or one device's figures (--read-iops ...), not both")
        found = report_advice.from_figures(figures, workloads)
        source = "the figures given"
    else:
        if workloads:
            raise ReportError(
                "--workload goes with one device's figures (--read-iops ...); a run's own "
                "workloads are used"
            )
        with open_store(db, ui) as store:
            data = report_data.load(store, [run_id] if run_id else [], False, False)
        single = raid_view.single_setup(data, given.setup)
        found = raid_view.single_figures(data, single.label)
        source = f"set-up {single.label!r} of run {single.run_id}"
    if not found:
        raise ReportError(f"no workload to advise on: {source} has no finished case")
    ranked = raid_model.rank(devices, [(f.workload, f.single) for f in found])
    return report_advice.document(ranked, found, devices, source)


def rehearse(plan_file: str, ui: Ui) -> bool:
    """`iolab rehearse`: every set-up of the plan built, run briefly and torn down on sparse
    images in the lab kernel (`targets.rehearsal`), one line each; True when all of them were."""
    the_plan = load_plan(plan_file, None, plan.Overrides())
    return all(v.ok for v in rehearsal.rehearse(the_plan, ui.say, _stored_cases))


def _stored_cases(db: Path) -> list[tuple[str, str | None]]:
    """(status, error) of each case of the latest run in a database; none if it has no run."""
    with Store(db, create=False) as store, contextlib.suppress(StoreError):
        return [(c.status, c.error) for c in store.cases(store.run().id)]
    return []


EXPORT_FORMATS = ("json", "csv", "parquet", "fio-plot")


@dataclass(frozen=True)
class FactsGiven:
    """`iolab import`'s facts of the set-ups, as the person wrote them (checked by
    import_facts), each flag given any number of times, for every set-up or as SETUP=VALUE
    for one: devices, one device's rated IOPS (N or READ,WRITE, then @BS[:random|sequential])
    and MB/s (N or READ,WRITE), a cache size."""

    devices: tuple[str, ...] = ()
    rated_iops: tuple[str, ...] = ()
    rated_mbps: tuple[str, ...] = ()
    cache: tuple[str, ...] = ()


def import_facts(given: FactsGiven) -> exchange.Facts:
    """Every set-up's facts, and each named set-up's own: each value checked (finite,
    positive, a size, a block and pattern)."""
    found: dict[str, exchange.Facts] = {}  # by the set-up named; "": every set-up's
    for flag, values in (("--devices", given.devices), ("--rated-iops", given.rated_iops),
                         ("--rated-mbps", given.rated_mbps), ("--cache", given.cache)):  # fmt: skip
        for text in values:
            name, named, value = text.rpartition("=")
            if named and not name:
                raise PlanError(f"{flag} {text}: give VALUE, or SETUP=VALUE for one set-up")
            found[name] = replace(found.get(name, exchange.Facts()), **_fact(flag, value))
    every = found.pop("", exchange.Facts())
    return replace(every, named=tuple(found.items()))


def _fact(flag: str, text: str) -> dict[str, Any]:
    """One flag's value as Facts fields."""
    if flag == "--devices":
        devices = _positive(flag, text)
        if devices != int(devices) or devices > 4096:
            raise PlanError(f"--devices {text}: give a whole number, 1 to 4096")
        return {"devices": int(devices)}
    if flag == "--cache":
        try:
            cache_bytes = parse_size(text)
        except ValueError:
            raise PlanError(f"--cache {text}: not a size; give one such as 512M or 1G") from None
        if not cache_bytes:
            raise PlanError(f"--cache {text}: give a size above 0, such as 512M")
        return {"cache_bytes": cache_bytes}
    if flag == "--rated-mbps":
        return {"rated_bps": _rated(flag, text, 1e6)}
    figures, at, shape = text.partition("@")
    return {"rated_iops": _rated(flag, figures, 1.0), **(_rated_shape(text, shape) if at else {})}


def _rated_shape(text: str, shape: str) -> dict[str, Any]:
    """'4k:random' -> the block and pattern rated IOPS hold at (default 4 KiB random)."""
    block, _, pattern = shape.partition(":")
    try:
        size = parse_size(block)
    except ValueError:
        size = 0
    if not size or pattern not in ("", "random", "sequential"):
        raise PlanError(
            f"--rated-iops {text}: after @ give the block size and pattern the figures hold at, "
            "such as @4k:random or @128k:sequential"
        )
    return {"rated_block": size, "rated_random": pattern != "sequential"}


def _rated(flag: str, text: str | None, unit: float) -> tuple[float, float]:
    """One figure for both directions, or READ,WRITE."""
    parts = (text or "").split(",")
    if len(parts) > 2 or (text is not None and not all(parts)):
        raise PlanError(f"{flag} {text}: give one figure, or two as READ,WRITE")
    read, write = (_positive(flag, part or None) * unit for part in (parts[0], parts[-1]))
    return read, write


def _positive(flag: str, text: str | None) -> float:
    """A flag's number: finite and above 0; 0.0 when the flag was not given."""
    if text is None:
        return 0.0
    try:
        value = units.number(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise PlanError(f"{flag} {text}: give a finite number above 0")
    return value


def import_files(
    paths: Sequence[str],
    setup: str | None,
    db: str,
    ui: Ui,
    given: FactsGiven | None = None,
) -> exchange.Imported:
    """fio's output (and iolab exports) into the database; nothing is created when nothing
    could be read."""
    facts = import_facts(given or FactsGiven())
    found = Store.check_path(db)  # another program's, or damaged: refused before reading
    known: dict[str, int] = {}
    if found.kind == "iolab":  # missing or empty: created below, if anything was read
        with open_store(db, ui) as store:
            known = store.imported()
    batch = exchange.read(paths, setup, known)
    batch.facts = facts
    exchange.check_named(facts, batch.jobs, batch.setup)
    if batch.empty:
        return exchange.Imported((), tuple(batch.problems), tuple(batch.skipped))
    with open_store(db, ui, create=True) as store:
        return exchange.save(batch, store, __version__)


def export_run(
    db: str, run_id: int | None, fmt: str, output: str, ui: Ui, force: bool = False
) -> tuple[str, list[str]]:
    """The export's text for stdout ('' when written to files), and a line per file written:
    every file through iolab.outputs (no link, no file iolab did not write unless `force`)."""
    from iolab.exchange import export, fioplot, parquet  # pyarrow only when asked for

    if fmt not in EXPORT_FORMATS:
        raise ReportError(f"--format {fmt}: choose one of {', '.join(EXPORT_FORMATS)}")
    if output == "-" and fmt in ("parquet", "fio-plot"):
        where = "a folder: -o DIR" if fmt == "fio-plot" else "files: -o FILE.parquet"
        raise ReportError(f"--format {fmt} writes {where}")
    if fmt == "fio-plot":
        fioplot.check(output, force)
    elif output != "-":
        suffix = {"csv": ".csv", "parquet": ".parquet"}.get(fmt)
        for path in export.file_names(output, suffix).values() if suffix else [output]:
            fix = "give a file name such as run.json"
            outputs.check_file(path, force=force, what=f"-o {path}", fix=fix)
    if fmt == "parquet":
        parquet.module("pyarrow", "--format parquet")  # before any work
    with open_store(db, ui) as store:
        tables = store.dump(store.run(run_id).id)
    if fmt == "fio-plot":
        return "", fioplot.write(tables, output, force)
    if fmt == "parquet":
        return "", [f"wrote {path}" for path in parquet.write(tables, __version__, output, force)]
    if fmt == "json":
        texts = {output: exchange.json_text(tables, __version__)}
    else:
        texts = exchange.csv_texts(tables, __version__, output)
    if output == "-":
        return texts[output], []
    folder = outputs.split(output)[0]
    files = {outputs.split(path)[1]: text.encode() for path, text in texts.items()}
    outputs.save([outputs.Batch(folder, files, "export")], force=force)
    return "", [f"wrote {path}" for path in texts]


def plan_toml(plan_file: str | None, preset: str | None) -> str:
    """The plan's own text to copy: a preset's TOML, or the plan file's."""
    if plan_file and not preset:
        return load_plan(plan_file, None, plan.Overrides()).text
    return plan.preset_text(preset or "quick")


@dataclass(frozen=True)
class PeakRequest:
    """`iolab peak`: one target, one workload, the search's bounds (LOW-HIGH), and the files
    that may be written."""

    target: str = "."
    rw: str = "randread"
    bs: str = "4k"
    curve: bool = False
    numjobs: str = "1-64"
    iodepth: str = "1-256"
    runtime: str | None = None  # seconds, or fio's time (checked with the plan)
    size: str | None = None
    slo: str | None = None  # a latency target, "p99<=2ms": the curve runs, and finds its point
    destroy: tuple[str, ...] = ()


def peak(db: str, given: PeakRequest, ui: Ui, executor: Executor | None = None) -> RunOutcome:
    """`iolab peak`: a plan made for one target and one workload, run like `run`'s."""
    text = methods.command_plan(
        given.rw, given.bs, given.curve, given.numjobs, given.iodepth, given.slo
    )
    runtime = given.runtime
    overrides = plan.Overrides(
        target=str(Path(given.target).resolve()), size=given.size,
        runtime=int(runtime) if runtime and runtime.isascii() and runtime.isdigit() else runtime,
    )  # fmt: skip
    the_plan = plan.parse_plan(text, "iolab peak", overrides)
    request = RunRequest(db=db, overrides=overrides, destroy=given.destroy)
    outcome = run_plan(the_plan, overrides, request, ui, executor)
    sections = outcome.document.sections  # the search's table first: the terminal shows it
    first = [s for s in sections if s.title == "Peak and load curve"]
    rest = [s for s in sections if s.title != "Peak and load curve"]
    document = dataclasses.replace(outcome.document, sections=(*first, *rest))
    return dataclasses.replace(outcome, document=document) if first else outcome
