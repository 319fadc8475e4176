"""The table model: rows, columns and cells with units and statistics, built from stored cases.

A cell with several repetitions carries their Summary (median, 95% interval, CoV) and reads
"median ± half-width"; one whose CoV is over 10% is marked ⚠ (unstable). Against a reference
(a baseline set-up, or the first run of a comparison) a "change" cell carries the Difference
and reads "+6.2% ± 4.1%": the difference of the means as a percentage of the reference's
mean (0% = the same), ± the half-width of its 95% interval, marked n.s. (not significant) when
that interval includes 0. `report` and `compare` say it the same way. See
iolab.analysis.stats for the method.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import PurePosixPath

from iolab.analysis.stats import Difference, Summary, compare, metric_for, summarize
from iolab.errors import ReportError
from iolab.model import CheckWarning, Setup
from iolab.report import directions
from iolab.store import CaseRow, RunRow
from iolab.targets.facts import SetupFacts
from iolab.targets.path import TEST_FILE

MB = 1_000_000
UNSTABLE = "⚠"
WARNED = "⚑"  # a cell resting on a case with a methodology warning: the codes follow it
WARNED_LEGEND = (
    f"{WARNED} marks a value iolab cannot vouch for: it rests on cases with the warnings named "
    "after it (below: why, and what to do)."
)
WHERE_SHOWN = 6  # a warning names at most this many workloads that had it
NOT_SIGNIFICANT = "n.s."
NO_INTERVAL = "no useful interval"  # a 95% interval wider than the value it is about
UNITS = {"iops": "IOPS", "bw": "MB/s", "pct": "%"}


@dataclass(frozen=True)
class Cell:
    """One value with its unit; `text` is how people read it."""

    value: float | None
    unit: str
    text: str
    summary: Summary | None = None
    difference: Difference | None = None
    heat: float | None = None  # a percentage of a baseline, for colours diverging at 100
    flags: tuple[str, ...] = ()  # "unstable", "not significant", "failed"; warnings' codes
    warnings: tuple[CheckWarning, ...] = ()  # of the cases the cell rests on, one per code


@dataclass(frozen=True)
class Row:
    label: str
    cells: tuple[Cell, ...]
    stubs: tuple[str, ...] = ()  # descriptive columns between the label and the cells
    # a mixed workload's row: "read", "write", "trim" or "total" (see report.directions);
    # "" for a workload's one row
    part: str = ""

    @property
    def whole(self) -> bool:
        """Whether the row is its workload's figure: its one row, or a mixed one's total."""
        return self.part in ("", directions.TOTAL)


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
    # A big table's summary: the rows people see (-1: a gap), and what was left out; CSV
    # writes every row.
    shown: tuple[int, ...] | None = None
    left_out: str = ""

    @property
    def keys(self) -> tuple[str, ...]:
        return self.column_keys or self.columns

    def shown_rows(self) -> list[Row]:
        """The rows to show people: all, or the summary's, with a "…" row for each gap."""
        if self.shown is None:
            return list(self.rows)
        gap = Row(
            "…", tuple(Cell(None, "", "…") for _ in self.columns), ("…",) * len(self.stub_headers)
        )
        return [self.rows[i] if i >= 0 else gap for i in self.shown]

    def shown_notes(self) -> tuple[str, ...]:
        return (self.left_out, *self.notes) if self.left_out else self.notes


def case_value(case: CaseRow, metric: str, part: str = "") -> float | None:
    """IOPS or MB/s of one case, read + write + trim added (or one direction's, `part`
    "read", "write" or "trim"); None if it failed."""
    if directions.is_direction(part):
        return directions.direction_value(case, metric, part)
    if case.status != "ok" or not case.metrics:
        return None
    return case.total(metric) if metric == "iops" else case.total(metric) / MB


def format_value(value: float, metric: str) -> str:
    if metric == "iops":
        return f"{value:,.0f}"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:,.1f}" if abs(value) >= 10 else f"{value:,.2f}"


