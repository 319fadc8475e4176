"""The terminal side of a run: progress while it runs, prompts, and lines for the person;
and the line that shows how far `iolab import` has read a large file.

Used by the cli only; nothing here decides anything.
"""

from __future__ import annotations

import contextlib
import math
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from iolab.errors import Resume
from iolab.exchange.read_progress import Told, Unwatched
from iolab.fio import hosts
from iolab.fio.parse import Status
from iolab.model import Case, Result
from iolab.model.telemetry import clause
from iolab.names import one_line
from iolab.units import human_duration

if TYPE_CHECKING:
    from iolab.runner.listener import Listener


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
        said = clause(result.telemetry)
        self.print(f"{line}; {said}" if said else line)
        shares = [(w.host, w.metrics.total_iops) for w in result.windows if w.host]
        if shares:
            self.print(f"  IOPS by host: {hosts.shares_line(shares)}")
        for warning in result.warnings:
            self.print(f"  {'note:' if warning.note else '!'} {warning}")


REDRAWS_PER_S = 10  # a large file's reading line is drawn at most this often
NAME_CHARS = 40  # a longer file name is shown as its start and end


class ReadingLine:
    """One line on the terminal while a large file is read: its name, MB read of its size,
    percent, rate and time left, drawn again at most REDRAWS_PER_S times a second (on the
    reader's own calls: no thread), cleared when the file is done, read or refused."""

    def __init__(
        self, console: Console, path: Path, size: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.progress = Progress(
            TextColumn("{task.description}", markup=False),  # a name: no markup read in it
            BarColumn(bar_width=20),
            DownloadColumn(),
            TaskProgressColumn(),
            TransferSpeedColumn(),
            TextColumn("ETA", markup=False),
            TimeRemainingColumn(),
            console=console,
            auto_refresh=False,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
            get_time=clock,
        )
        self.task = self.progress.add_task(
            one_line(shortened(path.name)), total=size
        )  # cut, then escaped
        self.size, self.clock, self.drawn = size, clock, -math.inf

    def __enter__(self) -> Told:
        self.progress.start()
        return self.told

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def told(self, count: int) -> None:
        """`count` bytes read: drawn if a tenth of a second has passed since the line was last
        drawn, or the file is read to its end."""
        now = self.clock()
        if now - self.drawn < 1 / REDRAWS_PER_S and count < self.size:
            return
        self.drawn = now
        self.progress.update(self.task, completed=count)
        self.progress.refresh()


def shortened(name: str) -> str:
    """A name of at most NAME_CHARS characters: a longer one's start and end, "…" between."""
    if len(name) <= NAME_CHARS:
        return name
    half = (NAME_CHARS - 1) // 2
    return f"{name[:half]}…{name[-(NAME_CHARS - 1 - half) :]}"


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

    def reading(self, path: Path, size: int) -> contextlib.AbstractContextManager[Told]:
        """A line on stderr while a large file is read, only where stderr is a terminal (as
        rich tells it: FORCE_COLOR and TTY_COMPATIBLE are heard; TERM=dumb is none): a pipe, a
        file or a script's stderr gets nothing."""
        if self.err.is_terminal and not self.err.is_dumb_terminal:
            return ReadingLine(self.err, path, size)
        return Unwatched().reading(path, size)
