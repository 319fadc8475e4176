"""The terminal side of a run: progress while it runs, prompts, and lines for the person.

Used by the cli only; nothing here decides anything.
"""

from __future__ import annotations

import contextlib
import sys
import time

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn

from iolab.fio.parse import Status
from iolab.model import Case, Result
from iolab.runner import Listener
from iolab.units import human_duration


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
        self.current: Case | None = None

    def __enter__(self) -> ProgressListener:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def case_started(self, index: int, total: int, case: Case, eta_s: float) -> None:
        self.eta_s, self.t0 = eta_s, time.monotonic()
        self.current = case
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

    def note(self, line: str) -> None:
        """A line about the run itself (preconditioning, repetitions, steady state)."""
        self.progress.console.print(f"· {line}", markup=False, soft_wrap=True)

    def status(self, status: Status) -> None:
        left = human_duration(self.eta_s - (time.monotonic() - self.t0))
        live = f"{status.iops:,.0f} IOPS {status.bw_bytes / 1e6:,.1f} MB/s"
        if status.hosts:  # fio's client tells no live rates: each host's state instead
            live = " · ".join(f"{host} {state}" for host, state in status.hosts)
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
            self.progress.console.print(
                f"✗ {label}: failed: {result.error}", markup=False, soft_wrap=True
            )
            return
        p99 = max((d.percentiles_ns.get("99", 0.0) for d in m.directions), default=0.0)
        line = (
            f"✓ {label}: {m.total_iops:,.0f} IOPS, {m.total_bw_bytes / 1e6:,.1f} MB/s, "
            f"p99 {p99 / 1000:,.0f} µs"
        )
        self.progress.console.print(line, markup=False, soft_wrap=True)
        hosts = [w for w in result.windows if w.host]
        if hosts:
            shares = " · ".join(f"{w.host} {w.metrics.total_iops:,.0f}" for w in hosts)
            self.progress.console.print(f"  IOPS by host: {shares}", markup=False)
        for warning in result.warnings:
            self.progress.console.print(f"  ! {warning}", markup=False)


class TerminalUi:
    """News on stdout, what iolab did on its own on stderr, prompts only on a terminal."""

    def __init__(self, out: Console, err: Console) -> None:
        self.out, self.err = out, err

    def say(self, line: str) -> None:
        self.out.print(line, markup=False, highlight=False, soft_wrap=True)

    def warn(self, line: str) -> None:
        self.err.print(f"iolab: {line}", markup=False, highlight=False, soft_wrap=True)

    def confirm(self, device: str, description: str) -> bool | None:
        if not sys.stdin.isatty():
            return None
        self.err.print(f"iolab will destroy all data on {description}", markup=False)
        answer = click.prompt(f"type {device} to go on", default="", show_default=False)
        return bool(answer == device)

    def progress(self) -> contextlib.AbstractContextManager[Listener]:
        return ProgressListener(self.out)
