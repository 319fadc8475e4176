"""The table as CSV: numbers unformatted, units in their own column, one line per value."""

from __future__ import annotations

import csv
import io

from iolab.report.model import Table


def render(table: Table) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([table.row_header, "setup", "value", "unit"])
    setups = table.columns[1:]
    for row in table.rows:
        for setup, cell in zip(setups, row.cells[1:], strict=True):
            value = "" if cell.value is None else f"{cell.value:.6g}"
            writer.writerow([row.label, setup, value, cell.unit or cell.text])
    return buffer.getvalue()
