"""The report as one self-contained HTML page: inline CSS, plotly.js inlined once (the smallest
bundle that draws its charts, compressed: see render.plotly_bundle), no URL fetched, so it
works offline; tables (ratios coloured, diverging at 100%), interactive
charts, warnings and the recorded environment."""

from __future__ import annotations

import html

from iolab.names import shown
from iolab.report.cells import Cell, Table
from iolab.report.charts import Chart, slug
from iolab.report.document import Document, Notes
from iolab.report.render import plotly_bundle, plotly_render
from iolab.report.render.plotly_bundle import Bundle
from iolab.version import __version__

CSS = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0;
       color: #1d2329; background: #fff; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 32px 64px; }
h1 { font-size: 1.6em; margin: 0 0 8px; } h2 { margin-top: 40px; border-bottom: 1px solid #dde;
  padding-bottom: 4px; } h3 { margin: 24px 0 8px; font-size: 1.1em; }
ul.meta { color: #555; margin: 0; padding-left: 18px; font-size: 0.92em; }
nav { margin: 16px 0; font-size: 0.92em; } nav a { margin-right: 14px; }
table.data { border-collapse: collapse; margin: 8px 0; font-variant-numeric: tabular-nums; }
table.data th, table.data td { border: 1px solid #dde; padding: 4px 10px; }
table.data th { background: #f4f6f8; text-align: left; }
table.data td.num { text-align: right; white-space: nowrap; }
td.unstable { outline: 2px solid #e0a800; outline-offset: -2px; }
td.ns { color: #555; font-style: italic; background: #ececec; }
td.warned { outline: 2px dashed #b00020; outline-offset: -2px; }
tr.gap th, tr.gap td { text-align: center; color: #777; background: #fafafa; }
.table-scroll { overflow-x: auto; }
figure.chart { margin: 18px 0 28px; } figcaption { color: #555; font-size: 0.9em; }
ul.notes li { margin: 2px 0; } ul.warnings li { color: #7a4b00; }
details { margin: 8px 0; } pre { background: #f6f8fa; padding: 10px; overflow-x: auto;
  font-size: 0.85em; }
footer { color: #777; font-size: 0.85em; margin-top: 48px; }
"""
BLUE, RED, WHITE = (33, 102, 172), (178, 24, 43), (255, 255, 255)


def _e(text: str) -> str:
    """Text as HTML shows it: < > & " ' as entities; a control or bidi character (from a
    database made before names had a rule) as a visible escape."""
    return html.escape(shown(text, keep="\n\t"), quote=True)


def render_document(document: Document) -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(document.title)}</title>",
        f"<style>{CSS}</style>",
    ]
    charts = document.charts()
    library = plotly_render.library(charts) if charts else None
    if library:
        parts.append(f"<script>{plotly_bundle.loader(library)}</script>")
    parts += ["</head><body><main>", f"<h1>{_e(document.title)}</h1>", '<ul class="meta">']
    parts += [f"<li>{_e(line)}</li>" for line in document.subtitle]
    parts.append("</ul>")
    parts.append(
        "<nav>"
        + "".join(f'<a href="#{slug(s.title)}">{_e(s.title)}</a>' for s in document.sections)
        + "</nav>"
    )
    for section in document.sections:
        parts.append(f'<section id="{slug(section.title)}"><h2>{_e(section.title)}</h2>')
        for block in section.blocks:
            if isinstance(block, Table):
                parts.append(_table(block, block.title != section.title))
            elif isinstance(block, Notes):
                parts.append(_notes(block, section.title))
            else:
                parts.append(_chart(block))
        if section.title == "Environment" and document.environments:
            parts += [
                f"<details><summary>{_e(heading)} (as recorded)</summary><pre>{_e(text)}</pre>"
                "</details>"
                for heading, text in document.environments
            ]
        parts.append("</section>")
    parts.append(f"<footer>{_e(_made_by(library))}</footer></main></body></html>")
    return "\n".join(parts) + "\n"


def _made_by(library: Bundle | None) -> str:
    if library is None:
        return f"Made by iolab {__version__}."
    return (
        f"Made by iolab {__version__}; charts drawn by plotly.js {library.version} "
        f"({library.name} bundle)."
    )


def _notes(notes: Notes, section_title: str) -> str:
    kind = "warnings" if notes.name == "notes" else "notes"
    items = "".join(f"<li>{_e(item)}</li>" for item in notes.items)
    if notes.name == "volatile":  # folded away: UUIDs, times, logs
        return (
            f'<details data-notes="volatile"><summary>{_e(notes.title)} ({len(notes.items)})'
            f'</summary><ul class="notes">{items}</ul></details>'
        )
    heading = f"<h3>{_e(notes.title)}</h3>" if notes.title != section_title else ""
    return f'{heading}<ul class="notes {kind}" data-notes="{_e(notes.name)}">{items}</ul>'


def _chart(chart: Chart) -> str:
    caption = f"<figcaption>{_e(chart.caption)}</figcaption>" if chart.caption else ""
    return (
        f'<figure class="chart" data-chart="{_e(chart.name)}">'
        f"{plotly_render.div(chart)}{caption}</figure>"
    )


def _table(table: Table, heading: bool = True) -> str:
    shown = table.shown_rows()
    spread = max(
        (
            abs(c.heat - 100)
            for r in shown
            for c in r.cells
            if c.heat is not None and "not significant" not in c.flags
        ),
        default=0,
    )
    head = [table.row_header, *table.stub_headers, *table.columns]
    rows = ["<tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr>"]
    for row in shown:
        if row.label == "…" and table.shown is not None:
            rows.append(f'<tr class="gap"><td colspan="{len(head)}">…</td></tr>')
            continue
        cells = [f"<th>{_e(row.label)}</th>", *(f"<td>{_e(s)}</td>" for s in row.stubs)]
        cells += [_cell(cell, spread) for cell in row.cells]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    notes = "".join(f"<li>{_e(n)}</li>" for n in table.shown_notes())
    return (
        (f"<h3>{_e(table.title)}</h3>" if heading else "") + '<div class="table-scroll">'
        f'<table class="data" data-table="{_e(table.name)}">{"".join(rows)}</table></div>'
        + (f'<ul class="notes">{notes}</ul>' if notes else "")
    )


def _cell(cell: Cell, spread: float) -> str:
    classes = ["num"] if cell.value is not None else []
    if "unstable" in cell.flags:
        classes.append("unstable")
    if "not significant" in cell.flags:
        classes.append("ns")
    if cell.warnings:
        classes.append("warned")
    style = ""
    if cell.heat is not None and spread > 0 and "not significant" not in cell.flags:
        style = f' style="background:{_diverging((cell.heat - 100) / spread)}"'
    title = _tooltip(cell)
    attrs = f' class="{" ".join(classes)}"' if classes else ""
    attrs += f' title="{_e(title)}"' if title else ""
    return f"<td{attrs}{style}>{_e(cell.text)}</td>"


def _tooltip(cell: Cell) -> str:
    parts = []
    summary = cell.summary
    if summary is not None and summary.n > 1:
        parts.append(f"n = {summary.n}, mean {summary.mean:,.4g}")
        if summary.low is not None and summary.high is not None:
            parts.append(f"95% CI of the mean {summary.low:,.4g} to {summary.high:,.4g}")
        if summary.cov is not None:
            parts.append(f"CoV {summary.cov * 100:.1f}%")
    if "unstable" in cell.flags:
        parts.append("unstable: CoV over 10%")
    if "not significant" in cell.flags:
        parts.append("not significant: the 95% interval of the change includes 0")
    if "clamped" in cell.flags:
        parts.append("fio's percentile was above the maximum: shown as the maximum")
    parts += [f"{w.code}: {w}" for w in cell.warnings]
    return "; ".join(parts)


def _diverging(t: float) -> str:
    """White at 0, towards blue for positive and red for negative, |t| up to 1."""
    t = max(-1.0, min(1.0, t))
    end = BLUE if t > 0 else RED
    share = abs(t) * 0.75
    r, g, b = (round(w + (e - w) * share) for w, e in zip(WHITE, end, strict=True))
    return f"rgb({r},{g},{b})"
