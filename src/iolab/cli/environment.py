"""`iolab env` and `advise`: the host and the set-ups, before and after a run."""

from __future__ import annotations

import json
from typing import Any

import click

from iolab.cli import (
    WHOLE,
    Number,
    db_option,
    echo,
    main,
    options,
    ui,
)


@main.command()
@click.argument("path", required=False, default=".", metavar="[PATH]")
@click.option("--json", "as_json", is_flag=True, help="Print it as JSON, for scripts.")
def env(path: str, as_json: bool) -> None:
    """Print the host and what PATH lives on: filesystem, RAID, devices, their settings, and
    each disk's own account where smartctl reads it (model, temperature, lifetime writes,
    wear, hours)."""
    from iolab.app.advising import environment_of
    from iolab.report.text import env_text

    facts = environment_of(path)
    text = json.dumps(facts, indent=2, default=str) + "\n" if as_json else env_text.render(facts)
    echo(text, nl=False)


ADVISE_HELP = """Rank RAID levels 0, 1, 5, 6 and 10 over --devices N by the RAID model's
predicted performance for your workloads, with capacity and failures survived.

One device's figures come from a stored run (default: the latest; its set-up on one plain
device, or --setup NAME), or from --read-iops, --write-iops, --read-mbps, --write-mbps with
--workload RW:BS[:QD[:READ%]] (repeat; default: 4k random at QD32, 1m sequential at QD8)."""
# `iolab advise`'s options beside [RUN] and --db.
ADVISE_OPTIONS: dict[str, dict[str, Any]] = {
    "devices": {"type": WHOLE, "default": 4, "show_default": True, "help": "Devices in the array."},
    "setup": {"metavar": "NAME", "help": "The run's set-up that stands for one device."},
    "workload": {
        "multiple": True,
        "metavar": "RW:BS[:QD[:READ%]]",
        "help": "A workload that matters, with figures given: e.g. randwrite:4k:1, "
        "randrw:4k:32:70 (QD default 1, READ% default 50).",
    },
    **{
        f"{direction}-{unit}": {
            "type": Number(),
            "metavar": "N",
            "help": f"One device's {direction} {'IOPS' if unit == 'iops' else 'MB/s'}.",
        }
        for direction in ("read", "write")
        for unit in ("iops", "mbps")
    },
}


@main.command(help=ADVISE_HELP)
@options(
    click.argument("run_id", type=WHOLE, required=False, metavar="[RUN]"),
    db_option,
    *(click.option(f"--{name}", **kw) for name, kw in ADVISE_OPTIONS.items()),
)
def advise(
    run_id: int | None,
    db: str,
    devices: int,
    setup: str | None,
    workload: tuple[str, ...],
    **figures: float | None,
) -> None:
    from iolab.app import advising
    from iolab.report.formats import output as report_output

    request = advising.AdviseRequest(devices, setup, workload, **figures)
    echo(report_output.render(advising.advise(db, run_id, request, ui()), "table").text, nl=False)
