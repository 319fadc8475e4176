"""A mixed workload's read and write apart, as fio prints them.

A workload is mixed when its cases measured more than one direction (rw=randrw, rw or
readwrite, trimwrite, or a job file's section that reads and writes). The results table
gives such a workload a row per direction it measured, then a "total" row (read + write:
the figure people quote for a mixed load); a pure read or write workload keeps its one row.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeGuard

from iolab.model import DIRECTIONS, Direction
from iolab.store import CaseRow

TOTAL = "total"
MB = 1_000_000


def measured(cases: Iterable[CaseRow]) -> tuple[Direction, ...]:
    """The directions the ok cases moved data in, in fio's order (read, write, trim)."""
    seen = {d for c in cases if c.status == "ok" for d, m in c.metrics.items() if m.io_bytes}
    return tuple(d for d in DIRECTIONS if d in seen)


def parts(cases: Iterable[CaseRow]) -> tuple[str, ...]:
    """A mixed workload's rows: each direction it measured, then "total"; () for one
    direction (its one row is its total)."""
    found = measured(cases)
    return (*found, TOTAL) if len(found) > 1 else ()


def direction_value(case: CaseRow, metric: str, direction: Direction) -> float | None:
    """IOPS or MB/s of one direction of an ok case (0 where it moved nothing that way); None
    if the case failed."""
    if case.status != "ok" or not case.metrics:
        return None
    found = case.metrics.get(direction)
    if found is None:
        return 0.0
    return found.iops if metric == "iops" else found.bw_bytes / MB


def is_direction(part: str) -> TypeGuard[Direction]:
    """Whether a row's part is one direction (not "" or "total")."""
    return part in DIRECTIONS


def legend(mixed: Iterable[str], repeated: bool = True) -> str:
    """What a table's direction rows mean, naming its mixed workloads."""
    names = list(mixed)
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3:,} more" if len(names) > 3 else "")
    text = (
        f"Mixed workloads ({shown}): reads and writes apart, as fio measured them, then their "
        "total (read + write) on the total row"
    )
    return text + ("; each the median of its repetitions." if repeated else ".")
