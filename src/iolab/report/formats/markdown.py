"""Tables and whole reports as GitHub-flavoured Markdown; charts as image links."""

from __future__ import annotations

import re
from collections.abc import Mapping

from iolab.names import one_line
from iolab.report.cells import Table
from iolab.report.charts import Chart
from iolab.report.document import Document, Notes, Section

HTML_ONLY = ("volatile",)  # Notes left to the HTML page's details


# What Markdown would read as markup or raw HTML: escaped with a backslash, or as an entity.
_SPECIAL = re.compile(r"[\\`*_\[\]|~<>&]")
# "]" ends a link's text only right before "(", "[" or ":": elsewhere it stays as it is.
_LINK_AFTER = ("(", "[", ":")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_ORDERED = re.compile(r"^(\d{1,9})([.)])")  # "1." or "1)" first: an ordered list
# `command` in a note: a code span the report means (a set-up's commands); alone between single
# backticks, it is kept, since a renderer shows a code span's text as it is, HTML included.
_CODE = re.compile(r"(?<!`)`([^`]+)`(?!`)")


def _escape(text: str, brackets: bool = False, code: bool = False) -> str:
    """Text as Markdown shows it, literally, inside a line: no HTML (< > & as entities), no
    emphasis, code, link or strike-through, no cell break (|), on one line (line breaks as
    spaces, controls as escapes). `brackets`: every [ and ] escaped (an image's text), not
    only those a link needs; `code`: `a span` stays a code span (in a note)."""
    flat = one_line(text)
    parts, last = [], 0
    for found in _CODE.finditer(flat) if code else ():
        parts += [_plain(flat[last : found.start()], brackets), found.group(0)]
        last = found.end()
    return "".join([*parts, _plain(flat[last:], brackets)])


def _plain(text: str, brackets: bool) -> str:
    """Text with every character Markdown reads as markup escaped; but a "_" inside a word,
    and a [ or ] that makes no link (all of them when `brackets`), stay as they are."""

    def one(found: re.Match[str]) -> str:
        char, at = found.group(0), found.start()
        if char == "_" and _inside_word(text, at):
            return char
        if char == "[" and not brackets:
            return char  # a link needs its "](" too, which is escaped
        if char == "]" and not brackets and text[at + 1 : at + 2] not in _LINK_AFTER:
            return char
        return _ENTITIES.get(char, "\\" + char)

    return _SPECIAL.sub(one, text)


def _inside_word(text: str, at: int) -> bool:
    return 0 < at < len(text) - 1 and text[at - 1].isalnum() and text[at + 1].isalnum()


def _item(text: str, code: bool = True) -> str:
    """Text that starts a line (a list item, a heading): escaped, and what would make a
    heading, list or rule of it when first ("#", "-", "+", "=", "1.") escaped too, as is a
    last "#" (which would close a heading). `code`: as _escape's (a list item's, not a
    heading's)."""
    shown = _escape(text, code=code).lstrip()
    if shown and shown[0] in "#+=-":
        shown = "\\" + shown
    shown = _ORDERED.sub(r"\1\\\2", shown)
    return shown[:-1] + "\\#" if shown.endswith("#") else shown


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
        lines += [f"- {_item(note)}" for note in table.shown_notes()]
    return lines


def render_document(document: Document, images: Mapping[str, str] | None = None) -> str:
    """The report; `images` maps a chart's name to the image path to link. Without it (output
    to stdout), charts are listed by title with how to get them."""
    lines = [f"# {_item(document.title, code=False)}", ""]
    lines += [f"- {_item(line)}" for line in document.subtitle]
    missing = 0
    for section in document.sections:
        shown = [b for b in section.blocks if not isinstance(b, Chart) or images is not None]
        missing += len(section.blocks) - len(shown)
        if not shown:
            continue
        lines += ["", f"## {_item(section.title, code=False)}"]
        for block in shown:
            if isinstance(block, Table):
                if block.title != section.title:
                    lines += ["", f"### {_item(block.title, code=False)}"]
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
        lines += [f"### {_item(notes.title, code=False)}", ""]
    return lines + [f"- {_item(item)}" for item in notes.items]


def _chart(chart: Chart, path: str) -> list[str]:
    lines = ["", f"![{_escape(chart.title, brackets=True)}]({path})"]
    if chart.caption:
        lines += ["", f"_{_escape(chart.caption)}_"]
    if chart.source:
        lines += ["", _escape(chart.source)]
    return lines
