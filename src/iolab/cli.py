"""Command line: parse, call the use case, print. Wiring only; one error handler."""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import shlex
import sys
import time
from collections.abc import Callable
from typing import Any, NoReturn

import click
from click.core import ParameterSource
from rich.console import Console

from iolab import app, plan, shell
from iolab.analysis import history as history_model
from iolab.errors import Interrupted, IolabError
from iolab.names import one_line, shown
from iolab.report import document as report_document
from iolab.report import env_text, history_text
from iolab.report import model as report_model
from iolab.report import output as report_output
from iolab.store import RunRow
from iolab.terminal_ui import TerminalUi
from iolab.version import __version__

EXIT_USER_ERROR = 1
EXIT_CASES_FAILED = 3
EXIT_REGRESSION = 4  # iolab check: a series got worse beyond its rule and the noise
EXIT_CLOSED_PIPE = 141  # 128 + SIGPIPE: the reader of standard output stopped reading
# Ctrl-C exits 130 (128 + SIGINT); SIGTERM, SIGHUP and SIGQUIT 128 + theirs (shell.exit_code)

err = Console(stderr=True, highlight=False, emoji=False)


def fail(message: str, code: int = EXIT_USER_ERROR, flush: bool = True) -> NoReturn:
    """The one line on stderr, after what was printed (unless `flush` is False: a stop never
    waits on a reader); a gone terminal (SIGHUP) or a full disk leaves the exit code as is."""
    with contextlib.suppress(OSError):
        if flush:
            sys.stdout.flush()
        err.print(f"iolab: {one_line(message)}", markup=False, soft_wrap=True)
    sys.exit(code)


def _stdout_failed(error: OSError) -> NoReturn:
    """A closed pipe ends iolab quietly, as SIGPIPE ends other tools; any other fault is said."""
    if error.errno == errno.EPIPE:
        sys.exit(EXIT_CLOSED_PIPE)
    fail(f"error: cannot write to standard output ({error.strerror})")


def echo(text: str, nl: bool = True, err: bool = False) -> None:
    """click.echo, with control and bidi characters shown as escapes: names and other text
    from a database made before names had a rule, or from a device, reach the terminal."""
    click.echo(shown(text, keep="\n\t"), nl=nl, err=err)


class Command(click.Command):
    """A command whose options and arguments, given empty on the command line, are refused:
    an empty name or path is never read as 'the default' or 'here'."""

    def invoke(self, ctx: click.Context) -> Any:
        for param in self.params:
            if ctx.get_parameter_source(param.name or "") != ParameterSource.COMMANDLINE:
                continue
            value = ctx.params.get(param.name or "")
            if any(isinstance(v, str) and not v.strip() for v in _values(value)):
                raise click.BadParameter("is empty; give a value, or leave it out", ctx, param)
        return super().invoke(ctx)


def _values(value: object) -> tuple[object, ...]:
    return value if isinstance(value, tuple) else (value,)


class Main(click.Group):
    """The one place errors become messages and exit codes."""

    command_class = Command

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """Usage errors (unknown option, bad value, missing argument) are bad input too:
        one line and exit 1, like every other."""
        kwargs["standalone_mode"] = False
        kwargs["prog_name"] = "iolab"  # also under python -m iolab, and in tests
        with shell.stop_signals(), shell.guarded_stdout():
            try:
                code = super().main(*args, **kwargs)
                sys.stdout.flush()  # a full disk or a closed pipe shows here, not at exit
            except click.UsageError as error:
                where = error.ctx.command_path if error.ctx else "iolab"
                words = " ".join(error.format_message().split())
                fail(f"error: {words} (see '{where} --help')")
            except click.ClickException as error:
                fail(f"error: {' '.join(error.format_message().split())}")
            except click.Abort as abort:  # stopped while parsing: the signal is its context
                stop = abort.__context__ or KeyboardInterrupt()
                fail(shell.stopped_by(stop), shell.exit_code(stop), flush=False)
            except shell.StdoutError as error:
                _stdout_failed(error)
        sys.exit(code if isinstance(code, int) else 0)

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:  # --help and --version print here, before click's own handler of a closed pipe
            return super().make_context(*args, **kwargs)
        except shell.StdoutError as error:
            _stdout_failed(error)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except Interrupted as stop:
            fail(str(stop), shell.exit_code(stop), flush=False)
        except IolabError as error:
            fail(f"error: {error}")
        except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM/SIGHUP/SIGQUIT (shell)
            fail(shell.stopped_by(stop), shell.exit_code(stop), flush=False)
        except shell.StdoutError as error:
            _stdout_failed(error)


