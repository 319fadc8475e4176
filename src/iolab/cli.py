"""Command line: parse, build the plan, run, report. Wiring only; one error handler."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import shlex
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn

from iolab import __version__, plan, runner
from iolab.errors import Interrupted, IolabError, PlanError, StoreError, TargetError
from iolab.fio import info, jobfile
from iolab.fio.parse import Status
from iolab.model import Case, Plan, Result
from iolab.report import data as report_data
from iolab.report import document as report_document
from iolab.report import env_text, terminal
from iolab.report import model as report_model
from iolab.report import output as report_output
from iolab.store import RunRow, Store
from iolab.targets import devices, environment, process, provision
from iolab.units import human_bytes, human_duration

DEFAULT_DB = "iolab.db"
EXIT_USER_ERROR = 1
EXIT_CASES_FAILED = 3
EXIT_INTERRUPTED = 130

err = Console(stderr=True, highlight=False)


def fail(message: str, code: int = EXIT_USER_ERROR) -> NoReturn:
    err.print(f"iolab: {message}", markup=False, soft_wrap=True)
    sys.exit(code)


class Main(click.Group):
    """The one place errors become messages and exit codes."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """Usage errors (unknown option, bad value, missing argument) are bad input too:
        one line and exit 1, like every other."""
        kwargs["standalone_mode"] = False
        try:
            code = super().main(*args, **kwargs)
        except click.UsageError as error:
            where = error.ctx.command_path if error.ctx else "iolab"
            words = " ".join(error.format_message().split())
            fail(f"error: {words} (see '{where} --help')")
        except click.ClickException as error:
            fail(f"error: {' '.join(error.format_message().split())}")
        except click.Abort:
            fail("interrupted", EXIT_INTERRUPTED)
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except Interrupted as stop:
            fail(str(stop), EXIT_INTERRUPTED)
        except IolabError as error:
            fail(f"error: {error}")
        except KeyboardInterrupt:
            fail("interrupted", EXIT_INTERRUPTED)


@click.group(cls=Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="iolab")
def main() -> None:
    """iolab: a storage evaluation lab in one command.

    Plans name set-ups and workloads; iolab drives fio on each, keeps every result in
    SQLite and renders comparison tables. With no arguments, 'iolab run' runs the quick
    preset on a test file in the current directory.
    """


def _load(plan_file: str | None, preset: str | None, overrides: plan.Overrides) -> Plan:
    if plan_file and preset:
        raise PlanError("give a plan file or --preset NAME, not both")
    if plan_file:
        return plan.load_file(plan_file, overrides)
    return plan.load_preset(preset or "quick", overrides)


def plan_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The options that pick a plan and shrink it, shared by run and show."""
    decorators = [
        click.argument("plan_file", required=False, metavar="[PLAN.toml]"),
        click.option("--preset", metavar="NAME", help="Use a preset (see 'iolab presets')."),
        click.option("--target", metavar="PATH", help="Run every workload on PATH instead."),
        click.option(
            "--size", metavar="SIZE", help="Test file size for every workload, e.g. 256m."
        ),
        click.option("--runtime", metavar="SECONDS", help="Runtime of every workload, e.g. 2."),
        click.option("--repeat", type=click.IntRange(min=1), help="Repetitions of every case."),
        click.option(
            "--max-cases",
            type=click.IntRange(min=1),
            metavar="N",
            help=f"Refuse plans of more cases than this (default {plan.MAX_CASES:,}).",
        ),
    ]
    for decorator in reversed(decorators):
        func = decorator(func)
    return func


def db_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--db", default=DEFAULT_DB, show_default=True, metavar="FILE", help="Results database."
    )(func)


def _overrides(
    target: str | None,
    size: str | None,
    runtime: str | None,
    repeat: int | None,
    max_cases: int | None = None,
) -> plan.Overrides:
    seconds: str | int | None = int(runtime) if runtime and runtime.isdigit() else runtime
    return plan.Overrides(
        target=target, size=size, runtime=seconds, repeat=repeat, max_cases=max_cases
    )


# ---------------------------------------------------------------- run