def stat_cell(
    values: Sequence[float],
    unit: str,
    metric: str,
    formatter: Callable[[float], str] | None = None,
    runs: str = "repetitions",
) -> Cell:
    """A cell of repetitions: the median, ± the 95% half-width, ⚠ when unstable. An interval
    wider than the median is said in words ("2 repetitions: no useful interval"; `runs` names
    what was repeated), not printed: "2,107 ± 6,255" reads as a figure that could be
    negative."""
    summary = summarize(values)
    show = formatter or (lambda value: format_value(value, metric))
    text = show(summary.median)
    hw = summary.half_width
    flags: tuple[str, ...] = ()
    if hw is not None and hw > abs(summary.median):
        text += f" ({interval_words(summary.n, runs)})"
        flags = (NO_INTERVAL,)
    elif hw is not None:
        text += f" ± {show(hw)}"
    if summary.unstable:
        text += f" {UNSTABLE}"
        flags = (*flags, "unstable")
    return Cell(summary.median, unit, text, summary=summary, flags=flags)


def interval_words(n: int, runs: str = "repetitions") -> str:
    """What a cell says instead of an interval wider than its value."""
    return f"{n:,} {runs}: {NO_INTERVAL}"


def change_cell(base: Sequence[float], values: Sequence[float]) -> Cell:
    """`values` against the reference `base`: the change of the means in percent of the
    reference's mean, ± the half-width of the 95% interval of the difference (Welch's t),
    n.s. when that interval includes 0. `heat` is 100 + the change (100 = the same)."""
    if not base or not values:
        return Cell(None, "%", "n/a")
    diff = compare(base, values)
    change = diff.change_pct
    if change is None:
        return Cell(None, "%", "n/a", difference=diff)
    text = f"{change:+.1f}%"
    hw = diff.half_width_pct
    if hw is not None:
        text += f" ± {hw:.1f}%"
    flags: tuple[str, ...] = ()
    if diff.significant is False:
        text += f" {NOT_SIGNIFICANT}"
        flags = ("not significant",)
    return Cell(change, "%", text, difference=diff, heat=100.0 + change, flags=flags)


def warned(cell: Cell, cases: Sequence[CaseRow]) -> Cell:
    """The cell marked with the warnings of the cases it rests on, where it is shown: its text
    gets ⚑ and their codes, its flags the codes (the CSV's `flags`), and it keeps the
    warnings (what and what to do, for a tooltip); the notes under the table say them in
    full."""
    found = {w.code: w for case in cases for w in case.warnings if not w.note}
    if not found or cell.value is None:
        return cell
    codes = tuple(found)
    return replace(
        cell,
        text=f"{cell.text} {WARNED} {', '.join(codes)}",
        flags=(*cell.flags, *codes),
        warnings=tuple(found.values()),
    )


def cell_values(group: Sequence[CaseRow], metric: str, part: str = "") -> tuple[list[float], int]:
    """The ok repetitions' values of one cell (of one direction, `part` "read", "write" or
    "trim"; else their total), and how many failed."""
    values = [v for c in group if (v := case_value(c, metric, part)) is not None]
    return values, sum(1 for c in group if c.status != "ok")


def results_table(
    title: str,
    setups: Sequence[str],
    cases: Sequence[CaseRow],
    metric: str = "auto",
    baseline: str | None = None,
) -> Table:
    """Study A's layout: one row per workload, one column per set-up; medians of repetitions.
    A mixed workload has a row per direction, then its total (report.directions); a table
    with one then names each row's direction."""
    workloads: dict[str, list[CaseRow]] = {}
    for case in cases:
        workloads.setdefault(case.workload, []).append(case)
    mixed = {name: directions.parts(group) for name, group in workloads.items()}
    split = any(mixed.values())
    rows = []
    for name, group in workloads.items():
        chosen = metric_for(group[0].options, metric)
        by_setup: dict[str, list[CaseRow]] = {}
        for case in group:
            by_setup.setdefault(case.setup, []).append(case)
        for part in mixed[name] or ("",):
            found = {s: cell_values(by_setup.get(s, []), chosen, part) for s in setups}
            cells = _marked(_cells(found, setups, chosen, baseline), by_setup, setups, baseline)
            said = part or "/".join(directions.measured(group)) or "—"
            stubs = (said, UNITS[chosen]) if split else (UNITS[chosen],)
            rows.append(Row(name, cells, stubs, part))
    columns: list[str] = []
    keys: list[str] = []
    for setup in setups:
        columns.append(f"{setup} (baseline)" if setup == baseline else setup)
        keys.append(setup)
        if baseline and setup != baseline:
            columns.append(f"change vs {baseline}")
            keys.append(f"change {setup} vs {baseline}")
    return Table(
        title,
        "workload",
        tuple(columns),
        tuple(rows),
        stub_headers=("direction", "metric") if split else ("metric",),
        column_keys=tuple(keys),
    )


