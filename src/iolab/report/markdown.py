"""The table as GitHub-flavoured Markdown."""

from __future__ import annotations

from iolab.report.model import Table


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def render(table: Table) -> str:
    header = [table.row_header, *table.columns]
    lines = [
        f"## {_escape(table.title)}",
        "",
        "| " + " | ".join(_escape(h) for h in header) + " |",
        "| --- | " + " | ".join("---:" for _ in table.columns) + " |",
    ]
    for row in table.rows:
        cells = [_escape(row.label), *(_escape(c.text) for c in row.cells)]
        lines.append("| " + " | ".join(cells) + " |")
    if table.notes:
        lines.append("")
        lines += [f"- {_escape(note)}" for note in table.notes]
    return "\n".join(lines) + "\n"
