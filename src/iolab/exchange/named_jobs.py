"""Jobs whose set-up their source names: fio's JSON in a bench-fio tree (the target's folder),
figures another tool printed (dd, bonnie++), and a published table's cells (its column or row).
Figures come as CaseMetrics, with the warnings that say what they are and what they lack."""

from __future__ import annotations

from dataclasses import dataclass, fields
from decimal import Decimal
from typing import Any

from iolab.exchange.found_jobs import FoundJob
from iolab.model import CaseMetrics, CheckWarning, Direction, DirectionMetrics


@dataclass
class Placed(FoundJob):
    """A FoundJob with its set-up named by its source, and (for figures) who measured them."""

    setup: str = ""  # the set-up its source names; "" for the file's folder
    setup_path: str = ""  # the folder that set-up's results lie in ("" for a table's)
    fixed: bool = False  # a published table's own set-up: --setup does not rename it
    notes: tuple[CheckWarning, ...] = ()  # the warnings of figures that came without fio's JSON
    tool: str = ""  # what measured it, when not fio: "dd", "bonnie++ 2.00a", "published"
    cache_bytes: int = 0  # a cache in front of the set-up its source names (a RAID card's)
    devices: int = 0  # the devices of the set-up its source names (a table's drives column)
    write_devices: int = 0  # how many devices' worth of writes its RAID level leaves (0: all)


def placed(job: FoundJob, **extra: Any) -> Placed:
    """`job` as a Placed job, with the fields given changed or added."""
    return Placed(**{**{f.name: getattr(job, f.name) for f in fields(FoundJob)}, **extra})


def exact(text: str, factor: int | Decimal = 1) -> float:
    """A number written in a file, times a unit, as its decimal digits say ("58.9" MiB/s ->
    61761126.4), not as binary floating point would round the product."""
    return float(Decimal(text) * factor)


def direction(
    name: Direction,
    *,
    bw_bytes: float,
    iops: float,
    io_bytes: int = 0,
    runtime_ms: int = 0,
    lat_max_ns: float | None = None,
) -> DirectionMetrics:
    """One direction's figures; the latency mean and percentiles unknown."""
    return DirectionMetrics(name, iops, bw_bytes, io_bytes, runtime_ms, None, lat_max_ns)


def case(*directions: DirectionMetrics, runtime_ms: int = 0) -> CaseMetrics:
    """A case of figures: no CPU figures (they would be fio's), no error."""
    return CaseMetrics(tuple(directions), usr_cpu=0.0, sys_cpu=0.0, runtime_ms=runtime_ms, error=0)
