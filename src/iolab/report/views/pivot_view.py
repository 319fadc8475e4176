"""Pivots by factor (`iolab report --pivot ROWS:COLUMNS`): a table per workload, its rows
the combinations of the row factors' values, its columns the column factors' values, each
cell the figure of the one set-up with those values (the median of its repetitions ± the 95%
half-width, as the results table has it, with ⚑ and the warnings' codes where its cases had
them).

A set-up's factors are the plan's `factors = {...}`, its set-up axes' (device_count,
drive_cache, a card policy), or an import's (a table's columns, `--factor NAME=VALUE`); two
more can always be named: `setup` (its name) and `run` (its run's number), unless a set-up
names a factor so itself. A set-up without a factor named is refused, as are two set-ups
that share every value named (the pivot could not tell which one a cell shows).
"""

from __future__ import annotations

from collections.abc import Sequence

from iolab import names
from iolab.analysis.factors import Pivot
from iolab.errors import ReportError
from iolab.report.cells import (
    UNITS,
    WARNED_LEGEND,
    Cell,
    Row,
    Table,
    cell_values,
    shown_in,
    stat_cell,
    warned,
)
from iolab.report.data import Dataset, SetupInfo

TITLE = "By factor"
PREFIX = "pivot-"  # the tables' names: pivot-1, pivot-2, ... (the terminal shows them too)
BUILT_IN = ("setup", "run")  # factors every set-up has: its name, its run's number
Values = tuple[str, ...]


def given_factors(info: SetupInfo) -> dict[str, str]:
    """A set-up's factors, with the two every set-up has (setup, run) where it names neither."""
    return {"setup": info.name, "run": str(info.run_id), **dict(info.setup.factors)}


def blocks(data: Dataset, pivot: Pivot, metric: str) -> list[Table]:
    """One table per workload, in the report's order, of the set-ups that ran it."""
    for info in data.setups:
        _check(info, pivot)
    tables = []
    for number, workload in enumerate(data.workloads(), 1):
        placed = _placed([s for s in data.setups if data.cell(s.label, workload)], pivot)
        tables.append(_table(data, pivot, workload, metric, placed, number))
    return tables


def _check(info: SetupInfo, pivot: Pivot) -> None:
    """ReportError when the set-up lacks a factor the pivot names."""
    given = given_factors(info)
    missing = [f for f in (*pivot.rows, *pivot.columns) if f not in given]
    if missing:
        own = ", ".join(k for k in given if k not in BUILT_IN) or "none but setup and run"
        raise ReportError(
            f"--pivot: set-up {names.shown(info.label)!r} has no factor "
            f"{names.shown(missing[0])!r} (its factors: {names.shown(own)}); give set-ups "
            "factors in the plan (factors = {...}) or on import (--factor NAME=VALUE)"
        )


def _placed(setups: Sequence[SetupInfo], pivot: Pivot) -> dict[tuple[Values, Values], str]:
    """Each (row values, column values) and the label of the one set-up there; two set-ups
    in one place are refused."""
    placed: dict[tuple[Values, Values], str] = {}
    for info in setups:
        given = given_factors(info)
        key = (tuple(given[f] for f in pivot.rows), tuple(given[f] for f in pivot.columns))
        if key in placed:
            raise ReportError(
                f"--pivot: set-ups {names.shown(placed[key])!r} and {names.shown(info.label)!r} "
                f"share {names.shown(_spelled(pivot, key))} and ran the same workloads; add a "
                "factor that tells them apart"
            )
        placed[key] = info.label
    return placed


def _spelled(pivot: Pivot, key: tuple[Values, Values]) -> str:
    pairs = zip((*pivot.rows, *pivot.columns), (*key[0], *key[1]), strict=True)
    return ", ".join(f"{name}={value}" for name, value in pairs)


def _table(
    data: Dataset,
    pivot: Pivot,
    workload: str,
    metric: str,
    placed: dict[tuple[Values, Values], str],
    number: int,
) -> Table:
    row_keys = list(dict.fromkeys(row for row, _ in placed))
    column_keys = list(dict.fromkeys(column for _, column in placed))
    chosen = shown_in(data.first(workload), metric)
    unit = UNITS[chosen]
    rows = tuple(
        Row(
            row[0],
            tuple(
                _cell(data, placed.get((row, column)), workload, chosen) for column in column_keys
            ),
            row[1:],
        )
        for row in row_keys
    )
    notes = [
        f"rows: {', '.join(pivot.rows)}; columns: {', '.join(pivot.columns)}; each cell: the "
        f"{unit} of the one set-up with those factors, as the results table has it (— none).",
    ]
    if any(cell.warnings for row in rows for cell in row.cells):
        notes.append(WARNED_LEGEND)
    return Table(
        f"{workload} ({unit}): {pivot.said}",
        pivot.rows[0],
        tuple(" / ".join(column) for column in column_keys),
        rows,
        tuple(notes),
        name=f"{PREFIX}{number}",
        stub_headers=pivot.rows[1:],
        column_header=",".join(pivot.columns),
    )


def _cell(data: Dataset, label: str | None, workload: str, metric: str) -> Cell:
    cases = data.cell(label, workload) if label is not None else []
    values, failed = cell_values(cases, metric)
    if not values:
        return Cell(None, UNITS[metric], "failed" if failed else "—")
    return warned(stat_cell(values, UNITS[metric], metric), cases)
