"""`iolab env` and `advise`: the host and the set-ups, before and after a run."""

from __future__ import annotations

import json
from typing import Any

import click

from iolab import app
from iolab.cli import (
    db_option,
    echo,
    main,
    options,
    ui,
)
from iolab.report.formats import output as report_output
from iolab.report.text import env_text


@main.command()
@click.argument("path", required=False, default=".", metavar="[PATH]")
@click.option("--json", "as_json", is_flag=True, help="Print it as JSON, for scripts.")
def env(path: str, as_json: bool) -> None:
    """Print the host and what PATH lives on: filesystem, RAID, devices, their settings."""
    facts = app.environment_of(path)
    text = json.dumps(facts, indent=2, default=str) + "\n" if as_json else env_text.render(facts)
    echo(text, nl=False)


@main.command(help=app.ADVISE_HELP)
@options(click.argument("run_id", type=int, required=False, metavar="[RUN]"), db_option,
         *(click.option(f"--{name}", **kw) for name, kw in app.ADVISE_OPTIONS.items()))  # fmt: skip
def advise(run_id: int | None, db: str, **given: Any) -> None:
    echo(report_output.render(app.advise(db, run_id, given, ui()), "table").text, nl=False)