class ProgressListener:
    """Case i of n, its parameters, ETA and fio's live IOPS and MB/s; a line per finished case."""

    def __init__(self, console: Console) -> None:
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(bar_width=20),
            TextColumn("ETA {task.fields[eta]}"),
            TextColumn("{task.fields[live]}"),
            console=console,
            transient=True,
            refresh_per_second=2,
        )
        self.task = self.progress.add_task("starting", total=1, eta="?", live="")
        self.eta_s, self.t0, self.label = 0.0, time.monotonic(), ""

    def __enter__(self) -> ProgressListener:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def case_started(self, index: int, total: int, case: Case, eta_s: float) -> None:
        self.eta_s, self.t0 = eta_s, time.monotonic()
        self.label = (
            f"case {index}/{total} {case.setup.name} · {case.workload.name} #{case.repetition}"
        )
        o = case.workload.options
        params = f"{o.get('rw')} bs={o.get('bs')} qd={o.get('iodepth')} jobs={o.get('numjobs')}"
        self.progress.update(
            self.task,
            description=f"{self.label} ({params})",
            total=total,
            completed=index - 1,
            eta=human_duration(eta_s),
            live="",
        )

    def status(self, status: Status) -> None:
        left = human_duration(self.eta_s - (time.monotonic() - self.t0))
        live = f"{status.iops:,.0f} IOPS {status.bw_bytes / 1e6:,.1f} MB/s"
        self.progress.update(self.task, eta=left, live=live)

    def case_finished(self, result: Result) -> None:
        m = result.metrics
        if result.status != "ok" or m is None:
            self.progress.console.print(
                f"✗ {self.label}: failed: {result.error}", markup=False, soft_wrap=True
            )
            return
        p99 = max((d.percentiles_ns.get("99", 0.0) for d in m.directions), default=0.0)
        line = (
            f"✓ {self.label}: {m.total_iops:,.0f} IOPS, {m.total_bw_bytes / 1e6:,.1f} MB/s, "
            f"p99 {p99 / 1000:,.0f} µs"
        )
        self.progress.console.print(line, markup=False, soft_wrap=True)
        for warning in result.warnings:
            self.progress.console.print(f"  ! {warning}", markup=False)


@main.command()
@plan_options
@db_option
@click.option("--resume", "resume_id", type=int, metavar="RUN", help="Finish stored run RUN.")
@click.option("--new", "force_new", is_flag=True, help="Start a new run even if one can resume.")
@click.option(
    "--yes-destroy",
    "destroy",
    multiple=True,
    metavar="DEVICE",
    help="Allow writing to DEVICE, or to an existing FILE a set-up names (repeat per path); "
    "otherwise iolab asks for devices and refuses files.",
)
@click.option(
    "--wipe-signatures", is_flag=True, help="Allow wiping filesystem/partition signatures."
)
@click.option(
    "--allow-hooks",
    is_flag=True,
    help="Run the plan's setup_hook/teardown_hook shell commands: the plan is then code.",
)
def run(
    plan_file: str | None,
    preset: str | None,
    target: str | None,
    size: str | None,
    runtime: str | None,
    repeat: int | None,
    max_cases: int | None,
    db: str,
    resume_id: int | None,
    force_new: bool,
    destroy: tuple[str, ...],
    wipe_signatures: bool,
    allow_hooks: bool,
) -> None:
    """Run a plan (default: the quick preset here) and print its table.

    Every finished case is saved at once; re-running the same plan into the same
    database, or --resume RUN, skips the cases already stored.
    """
    out = Console(highlight=False)
    if resume_id is not None:
        if plan_file or preset or target or size or runtime or repeat:
            raise PlanError("--resume RUN takes no plan or overrides: it reuses the run's own")
        with _open(db) as store:
            stored = store.run(resume_id)
        overrides = plan.Overrides(**stored.overrides)
        the_plan = plan.parse_plan(stored.plan_text, stored.plan_source, overrides)
    else:
        overrides = _overrides(target, size, runtime, repeat, max_cases)
        the_plan = _load(plan_file, preset, overrides)
    Store.check_path(db)
    fio = info.probe()
    consent = _consent(the_plan, destroy, wipe_signatures, allow_hooks)
    campaign = runner.build(the_plan, fio, consent)
    _check_with_fio(campaign)
    with runner.locked(campaign), _open(db, create=True) as store:
        run_id = _pick_run(store, campaign, resume_id, force_new, overrides, out)
        with ProgressListener(out) as listener:
            results = runner.execute(campaign, store, run_id, listener)
        out.file.write(_run_table(store, run_id))
        failed = [r for r in results if r.status != "ok"]
        if failed:
            fail(
                f"{len(failed)} of {len(results)} cases failed (fio's errors above)",
                EXIT_CASES_FAILED,
            )


