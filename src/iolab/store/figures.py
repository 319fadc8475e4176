"""A long history read fast: each case of many runs as one row of figures, summed in SQL.

`iolab history` and `iolab check` need of a case only its set-up, workload, options, status,
warnings and three figures: IOPS and bytes/s summed over its directions, and the worst
direction's p99 completion latency. SQLite adds them up (`total`, `max`) where the metrics are,
one row per case, instead of a typed row per direction decoded in Python (150,000 of them for
1,000 runs of 50 cases x 3 repetitions). The sums are the ones `CaseRow.total` makes: a case
has at most two directions with figures (fio's rw modes do read and write, or trim and write),
and the sum of two numbers is the same in either order, to the last bit.

A stored figure that is not a number from 0 to LARGEST (text, infinity, a negative count: a
value iolab never stores, since NaN and infinities are refused where fio's output is read)
makes the database damaged: one StoreError naming it and the case, never a figure shown.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from iolab.errors import StoreError
from iolab.model import DIRECTIONS, Code, FioValue
from iolab.names import one_line
from iolab.store import rows as decode
from iolab.store.schema import MAIN_WINDOW

P99 = "99"  # the key the percentiles are stored under
CHUNK = 500  # run ids a query names at most (SQLite's limit on parameters)
LARGEST = float(2**63)  # beyond any figure fio writes (and squared, still a finite double)


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


def _odd(value: str) -> str:
    """SQL: whether `value` is not a figure (not a number from 0 to LARGEST)."""
    return f"(typeof({value}) NOT IN ('integer', 'real') OR {value} < 0 OR {value} > {LARGEST!r})"


def _odd_among(column: str) -> str:
    """SQL, in a GROUP BY: whether any of the group's `column` is not a figure (text sorts
    above every number, so the largest value is text if any is)."""
    return f"({_odd(f'max({column})')} OR min({column}) < 0)"


_P99 = f"""json_extract(m.percentiles_ns, '$."{P99}"')"""
_QUERY = f"""
SELECT c.run_id, c.setup, c.workload, c.options, c.status, c.warnings, count(m.case_id),
       total(m.iops), total(m.bw_bytes), max({_P99}),
       max(CASE WHEN m.direction NOT IN ({", ".join(f"'{d}'" for d in DIRECTIONS)})
           THEN m.direction END),
       max({_odd("m.iops")} OR {_odd("m.bw_bytes")} OR ({_P99} IS NOT NULL AND {_odd(_P99)}))
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
        for run, setup, workload, opts, status, warned, n, iops, bw, p99, odd, bad in db.execute(
            query, tuple(chunk)
        ):
            if odd is not None:
                decode.known(DIRECTIONS, odd, "direction", where)  # raises: a damaged store
            if bad:
                raise not_a_figure(where, run, setup, workload)
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


def not_a_figure(where: Path, run: int, setup: str, workload: str) -> StoreError:
    return StoreError(
        f"{where} is damaged (run {run}, {one_line(setup)!r} x {one_line(workload)!r}: a stored "
        f"figure is not a number from 0 to 2^63, which iolab never stores); restore it from a "
        "copy, or use a new --db"
    )


def _codes(text: str) -> frozenset[str]:
    return frozenset(decode.warning(w).code for w in json.loads(text))


class PointFigures(NamedTuple):
    """One run's cases of a set-up x workload as `iolab history` reads them: each measured
    repetition's figures (status ok, with figures), summed over its directions in SQL."""

    run_id: int
    setup: str
    workload: str
    options: Mapping[str, FioValue]  # its first case's
    load: frozenset[str]  # the load warnings (LOAD) any of its cases carried
    iops: tuple[float, ...]
    bw_bytes: tuple[float, ...]
    p99_ns: tuple[float, ...]  # of the repetitions that stored a p99


LOAD = (Code.FOREIGN_LOAD.value, Code.CPU_BOUND.value)  # the warnings a history marks
_LOADS = ", ".join(f"'{code}'" for code in LOAD)
EXACT = "'%!.17g'"  # SQLite's text of a double that reads back as the same double
_POINTS = f"""
WITH one AS (
  SELECT c.id, c.run_id, c.setup, c.workload, c.workload_position,
         c.status = 'ok' AND count(m.case_id) > 0 AS measured,
         CASE WHEN c.warnings <> '[]' THEN (
           SELECT group_concat(code, ' ') FROM (
             SELECT json_extract(w.value, '$.code') AS code FROM json_each(c.warnings) w
           ) WHERE code IN ({_LOADS})
         ) END AS load,
         total(m.iops) AS iops, total(m.bw_bytes) AS bw, max({_P99}) AS p99,
         max(CASE WHEN m.direction NOT IN ({", ".join(f"'{d}'" for d in DIRECTIONS)})
             THEN m.direction END) AS odd,
         {_odd_among("m.iops")} OR {_odd_among("m.bw_bytes")}
           OR (max({_P99}) IS NOT NULL AND ({_odd("max(" + _P99 + ")")} OR min({_P99}) < 0))
           AS bad
  FROM cases c LEFT JOIN metrics m ON m.case_id = c.id AND {MAIN_WINDOW.format(t="m")}
  WHERE c.run_id IN ({{marks}})
  GROUP BY c.id
)
SELECT p.run_id, p.setup, p.workload, c.options, p.load, p.iops, p.bw, p.p99, p.odd, p.bad
FROM (
  SELECT run_id, setup, workload, min(workload_position) AS position, min(id) AS first,
         group_concat(load, ' ') AS load,
         group_concat(CASE WHEN measured THEN printf({EXACT}, iops) END, ' ') AS iops,
         group_concat(CASE WHEN measured THEN printf({EXACT}, bw) END, ' ') AS bw,
         group_concat(CASE WHEN measured AND p99 IS NOT NULL THEN printf({EXACT}, p99) END, ' ')
           AS p99,
         max(odd) AS odd, max(bad) AS bad
  FROM one
  GROUP BY run_id, setup, workload
) p JOIN cases c ON c.id = p.first
ORDER BY p.run_id, p.position, p.first
"""


def points_of_runs(
    db: sqlite3.Connection, where: Path, run_ids: Sequence[int]
) -> list[PointFigures]:
    """The runs' cases as points, each run's set-ups x workloads in the order of their first
    case (`where` names the database in an error)."""
    found: list[PointFigures] = []
    options, loads = functools.cache(json.loads), functools.cache(_words)
    for start in range(0, len(run_ids), CHUNK):
        chunk = run_ids[start : start + CHUNK]
        query = _POINTS.format(marks=", ".join("?" * len(chunk)))
        for run, setup, workload, opts, load, iops, bw, p99, odd, bad in db.execute(
            query, tuple(chunk)
        ):
            if odd is not None:
                decode.known(DIRECTIONS, odd, "direction", where)  # raises: a damaged store
            if bad:
                raise not_a_figure(where, run, setup, workload)
            found.append(
                PointFigures(
                    run,
                    setup,
                    workload,
                    options(opts),
                    loads(load),
                    _numbers(iops),
                    _numbers(bw),
                    _numbers(p99),
                )
            )
    return found


def _numbers(text: str | None) -> tuple[float, ...]:
    return tuple(map(float, text.split())) if text else ()


def _words(text: str | None) -> frozenset[str]:
    return frozenset(text.split()) if text else frozenset()
