"""The table model: rows, columns and cells with units, built from stored cases."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from iolab.errors import ReportError
from iolab.store import CaseRow, RunRow
from iolab.units import parse_size

IOPS_MAX_BS = 64 * 1024
MB = 1_000_000


@dataclass(frozen=True)
class Cell:
    """One value with its unit; `text` is how people read it."""

    value: float | None
    unit: str
    text: str


@dataclass(frozen=True)
class Row:
    label: str
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class Table:
    title: str
    row_header: str
    columns: tuple[str, ...]
    rows: tuple[Row, ...]
    notes: tuple[str, ...] = ()


def metric_for(options: Mapping[str, Any], forced: str) -> str:
    """IOPS for blocks up to 64 KiB, MB/s above, unless the user forces one."""
    if forced in ("iops", "bw"):
        return forced
    return "iops" if parse_size(str(options.get("bs", "4k"))) <= IOPS_MAX_BS else "bw"


def case_value(case: CaseRow, metric: str) -> float | None:
    """IOPS or MB/s of one case, read + write + trim added; None if it failed."""
    if case.status != "ok" or not case.metrics:
        return None
    key = "iops" if metric == "iops" else "bw_bytes"
    total = sum(float(m[key]) for m in case.metrics.values())
    return total if metric == "iops" else total / MB


def format_value(value: float, metric: str) -> str:
    if metric == "iops":
        return f"{value:,.0f}"
    return f"{value:,.1f}" if value < 1000 else f"{value:,.0f}"


UNITS = {"iops": "IOPS", "bw": "MB/s", "pct": "%"}


def build(
    run: RunRow,
    setups: Sequence[str],
    cases: Sequence[CaseRow],
    metric: str = "auto",
    baseline: str | None = None,
) -> Table:
    """Study A's layout: one row per workload, one column per set-up; medians over repetitions."""
    if baseline is not None and baseline not in setups:
        raise ReportError(
            f"--baseline {baseline!r} is not a set-up of run {run.id}; set-ups: {', '.join(setups)}"
        )
    workloads: dict[str, list[CaseRow]] = {}
    for case in cases:
        workloads.setdefault(case.workload, []).append(case)
    rows = []
    for name, group in workloads.items():
        chosen = metric_for(group[0].options, metric)
        values = {s: _median([c for c in group if c.setup == s], chosen) for s in setups}
        rows.append(
            Row(name, (Cell(None, "", UNITS[chosen]), *_cells(values, setups, chosen, baseline)))
        )
    started = datetime.fromtimestamp(run.started_at).strftime("%Y-%m-%d %H:%M")
    title = (
        f"run {run.id}: {run.plan_name} ({started}, {run.environment.get('fio_version', 'fio')})"
    )
    columns = ("metric", *(f"{s} (baseline)" if s == baseline else s for s in setups))
    return Table(title, "workload", columns, tuple(rows), _notes(run, cases, baseline))


def _median(group: list[CaseRow], metric: str) -> tuple[float | None, int, int]:
    """(median, ok count, failed count) of one cell's repetitions."""
    values = [v for c in group if (v := case_value(c, metric)) is not None]
    failed = sum(1 for c in group if c.status != "ok")
    return (statistics.median(values) if values else None, len(values), failed)


def _cells(
    values: Mapping[str, tuple[float | None, int, int]],
    setups: Sequence[str],
    metric: str,
    baseline: str | None,
) -> list[Cell]:
    base = values[baseline][0] if baseline else None
    cells = []
    for setup in setups:
        value, _, failed = values[setup]
        if value is None:
            cells.append(Cell(None, UNITS[metric], "failed" if failed else "—"))
        elif baseline and setup != baseline:
            pct = value / base * 100 if base else None
            text = f"{pct:.1f}%" if pct is not None else "n/a"
            cells.append(Cell(pct, "%", text))
        else:
            cells.append(Cell(value, UNITS[metric], format_value(value, metric)))
    return cells


def _notes(run: RunRow, cases: Sequence[CaseRow], baseline: str | None) -> tuple[str, ...]:
    notes = []
    if baseline:
        notes.append(f"Other set-ups as a percentage of {baseline!r} (100% = the same).")
    if any(c.repetition > 1 for c in cases):
        notes.append("Each value is the median of its repetitions.")
    for case in cases:
        if case.status != "ok":
            notes.append(f"failed: {case.setup} / {case.workload} #{case.repetition}: {case.error}")
        for warning in case.warnings:
            notes.append(
                f"warning: {case.setup} / {case.workload} #{case.repetition}: "
                f"{warning['message']} {warning['advice']}"
            )
    if run.done < run.case_count:
        notes.append(
            f"incomplete: {run.done} of {run.case_count} cases stored; "
            f"finish with: iolab run --resume {run.id}"
        )
    return tuple(notes)
