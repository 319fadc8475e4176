"""One way from fio's JSON document to what iolab stores of a case: its metrics (over fio's
steady window when the job asked for one and attained it), the whole job's and each host's
windows, and the methodology checks over what is known of the case.

The runner calls `read` for every case it measured; every importer calls it for every job it
found in a fio document, with what it was told of the set-up (`iolab import --devices ...`);
both build what the checks know (`check_context.Context`) with `context`, so a figure read from a
file gets the same checks as the same job run here, where the facts they need are known.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, replace

from iolab import units
from iolab.analysis import check_context, checks
from iolab.fio import parse
from iolab.fio.document import FioDocument
from iolab.model import CaseMetrics, CheckWarning, Setup, Window
from iolab.model.telemetry import Telemetry

NOTHING_YET = CaseMetrics((), 0.0, 0.0, 0, 0)  # a Context's metrics before `read` fills them


@dataclass(frozen=True, kw_only=True)
class Known:
    """What iolab knows of a case beyond its options, its set-up and fio's document: the host
    that ran it, the target before it (the runner's; an import knows little of either) and,
    for a local run, the host and devices sampled beside it."""

    cpus: int = 1  # cores of the host that ran fio
    memory_bytes: int = 0
    repeat: int = 1  # repetitions of this case in the plan
    written_share: float | None = None  # of the test area, before the case (None: unknown)
    loop_cache: str = ""  # the loop device over a host-cached file under the target, if any
    target_state: str = ""  # fresh, trimmed, sequential, random, ... (runner.precondition)
    ram_target: str = ""  # the memory the target is on (tmpfs, zram1, ...), if it is memory
    cache_policy: str = ""  # how the card's policy in effect differs from the one configured
    card_cache: int = 0  # the RAID card's cache, read from it
    telemetry: Telemetry | None = None
    drive_written: float | None = None  # the least its drives wrote in their life / capacity


def context(
    options: check_context.Options, setup: Setup, known: Known, metrics: CaseMetrics = NOTHING_YET
) -> check_context.Context:
    """What the checks know of a case of `setup`: its options, `known`, and the set-up's facts
    (a cache the plan declares, else the card's; an import's device count and rated figures).
    `metrics` are fio's, where they are known without its document (`read` fills them)."""
    facts = dict(setup.facts)
    rated = ("rated_read_iops", "rated_write_iops", "rated_read_bps", "rated_write_bps")
    iops_r, iops_w, bps_r, bps_w = (facts.get(key, 0.0) for key in rated)
    block = int(facts.get("rated_iops_block", check_context.RATED_BLOCK))
    return check_context.Context(
        options=options,
        metrics=metrics,
        cpus=known.cpus,
        memory_bytes=known.memory_bytes,
        repeat=known.repeat,
        written_share=known.written_share,
        loop_cache=known.loop_cache,
        target_state=known.target_state,
        cache_bytes=setup.cache_bytes or known.card_cache,
        ram_target=known.ram_target,
        devices=int(facts.get("device_count", 0)),
        write_devices=int(facts.get("write_device_count", 0)),
        rated_iops=(iops_r, iops_w),
        rated_bps=(bps_r, bps_w),
        rated_block=block,
        rated_random=not facts.get("rated_iops_sequential"),
        cache_policy=known.cache_policy,
        telemetry=known.telemetry,
        drive_written=known.drive_written,
    )


@dataclass(frozen=True)
class Reading:
    """A fio document, read."""

    whole: CaseMetrics  # the whole job, as fio reports it
    metrics: CaseMetrics  # what the case's figures are: the steady window's, or the whole job's
    windows: tuple[Window, ...]  # the whole job's (when metrics is the steady window's), hosts'
    warnings: tuple[CheckWarning, ...]
    steady: parse.SteadyState | None = None
    telemetry: Telemetry | None = None  # the case's, its means over fio's measured window


def read_document(document: FioDocument, known: check_context.Context) -> Reading:
    """`document` read, its checks run with `known` (the options and what is known of the
    target and the host, from `context`; its metrics and steady state are replaced by the
    document's)."""
    whole, steady = document.metrics, document.steady
    metrics = steady_window(whole, steady) if steady and steady.attained else whole
    windows: tuple[Window, ...] = (Window(whole, phase="job"),) if metrics is not whole else ()
    windows += tuple(Window(m, host=host) for host, m in document.by_host.items())
    seen = aligned(known.telemetry, document, whole)
    context = replace(known, metrics=whole, steady=steady, telemetry=seen)
    return Reading(whole, metrics, windows, warnings(context), steady, seen)


def aligned(seen: Telemetry | None, document: FioDocument, whole: CaseMetrics) -> Telemetry | None:
    """The telemetry with fio's measured window placed in its time: fio's figures cover the
    `runtime_ms` before it wrote its report (`timestamp_ms`, after the ramp), so the means
    compare like with like (not fio's start-up, not its file layout)."""
    stamp = document.timestamp_ms
    if seen is None or not seen.started_at or stamp is None or whole.runtime_ms <= 0:
        return seen
    end = round(stamp - seen.started_at * 1000)
    if end <= 0:
        return seen
    return replace(seen, window_ms=(max(end - round(whole.runtime_ms), 0), end))


def warnings(context: check_context.Context) -> tuple[CheckWarning, ...]:
    """Every methodology check's warning, each check on its own: one that fails (a value
    beyond what it reads, a bug) says so as a `check-failed` warning naming it, and the
    others still run. Options a check does not read (a runtime of "1m30s" in an imported
    file) make it pass silently, as before."""
    found = []
    for code, check in checks.CHECKS.items():
        try:
            warning = check(context)
        except (
            ValueError,
            TypeError,
            ZeroDivisionError,
            KeyError,
            AttributeError,
            IndexError,
            OverflowError,
        ) as error:
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
        replace(
            d,
            iops=steady.iops_mean * d.iops / total_iops,
            bw_bytes=steady.bw_mean * d.bw_bytes / total_bw,
        )
        for d in whole.directions
    )
    return replace(whole, directions=directions)
