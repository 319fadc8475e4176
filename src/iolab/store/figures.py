"""A long history read fast: each case of many runs as one row of figures, summed in SQL.

`iolab history` and `iolab check` need of a case only its set-up, workload, options, status,
warnings and three figures: IOPS and bytes/s summed over its directions, and the worst
direction's p99 completion latency. SQLite adds them up (`total`, `max`) where the metrics are,
one row per case, instead of a typed row per direction decoded in Python (150,000 of them for
1,000 runs of 50 cases x 3 repetitions). The sums are the ones `CaseRow.total` makes: a case
has at most two directions with figures (fio's rw modes do read and write, or trim and write),
and the sum of two numbers is the same in either order, to the last bit.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from iolab.model import DIRECTIONS, FioValue
from iolab.store import rows as decode
from iolab.store.schema import MAIN_WINDOW

P99 = "99"  # the key the percentiles are stored under
CHUNK = 500  # run ids a query names at most (SQLite's limit on parameters)


class CaseFigures(NamedTuple):
    """One stored case as a history reads it."""

    setup: str
    workload: str
    options: Mapping[str, FioValue]
    status: str
    codes: frozenset[str]  # its warnings' codes
    iops: float | None  # read + write + trim; None: no figures stored
    bw_bytes: float | None  # the same, in bytes/s
    p99_ns: float | None  # the worst direction's p99 completion latency; None: none stored


def of_row(case: decode.CaseRow) -> CaseFigures:
    """A case already read whole, as the same figures."""
    p99 = [m.percentiles_ns[P99] for m in case.metrics.values() if P99 in m.percentiles_ns]
    stored = bool(case.metrics)
    return CaseFigures(
        case.setup,
        case.workload,
        case.options,
        case.status,
        frozenset(w.code for w in case.warnings),
        case.total("iops") if stored else None,
        case.total("bw") if stored else None,
        max(p99) if p99 else None,
    )


_QUERY = f"""
SELECT c.run_id, c.setup, c.workload, c.options, c.status, c.warnings, count(m.case_id),
       total(m.iops), total(m.bw_bytes), max(json_extract(m.percentiles_ns, '$."{P99}"')),
       max(CASE WHEN m.direction NOT IN ({", ".join(f"'{d}'" for d in DIRECTIONS)})
           THEN m.direction END)
FROM cases c LEFT JOIN metrics m ON m.case_id = c.id AND {MAIN_WINDOW.format(t="m")}
WHERE c.run_id IN ({{marks}})
GROUP BY c.id
ORDER BY c.run_id, c.workload_position, c.id
"""


def of_runs(
    db: sqlite3.Connection, where: Path, run_ids: Sequence[int]
) -> dict[int, list[CaseFigures]]:
    """The cases of the runs, each run's in the order `Store.cases` gives them (`where` names
    the database in an error)."""
    found: dict[int, list[CaseFigures]] = {i: [] for i in run_ids}
    options, codes = functools.cache(json.loads), functools.cache(_codes)
    for start in range(0, len(run_ids), CHUNK):
        chunk = run_ids[start : start + CHUNK]
        query = _QUERY.format(marks=", ".join("?" * len(chunk)))
        for run, setup, workload, opts, status, warned, n, iops, bw, p99, odd in db.execute(
            query, tuple(chunk)
        ):
            if odd is not None:
                decode.known(DIRECTIONS, odd, "direction", where)  # raises: a damaged store
            worst = None if p99 is None else float(p99)
            found[run].append(
                CaseFigures(
                    setup,
                    workload,
                    options(opts),
                    status,
                    codes(warned),
                    iops if n else None,
                    bw if n else None,
                    worst,
                )
            )
    return found


def _codes(text: str) -> frozenset[str]:
    return frozenset(decode.warning(w).code for w in json.loads(text))
