"""Tables and whole reports as GitHub-flavoured Markdown; charts as image links."""

from __future__ import annotations

from collections.abc import Mapping

from iolab.report.charts import Chart
from iolab.report.document import Document, Notes, Section
from iolab.report.model import Table

HTML_ONLY = ("volatile",)  # Notes left to the HTML page's details


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def _grid(table: Table) -> list[str]:
    header = [table.row_header, *table.stub_headers, *table.columns]
    numeric = [
        any(r.cells[i].value is not None for r in table.rows) for i in range(len(table.columns))
    ]
    align = ["---"] * (1 + len(table.stub_headers)) + ["---:" if n else "---" for n in numeric]
    lines = [
        "| " + " | ".join(_escape(h) for h in header) + " |",
        "| " + " | ".join(align) + " |",
    ]
    for row in table.shown_rows():
        cells = [
            _escape(row.label),
            *map(_escape, row.stubs),
            *(_escape(c.text) for c in row.cells),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    if table.shown_notes():
        lines.append("")
        lines += [f"- {_escape(note)}" for note in table.shown_notes()]
    return lines


def render_document(document: Document, images: Mapping[str, str] | None = None) -> str:
    """The report; `images` maps a chart's name to the image path to link. Without it (output
    to stdout), charts are listed by title with how to get them."""
    lines = [f"# {_escape(document.title)}", ""]
    lines += [f"- {_escape(line)}" for line in document.subtitle]
    missing = 0
    for section in document.sections:
        shown = [b for b in section.blocks if not isinstance(b, Chart) or images is not None]
        missing += len(section.blocks) - len(shown)
        if not shown:
            continue
        lines += ["", f"## {_escape(section.title)}"]
        for block in shown:
            if isinstance(block, Table):
                if block.title != section.title:
                    lines += ["", f"### {_escape(block.title)}"]
                lines += ["", *_grid(block)]
            elif isinstance(block, Notes):
                lines += _notes(block, section) if block.name not in HTML_ONLY else []
            elif images is not None:
                lines += _chart(block, images[block.name])
    if missing:
        lines += [
            "",
            f"_{missing} charts are left out when Markdown goes to standard output; write it "
            "to a file (-o report.md) to get them as images beside it._",
        ]
    return "\n".join(lines) + "\n"


def _notes(notes: Notes, section: Section) -> list[str]:
    lines = [""]
    if notes.title != section.title:
        lines += [f"### {_escape(notes.title)}", ""]
    return lines + [f"- {_escape(item)}" for item in notes.items]


def _chart(chart: Chart, path: str) -> list[str]:
    lines = ["", f"![{_escape(chart.title)}]({path})"]
    if chart.caption:
        lines += ["", f"_{_escape(chart.caption)}_"]
    return lines
