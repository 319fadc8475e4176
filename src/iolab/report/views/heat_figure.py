"""The change heat map: each changed cell of a comparison or a baseline table coloured by its
change, diverging at 0, not-significant cells greyed."""

from __future__ import annotations

from dataclasses import replace

from iolab.report import summary
from iolab.report.cells import Table
from iolab.report.charts import Axis, Chart, Series


def heat(table: Table, title: str, x_title: str, reference: str) -> Chart | None:
    """The change columns of a table (cells with a heat value, 100 + the change) as a heat
    map of the change in percent, diverging at 0; not significant cells grey. Columns are
    named after their key ("change two vs one" -> "two"), rows after the row and its set-up.
    A table shown as a summary gives the summary's ends, at most summary.HEAT_ROWS rows."""
    columns = [
        i for i in range(len(table.columns)) if any(r.cells[i].heat is not None for r in table.rows)
    ]
    rows = [r for r in table.shown_rows() if r.label != "…"]
    whole = len(table.rows)
    if len(rows) > summary.HEAT_ROWS:
        half = summary.HEAT_ENDS
        rows = rows[:half] + rows[-half:]
    rows = [r for r in rows if any(r.cells[i].heat is not None for i in columns)]
    if not rows or not columns:
        return None
    x = tuple(_change_name(table.keys[i]) for i in columns)
    series = tuple(
        Series(
            " · ".join((row.label, *row.stubs[:-1])) if len(row.stubs) > 1 else row.label,
            x,
            tuple(None if (h := row.cells[i].heat) is None else h - 100.0 for i in columns),
            labels=tuple(row.cells[i].text for i in columns),
            muted=tuple("not significant" in row.cells[i].flags for i in columns),
        )
        for row in rows
    )
    rows_title = " · ".join((table.row_header, *table.stub_headers[:-1]))
    chart = Chart(
        "ratio-heat",
        "heat",
        title,
        Axis(x_title),
        Axis(rows_title),
        series,
        caption=(
            f"Blue: higher than {reference}; red: lower; white: the same (0%). Grey: not "
            "significant (the 95% interval of the change includes 0)."
        ),
        scale=Axis(f"change vs {reference}", "%"),
        center=0.0,
    )
    return replace(chart, caption=f"{chart.caption}{_clipped(chart)}{_cut(len(series), whole)}")


def _cut(drawn: int, whole: int) -> str:
    """What the map leaves out of its table's rows, said in the caption: "" when nothing."""
    if drawn >= whole:
        return ""
    return (
        f" {drawn} of the table's {whole:,} rows: the ends of the ranking; every row is in the "
        "results table (and its CSV)."
    )


def _clipped(chart: Chart) -> str:
    """What the colour range leaves out, said in the caption: "" when nothing."""
    beyond = chart.heat_clipped()
    if not beyond:
        return ""
    _, high = chart.heat_range()
    largest = max(beyond, key=abs)
    cells = "1 cell lies" if len(beyond) == 1 else f"{len(beyond)} cells lie"
    return (
        f" Colours stop at ±{high:.0f}%: {cells} beyond (the largest {largest:+.0f}%), drawn "
        "at the darkest shade; the labels give the values."
    )


def _change_name(key: str) -> str:
    """ "change two vs one" -> "two"; "change 2 vs 1" -> "run 2"."""
    name = key.removeprefix("change ").rsplit(" vs ", 1)[0]
    return f"run {name}" if name.isdigit() else name
