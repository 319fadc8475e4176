"""The table model: rows, columns and cells with units and statistics, built from stored cases.

A cell with several repetitions carries their Summary (median, 95% interval, CoV) and reads
"median ± half-width"; one whose CoV is over 10% is marked ⚠ (unstable). Against a baseline
a cell carries the Difference and reads "percent ± half-width", marked n.s. (not significant)
when the 95% interval of the difference includes 0. See iolab.analysis.stats for the method.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from iolab.analysis.stats import Difference, Summary, compare, metric_for, summarize
from iolab.errors import ReportError
from iolab.store import CaseRow, RunRow
from iolab.targets.facts import SetupFacts

MB = 1_000_000
UNSTABLE = "⚠"
NOT_SIGNIFICANT = "n.s."
UNITS = {"iops": "IOPS", "bw": "MB/s", "pct": "%"}
CHART_KINDS = ("bars", "scaling", "timeseries", "latency", "ratio")
Y_METRICS = ("auto", "iops", "bw", "lat", "p50", "p90", "p99", "p99.9", "p99.99")


@dataclass(frozen=True)
class Cell:
    """One value with its unit; `text` is how people read it."""

    value: float | None
    unit: str
    text: str
    summary: Summary | None = None
    difference: Difference | None = None
    heat: float | None = None  # a percentage of a baseline, for colours diverging at 100
    flags: tuple[str, ...] = ()  # "unstable", "not significant", "failed"


@dataclass(frozen=True)
class Row:
    label: str
    cells: tuple[Cell, ...]
    stubs: tuple[str, ...] = ()  # descriptive columns between the label and the cells


@dataclass(frozen=True)
class Table:
    title: str
    row_header: str
    columns: tuple[str, ...]
    rows: tuple[Row, ...]
    notes: tuple[str, ...] = ()
    name: str = "results"  # file-safe, unique within a report
    stub_headers: tuple[str, ...] = ()
    column_header: str = "setup"  # what the columns are, as the CSV names them
    column_keys: tuple[str, ...] = field(default=())  # the columns' plain names (CSV)

    @property
    def keys(self) -> tuple[str, ...]:
        return self.column_keys or self.columns


def case_value(case: CaseRow, metric: str) -> float | None:
    """IOPS or MB/s of one case, read + write + trim added; None if it failed."""
    if case.status != "ok" or not case.metrics:
        return None
    parts = case.metrics.values()
    total = sum(m.iops for m in parts) if metric == "iops" else sum(m.bw_bytes for m in parts)
    return total if metric == "iops" else total / MB


def format_value(value: float, metric: str) -> str:
    if metric == "iops":
        return f"{value:,.0f}"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:,.1f}" if abs(value) >= 10 else f"{value:,.2f}"


def stat_cell(
    values: Sequence[float], unit: str, metric: str, formatter: Callable[[float], str] | None = None
) -> Cell:
    """A cell of repetitions: the median, ± the 95% half-width, ⚠ when unstable."""
    summary = summarize(values)
    show = formatter or (lambda value: format_value(value, metric))
    text = show(summary.median)
    hw = summary.half_width
    if hw is not None:
        text += f" ± {show(hw)}"
    flags: tuple[str, ...] = ()
    if summary.unstable:
        text += f" {UNSTABLE}"
        flags = ("unstable",)
    return Cell(summary.median, unit, text, summary=summary, flags=flags)


def ratio_cell(base: Sequence[float], values: Sequence[float]) -> Cell:
    """`values` as a percentage of `base`, ± the 95% interval of the difference, n.s. marked."""
    diff = compare(base, values)
    pct = diff.ratio_pct
    if pct is None:
        return Cell(None, "%", "n/a", difference=diff)
    text, flags = f"{pct:.1f}%", list[str]()
    hw = diff.half_width_pct
    if hw is not None:
        text += f" ± {hw:.1f}%"
    if diff.significant is False:
        text += f" {NOT_SIGNIFICANT}"
        flags.append("not significant")
    if diff.other.unstable:
        text += f" {UNSTABLE}"
        flags.append("unstable")
    return Cell(pct, "%", text, summary=diff.other, difference=diff, heat=pct, flags=tuple(flags))


def cell_values(group: Sequence[CaseRow], metric: str) -> tuple[list[float], int]:
    """The ok repetitions' values of one cell, and how many failed."""
    values = [v for c in group if (v := case_value(c, metric)) is not None]
    return values, sum(1 for c in group if c.status != "ok")


def results_table(
    title: str,
    setups: Sequence[str],
    cases: Sequence[CaseRow],
    metric: str = "auto",
    baseline: str | None = None,
) -> Table:
    """Study A's layout: one row per workload, one column per set-up; medians of repetitions."""
    workloads: dict[str, list[CaseRow]] = {}
    for case in cases:
        workloads.setdefault(case.workload, []).append(case)
    rows = []
    for name, group in workloads.items():
        chosen = metric_for(group[0].options, metric)
        found = {s: cell_values([c for c in group if c.setup == s], chosen) for s in setups}
        rows.append(Row(name, _cells(found, setups, chosen, baseline), (UNITS[chosen],)))
    columns = tuple(f"{s} (baseline)" if s == baseline else s for s in setups)
    return Table(
        title, "workload", columns, tuple(rows), stub_headers=("metric",), column_keys=tuple(setups)
    )


