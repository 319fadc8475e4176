"""A report as JSON, for scripts: the document's sections in order, each table with its
columns and rows (a mixed workload's rows each with their `part`: "read", "write" or
"total"), each cell with its value, unit, text as shown, the statistics of its
repetitions (n, 95% interval, CoV), its flags and the warnings it rests on (code, message,
advice); charts by name, kind, title and caption (their data is in the tables and in
`iolab export`); notes as lines; and every finding, ranked (highest first), each with its
kind, rank, group (the comparison or sweep it speaks for), sentence, whether it
is significant, how many cases it rests on, the cells it cites and their warnings.

    iolab report --format json | jq '.sections[0].tables[0].rows[].cells[0].value'
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from iolab.analysis.findings import Finding
from iolab.model import CheckWarning
from iolab.report.cells import Cell, Row, Table
from iolab.report.charts import Chart
from iolab.report.document import Document, Notes, Section

SCHEMA = "iolab-report"
VERSION = 1


def render_document(document: Document) -> str:
    out = {
        "schema": SCHEMA,
        "version": VERSION,
        "title": document.title,
        "subtitle": list(document.subtitle),
        "findings": [_finding(found) for found in document.findings],
        "sections": [_section(section) for section in document.sections],
    }
    return json.dumps(out, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _section(section: Section) -> dict[str, Any]:
    return {
        "title": section.title,
        "intro": section.intro,
        "tables": [_table(b) for b in section.blocks if isinstance(b, Table)],
        "charts": [_chart(b) for b in section.blocks if isinstance(b, Chart)],
        "notes": [item for b in section.blocks if isinstance(b, Notes) for item in b.items],
    }


def _table(table: Table) -> dict[str, Any]:
    return {
        "name": table.name,
        "title": table.title,
        "row_header": table.row_header,
        "stub_headers": list(table.stub_headers),
        "columns": list(table.columns),
        "column_keys": list(table.keys),
        "rows": [_row(row) for row in table.rows],
        "notes": list(table.notes),
    }


def _row(row: Row) -> dict[str, Any]:
    out = {"label": row.label, "stubs": list(row.stubs), "cells": [_cell(c) for c in row.cells]}
    if row.part:  # a mixed workload's row: "read", "write", "trim" or "total"
        out["part"] = row.part
    return out


def _cell(cell: Cell) -> dict[str, Any]:
    out: dict[str, Any] = {"value": _finite(cell.value), "unit": cell.unit, "text": cell.text}
    summary = cell.summary
    if summary is not None:
        out["n"] = summary.n
        out["ci95"] = [_finite(summary.low), _finite(summary.high)]
        out["cov"] = _finite(summary.cov)
    if cell.difference is not None:
        out["significant"] = cell.difference.significant
        out["half_width_pct"] = _finite(cell.difference.half_width_pct)
    out["flags"] = list(cell.flags)
    out["warnings"] = _warnings(cell.warnings)
    return out


def _finding(found: Finding) -> dict[str, Any]:
    return {
        "kind": found.kind,
        "rank": found.rank,
        "group": found.group,
        "sentence": found.sentence,
        "significant": found.significant,
        "cases": found.cases,
        "cells": [{"workload": w, "setup": s} for w, s in found.cells],
        "warnings": _warnings(found.warned),
    }


def _warnings(warnings: Sequence[CheckWarning]) -> list[dict[str, str]]:
    return [{"code": w.code, "message": w.message, "advice": w.advice} for w in warnings]


def _chart(chart: Chart) -> dict[str, Any]:
    return {"name": chart.name, "kind": chart.kind, "title": chart.title, "caption": chart.caption}


def _finite(value: float | None) -> float | None:
    """JSON has no NaN or infinity: those are null."""
    return value if value is not None and math.isfinite(value) else None
