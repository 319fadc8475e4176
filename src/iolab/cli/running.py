"""`iolab run`, `peak`, `show`, `presets` and `rehearse`: plans into runs."""

from __future__ import annotations

import shlex
import sys
from typing import TYPE_CHECKING, Any

import click

from iolab.cli import (
    EXIT_CASES_FAILED,
    OVERRIDES,
    WHOLE,
    db_option,
    echo,
    fail,
    main,
    options,
    overrides_given,
    plan_options,
    ui,
)

if TYPE_CHECKING:
    from iolab.app.base import RunOutcome
    from iolab.terminal_ui import TerminalUi


@main.command()
@plan_options
@db_option
@click.option("--resume", "resume_id", type=WHOLE, metavar="RUN", help="Finish stored run RUN.")
@click.option("--new", "force_new", is_flag=True, help="Start a new run even if one can resume.")
@click.option(
    "--yes-destroy",
    "destroy",
    multiple=True,
    metavar="PATH",
    help="Allow writing to DEVICE, or to an existing FILE a set-up names (repeat per "
    "path); otherwise iolab asks for devices and refuses files.",
)
@click.option(
    "--wipe-signatures", is_flag=True, help="Allow wiping filesystem/partition signatures."
)
@click.option(
    "--failing-drives",
    is_flag=True,
    help="Write to drives whose SMART status says they are failing (refused otherwise).",
)
@click.option(
    "--allow-hooks",
    is_flag=True,
    help="Run the plan's setup_hook/teardown_hook shell commands: the plan is then code.",
)
@click.option(
    "--lab",
    is_flag=True,
    help="Measure the plan's set-ups on devices (md, "
    "LVM, btrfs) in the virtual lab, on image files; marked as lab figures.",
)
def run(plan_file: str | None, preset: str | None, db: str, **flags: Any) -> None:
    """Run a plan (default: the quick preset here) and print its table.

    Every finished case is saved at once; re-running the same plan into the same
    database, or --resume RUN, skips the cases already stored.
    """
    from iolab.app import running
    from iolab.app.base import RunRequest

    overrides = overrides_given(**{k: flags.pop(k) for k in OVERRIDES})
    request = RunRequest(plan_file, preset, overrides, db, **flags)
    _ran(running.run(request, the_ui := ui()), the_ui)


def _ran(outcome: RunOutcome, the_ui: TerminalUi) -> None:
    """Print a finished run's table; exit 3 if some of its cases failed."""
    from iolab.report.formats import terminal  # the table alone: no other format's modules

    the_ui.out.file.write(terminal.render_document(outcome.document))
    if outcome.failed:
        fail(
            f"{outcome.failed} of {outcome.total} cases failed (fio's errors above)",
            EXIT_CASES_FAILED,
        )


PEAK_HELP = """Find one target's peak: search numjobs x iodepth for the most IOPS (MB/s for
blocks over 64 KiB), stepping on while a step gains more than the noise margin, then measure
the winner three times for its 95% interval. With --curve, also run at 10% to 100% of its
IOPS for latency against load, and find the knee. Stored as a run like any other."""
# `iolab peak`'s options beside --db.
PEAK_OPTIONS: dict[str, dict[str, Any]] = {
    "target": {"default": ".", "metavar": "PATH", "help": "A directory or a file [default: .]."},
    "rw": {"default": "randread", "show_default": True, "help": "fio's rw."},
    "bs": {"default": "4k", "show_default": True, "help": "Block size."},
    "curve": {"is_flag": True, "help": "Also run the latency-versus-load curve from the peak."},
    "slo": {
        "metavar": "TARGET",
        "help": "Find the most IOPS within a latency target, such as "
        '"p99<=2ms" (p50, p99 or p99.9): runs the curve and measures that point 3 times.',
    },
    "numjobs": {"default": "1-64", "show_default": True, "metavar": "LOW-HIGH"},
    "iodepth": {"default": "1-256", "show_default": True, "metavar": "LOW-HIGH"},
    "runtime": {"metavar": "SECONDS", "help": "Runtime of every point [default: 10]."},
    "size": {"metavar": "SIZE", "help": "Test area [default: auto]."},
    "yes-destroy": {"multiple": True, "metavar": "PATH", "help": "Allow writing to this file."},
}


@main.command(help=PEAK_HELP)
@options(db_option, *(click.option(f"--{n}", **kw) for n, kw in PEAK_OPTIONS.items()))
def peak(db: str, yes_destroy: tuple[str, ...], **given: Any) -> None:
    from iolab.app import peak_search

    request = peak_search.PeakRequest(**given, destroy=yes_destroy)
    _ran(peak_search.peak(db, request, the_ui := ui()), the_ui)


@main.command()
@plan_options
@click.option("--fio", "show_fio", is_flag=True, help="Print the exact fio job files.")
@click.option("--toml", "as_toml", is_flag=True, help="Print the plan's TOML (a preset's) to copy.")
@click.option("--json", "as_json", is_flag=True, help="Print set-ups and cases as JSON.")
def show(plan_file: str | None, preset: str | None, show_fio: bool, **flags: Any) -> None:
    """Print a plan's expanded matrix, one line per case; runs nothing."""
    from iolab.app.base import load_plan
    from iolab.app.running import job_files, plan_toml, provision_commands
    from iolab.plan.matrix import matrix_json, matrix_lines

    if flags.pop("as_toml"):
        echo(plan_toml(plan_file, preset), nl=False)
        return
    as_json = flags.pop("as_json")
    the_plan = load_plan(plan_file, preset, overrides_given(**flags))
    if as_json:
        echo(matrix_json(the_plan, provision_commands(the_plan)), nl=False)
        return
    for name, commands in provision_commands(the_plan):
        if not commands:  # a device used as it is: nothing to build
            echo(f"# set-up {name!r} is used as it is: nothing is built or torn down")
            continue
        echo(f"# set-up {name!r} is built and torn down with:")
        for command in commands:
            echo(f"#   {shlex.join(command)}")
    if show_fio:
        echo("# one fio invocation per section; iolab runs them one at a time\n")
        echo("\n".join(job_files(the_plan)), nl=False)
        return
    echo("".join(matrix_lines(the_plan)), nl=False)


@main.command()
def presets() -> None:
    """List the presets, one line each, with their origin."""
    from iolab.plan.load import load_preset, preset_names

    for name in preset_names():
        p = load_preset(name)
        echo(f"{name:<24} {len(p.cases()):>3} cases  {p.origin}: {p.description}")


REHEARSE_HELP = """Build, run for 1 s and tear down each set-up of a plan on sparse images in a
user-mode Linux kernel, before touching the real devices; says what failed and why."""


@main.command(help=REHEARSE_HELP)
@click.argument("plan_file", metavar="PLAN.toml")
def rehearse(plan_file: str) -> None:
    from iolab.app import running

    sys.exit(0 if running.rehearse(plan_file, ui()) else EXIT_CASES_FAILED)
