"""Tables for a terminal, drawn with rich."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table as RichTable

from iolab.report.document import Document, Notes
from iolab.report.model import Table

# Notes blocks a terminal leaves to Markdown and HTML: set-up details and volatile facts.
HIDDEN_NOTES = ("volatile", "setup-details")


def _grid(table: Table) -> RichTable:
    grid = RichTable()
    grid.add_column(table.row_header, no_wrap=True)
    for header in table.stub_headers:
        grid.add_column(header)
    for column in table.columns:
        grid.add_column(column, justify="right")
    for row in table.shown_rows():
        grid.add_row(row.label, *row.stubs, *(cell.text for cell in row.cells))
    return grid


def _console(buffer: io.StringIO, width: int | None, color: bool) -> Console:
    return Console(file=buffer, width=width or 120, force_terminal=color, no_color=not color)


def _print(console: Console, table: Table) -> None:
    """The title on a line of its own (never wrapped to the table's width), the grid, the
    notes."""
    console.print(table.title, highlight=False, soft_wrap=True, markup=False)
    console.print(_grid(table))
    for note in table.shown_notes():
        console.print(note, highlight=False, soft_wrap=True, markup=False)


def render(table: Table, width: int | None = None, color: bool = False) -> str:
    buffer = io.StringIO()
    _print(_console(buffer, width, color), table)
    return buffer.getvalue()


def render_document(document: Document, width: int | None = None, color: bool = False) -> str:
    """The document's first table under the document's title, then its notes; charts are
    counted, with where to see them."""
    buffer = io.StringIO()
    console = _console(buffer, width, color)
    console.print(document.title, highlight=False, soft_wrap=True, markup=False)
    _print(console, document.main_table())
    for section in document.sections:
        for block in section.blocks:
            if isinstance(block, Notes) and block.name not in HIDDEN_NOTES:
                for item in block.items:
                    console.print(item, highlight=False, soft_wrap=True, markup=False)
    charts = len(document.charts())
    if charts:
        console.print(
            f"{charts} chart{'s' if charts > 1 else ''} and {len(document.tables())} tables: "
            "--format html or --format markdown -o FILE.md",
            highlight=False,
            markup=False,
        )
    return buffer.getvalue()
