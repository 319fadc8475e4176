"""Command line: parse, build the plan, run, report. Wiring only; one error handler."""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn

from iolab import __version__, plan, runner
from iolab.errors import Interrupted, IolabError, PlanError
from iolab.fio import info, jobfile
from iolab.fio.parse import Status
from iolab.model import Case, Plan, Result
from iolab.report import csv as csv_format
from iolab.report import markdown, terminal
from iolab.report import model as report_model
from iolab.store import RunRow, Store
from iolab.targets import environment
from iolab.units import human_bytes, human_duration

DEFAULT_DB = "iolab.db"
EXIT_USER_ERROR = 1
EXIT_CASES_FAILED = 3
EXIT_INTERRUPTED = 130
FORMATS: dict[str, Callable[[report_model.Table], str]] = {
    "table": terminal.render,
    "markdown": markdown.render,
    "csv": csv_format.render,
}

err = Console(stderr=True, highlight=False)


def fail(message: str, code: int = EXIT_USER_ERROR) -> NoReturn:
    err.print(f"iolab: {message}", markup=False, soft_wrap=True)
    sys.exit(code)


class Main(click.Group):
    """The one place errors become messages and exit codes."""

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
    ]
    for decorator in reversed(decorators):
        func = decorator(func)
    return func


def db_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--db", default=DEFAULT_DB, show_default=True, metavar="FILE", help="Results database."
    )(func)


def _overrides(
    target: str | None, size: str | None, runtime: str | None, repeat: int | None
) -> plan.Overrides:
    seconds: str | int | None = int(runtime) if runtime and runtime.isdigit() else runtime
    return plan.Overrides(target=target, size=size, runtime=seconds, repeat=repeat)


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
def run(
    plan_file: str | None,
    preset: str | None,
    target: str | None,
    size: str | None,
    runtime: str | None,
    repeat: int | None,
    db: str,
    resume_id: int | None,
    force_new: bool,
) -> None:
    """Run a plan (default: the quick preset here) and print its table.

    Every finished case is saved at once; re-running the same plan into the same
    database, or --resume RUN, skips the cases already stored.
    """
    out = Console(highlight=False)
    if resume_id is not None:
        if plan_file or preset or target or size or runtime or repeat:
            raise PlanError("--resume RUN takes no plan or overrides: it reuses the run's own")
        with Store(_existing(db)) as store:
            stored = store.run(resume_id)
        overrides = plan.Overrides(**stored.overrides)
        the_plan = plan.parse_plan(stored.plan_text, stored.plan_source, overrides)
    else:
        overrides = _overrides(target, size, runtime, repeat)
        the_plan = _load(plan_file, preset, overrides)
    fio = info.probe()
    campaign = runner.build(the_plan, fio)
    runner.check(campaign)
    with Store(db) as store:
        run_id = _pick_run(store, campaign, resume_id, force_new, overrides, out)
        with ProgressListener(out) as listener:
            results = runner.execute(campaign, store, run_id, listener)
        _print_report(store, run_id, None, "auto", out)
        failed = [r for r in results if r.status != "ok"]
        if failed:
            fail(
                f"{len(failed)} of {len(results)} cases failed (fio's errors above)",
                EXIT_CASES_FAILED,
            )


def _existing(db: str) -> str:
    if not Path(db).exists():
        raise IolabError(f"{db} does not exist; run 'iolab run' first or give --db FILE")
    return db


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
        out.print(
            f"resuming run {found.id}: {found.done} of {found.case_count} cases already stored"
        )
        return found.id
    env = environment.host(campaign.fio.version)
    run_id = store.create_run(the_plan, env, __version__, dataclasses.asdict(overrides))
    out.print(
        f"run {run_id}: {the_plan.name}, {len(campaign.steps)} cases, results in {store.path}"
    )
    return run_id


def _print_report(
    store: Store, run_id: int | None, baseline: str | None, metric: str, out: Console
) -> None:
    out.file.write(_table_text(store, run_id, baseline, metric, "table"))


def _table_text(
    store: Store, run_id: int | None, baseline: str | None, metric: str, fmt: str
) -> str:
    stored = store.run(run_id)
    setups = [name for name, _, _ in store.setups(stored.id)]
    table = report_model.build(
        stored,
        setups,
        store.cases(stored.id),
        metric if metric != "auto" else stored.metric,
        baseline or stored.baseline,
    )
    return FORMATS[fmt](table)


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
    show_fio: bool,
) -> None:
    """Print a plan's expanded matrix, one line per case; runs nothing."""
    the_plan = _load(plan_file, preset, _overrides(target, size, runtime, repeat))
    if not show_fio:
        for number, case in enumerate(the_plan.cases(), start=1):
            options = " ".join(f"{k}={v}" for k, v in case.workload.options.items())
            where = f"{case.setup.name}  {case.workload.name}  #{case.repetition}"
            click.echo(f"{number:>4}  {where}  {options}")
        return
    campaign = runner.build(the_plan, info.probe(), probe_write=False)
    for step in campaign.steps:
        click.echo(jobfile.render([step.job]))


@main.command()
def presets() -> None:
    """List the presets, one line each, with their origin."""
    for name in plan.preset_names():
        p = plan.load_preset(name)
        click.echo(f"{name:<24} {len(p.cases()):>3} cases  {p.origin}: {p.description}")


# ---------------------------------------------------------------- runs, report


@main.command()
@db_option
def runs(db: str) -> None:
    """List the runs stored in the database."""
    with Store(_existing(db)) as store:
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
@click.argument("run_id", required=False, type=int, metavar="[RUN]")
@db_option
@click.option(
    "--format", "fmt", type=click.Choice(list(FORMATS)), default="table", show_default=True
)
@click.option("--baseline", metavar="SETUP", help="Show other set-ups as % of this one.")
@click.option(
    "--metric",
    type=click.Choice(["auto", "iops", "bw"]),
    default="auto",
    show_default=True,
    help="auto: IOPS up to 64 KiB blocks, MB/s above.",
)
@click.option("-o", "--output", default="-", metavar="FILE", help="Write here; '-' is stdout.")
def report(
    run_id: int | None, db: str, fmt: str, baseline: str | None, metric: str, output: str
) -> None:
    """Render a stored run (default: the latest) as a table, Markdown or CSV."""
    with Store(_existing(db)) as store:
        text = _table_text(store, run_id, baseline, metric, fmt)
    if output == "-":
        click.echo(text, nl=False)
        return
    try:
        Path(output).write_text(text)
    except OSError as error:
        raise IolabError(f"cannot write {output}: {error.strerror}") from None
    err.print(f"wrote {output} ({human_bytes(len(text.encode()))})")
