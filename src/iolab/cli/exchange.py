"""`iolab import` and `export`: results from elsewhere, and for other tools."""

from __future__ import annotations

from typing import Any

import click

from iolab.choices import EXPORT_FORMATS
from iolab.cli import (
    EXIT_CASES_FAILED,
    EXIT_USER_ERROR,
    WHOLE,
    db_option,
    echo,
    fail,
    main,
    options,
    ui,
)

IMPORT_HELP = """Import results made elsewhere as a run: fio JSON or json+ (old fio's too),
terse v3-v5, --status-interval streams, client/server JSON (per host), fio's _bw/_iops/_lat/
_clat logs (client/server's NAME_bw.1.log.HOST too), bench-fio's trees, dd's and bonnie++'s
reports, published tables (CSV; a table of percentages of another set-up's figures, as study
E's, is stored as figures relative to --baseline, never as IOPS), and iolab exports. Folders
are searched for .json, .log, .txt, .out, .terse and .csv.

Set-ups are named after each file's folder (or --setup; a bench-fio tree's after its target,
a published table's after its own columns or rows), workloads after fio's jobs; a file already
imported (same content) is skipped. A file that cannot be read (or holds an impossible
figure) is one line; the rest still import, and the exit code is 3 (1 when nothing was
imported). While fio's JSON over 32 MiB is read, a line on stderr shows how far (MB, %, rate,
time left), where stderr is a terminal."""
EXPORT_HELP = """Export a stored run (default: the latest) for other tools: JSON (schema
"iolab-export" version 1, which 'iolab import' reads back), CSV or Parquet, with the workload's
parameters as columns; CSV to FILE.csv also writes FILE.percentiles.csv and FILE.samples.csv
(Parquet alike; needs pip install 'iolab[data]'). fio-plot -o DIR writes fio's JSON and logs
in the folders bench-fio makes (DIR/SETUP/BS/MODE-IODEPTH-NUMJOBS.json) for fio-plot."""
# The options of `iolab import` and `iolab export` beside --db, as click's arguments.
IMPORT_OPTIONS: tuple[tuple[tuple[str, ...], dict[str, Any]], ...] = (
    (("--setup",), {"metavar": "NAME", "help": "Set-up of every result (default: its folder)."}),
    (
        ("--baseline",),
        {
            "metavar": "NAME",
            "help": "The set-up a table of percentages is relative to (--setup: the one it "
            "describes).",
        },
    ),
    (
        ("--devices",),
        {
            "metavar": "[SETUP=]N",
            "multiple": True,
            "help": "Devices in each imported set-up, or in SETUP (for checks).",
        },
    ),
    (
        ("--rated-iops",),
        {
            "metavar": "[SETUP=]N|READ,WRITE[@BS[:random|sequential]]",
            "multiple": True,
            "help": "One device's rated IOPS, at 4k random unless @ says.",
        },
    ),
    (
        ("--rated-mbps",),
        {"metavar": "[SETUP=]N|READ,WRITE", "multiple": True, "help": "One device's rated MB/s."},
    ),
    (
        ("--cache",),
        {
            "metavar": "[SETUP=]SIZE",
            "multiple": True,
            "help": "A cache in front of each set-up, or of SETUP (512M).",
        },
    ),
    (
        ("--factor",),
        {
            "metavar": "[SETUP=]NAME=VALUE",
            "multiple": True,
            "help": "A factor of each set-up, or of SETUP, for report --pivot (card=P420i).",
        },
    ),
)
EXPORT_OPTIONS: tuple[tuple[tuple[str, ...], dict[str, Any]], ...] = (
    (
        ("--format", "fmt"),
        {"default": "json", "show_default": True, "metavar": "|".join(EXPORT_FORMATS)},
    ),
    (
        ("-o", "--output"),
        {
            "default": "-",
            "metavar": "FILE|DIR",
            "help": "Write here; '-' is stdout (json, csv). fio-plot: a folder.",
        },
    ),
    (
        ("--force",),
        {
            "is_flag": True,
            "help": "Replace files iolab did not write (never through a symbolic link).",
        },
    ),
)


@main.command("import", help=IMPORT_HELP)
@options(
    click.argument("paths", nargs=-1, required=True, metavar="PATH..."),
    db_option,
    *(click.option(*names, **kw) for names, kw in IMPORT_OPTIONS),
)
def import_(
    paths: tuple[str, ...],
    db: str,
    setup: str | None,
    baseline: str | None,
    factor: tuple[str, ...],
    **given: tuple[str, ...],
) -> None:
    from iolab.app.transfer import import_files
    from iolab.cli import import_flags

    facts, factors = import_flags.facts(**given), import_flags.factors(factor)
    done = import_files(paths, setup, db, ui(), facts, factors, baseline)
    if not done.runs and not done.skipped and len(done.problems) == 1:
        fail(f"error: {done.problems[0]}")  # nothing imported: the one file's line, exit 1
    echo("".join(f"{line}\n" for _, line in done.runs), nl=False)
    if done.problems:  # one line for them all, however many, and those left out
        code = EXIT_CASES_FAILED if done.runs else EXIT_USER_ERROR  # 1: nothing imported
        fail(f"error: {done.problem_line()}", code)
    if done.skipped:
        echo(f"iolab: {done.skipped_line()}", err=True)


@main.command(help=EXPORT_HELP)
@options(
    click.argument("run_id", type=WHOLE, required=False, metavar="[RUN]"),
    db_option,
    *(click.option(*names, **kw) for names, kw in EXPORT_OPTIONS),
)
def export(run_id: int | None, db: str, fmt: str, output: str, force: bool) -> None:
    from iolab.app.transfer import export_run

    text, said = export_run(db, run_id, fmt, output, ui(), force=force)
    echo(text, nl=False)
    echo("".join(f"{line}\n" for line in said), nl=False, err=True)
