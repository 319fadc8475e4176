"""The document `iolab compare` builds: the runs' cells side by side, each change with
Welch's interval, the findings across runs."""

from __future__ import annotations

from collections.abc import Sequence

from iolab.errors import ReportError
from iolab.report import directions, judged_findings
from iolab.report.cells import (
    UNITS,
    WARNED_LEGEND,
    Cell,
    Row,
    Table,
    cell_values,
    change_cell,
    change_legend,
    shown_in,
    stat_cell,
    warned,
    whole_rows,
)
from iolab.report.data import DataCase, Dataset
from iolab.report.document import (
    Block,
    Document,
    Section,
    environment_blocks,
    findings_blocks,
    more_findings,
    notes_section,
    published_blocks,
    subtitle,
)
from iolab.report.judged import compare_warnings, environment_differences
from iolab.report.views import (
    figures,
    heat_figure,
)


def compare(data: Dataset, metric: str = "auto") -> Document:
    """Runs side by side, the first as the reference: each cell median ± 95% interval, each
    later run's change with its 95% interval (Welch), marked "not significant" where the
    interval includes 0."""
    if len(data.runs) < 2:
        raise ReportError("compare needs two runs or more, e.g. iolab compare 1 2")
    table = _comparison(data, metric)
    blocks: list[Block] = [table]
    chart = heat_figure.heat(
        table,
        f"Change vs run {data.runs[0].id}, per workload and set-up",
        "run",
        f"run {data.runs[0].id}",
    )
    if chart:
        blocks.append(chart)
    found = judged_findings.ordered(
        judged_findings.compare_findings(data, whole_rows(table), metric)
    )
    sections = findings_blocks(found, f"run {data.runs[0].id}")
    sections.append(Section("Comparison", tuple(blocks)))
    sections.append(Section("Set-ups side by side", tuple(figures.bars(data, metric))))
    sections.append(Section("Environment", environment_blocks(data, environment_differences(data))))
    if (notes := notes_section(data, compare_warnings(data, table))) is not None:
        sections.append(notes)
    sections += more_findings(found)
    ids = " and ".join(str(r.id) for r in data.runs)
    title = f"Comparison of runs {ids}"
    published = published_blocks(sections, data, check=False)  # the plan's charts are not compare's
    return Document(title, subtitle(data), published, findings=tuple(found))


def _comparison(data: Dataset, metric: str) -> Table:
    runs = [r.id for r in data.runs]
    name_of = {s.label: s.name for s in data.setups}
    single = all(sum(1 for s in data.setups if s.run_id == r) == 1 for r in runs)
    keys: list[tuple[str, str]] = []
    for case in data.cases:
        key = ("" if single else name_of[case.setup], case.workload)
        if key not in keys:
            keys.append(key)
    columns = [f"run {runs[0]}"]
    for run in runs[1:]:
        columns += [f"run {run}", f"change {run} vs {runs[0]}", f"verdict {run} vs {runs[0]}"]
    found: list[tuple[str, tuple[Cell, ...], str, str, str, str]] = []
    for setup, workload in keys:
        cases = {
            run: [
                c
                for c in data.cases
                if c.run_id == run
                and c.workload == workload
                and (single or name_of[c.setup] == setup)
            ]
            for run in runs
        }
        first = next(group[0] for group in cases.values() if group)
        chosen = shown_in(first, metric)
        setup_text = setup or " / ".join(
            sorted({name_of[c.setup] for g in cases.values() for c in g})
        )
        every = [c for g in cases.values() for c in g]
        for part in directions.parts(every) or ("",):  # a mixed workload: read, write, total
            said = part or "/".join(directions.measured(every)) or "—"
            cells = tuple(_compare_cells(cases, runs, chosen, part))
            found.append((workload, cells, setup_text, said, UNITS[chosen], part))
    split = any(part for *_, part in found)
    rows = [
        Row(w, cells, (s, said, unit) if split else (s, unit), part)
        for w, cells, s, said, unit, part in found
    ]
    mixed = dict.fromkeys(w for w, *_, part in found if part)
    notes = (
        "Each value is the median of its repetitions ± the half-width of the 95% confidence "
        "interval (Student's t).",
        change_legend(f"run {runs[0]}", any(c.repetition > 1 for c in data.cases)),
        *([WARNED_LEGEND] if any(not w.note for c in data.cases for w in c.warnings) else []),
        *([directions.legend(mixed, any(c.repetition > 1 for c in data.cases))] if mixed else []),
    )
    return Table(
        "Comparison",
        "workload",
        tuple(columns),
        tuple(rows),
        notes,
        name="comparison",
        stub_headers=("setup", "direction", "metric") if split else ("setup", "metric"),
        column_header="column",
    )


def _compare_cells(
    cases: dict[int, list[DataCase]], runs: Sequence[int], metric: str, part: str = ""
) -> list[Cell]:
    values = {run: cell_values(cases[run], metric, part)[0] for run in runs}
    base = values[runs[0]]
    cells = [warned(_value_cell(base, metric), cases[runs[0]])]
    for run in runs[1:]:
        cells.append(warned(_value_cell(values[run], metric), cases[run]))
        if not base or not values[run]:
            cells += [Cell(None, "%", "n/a"), Cell(None, "", "n/a")]
            continue
        change, verdict = _change_cells(base, values[run])
        cells += [warned(change, [*cases[runs[0]], *cases[run]]), verdict]
    return cells


def _value_cell(values: list[float], metric: str) -> Cell:
    return stat_cell(values, UNITS[metric], metric) if values else Cell(None, UNITS[metric], "—")


def _change_cells(base: Sequence[float], values: Sequence[float]) -> list[Cell]:
    """The change (as `report --baseline` shows it) and its verdict in words."""
    change = change_cell(base, values)
    diff = change.difference
    significant = diff.significant if diff else None
    if diff is None or significant is None:
        verdict = "no interval (one repetition)"
    elif not significant:
        verdict = "not significant"
    else:
        verdict = "higher" if diff.delta > 0 else "lower"
    return [change, Cell(None, "", verdict, flags=change.flags)]
