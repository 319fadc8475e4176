"""A long history read fast: each case of many runs as one row of figures, summed in SQL.

`iolab history` and `iolab check` need of a case only its set-up, workload, options, status,
warnings and three figures: IOPS and bytes/s summed over its directions, and the worst
direction's p99 completion latency. SQLite adds them up (`total`, `max`) where the metrics are,
one row per case, instead of a typed row per direction decoded in Python (150,000 of them for
1,000 runs of 50 cases x 3 repetitions). The sums are the ones `CaseRow.total` makes: a case
has at most two directions with figures (fio's rw modes do read and write, or trim and write),
and the sum of two numbers is the same in either order, to the last bit.

`iolab history`'s points (points_of_runs) are read as plain rows, a case's directions one
after another, and summed as they come: SQLite's json_extract, printf and group_concat that
made one row per run, set-up and workload cost more than the rows they saved (a third of the
CPU of a 1,000-run history, against a sixth read plainly).

A stored figure that is not a number from 0 to LARGEST (text, infinity, a negative count: a
value iolab never stores, since NaN and infinities are refused where fio's output is read)
makes the database damaged: one StoreError naming it and the case, never a figure shown.
"""

from __future__ import annotations

import functools
import itertools
import json
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
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


_P99 = f"""json_extract(m.percentiles_ns, '$."{P99}"')"""
_QUERY = f"""
SELECT c.run_id, c.setup, c.workload, c.options, c.status, c.warnings, count(m.case_id),
       total(m.iops), total(m.bw_bytes), max({_P99}),
       max(CASE WHEN m.direction NOT IN ({", ".join(f"'{d}'" for d in DIRECTIONS)})
           THEN m.direction END),
       max(m.case_id IS NOT NULL  -- a case with no figures (failed) has none to check
           AND ({_odd("m.iops")} OR {_odd("m.bw_bytes")} OR ({_P99} IS NOT NULL AND {_odd(_P99)})))
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
_FIGURE = f"BETWEEN 0 AND {LARGEST!r}"  # false for text (SQLite sorts it after numbers)
POINTS_QUERY = f"""
SELECT c.run_id, c.setup, c.workload, c.id, c.options, c.status,
       CASE WHEN c.warnings <> '[]' THEN c.warnings END, m.direction, m.iops, m.bw_bytes, {_P99},
       NOT (m.direction IN ({", ".join(f"'{d}'" for d in DIRECTIONS)}) AND m.iops {_FIGURE}
            AND m.bw_bytes {_FIGURE})
FROM cases c LEFT JOIN metrics m ON m.case_id = c.id AND {MAIN_WINDOW.format(t="m")}
WHERE c.run_id IN ({{marks}})
ORDER BY c.run_id, c.workload_position, c.id, m.direction
"""


class _Point:
    """A run's cases of one set-up x workload as they are read: its first case's options,
    the load warnings of any of its cases, and each measured repetition's figures."""

    __slots__ = ("bw", "iops", "load", "options", "p99")

    def __init__(self, options: str) -> None:
        self.options = options
        self.load: frozenset[str] = frozenset()
        self.iops: list[float] = []
        self.bw: list[float] = []
        self.p99: list[float] = []


def points_of_runs(
    db: sqlite3.Connection, where: Path, run_ids: Sequence[int]
) -> list[PointFigures]:
    """The runs' cases as points, each run's set-ups x workloads in the order of their first
    case (the least workload position and id: the rows come in that order, so a hostile
    store's positions that differ between repetitions change nothing), `where` naming the
    database in an error. One row per case and direction, each repetition's figures summed
    over its directions here in the order SQLite's total() adds them (by direction); each
    stored figure and direction checked (a number from 0 to LARGEST, one of DIRECTIONS:
    IOPS, bytes/s and the direction in SQL), the first damaged row named as if the rows
    were read one by one."""
    found: list[PointFigures] = []
    options, loads = functools.cache(json.loads), functools.cache(_load_codes)
    for start in range(0, len(run_ids), CHUNK):
        chunk = run_ids[start : start + CHUNK]
        query = POINTS_QUERY.format(marks=", ".join("?" * len(chunk)))
        rows = db.execute(query, tuple(chunk))  # a row at a time: no list of them all
        for run, points in _grouped(rows, where, loads).items():
            for (setup, workload), point in points.items():
                found.append(
                    PointFigures(
                        run,
                        setup,
                        workload,
                        options(point.options),
                        point.load,
                        tuple(point.iops),
                        tuple(point.bw),
                        tuple(point.p99),
                    )
                )
    return found


Row = tuple[
    int, str, str, "int | None", str, str, "str | None", "str | None", float, float, object, int
]
_END: Row = (0, "", "", None, "", "", None, None, 0.0, 0.0, None, 0)  # the last case is done


def _grouped(
    rows: Iterable[Row], where: Path, loads: Callable[[str], frozenset[str]]
) -> dict[int, dict[tuple[str, str], _Point]]:
    """The rows (a case's directions one after another, ordered by run) as each run's
    points: a measured case's (status ok, with figures) sums added where its rows end.
    The loop is the whole read's cost (150,000 rows for 1,000 runs of 50 cases x 3
    repetitions): it calls nothing per row that it need not."""
    runs: dict[int, dict[tuple[str, str], _Point]] = {}
    points: dict[tuple[str, str], _Point] = {}
    point, last, measured, now = _Point(""), None, False, None
    iops = bw = 0.0
    p99: float | None = None
    for (
        run,
        setup,
        workload,
        case,
        opts,
        status,
        warned,
        direction,
        one_iops,
        one_bw,
        one_p99,
        bad,
    ) in itertools.chain(rows, (_END,)):
        if case != last:  # a new case: the one before is done
            if measured:
                point.iops.append(iops)
                point.bw.append(bw)
                if p99 is not None:
                    point.p99.append(p99)
            if case is None:
                break
            last, iops, bw, p99 = case, 0.0, 0.0, None
            if run != now:
                now, points = run, runs.setdefault(run, {})
            key = (setup, workload)
            point = points.get(key) or points.setdefault(key, _Point(opts))
            if warned is not None:
                point.load |= loads(warned)
            measured = status == "ok" and direction is not None
        if direction is None:  # a case with no figures stored
            continue
        odd = one_p99 is not None and not (  # the p99 checked here: SQLite would extract
            type(one_p99) in (int, float) and 0 <= one_p99 <= LARGEST  # type: ignore[operator]
        )  # it from its JSON twice
        if bad or odd:
            decode.known(DIRECTIONS, direction, "direction", where)  # raises if unknown
            raise not_a_figure(where, run, setup, workload)
        iops += one_iops
        bw += one_bw
        if one_p99 is not None and (p99 is None or one_p99 > p99):  # type: ignore[operator]
            p99 = float(one_p99)  # type: ignore[arg-type]
    return runs


def _load_codes(text: str) -> frozenset[str]:
    """The load warnings (LOAD) among a case's stored warnings."""
    warned = json.loads(text)
    said = (
        warned.values() if isinstance(warned, dict) else warned if isinstance(warned, list) else ()
    )
    return frozenset(w["code"] for w in said if isinstance(w, dict) and w.get("code") in LOAD)
