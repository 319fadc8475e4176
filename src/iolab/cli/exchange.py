"""`iolab import` and `export`: results from elsewhere, and for other tools."""

from __future__ import annotations

import click

from iolab import app
from iolab.cli import (
    EXIT_CASES_FAILED,
    EXIT_USER_ERROR,
    db_option,
    echo,
    fail,
    main,
    options,
    ui,
)


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