def options(*decorators: Callable[..., Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Several click options as one decorator, applied in the order listed."""

    def apply(func: Callable[..., Any]) -> Callable[..., Any]:
        for decorator in reversed(decorators):
            func = decorator(func)
        return func

    return apply


def ui() -> TerminalUi:
    return TerminalUi(Console(highlight=False, emoji=False), err)


class _Said(logging.Formatter):
    """A log record as one line on stderr, its names shown safely."""

    def format(self, record: logging.LogRecord) -> str:
        return f"iolab: {one_line(record.getMessage())}"


def _verbose() -> None:
    """`-v`: each command iolab runs (fio, mkfs, mount, mdadm, a RAID card's tool), said on
    stderr before it runs."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Said())
    logger = logging.getLogger("iolab")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)


@click.group(cls=Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="iolab")
@click.option("-v", "--verbose", is_flag=True,
              help="Say on stderr each command iolab runs (fio, mkfs, mount...).")  # fmt: skip
def main(verbose: bool) -> None:
    """iolab: a storage evaluation lab in one command.

    Plans name set-ups and workloads; iolab drives fio on each, keeps every result in
    SQLite and renders comparison tables. With no arguments, 'iolab run' runs the quick
    preset on a test file in the current directory.
    """
    if verbose:
        _verbose()


plan_options = options(
    click.argument("plan_file", required=False, metavar="[PLAN.toml]"),
    click.option("--preset", metavar="NAME", help="Use a preset (see 'iolab presets')."),
    click.option("--target", metavar="PATH", help="Run every workload on PATH instead."),
    click.option("--size", metavar="SIZE", help="Test file size for every workload, e.g. 256m."),
    click.option("--runtime", metavar="SECONDS", help="Runtime of every workload, e.g. 2."),
    click.option("--repeat", type=click.IntRange(min=1), help="Repetitions of every case."),
    click.option("--max-cases", type=click.IntRange(min=1), metavar="N",
                 help=f"Refuse plans of more cases than this (default {plan.MAX_CASES:,})."),
)  # fmt: skip
db_option = click.option("--db", default=app.DEFAULT_DB, show_default=True, metavar="FILE",
                         help="Results database.")  # fmt: skip


OVERRIDES = ("target", "size", "runtime", "repeat", "max_cases")


def _overrides(runtime: str | None, **given: Any) -> plan.Overrides:
    seconds: str | int | None = int(runtime) if runtime and runtime.isdigit() else runtime
    return plan.Overrides(runtime=seconds, **given)


@main.command()
@plan_options
@db_option
@click.option("--resume", "resume_id", type=int, metavar="RUN", help="Finish stored run RUN.")
@click.option("--new", "force_new", is_flag=True, help="Start a new run even if one can resume.")
@click.option("--yes-destroy", "destroy", multiple=True, metavar="PATH",
              help="Allow writing to DEVICE, or to an existing FILE a set-up names (repeat per "
              "path); otherwise iolab asks for devices and refuses files.")  # fmt: skip
@click.option("--wipe-signatures", is_flag=True,
              help="Allow wiping filesystem/partition signatures.")  # fmt: skip
@click.option("--allow-hooks", is_flag=True, help="Run the plan's setup_hook/teardown_hook "
              "shell commands: the plan is then code.")  # fmt: skip
@click.option("--lab", is_flag=True, help="Measure the plan's set-ups on devices (md, "
              "LVM, btrfs) in the virtual lab, on image files; marked as lab figures.")  # fmt: skip
def run(plan_file: str | None, preset: str | None, db: str, **flags: Any) -> None:
    """Run a plan (default: the quick preset here) and print its table.

    Every finished case is saved at once; re-running the same plan into the same
    database, or --resume RUN, skips the cases already stored.
    """
    overrides = _overrides(**{k: flags.pop(k) for k in OVERRIDES})
    request = app.RunRequest(plan_file, preset, overrides, db, **flags)
    _ran(app.run(request, the_ui := ui()), the_ui)


def _ran(outcome: app.RunOutcome, the_ui: TerminalUi) -> None:
    """Print a finished run's table; exit 3 if some of its cases failed."""
    the_ui.out.file.write(report_output.render(outcome.document, "table").text)
    if outcome.failed:
        fail(f"{outcome.failed} of {outcome.total} cases failed (fio's errors above)",
             EXIT_CASES_FAILED)  # fmt: skip


@main.command(help=app.PEAK_HELP)
@options(db_option, *(click.option(f"--{n}", **kw) for n, kw in app.PEAK_OPTIONS.items()))
def peak(db: str, **given: Any) -> None:
    _ran(app.peak(db, given, the_ui := ui()), the_ui)


@main.command()
@plan_options
@click.option("--fio", "show_fio", is_flag=True, help="Print the exact fio job files.")
@click.option("--toml", "as_toml", is_flag=True, help="Print the plan's TOML (a preset's) to copy.")
@click.option("--json", "as_json", is_flag=True, help="Print set-ups and cases as JSON.")
def show(plan_file: str | None, preset: str | None, show_fio: bool, **flags: Any) -> None:
    """Print a plan's expanded matrix, one line per case; runs nothing."""
    if flags.pop("as_toml"):
        echo(app.plan_toml(plan_file, preset), nl=False)
        return
    as_json = flags.pop("as_json")
    the_plan = app.load_plan(plan_file, preset, _overrides(**flags))
    if as_json:
        echo(plan.matrix_json(the_plan, app.provision_commands(the_plan)), nl=False)
        return
    for name, commands in app.provision_commands(the_plan):
        echo(f"# set-up {name!r} is built and torn down with:")
        for command in commands:
            echo(f"#   {shlex.join(command)}")
    if show_fio:
        echo("# one fio invocation per section; iolab runs them one at a time\n")
        echo("\n".join(app.job_files(the_plan)), nl=False)
        return
    echo("".join(plan.matrix_lines(the_plan)), nl=False)


@main.command()
def presets() -> None:
    """List the presets, one line each, with their origin."""
    for name in plan.preset_names():
        p = plan.load_preset(name)
        echo(f"{name:<24} {len(p.cases()):>3} cases  {p.origin}: {p.description}")


output_options = options(
    click.option("--format", "fmt", type=click.Choice(report_output.DOCUMENT_FORMATS),
                 default="table", show_default=True),
    click.option("--metric", type=click.Choice(["auto", "iops", "bw"]), default="auto",
                 show_default=True, help="auto: IOPS up to 64 KiB blocks, MB/s above."),
    click.option("-o", "--output", default="-", metavar="FILE", help="Write here; '-' is stdout."),
    click.option("--image-format", type=click.Choice(["png", "svg"]), default="png",
                 show_default=True, help="Format of the images written beside a Markdown report."),
    click.option("--export", "export_dir", metavar="DIR",
                 help="Also write every chart as PNG and SVG, and every table as CSV, into DIR."),
    click.option("--force", is_flag=True,
                 help="Replace files iolab did not write (never through a symbolic link)."),
)  # fmt: skip


@main.command()
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print them as JSON, for scripts.")
def runs(db: str, as_json: bool) -> None:
    """List the runs stored in the database."""
    rows = app.runs(db, ui())
    if as_json:
        echo(json.dumps([_run_json(r) for r in rows], indent=2, ensure_ascii=False))
        return
    if not rows:
        echo(f"{db} holds no runs yet")
    for r in rows:
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(r.started_at))
        failed = f", {r.failed} failed" if r.failed else ""
        host = one_line(str(r.environment.get("hostname", "?")))
        echo(f"{r.id:>4}  {started}  {one_line(r.plan_name):<22} {r.status:<11} "
                   f"{r.tally(r.done)} cases{failed}  {host}")  # fmt: skip


def _run_json(run: RunRow) -> dict[str, object]:
    return {
        "id": run.id, "plan": run.plan_name, "status": run.status,
        "started_at": run.started_at, "ended_at": run.ended_at,
        "cases_planned": run.case_count, "cases_done": run.done, "cases_failed": run.failed,
        "host": run.environment.get("hostname"), "origin": run.origin.kind,
    }  # fmt: skip


@main.command()
@click.argument("run_ids", nargs=-1, type=int, metavar="[RUN]...")
@db_option
@output_options
@click.option("--baseline", metavar="SETUP", help="Show other set-ups as % of this one.")
@click.option("--charts", metavar="LIST", default="auto", show_default=True,
              help="Charts to draw: auto, none, or a comma list of "
              f"{','.join(report_model.CHART_KINDS)}.")  # fmt: skip
@click.option("--skip-charts", metavar="LIST", help="Chart kinds to leave out of auto's choice.")
@click.option("--x", "x_field", metavar="FIELD", help="Workload field on the x axis of "
              "scaling charts (default: the swept one).")  # fmt: skip
@click.option("--y", "y_metric", type=click.Choice(report_model.Y_METRICS), default="auto",
              show_default=True, help="Metric on the y axis of scaling charts.")  # fmt: skip
@click.option("--lines", type=click.Choice(["auto", "setup", "pattern"]), default="auto",
              show_default=True, help="Scaling charts: one line per set-up, or per pattern "
              "(auto: per set-up if several).")  # fmt: skip
def report(run_ids: tuple[int, ...], db: str, fmt: str, **flags: Any) -> None:
    """Render stored runs (default: the latest) as a table, Markdown, CSV or HTML.

    Several runs are shown side by side. HTML is one self-contained page with interactive
    charts; Markdown written to a file gets its charts as images beside it.
    """
    written = {k: flags.pop(k) for k in ("output", "image_format", "export_dir", "force")}
    drawn = fmt in ("markdown", "html") or written["export_dir"] is not None
    charts = report_document.parse_kinds(flags["charts"], "--charts")  # () when not drawn (app)
    options = report_document.Options(
        metric=flags["metric"], baseline=flags["baseline"], charts=charts,
        skip=report_document.parse_kinds(flags["skip_charts"], "--skip-charts") or (),
        x=flags["x_field"], y=flags["y_metric"], lines=flags["lines"])  # fmt: skip
    report_output.check(written["output"], written["export_dir"], force=written["force"],
                        images=fmt == "markdown")  # fmt: skip
    _emit(app.report(db, run_ids, options, drawn, ui()), fmt, **written)


@main.command()
@click.argument("run_ids", nargs=-1, type=int, required=True, metavar="RUN_A RUN_B [RUN]...")
@db_option
@output_options
def compare(run_ids: tuple[int, ...], db: str, fmt: str, metric: str, **written: Any) -> None:
    """Compare runs against the first: each change with its 95% interval, marked "not
    significant" where the interval includes 0; says what differs in their environments."""
    report_output.check(written["output"], written["export_dir"], force=written["force"],
                        images=fmt == "markdown")  # fmt: skip
    _emit(app.compare(db, run_ids, metric, ui()), fmt, **written)


def _emit(document: report_document.Document, fmt: str, **written: Any) -> None:
    """Render and write (stdout, or a file with its images beside it, and an export)."""
    text, said = report_output.emit(document, fmt, **written)
    echo(text, nl=False)
    for line in said:
        err.print(one_line(line), soft_wrap=True, markup=False)


@main.command()
@click.argument("path", required=False, default=".", metavar="[PATH]")
@click.option("--json", "as_json", is_flag=True, help="Print it as JSON, for scripts.")
def env(path: str, as_json: bool) -> None:
    """Print the host and what PATH lives on: filesystem, RAID, devices, their settings."""
    facts = app.environment_of(path)
    text = json.dumps(facts, indent=2, default=str) + "\n" if as_json else env_text.render(facts)
    echo(text, nl=False)


@main.command()
@click.argument("plan_name", required=False, metavar="[PLAN]")
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print the series as JSON.")
def history(plan_name: str | None, db: str, as_json: bool) -> None:
    """The runs of one plan (default: the latest run's) over time: per set-up, workload and
    metric, each run's median, and the changes beyond the noise with what changed."""
    found = app.plan_history(db, plan_name, ui())
    if as_json:
        echo(history_text.history_json(found.plan_name, found.series), nl=False)
        return
    echo(history_text.history(found.plan_name, found.runs, found.series), nl=False)


@main.command()
@click.argument("run_id", type=int, required=False, metavar="[RUN]")
@db_option
@click.option("--baseline", type=int, metavar="RUN", help="Judge against this run "
              "(default: the plan's run before RUN).")  # fmt: skip
@click.option(
    "--rule",
    "rules",
    multiple=True,
    metavar="METRIC=PCT",
    help="How much worse a metric may get: iops=5, bw=5, p99=10 (the defaults).",
)
def check(run_id: int | None, db: str, baseline: int | None, rules: tuple[str, ...]) -> None:
    """Gate a build on a run: the latest run (or RUN) against the run before it, series by
    series; exit 4 when a series got worse beyond its rule and beyond the noise."""
    latest, base, verdicts = app.check(db, run_id, baseline, _rules(rules), ui())
    failed = [v for v in verdicts if v.regression]
    for v in failed:
        echo(history_text.verdict(v))
    plural = "s" if len(failed) != 1 else ""
    echo(f"check: run {latest} against run {base}: {len(verdicts)} series, "
         f"{len(failed)} regression{plural} beyond rule and noise")  # fmt: skip
    if failed:
        sys.exit(EXIT_REGRESSION)


def _rules(given: tuple[str, ...]) -> dict[history_model.Metric, float]:
    rules = dict(history_model.DEFAULT_RULES)
    for text in given:
        name, _, pct = text.partition("=")
        try:
            allowed = float(pct.strip().rstrip("%"))
        except ValueError:
            allowed = -1.0
        if name.strip() not in history_model.METRICS or not 0 <= allowed <= 1000:
            raise click.BadParameter(
                f"{text!r} is not METRIC=PCT with METRIC one of "
                f"{', '.join(history_model.METRICS)} and PCT from 0 to 1000",
                param_hint="--rule",
            )
        rules[name.strip()] = allowed  # type: ignore[index]
    return rules


@main.command(help=app.REHEARSE_HELP)
@click.argument("plan_file", metavar="PLAN.toml")
def rehearse(plan_file: str) -> None:
    sys.exit(0 if app.rehearse(plan_file, ui()) else EXIT_CASES_FAILED)


@main.command(help=app.ADVISE_HELP)
@options(click.argument("run_id", type=int, required=False, metavar="[RUN]"), db_option,
         *(click.option(f"--{name}", **kw) for name, kw in app.ADVISE_OPTIONS.items()))  # fmt: skip
def advise(run_id: int | None, db: str, **given: Any) -> None:
    echo(report_output.render(app.advise(db, run_id, given, ui()), "table").text, nl=False)


@main.command("import", help=app.IMPORT_HELP)
@options(click.argument("paths", nargs=-1, required=True, metavar="PATH..."), db_option,
         *(click.option(*names, **kw) for names, kw in app.IMPORT_OPTIONS))  # fmt: skip
def import_(paths: tuple[str, ...], db: str, setup: str | None, **given: str | None) -> None:
    done = app.import_files(paths, setup, db, ui(), given)
    if not done.runs and not done.skipped and len(done.problems) == 1:
        fail(f"error: {done.problems[0]}")  # nothing imported: the one file's line, exit 1
    echo("".join(f"{line}\n" for _, line in done.runs), nl=False)
    echo("".join(f"iolab: {line}\n" for line in done.notes), nl=False, err=True)
    if done.problems:
        code = EXIT_CASES_FAILED if done.runs else EXIT_USER_ERROR  # 1: nothing imported
        fail(f"{len(done.problems)} of the files could not be imported", code)


@main.command(help=app.EXPORT_HELP)
@options(click.argument("run_id", type=int, required=False, metavar="[RUN]"), db_option,
         *(click.option(*names, **kw) for names, kw in app.EXPORT_OPTIONS))  # fmt: skip
def export(run_id: int | None, db: str, fmt: str, output: str, force: bool) -> None:
    text, said = app.export_run(db, run_id, fmt, output, ui(), force=force)
    echo(text, nl=False)
    echo("".join(f"{line}\n" for line in said), nl=False, err=True)
