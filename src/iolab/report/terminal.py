"""The table for a terminal, drawn with rich."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table as RichTable

from iolab.report.model import Table


def render(table: Table, width: int | None = None, color: bool = False) -> str:
    grid = RichTable(title=table.title, title_justify="left")
    grid.add_column(table.row_header, no_wrap=True)
    for column in table.columns:
        grid.add_column(column, justify="right")
    for row in table.rows:
        grid.add_row(row.label, *(cell.text for cell in row.cells))
    buffer = io.StringIO()
    console = Console(file=buffer, width=width or 120, force_terminal=color, no_color=not color)
    console.print(grid)
    for note in table.notes:
        console.print(note, highlight=False, soft_wrap=True)
    return buffer.getvalue()