def whole_rows(table: Table) -> Table:
    """The table with each workload's one figure only: a mixed workload's total, not its
    directions (for what judges a workload as one: findings, rankings)."""
    if all(row.whole for row in table.rows):
        return table
    return replace(table, rows=tuple(r for r in table.rows if r.whole), shown=None)


def _cells(
    found: Mapping[str, tuple[list[float], int]],
    setups: Sequence[str],
    metric: str,
    baseline: str | None,
) -> tuple[Cell, ...]:
    """Each set-up's value; with a baseline, each other set-up's change beside its value."""
    base = found[baseline][0] if baseline else []
    cells = []
    for setup in setups:
        values, failed = found[setup]
        if not values:
            cells.append(Cell(None, UNITS[metric], "failed" if failed else "—"))
        else:
            cells.append(stat_cell(values, UNITS[metric], metric))
        if baseline and setup != baseline:
            cells.append(change_cell(base, values))
    return tuple(cells)


def _marked(
    cells: Sequence[Cell],
    by_setup: Mapping[str, Sequence[CaseRow]],
    setups: Sequence[str],
    baseline: str | None,
) -> tuple[Cell, ...]:
    """Each cell marked with its cases' warnings; a change with both sides' (a change
    resting on a cached figure is no better than the figure)."""
    resting: list[list[CaseRow]] = []
    for setup in setups:
        resting.append(list(by_setup.get(setup, [])))
        if baseline and setup != baseline:
            resting.append([*by_setup.get(baseline, []), *by_setup.get(setup, [])])
    return tuple(warned(cell, cases) for cell, cases in zip(cells, resting, strict=True))


def check_baseline(baseline: str | None, setups: Sequence[str], where: str) -> None:
    if baseline is not None and baseline not in setups:
        raise ReportError(
            f"--baseline {baseline!r} is not a set-up of {where}; set-ups: {', '.join(setups)}"
        )


@functools.lru_cache(maxsize=4096)  # a long history says each run's time once per series
def utc(timestamp: float) -> str:
    """A stored time as people read it, to the second (runs a minute apart keep their
    order), in UTC so that it reads the same everywhere."""
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def run_title(run: RunRow) -> str:
    return (
        f"run {run.id}: {run.plan_name} ({utc(run.started_at)}, "
        f"{run.environment.get('fio_version', 'fio')})"
    )