def _check_with_fio(campaign: runner.Campaign) -> None:
    """fio's own parse of the jobs; a refusal is placed at its line in the plan."""
    try:
        runner.check(campaign)
    except jobfile.Rejected as rejected:
        workload = runner.rejected_workload(campaign, rejected)
        raise plan.locate(campaign.plan, workload, rejected.key, rejected.reason) from None


def _consent(the_plan: Plan, named: tuple[str, ...], wipe: bool, hooks: bool) -> runner.Consent:
    """The devices the user agreed to destroy: by flag, or at a prompt showing each device."""
    wanted = [d for s in the_plan.setups if s.layout for d in s.layout.devices]
    files = {str(Path(s.path).resolve()) for s in the_plan.setups if s.layout is None}
    for device in named:
        if device not in wanted and str(Path(device).resolve()) not in files:
            raise TargetError(
                f"--yes-destroy {device}: the plan does not use it; name only the plan's devices "
                "or files"
            )
    confirmed = set(named)
    for device in dict.fromkeys(wanted):
        if device in confirmed or not sys.stdin.isatty():
            continue
        err.print(f"iolab will destroy all data on {devices.describe(device)}", markup=False)
        answer = click.prompt(f"type {device} to go on", default="", show_default=False)
        if answer != device:
            raise TargetError(f"{device} was not confirmed; nothing was written")
        confirmed.add(device)
    return runner.Consent(frozenset(confirmed), wipe, hooks)


@contextlib.contextmanager
def _open(db: str, create: bool = False) -> Iterator[Store]:
    """The database, after cleaning up any run on it whose iolab died (said in one line each)."""
    with Store(db, create=create) as store:
        with contextlib.suppress(StoreError):  # a read-only database: nothing to clean
            for line in runner.recover(store):
                err.print(f"iolab: {line}", markup=False, soft_wrap=True)
        yield store


def _pick_run(
    store: Store,
    campaign: runner.Campaign,
    resume_id: int | None,
    force_new: bool,
    overrides: plan.Overrides,
    out: Console,
) -> int:
    """The run to fill: the one asked for, an unfinished one of the same plan, or a new one."""
    the_plan = campaign.plan
    found: RunRow | None = None
    if resume_id is not None:
        found = store.run(resume_id)
    elif not force_new:
        found = store.resumable(the_plan.hash)
    if found is not None:
        retried = f"; {found.failed} failed will run again" if found.failed else ""
        out.print(
            f"resuming run {found.id}: {found.ok} of {found.case_count} cases already stored"
            f"{retried}"
        )
        return found.id
    env = environment.host(campaign.fio.version)
    run_id = store.create_run(
        the_plan, env, __version__, dataclasses.asdict(overrides), process.me()
    )
    out.print(
        f"run {run_id}: {the_plan.name}, {len(campaign.steps)} cases, results in {store.path}"
    )
    return run_id


def _run_table(store: Store, run_id: int) -> str:
    """The table `iolab run` ends with: set-ups side by side, each described under it."""
    stored = store.run(run_id)
    setups = store.setups(stored.id)
    table = report_model.build(
        stored,
        [name for name, _, _ in setups],
        store.cases(stored.id),
        stored.metric,
        stored.baseline,
        [report_model.setup_line(*setup) for setup in setups],
    )
    return terminal.render(table)


# ---------------------------------------------------------------- show, presets


