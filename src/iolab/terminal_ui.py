"""The terminal side of a run: progress while it runs, prompts, and lines for the person.

Used by the cli only; nothing here decides anything.
"""

from __future__ import annotations

import contextlib
import shlex
import sys
import time

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn

from iolab import usage
from iolab.errors import Resume
from iolab.fio import hosts
from iolab.fio.parse import Status
from iolab.model import Case, Result
from iolab.names import one_line
from iolab.runner import Listener
from iolab.units import human_duration


class ProgressListener:
    """Case i of n, its parameters, ETA and fio's live IOPS and MB/s; a line per finished case."""

    def __init__(self, console: Console) -> None:
        self.progress = Progress(
            TextColumn("{task.description}", markup=False),  # names: no markup read in them
            BarColumn(bar_width=20),
            TextColumn("ETA {task.fields[eta]}", markup=False),
            TextColumn("{task.fields[live]}", markup=False),
            console=console,
            transient=True,
            refresh_per_second=2,
        )
        self.task = self.progress.add_task("starting", total=1, eta="?", live="")
        self.eta_s, self.t0, self.label = 0.0, time.monotonic(), ""
        self.current: Case | None = None

    def __enter__(self) -> ProgressListener:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def case_started(self, index: int, total: int, case: Case, eta_s: float) -> None:
        self.eta_s, self.t0 = eta_s, time.monotonic()
        self.current = case
        self.label = one_line(
            f"case {index}/{total} {case.setup.name} · {case.workload.name} #{case.repetition}"
        )
        o = case.workload.options
        params = one_line(
            f"{o.get('rw')} bs={o.get('bs')} qd={o.get('iodepth')} jobs={o.get('numjobs')}"
        )
        self.progress.update(
            self.task,
            description=f"{self.label} ({params})",
            total=total,
            completed=index - 1,
            eta=human_duration(eta_s),
            live="",
        )

    def note(self, line: str) -> None:
        """A line about the run itself (preconditioning, repetitions, steady state)."""
        self.print(f"· {line}")

    def print(self, line: str) -> None:
        """A line above the progress bar, as it is: no markup, escapes for controls."""
        self.progress.console.print(one_line(line), markup=False, emoji=False, soft_wrap=True)

    def status(self, status: Status) -> None:
        left = human_duration(self.eta_s - (time.monotonic() - self.t0))
        live = f"{status.iops:,.0f} IOPS {status.bw_bytes / 1e6:,.1f} MB/s"
        if status.hosts:  # fio's client tells no live rates: each host's state instead
            live = one_line(hosts.progress_line(status.hosts))
        self.progress.update(self.task, eta=left, live=live)

    def case_finished(self, result: Result) -> None:
        m = result.metrics
        case = result.case
        label = (  # a case of a set-up that failed to build never started
            self.label
            if self.current is case
            else f"{case.setup.name} · {case.workload.name} #{case.repetition}"
        )
        if result.status != "ok" or m is None:
            self.print(f"✗ {label}: failed: {result.error}")
            return
        p99 = max((d.percentiles_ns.get("99", 0.0) for d in m.directions), default=0.0)
        line = (
            f"✓ {label}: {m.total_iops:,.0f} IOPS, {m.total_bw_bytes / 1e6:,.1f} MB/s, "
            f"p99 {p99 / 1000:,.0f} µs"
        )
        said = usage.clause(result.telemetry)
        self.print(f"{line}; {said}" if said else line)
        shares = [(w.host, w.metrics.total_iops) for w in result.windows if w.host]
        if shares:
            self.print(f"  IOPS by host: {hosts.shares_line(shares)}")
        for warning in result.warnings:
            self.print(f"  {'note:' if warning.note else '!'} {warning}")


def resume_hint(resume: Resume | None) -> str:
    """How to resume a run that stopped part way, as a command to type ("" for none)."""
    if resume is None:
        return ""
    return f"; resume with: iolab run --resume {resume.run_id} --db {shlex.quote(resume.db)}"


class TerminalUi:
    """Progress, news and what iolab did on its own on stderr (stdout holds the results alone,
    for a pipe or a file); prompts only on a terminal."""

    def __init__(self, out: Console, err: Console) -> None:
        self.out, self.err = out, err

    def say(self, line: str) -> None:
        self.err.print(one_line(line), markup=False, highlight=False, emoji=False, soft_wrap=True)

    def warn(self, line: str, resume: Resume | None = None) -> None:
        shown = one_line(f"iolab: {line}{resume_hint(resume)}")
        self.err.print(shown, markup=False, highlight=False, emoji=False, soft_wrap=True)

    def confirm(self, device: str, description: str) -> bool | None:
        if not sys.stdin.isatty():
            return None
        self.err.print(
            one_line(f"iolab will destroy all data on {description}"), markup=False, emoji=False
        )
        answer = click.prompt(f"type {device} to go on", default="", show_default=False)
        return bool(answer == device)

    def progress(self) -> contextlib.AbstractContextManager[Listener]:
        return ProgressListener(self.err)
