"""`iolab peak`: the search for a set-up's peak and its load curve."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from iolab.app.base import RunOutcome, RunRequest, Ui
from iolab.app.running import run_plan
from iolab.fio.executor import Executor
from iolab.plan import methods
from iolab.plan.common import Overrides
from iolab.plan.load import parse_plan


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
    overrides = Overrides(
        target=str(Path(given.target).resolve()),
        size=given.size,
        runtime=int(runtime) if runtime and runtime.isascii() and runtime.isdigit() else runtime,
    )
    the_plan = parse_plan(text, "iolab peak", overrides)
    request = RunRequest(db=db, overrides=overrides, destroy=given.destroy)
    outcome = run_plan(the_plan, overrides, request, ui, executor)
    sections = outcome.document.sections  # the search's table first: the terminal shows it
    first = [s for s in sections if s.title == "Peak and load curve"]
    rest = [s for s in sections if s.title != "Peak and load curve"]
    document = dataclasses.replace(outcome.document, sections=(*first, *rest))
    return dataclasses.replace(outcome, document=document) if first else outcome