def _cells(
    found: Mapping[str, tuple[list[float], int]],
    setups: Sequence[str],
    metric: str,
    baseline: str | None,
) -> tuple[Cell, ...]:
    base = found[baseline][0] if baseline else []
    cells = []
    for setup in setups:
        values, failed = found[setup]
        if not values:
            cells.append(Cell(None, UNITS[metric], "failed" if failed else "—"))
        elif baseline and setup != baseline:
            cells.append(ratio_cell(base, values) if base else Cell(None, "%", "n/a"))
        else:
            cells.append(stat_cell(values, UNITS[metric], metric))
    return tuple(cells)


def check_baseline(baseline: str | None, setups: Sequence[str], where: str) -> None:
    if baseline is not None and baseline not in setups:
        raise ReportError(
            f"--baseline {baseline!r} is not a set-up of {where}; set-ups: {', '.join(setups)}"
        )


def utc(timestamp: float) -> str:
    """A stored time as people read it, in UTC so that it reads the same everywhere."""
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M UTC")


def run_title(run: RunRow) -> str:
    return (
        f"run {run.id}: {run.plan_name} ({utc(run.started_at)}, "
        f"{run.environment.get('fio_version', 'fio')})"
    )


def build(
    run: RunRow,
    setups: Sequence[str],
    cases: Sequence[CaseRow],
    metric: str = "auto",
    baseline: str | None = None,
    described: Sequence[str] = (),
) -> Table:
    """One run's results table with its notes (what `iolab run` prints at the end).

    `described` holds one line per set-up (see `setup_line`), shown under the table.
    """
    check_baseline(baseline, setups, f"run {run.id}")
    table = results_table(run_title(run), setups, cases, metric, baseline)
    notes = [*described, *legend(cases, baseline), *case_notes(cases)]
    notes += incomplete(run)
    return replace(table, notes=tuple(notes))


def incomplete(run: RunRow) -> list[str]:
    """A note for a run with cases missing or failed, saying how to finish it."""
    if run.ok >= run.case_count:
        return []
    return [
        f"incomplete: run {run.id} has {run.ok} of {run.case_count} cases done; finish it "
        f"(missing and failed cases run again) with: iolab run --resume {run.id}"
    ]


def setup_line(name: str, definition: Mapping[str, Any], environment: Mapping[str, Any]) -> str:
    """What a set-up is, in one line: its layout over its devices, or its path's filesystem."""
    if definition.get("kind") != "devices":
        target = SetupFacts.from_json(environment).target
        fs = target.filesystem if target else None
        where = f" ({fs.fstype} on {fs.source})" if fs else ""
        return f"set-up {name}: path {definition.get('path')}{where}"
    devices = ", ".join(str(d).removeprefix("/dev/") for d in definition.get("devices", []))
    raid, level = definition.get("raid", "none"), definition.get("level")
    parts = [f"{raid} {level}" if raid != "none" else "one device"]
    if definition.get("metadata"):
        parts.append(f"metadata {definition['metadata']}")
    if definition.get("chunk"):
        parts.append(f"chunk {definition['chunk']}")
    fs = definition.get("filesystem", "none")
    parts.append(f"{fs} filesystem" if fs != "none" else "raw device")
    for key, label in (("mkfs_options", "mkfs"), ("mount_options", "mount")):
        if definition.get(key):
            parts.append(f"{label} {definition[key]}")
    if definition.get("queue"):
        parts.append(" ".join(f"{k}={v}" for k, v in definition["queue"].items()))
    if definition.get("discard"):
        parts.append("discarded first")
    return f"set-up {name}: {', '.join(parts)}; over {devices}"


def legend(cases: Sequence[CaseRow], baseline: str | None) -> list[str]:
    """What the table's marks mean, for the marks it can contain."""
    notes = []
    if baseline:
        notes.append(f"Other set-ups as a percentage of {baseline!r} (100% = the same).")
    if any(c.repetition > 1 for c in cases):
        notes.append(
            "Each value is the median of its repetitions ± the half-width of the 95% confidence "
            f"interval (Student's t); {UNSTABLE} marks a coefficient of variation over 10% "
            "(unstable)."
        )
        if baseline:
            notes.append(
                f"{NOT_SIGNIFICANT}: not significant, the 95% interval of the difference from "
                "the baseline includes 0 (Welch's t)."
            )
    return notes


def case_notes(cases: Sequence[CaseRow]) -> list[str]:
    """Failures and warnings, one line each."""
    notes = []
    for case in cases:
        where = f"{case.setup} / {case.workload} #{case.repetition}"
        if case.status != "ok":
            notes.append(f"failed: {where}: {case.error}")
        notes += [f"warning: {where}: {warning}" for warning in case.warnings]
    return notes