@main.command()
@plan_options
@click.option("--fio", "show_fio", is_flag=True, help="Print the exact fio job files.")
def show(
    plan_file: str | None,
    preset: str | None,
    target: str | None,
    size: str | None,
    runtime: str | None,
    repeat: int | None,
    max_cases: int | None,
    show_fio: bool,
) -> None:
    """Print a plan's expanded matrix, one line per case; runs nothing."""
    the_plan = _load(plan_file, preset, _overrides(target, size, runtime, repeat, max_cases))
    for setup in the_plan.setups:
        if setup.layout is not None:
            click.echo(f"# set-up {setup.name!r} is built and torn down with:")
            for command in provision.commands(setup.layout, runner.mountpoint(setup)):
                click.echo(f"#   {shlex.join(command)}")
    if not show_fio:
        lines = _shared_options(the_plan)
        for number, case in enumerate(the_plan.cases(), start=1):
            lines.append(
                f"{number:>4}  {case.setup.name}  {case.workload.name}  #{case.repetition}\n"
            )
        click.echo("".join(lines), nl=False)
        return
    campaign = runner.build(the_plan, info.probe(), probe_write=False)
    click.echo("# one fio invocation per section; iolab runs them one at a time\n")
    for step in campaign.steps:
        click.echo(jobfile.render([campaign.preview(step)]))


def _shared_options(the_plan: Plan) -> list[str]:
    """Per [[workload]], the options all its points share; each case's name holds the rest."""
    lines = ["# options per [[workload]]; swept values are in each case's workload name\n"]
    tables: dict[int, list[dict[str, object]]] = {}
    for workload in the_plan.workloads:
        tables.setdefault(workload.table, []).append(dict(workload.options))
    for table, points in tables.items():
        first = points[0]
        shared = [k for k, v in first.items() if all(p.get(k) == v for p in points)]
        lines.append(f"# {table + 1}: {' '.join(f'{k}={first[k]}' for k in shared)}\n")
    return lines


@main.command()
def presets() -> None:
    """List the presets, one line each, with their origin."""
    for name in plan.preset_names():
        p = plan.load_preset(name)
        click.echo(f"{name:<24} {len(p.cases()):>3} cases  {p.origin}: {p.description}")


def output_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """How a report or comparison is written: format, metric, file, images, export."""
    decorators = [
        click.option(
            "--format",
            "fmt",
            type=click.Choice(report_output.DOCUMENT_FORMATS),
            default="table",
            show_default=True,
        ),
        click.option(
            "--metric",
            type=click.Choice(["auto", "iops", "bw"]),
            default="auto",
            show_default=True,
            help="auto: IOPS up to 64 KiB blocks, MB/s above.",
        ),
        click.option(
            "-o", "--output", default="-", metavar="FILE", help="Write here; '-' is stdout."
        ),
        click.option(
            "--image-format",
            type=click.Choice(["png", "svg"]),
            default="png",
            show_default=True,
            help="Format of the images written beside a Markdown report.",
        ),
        click.option(
            "--export",
            "export_dir",
            metavar="DIR",
            help="Also write every chart as PNG and SVG, and every table as CSV, into DIR.",
        ),
    ]
    for decorator in reversed(decorators):
        func = decorator(func)
    return func


# ---------------------------------------------------------------- runs, report


@main.command()
@db_option
def runs(db: str) -> None:
    """List the runs stored in the database."""
    with _open(db) as store:
        rows = store.runs()
    if not rows:
        click.echo(f"{db} holds no runs yet")
    for r in rows:
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(r.started_at))
        failed = f", {r.failed} failed" if r.failed else ""
        host = r.environment.get("hostname", "?")
        click.echo(
            f"{r.id:>4}  {started}  {r.plan_name:<22} {r.status:<11} "
            f"{r.done}/{r.case_count} cases{failed}  {host}"
        )


