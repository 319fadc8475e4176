"""Methodology checks on one finished case: typed warnings that say what to do next."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from iolab.model import CaseMetrics, FioValue, Warning
from iolab.units import human_bytes, parse_seconds, parse_size

ENDED_EARLY_SHARE = 0.95
CPU_BOUND_PERCENT = 90.0

Options = Mapping[str, FioValue]


def case_warnings(options: Options, metrics: CaseMetrics, memory_bytes: int) -> list[Warning]:
    """Every check's warning for a case run with `options` on a host of `memory_bytes`."""
    checks: tuple[Callable[[Options, CaseMetrics, int], Warning | None], ...] = (
        ended_early,
        cpu_bound,
        page_cache,
    )
    return [found for check in checks if (found := check(options, metrics, memory_bytes))]


def ended_early(options: Options, metrics: CaseMetrics, memory_bytes: int) -> Warning | None:
    if options.get("time_based") != 1:
        return None
    runtime_ms = parse_seconds(options.get("runtime", 0)) * 1000
    if metrics.runtime_ms >= runtime_ms * ENDED_EARLY_SHARE:
        return None
    return Warning(
        "ended-early",
        f"fio ran {metrics.runtime_ms / 1000:.1f} s of the {runtime_ms / 1000:.0f} s asked.",
        "Look for errors, a too-small size, or a target that stopped accepting I/O.",
    )


def cpu_bound(options: Options, metrics: CaseMetrics, memory_bytes: int) -> Warning | None:
    cpu = metrics.usr_cpu + metrics.sys_cpu
    if cpu < CPU_BOUND_PERCENT:
        return None
    return Warning(
        "cpu-bound",
        f"fio's jobs used {cpu:.0f}% CPU each: the load generator may be the limit, "
        "not the device.",
        "Use an asynchronous ioengine with a deeper iodepth, or fewer jobs per core.",
    )


def page_cache(options: Options, metrics: CaseMetrics, memory_bytes: int) -> Warning | None:
    """Buffered I/O over less data than the memory measures the page cache (study C's trap)."""
    if options.get("direct") != 0 or "size" not in options:
        return None
    size = parse_size(options["size"])
    if not memory_bytes or size >= 2 * memory_bytes:
        return None
    return Warning(
        "page-cache",
        f"direct=0 over {human_bytes(size)}, and this host has {human_bytes(memory_bytes)} of "
        "memory: much of the I/O may hit the page cache, not the device.",
        "Use direct=1, or a size of at least twice the memory.",
    )