def run_table(
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
    if not run.unfinished:
        return []
    return [
        f"incomplete: run {run.id} has {run.tally(run.ok)} cases done; finish it "
        f"(missing and failed cases run again) with: iolab run --resume {run.id}"
    ]


def setup_line(name: str, setup: Setup, facts: SetupFacts) -> str:
    """What a set-up is, in one line: its layout over its devices, or its path's filesystem."""
    layout = setup.layout
    if layout is None:
        fs = facts.target.filesystem if facts.target else None
        where = f" ({fs.fstype} on {fs.source})" if fs else ""
        if not setup.path:
            return f"set-up {name}: no path recorded (figures made elsewhere){where}"
        return f"set-up {name}: path {setup.path}{_resolved(setup.path, facts)}{where}"
    devices = ", ".join(d.removeprefix("/dev/") for d in layout.devices)
    parts = [f"{layout.raid} {layout.level}" if layout.raid != "none" else "one device"]
    if layout.metadata:
        parts.append(f"metadata {layout.metadata}")
    if layout.chunk:
        parts.append(f"chunk {layout.chunk}")
    fs_kind = layout.filesystem
    parts.append(f"{fs_kind} filesystem" if fs_kind != "none" else "raw device")
    for value, label in ((layout.mkfs_options, "mkfs"), (layout.mount_options, "mount")):
        if value:
            parts.append(f"{label} {value}")
    if layout.queue:
        parts.append(" ".join(f"{k}={v}" for k, v in layout.queue.items()))
    if layout.discard:
        parts.append("discarded first")
    return f"set-up {name}: {', '.join(parts)}; over {devices}"


def _resolved(path: str, facts: SetupFacts) -> str:
    """Where a relative path ("." of `iolab run` here, a job file's folder) was, as the run
    recorded it: " = /abs/folder"; "" for an absolute path or when nothing was recorded."""
    if PurePosixPath(path).is_absolute() or facts.target is None:
        return ""
    found = PurePosixPath(facts.target.path)
    folder = found.parent if found.name == TEST_FILE else found
    return f" = {folder}"


def legend(cases: Sequence[CaseRow], baseline: str | None) -> list[str]:
    """What the table's marks mean, for the marks it can contain."""
    notes = []
    if baseline:
        notes.append(change_legend(baseline, any(c.repetition > 1 for c in cases)))
    if any(c.repetition > 1 for c in cases):
        notes.append(
            "Each value is the median of its repetitions ± the half-width of the 95% confidence "
            f"interval (Student's t); {UNSTABLE} marks a coefficient of variation over 10% "
            "(unstable)."
        )
    if any(not w.note for c in cases for w in c.warnings):
        notes.append(WARNED_LEGEND)
    by_workload: dict[str, list[CaseRow]] = {}
    for case in cases:
        by_workload.setdefault(case.workload, []).append(case)
    mixed = [w for w, group in by_workload.items() if directions.parts(group)]
    if mixed:
        notes.append(directions.legend(mixed, any(c.repetition > 1 for c in cases)))
    return notes


def change_legend(reference: str, repeated: bool = True) -> str:
    """What a change column means, the same words in `report` and `compare`."""
    text = (
        f"change vs {reference}: the difference of the means as a percentage of {reference}'s "
        "mean (+ higher, - lower, 0% the same)"
    )
    if not repeated:
        return text + "; with one repetition there is no interval."
    return text + (
        ", ± the half-width of its 95% interval (Welch's t); "
        f"{NOT_SIGNIFICANT}: not significant, the interval includes 0."
    )


def case_notes(cases: Sequence[CaseRow]) -> list[str]:
    """Failures, one line each; then each warning once, with the cases that had it (a
    warning every repetition of a workload has would otherwise bury the table)."""
    notes = []
    noted: set[str] = set()  # the texts of notes (no ⚑), said as "note", not "warning"
    said: dict[str, dict[tuple[str, str], list[int]]] = {}
    for case in cases:
        where = f"{case.setup} / {case.workload} #{case.repetition}"
        if case.status != "ok":
            notes.append(f"failed: {where}: {case.error}")
        for warning in case.warnings:
            if warning.note:
                noted.add(str(warning))
            cells = said.setdefault(str(warning), {})
            cells.setdefault((case.setup, case.workload), []).append(case.repetition)
    for text, cells in said.items():
        wheres = [
            f"{setup} / {workload} #{','.join(map(str, reps))}"
            for (setup, workload), reps in cells.items()
        ]
        count = sum(len(reps) for reps in cells.values())
        kind = "note" if text in noted else "warning"
        if count == 1:
            notes.append(f"{kind}: {wheres[0]}: {text}")
        else:
            shown = "; ".join(wheres[:WHERE_SHOWN])
            more = f"; and {len(wheres) - WHERE_SHOWN:,} more" if len(wheres) > WHERE_SHOWN else ""
            notes.append(f"{kind} ({count:,} cases: {shown}{more}): {text}")
    return notes