@main.command()
@click.argument("run_ids", nargs=-1, type=int, metavar="[RUN]...")
@db_option
@output_options
@click.option("--baseline", metavar="SETUP", help="Show other set-ups as % of this one.")
@click.option(
    "--charts",
    metavar="LIST",
    default="auto",
    show_default=True,
    help=f"Charts to draw: auto, none, or a comma list of {','.join(report_model.CHART_KINDS)}.",
)
@click.option("--skip-charts", metavar="LIST", help="Chart kinds to leave out of auto's choice.")
@click.option(
    "--x",
    "x_field",
    metavar="FIELD",
    help="Workload field on the x axis of scaling charts (default: the swept one).",
)
@click.option(
    "--y",
    "y_metric",
    type=click.Choice(report_model.Y_METRICS),
    default="auto",
    show_default=True,
    help="Metric on the y axis of scaling charts.",
)
@click.option(
    "--lines",
    type=click.Choice(["auto", "setup", "pattern"]),
    default="auto",
    show_default=True,
    help="Scaling charts: one line per set-up, or per pattern (auto: per set-up if several).",
)
def report(
    run_ids: tuple[int, ...],
    db: str,
    fmt: str,
    baseline: str | None,
    metric: str,
    output: str,
    charts: str,
    skip_charts: str | None,
    x_field: str | None,
    y_metric: str,
    lines: str,
    image_format: str,
    export_dir: str | None,
) -> None:
    """Render stored runs (default: the latest) as a table, Markdown, CSV or HTML.

    Several runs are shown side by side. HTML is one self-contained page with interactive
    charts; Markdown written to a file gets its charts as images beside it.
    """

    drawn = fmt in ("markdown", "html") or export_dir is not None
    kinds = report_document.parse_kinds(charts, "--charts") if drawn else ()
    skipped = report_document.parse_kinds(skip_charts, "--skip-charts") or ()
    report_output.check(output, export_dir)
    with _open(db) as store:
        data = report_data.load(store, list(run_ids), samples=drawn, histograms=drawn)
    single = data.runs[0] if len(data.runs) == 1 else None
    options = report_document.Options(
        metric=metric if metric != "auto" or single is None else single.metric,
        baseline=baseline or (single.baseline if single else None),
        charts=kinds,
        skip=skipped,
        x=x_field,
        y=y_metric,
        lines=lines,
    )
    _emit(report_document.build(data, options), fmt, output, image_format, export_dir)


# ---------------------------------------------------------------- compare


@main.command()
@click.argument("run_ids", nargs=-1, type=int, required=True, metavar="RUN_A RUN_B [RUN]...")
@db_option
@output_options
def compare(
    run_ids: tuple[int, ...],
    db: str,
    fmt: str,
    metric: str,
    output: str,
    image_format: str,
    export_dir: str | None,
) -> None:
    """Compare runs against the first: each change with its 95% interval, marked "not
    significant" where the interval includes 0; says what differs in their environments."""

    report_output.check(output, export_dir)
    with _open(db) as store:
        data = report_data.load(store, list(run_ids), samples=False, histograms=False)
    _emit(report_document.compare(data, metric), fmt, output, image_format, export_dir)


def _emit(
    document: report_document.Document,
    fmt: str,
    output: str,
    image_format: str,
    export_dir: str | None,
) -> None:
    """Render, then write to stdout or a file (with its images beside it), and export."""
    rendered = report_output.render(document, fmt, output, image_format)
    if export_dir is not None:
        files = report_output.exported(document)
        report_output.write_files(Path(export_dir), files)
        err.print(
            f"wrote {len(files)} files (charts: PNG and SVG; tables: CSV) in {export_dir}",
            soft_wrap=True,
        )
    if output == "-":
        click.echo(rendered.text, nl=False)
        return
    report_output.write(rendered, output)
    size = human_bytes(len(rendered.text.encode()))
    extra = f" and {len(rendered.files)} images in {report_output.images_folder(output)}/"
    err.print(f"wrote {output} ({size}){extra if rendered.files else ''}", soft_wrap=True)


@main.command()
@click.argument("path", required=False, default=".", metavar="[PATH]")
@click.option("--json", "as_json", is_flag=True, help="Print it as JSON, for scripts.")
def env(path: str, as_json: bool) -> None:
    """Print the host and what PATH lives on: filesystem, RAID, devices, their settings."""
    target = Path(path)
    if not target.exists():
        raise TargetError(f"{path} does not exist; give a file, directory or device")
    facts = {"host": environment.host(info.probe().version), "target": environment.target(target)}
    if as_json:
        click.echo(json.dumps(facts, indent=2, default=str))
        return
    click.echo(env_text.render(facts), nl=False)
