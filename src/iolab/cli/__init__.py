"""Command line: parse, call the use case, print. Wiring only; one error handler.

This package holds the group, its error handling and the options commands share; each
module beside it holds a few commands (running, results, environment, exchange), which
register themselves on `main` when the package is imported. Each command imports what it uses
inside its function, so that `iolab --help` and `iolab history` start fast: the top of these
modules imports click and what building the commands needs, nothing more."""

from __future__ import annotations

import contextlib
import errno
import logging
import sys
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

import click
from click.core import ParameterSource
from rich.console import Console

from iolab import shell, units
from iolab.choices import DEFAULT_DB, DOCUMENT_FORMATS, MAX_CASES
from iolab.errors import Interrupted, IolabError, Resume
from iolab.names import one_line, shown
from iolab.version import __version__

if TYPE_CHECKING:
    from iolab.plan.common import Overrides
    from iolab.terminal_ui import TerminalUi

EXIT_USER_ERROR = 1
EXIT_CASES_FAILED = 3
EXIT_REGRESSION = 4  # iolab check: a series got worse beyond its rule and the noise
EXIT_NOT_JUDGED = 5  # iolab check: a series not judged (too little history, too noisy, failed)
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


def _warning_line(message: Warning | str, *_: object, **__: object) -> None:
    """A library's warning (matplotlib's glyph a font lacks) as one line on stderr, as iolab's
    own: Python's two lines (its source file, then the line of code) say nothing to a user."""
    with contextlib.suppress(OSError):
        err.print(f"iolab: warning: {one_line(str(message))}", markup=False, soft_wrap=True)


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


class Whole(click.ParamType[int]):
    """A whole number typed by a person, read by units.whole (ASCII digits only: click's int
    reads "1_0" as 10 and other scripts' digits too), from `least` to `most`."""

    name = "integer"

    def __init__(self, least: int = 0, most: int | None = None) -> None:
        self.least, self.most = least, most

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):  # a default, not typed
            return value
        if str(value) != str(value).strip():
            self.fail(f"{value!r} has spaces around it (quoted by mistake?)", param, ctx)
        try:
            number = units.whole(str(value))
        except ValueError as error:
            self.fail(str(error), param, ctx)
        if number < self.least or (self.most is not None and number > self.most):
            within = f"from {self.least} to {self.most}" if self.most else f"{self.least} or more"
            self.fail(f"{value!r} is not {within}", param, ctx)
        return number


class Number(click.ParamType[float]):
    """A figure typed by a person, read by units.number (no sign, exponent, inf, nan or '_')."""

    name = "number"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, float):
            return value
        try:
            return units.number(str(value))
        except ValueError:
            self.fail(
                f"{value!r} is not a positive figure written in ASCII digits (one '.' at "
                f"most; {units.NOT_DIGITS})",
                param,
                ctx,
            )


WHOLE = Whole()


class Main(click.Group):
    """The one place errors become messages and exit codes."""

    command_class = Command

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """Usage errors (unknown option, bad value, missing argument) are bad input too:
        one line and exit 1, like every other."""
        kwargs["standalone_mode"] = False
        kwargs["prog_name"] = "iolab"  # also under python -m iolab, and in tests
        shell.hold_closed_standard_fds()  # before any file is opened: none takes fd 0, 1 or 2
        warnings.showwarning = _warning_line
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
            fail(f"{stop}{_resume_hint(stop.resume)}", shell.exit_code(stop), flush=False)
        except IolabError as error:
            fail(f"error: {error}{_resume_hint(error.resume)}")
        except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM/SIGHUP/SIGQUIT (shell)
            fail(shell.stopped_by(stop), shell.exit_code(stop), flush=False)
        except shell.StdoutError as error:
            _stdout_failed(error)


def _resume_hint(resume: Resume | None) -> str:
    from iolab.terminal_ui import resume_hint

    return resume_hint(resume)


def options(*decorators: Callable[..., Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Several click options as one decorator, applied in the order listed."""

    def apply(func: Callable[..., Any]) -> Callable[..., Any]:
        for decorator in reversed(decorators):
            func = decorator(func)
        return func

    return apply


def ui() -> TerminalUi:
    from iolab.terminal_ui import TerminalUi

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
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Say on stderr each command iolab runs (fio, mkfs, mount...).",
)
def main(verbose: bool) -> None:
    """iolab: a storage evaluation lab in one command.

    Plans name set-ups and workloads; iolab drives fio on each, keeps every result in
    SQLite and renders comparison tables. With no arguments, 'iolab run' runs the quick
    preset on a test file in the current directory.
    """
    from iolab.app.base import restores_pending

    if verbose:
        _verbose()
    for line in restores_pending():  # until restored, every command says each one
        echo(f"iolab: warning: {one_line(line)}", err=True)


plan_options = options(
    click.argument("plan_file", required=False, metavar="[PLAN.toml]"),
    click.option("--preset", metavar="NAME", help="Use a preset (see 'iolab presets')."),
    click.option("--target", metavar="PATH", help="Run every workload on PATH instead."),
    click.option("--size", metavar="SIZE", help="Test file size for every workload, e.g. 256m."),
    click.option("--runtime", metavar="SECONDS", help="Runtime of every workload, e.g. 2."),
    click.option(
        "--repeat", type=Whole(least=1), metavar="N", help="Repetitions of every case (1 or more)."
    ),
    click.option(
        "--max-cases",
        type=Whole(least=1),
        metavar="N",
        help=f"Refuse plans of more cases than this (default {MAX_CASES:,}).",
    ),
)
db_option = click.option(
    "--db", default=DEFAULT_DB, show_default=True, metavar="FILE", help="Results database."
)


OVERRIDES = ("target", "size", "runtime", "repeat", "max_cases")


def overrides_given(runtime: str | None, **given: Any) -> Overrides:
    from iolab.plan.common import Overrides

    digits = runtime is not None and runtime.isascii() and runtime.isdigit()
    seconds: str | int | None = int(runtime) if digits and runtime else runtime
    return Overrides(runtime=seconds, **given)


output_options = options(
    click.option(
        "--format", "fmt", type=click.Choice(DOCUMENT_FORMATS), default="table", show_default=True
    ),
    click.option(
        "--metric",
        type=click.Choice(["auto", "iops", "bw"]),
        default="auto",
        show_default=True,
        help="auto: IOPS up to 64 KiB blocks, MB/s above.",
    ),
    click.option("-o", "--output", default="-", metavar="FILE", help="Write here; '-' is stdout."),
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
        help="Also write every chart as PNG and SVG, every table and the findings as "
        "CSV, into DIR.",
    ),
    click.option(
        "--force",
        is_flag=True,
        help="Replace files iolab did not write (never through a symbolic link).",
    ),
)


# The commands, one module per family; importing them registers them on `main`.
from iolab.cli import environment, exchange, results, running  # noqa: E402

__all__ = ["environment", "exchange", "main", "results", "running"]
