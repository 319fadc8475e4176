"""Tables for a terminal, drawn with rich."""

from __future__ import annotations

import io
import os
import sys

from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from iolab.names import one_line
from iolab.report.cells import Table
from iolab.report.document import Document, Notes
from iolab.report.views.pivot_view import PREFIX as PIVOT_PREFIX
from iolab.report.views.ratio_view import NAME as RATIOS

# Notes blocks a terminal leaves to Markdown and HTML: set-up details and volatile facts.
FIRST_NOTES = "findings"
LAST_NOTES = "more-findings"  # the findings past the first ones, at the end
MOST_FINDINGS_ROWS = 40  # a longer table of the findings' figures is named, not printed
HIDDEN_NOTES = ("volatile", "setup-details")


def _text(text: str) -> Text:
    """A cell as plain text: rich reads no markup ("[/]") or emoji code (":smile:") in it,
    and a control or bidi character is shown as an escape."""
    return Text(one_line(text))


def _grid(table: Table) -> RichTable:
    """The table's grid: a name, a figure or a flag too long for its column wraps onto more
    lines (rich's "fold"); none is cut to "…", on a terminal, in a file or in a pipe."""
    grid = RichTable()
    grid.add_column(_text(table.row_header), overflow="fold")
    for header in table.stub_headers:
        grid.add_column(_text(header), overflow="fold")
    for column in table.columns:
        grid.add_column(_text(column), justify="right", overflow="fold")
    for row in table.shown_rows():
        cells = (row.label, *row.stubs, *(cell.text for cell in row.cells))
        grid.add_row(*map(_text, cells))
    return grid


WIDTH = 120  # when standard output is not a terminal: a file, a pipe, a test
MIN_WIDTH, MAX_WIDTH = 40, 10_000  # COLUMNS outside these is not a width


def _width() -> int:
    """The terminal's own width, so long set-up names get the room there is; in a file or a
    pipe 120 columns (the same text every time), or more where COLUMNS asks for more
    (`COLUMNS=250 iolab report > r.txt`). A smaller COLUMNS, which many environments export
    (80), does not narrow a file: it would only fold more cells."""
    try:
        if sys.stdout.isatty():
            return max(os.get_terminal_size(sys.stdout.fileno()).columns, MIN_WIDTH)
    except (OSError, ValueError):
        pass
    given = os.environ.get("COLUMNS", "")
    if given.isascii() and given.isdigit() and WIDTH < int(given) <= MAX_WIDTH:
        return int(given)
    return WIDTH


def _console(buffer: io.StringIO, width: int | None, color: bool) -> Console:
    return Console(
        file=buffer,
        width=width or _width(),
        force_terminal=color,
        no_color=not color,
        emoji=False,
    )


def _line(console: Console, text: str) -> None:
    """A line of the report as it is: no markup, no emoji codes, escapes for controls."""
    console.print(one_line(text), highlight=False, soft_wrap=True, markup=False, emoji=False)


def _print(console: Console, table: Table) -> None:
    """The title on a line of its own (never wrapped to the table's width), the grid, the
    notes."""
    _line(console, table.title)
    console.print(_grid(table))
    for note in table.shown_notes():
        _line(console, note)


def render(table: Table, width: int | None = None, color: bool = False) -> str:
    buffer = io.StringIO()
    _print(_console(buffer, width, color), table)
    return buffer.getvalue()


def _findings_tables(document: Document) -> list[Table]:
    """The tables of the section that holds the findings (leaders' margins, a choice's cost),
    so that every figure a finding cites is in a table here too."""
    for section in document.sections:
        if any(isinstance(b, Notes) and b.name == FIRST_NOTES for b in section.blocks):
            main = document.main_table()
            return [b for b in section.blocks if isinstance(b, Table) and b is not main]
    return []


def _appendix(console: Console, blocks: list[Notes]) -> None:
    """The findings past the first ones, last, as the first ones are printed."""
    for block in blocks:
        _line(console, f"{block.title}:")
        for item in block.items:
            _line(console, f"- {item}")


def _cited(console: Console, document: Document) -> None:
    """The margins and costs the findings cite, each a table or where to read it."""
    for table in _findings_tables(document):
        if len(table.rows) <= MOST_FINDINGS_ROWS:
            _print(console, table)
        else:
            _line(
                console, f"{table.title}: {len(table.rows)} rows, in --format markdown, html or csv"
            )


def render_document(document: Document, width: int | None = None, color: bool = False) -> str:
    """The document's first table under the document's title, then its notes; charts are
    counted, with where to see them."""
    buffer = io.StringIO()
    console = _console(buffer, width, color)
    _line(console, document.title)
    said = [b for s in document.sections for b in s.blocks if isinstance(b, Notes)]
    for block in said:
        if block.name == FIRST_NOTES:  # the findings, above the table they sum up
            _line(console, f"{block.title}:")
            for item in block.items:
                _line(console, f"- {item}")
    if not document.tables():  # the short form: the findings and their caveats only
        return buffer.getvalue()
    _cited(console, document)
    _print(console, document.main_table())
    for table in document.tables():  # --pivot's, and shares beside the results
        shown = table.name.startswith(PIVOT_PREFIX) or table.name == RATIOS
        if shown and table is not document.main_table():
            _print(console, table)
    for block in said:
        if block.name not in (*HIDDEN_NOTES, FIRST_NOTES, LAST_NOTES):
            for item in block.items:
                _line(console, item)
    _appendix(console, [b for b in said if b.name == LAST_NOTES])
    charts = len(document.charts())
    if charts:
        console.print(
            f"{charts} chart{'s' if charts > 1 else ''} and {len(document.tables())} tables: "
            "--format html or --format markdown -o FILE.md",
            highlight=False,
            markup=False,
        )
    return buffer.getvalue()
