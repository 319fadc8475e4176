"""One way from fio's JSON document to what iolab stores of a case: its metrics (over fio's
steady window when the job asked for one and attained it), the whole job's and each host's
windows, and the methodology checks over what is known of the case.

The runner calls `read` for every case it measured; every importer calls it for every job it
found in a fio document, with what it was told of the set-up (`iolab import --devices ...`);
so a figure read from a file gets the same checks as the same job run here, where the facts
they need are known.
"""

from __future__ import annotations

import traceback
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from iolab import units
from iolab.analysis import checks
from iolab.fio import parse
from iolab.model import CaseMetrics, CheckWarning, Window
from iolab.usage import Telemetry

NOTHING_YET = CaseMetrics((), 0.0, 0.0, 0, 0)  # a Context's metrics before `read` fills them


@dataclass(frozen=True)
class Reading:
    """A fio document, read."""

    whole: CaseMetrics  # the whole job, as fio reports it
    metrics: CaseMetrics  # what the case's figures are: the steady window's, or the whole job's
    windows: tuple[Window, ...]  # the whole job's (when metrics is the steady window's), hosts'
    warnings: tuple[CheckWarning, ...]
    steady: parse.SteadyState | None = None
    telemetry: Telemetry | None = None  # the case's, its means over fio's measured window


def read(document: Mapping[str, Any], known: checks.Context) -> Reading:
    """`document` read, its checks run with `known` (the options and what is known of the
    target and the host; its metrics and steady state are replaced by the document's)."""
    whole = parse.metrics(document)
    steady = parse.steady_state(document)
    metrics = steady_window(whole, steady) if steady and steady.attained else whole
    windows: tuple[Window, ...] = (Window(whole, phase="job"),) if metrics is not whole else ()
    windows += tuple(Window(m, host=host) for host, m in parse.by_host(document).items())
    seen = aligned(known.telemetry, document, whole)
    context = replace(known, metrics=whole, steady=steady, telemetry=seen)
    return Reading(whole, metrics, windows, warnings(context), steady, seen)


def aligned(
    seen: Telemetry | None, document: Mapping[str, Any], whole: CaseMetrics
) -> Telemetry | None:
    """The telemetry with fio's measured window placed in its time: fio's figures cover the
    `runtime_ms` before it wrote its report (`timestamp_ms`, after the ramp), so the means
    compare like with like (not fio's start-up, not its file layout)."""
    stamp = document.get("timestamp_ms")
    if seen is None or not seen.started_at or not isinstance(stamp, int) or whole.runtime_ms <= 0:
        return seen
    end = round(stamp - seen.started_at * 1000)
    if end <= 0:
        return seen
    return replace(seen, window_ms=(max(end - round(whole.runtime_ms), 0), end))


def warnings(context: checks.Context) -> tuple[CheckWarning, ...]:
    """Every methodology check's warning, each check on its own: one that fails (a value
    beyond what it reads, a bug) says so as a `check-failed` warning naming it, and the
    others still run. Options a check does not read (a runtime of "1m30s" in an imported
    file) make it pass silently, as before."""
    found = []
    for code, check in checks.CHECKS.items():
        try:
            warning = check(context)
        except (ValueError, TypeError, ZeroDivisionError, KeyError, AttributeError,
                IndexError, OverflowError) as error:  # fmt: skip
            if isinstance(error, ValueError | TypeError) and _unreadable_option(error):
                continue
            warning = checks.failed(code, error)
        if warning is not None:
            found.append(warning)
    return tuple(found)


def _unreadable_option(error: Exception) -> bool:
    """An option's value that iolab.units does not read (the error was raised there): the
    check does not apply, which is no failure of it."""
    frames = traceback.extract_tb(error.__traceback__)
    return bool(frames) and frames[-1].filename == units.__file__


def steady_window(whole: CaseMetrics, steady: parse.SteadyState) -> CaseMetrics:
    """The case's metrics over fio's steady window: its mean IOPS and bandwidth, shared out
    over the directions as over the whole job; latency is the whole job's (fio keeps no
    latency per window)."""
    total_iops, total_bw = whole.total_iops or 1.0, whole.total_bw_bytes or 1.0
    directions = tuple(
        replace(d, iops=steady.iops_mean * d.iops / total_iops,
                bw_bytes=steady.bw_mean * d.bw_bytes / total_bw)
        for d in whole.directions
    )  # fmt: skip
    return replace(whole, directions=directions)
