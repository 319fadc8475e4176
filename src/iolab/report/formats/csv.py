"""Tables as CSV: long ("tidy"), one line per value, numbers unformatted, units in their own
column, with the statistics of repetitions (n, 95% interval of the mean, CoV) beside; and the
findings, one line each."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from iolab.analysis.findings import Finding
from iolab.names import one_line, spreadsheet_cell
from iolab.report.cells import Cell, Table

STATS_HEADER = ("n", "ci95_low", "ci95_high", "cov_pct", "flags")
FINDINGS_HEADER = ("rank", "group", "kind", "sentence", "significant", "cases", "cells", "warnings")


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.6g}"


def _stats(cell: Cell) -> list[str]:
    """n, the 95% interval and CoV: of the repetitions (an interval of the mean), or for a
    percentage of a reference, the percentage ± the half-width of the difference's interval."""
    low = high = cov = None
    n = 0 if cell.value is None else 1
    diff, summary = cell.difference, cell.summary
    if diff is not None and cell.unit == "%":
        n, cov, hw = diff.other.n, diff.other.cov, diff.half_width_pct
        if hw is not None and cell.value is not None:
            low, high = cell.value - hw, cell.value + hw
    elif summary is not None:
        n, low, high, cov = summary.n, summary.low, summary.high, summary.cov
    cov_pct = None if cov is None else cov * 100
    return [str(n), _number(low), _number(high), _number(cov_pct), ";".join(cell.flags)]


def _text(text: str) -> str:
    """A text cell (a name, a label): on one line, and never read as a formula."""
    return spreadsheet_cell(one_line(text))


def render(table: Table) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    # a stub that says what a column of every line says already (a latency row's "unit") is
    # left out: each line has its cell's unit
    kept = [i for i, h in enumerate(table.stub_headers) if h not in ("value", "unit")]
    header = [table.row_header, *(table.stub_headers[i] for i in kept), table.column_header]
    writer.writerow([*map(_text, header), "value", "unit", *STATS_HEADER])
    for row in table.rows:
        stubs = [row.stubs[i] for i in kept if i < len(row.stubs)]
        for key, cell in zip(table.keys, row.cells, strict=True):
            value = _number(cell.value) if cell.value is not None else _text(cell.text)
            if cell.value is None and cell.text in ("—", ""):
                value = ""
            texts = [_text(t) for t in (row.label, *stubs, key)]
            stats = _stats(cell)
            writer.writerow([*texts, value, _text(cell.unit), *stats[:-1], _text(stats[-1])])
    return buffer.getvalue()


def render_findings(findings: Sequence[Finding]) -> str:
    """One line per finding, ranked: its rank (how much it says), its group (the comparison
    or sweep it speaks for), its kind, its sentence, whether it is significant (empty: no
    interval, or not a comparison), how many cases it rests on, the cells it cites
    (workload @ set-up, ";"-separated) and the codes of their warnings."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(FINDINGS_HEADER)
    for found in findings:
        significant = "" if found.significant is None else str(found.significant).lower()
        cells = ";".join(f"{w} @ {s}" for w, s in found.cells)
        codes = ";".join(w.code for w in found.warned)
        texts = (
            f"{found.rank:g}",
            found.group,
            found.kind,
            found.sentence,
            significant,
            str(found.cases),
            cells,
            codes,
        )
        writer.writerow([_text(t) for t in texts])
    return buffer.getvalue()
