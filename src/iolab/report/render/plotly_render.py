"""Charts as interactive plotly figures, for the self-contained HTML report.

A figure is written as plotly's plain JSON (traces and layout as dicts) and handed to plotly
unvalidated: building plotly's graph objects costs about 0.1 s a chart, the dicts a few ms,
and the page is the same. plotly is imported when a page is drawn, not when iolab starts.
Numeric axes and colour bars carry thousands separators (1,000, not 1k); the chart's source
line sits under it, inside the figure, so a downloaded image keeps it.
"""

from __future__ import annotations

import html
import math
from functools import cache
from typing import Any

from iolab.names import one_line
from iolab.report.charts import DENSE, PANEL, Axis, Chart, Series, slug
from iolab.report.render import plotly_bundle
from iolab.report.render.plotly_bundle import Bundle

HEIGHT_PX = 460
CONFIG = {"displaylogo": False, "responsive": True}
# matplotlib's tab10, so that a set-up has the same colour in HTML and in PNG/SVG
PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
MUTED = "#d9d9d9"
# red (lower) - white (the same) - blue (higher), as the HTML tables colour their cells; plotly's
# own "RdBu" runs the other way, with a grey middle that would read as "not significant"
DIVERGING = [[0.0, "rgb(178,24,43)"], [0.5, "rgb(255,255,255)"], [1.0, "rgb(33,102,172)"]]
# one hue from light to dark, as matplotlib's Blues and Oranges (the PNG/SVG's)
SEQUENTIAL = {
    "rising": [[0.0, "rgb(247,251,255)"], [0.5, "rgb(107,174,214)"], [1.0, "rgb(8,48,107)"]],
    "falling": [[0.0, "rgb(255,245,235)"], [0.5, "rgb(253,141,60)"], [1.0, "rgb(127,39,4)"]],
}
SEPARATED = ","  # d3's format: thousands separated, no SI prefix ("1,000", not "1k")
SOURCE_PX = 22  # the room the source line takes under a chart
Json = dict[str, Any]


def _t(text: str) -> str:
    """Text plotly draws: plotly reads a few HTML tags in it (<b>, <a href>), so names are
    given with < > & as entities, which plotly shows as the characters; on one line."""
    return html.escape(one_line(text), quote=False)


def _values(values: tuple[Any, ...]) -> list[Any]:
    """A series' x values: categories (text) as plotly draws text, numbers as they are."""
    return [_t(v) if isinstance(v, str) else v for v in values]


def color(index: int | None) -> str | None:
    return None if index is None else PALETTE[index % len(PALETTE)]


TRACES = {"heat": frozenset({"heatmap"}), "bar": frozenset({"bar"})}
LINES = frozenset({"scatter"})


def traces(chart: Chart) -> frozenset[str]:
    """The plotly trace types the chart's figure uses."""
    return TRACES.get(chart.kind, LINES)


def library(charts: list[Chart]) -> Bundle:
    """The smallest plotly.js that draws these charts (see plotly_bundle)."""
    return plotly_bundle.bundle(frozenset().union(*(traces(c) for c in charts)))


def div(chart: Chart) -> str:
    """The chart as an HTML fragment: a div and the script that draws it (plotly.js not
    included)."""
    import plotly.io as pio  # type: ignore[import-untyped]

    config = {**CONFIG, "toImageButtonOptions": {"filename": slug(chart.name)}}
    return str(
        pio.to_html(
            figure(chart),
            full_html=False,
            include_plotlyjs=False,
            div_id=f"chart-{slug(chart.name)}",
            config=config,
            default_height=f"{_height(chart)}px",
            validate=False,
        )
    )


@cache
def _template() -> Json:
    import plotly.io as pio

    found: Json = pio.templates["plotly_white"].to_plotly_json()
    return found


def _height(chart: Chart) -> int:
    below = SOURCE_PX if chart.source else 0
    if chart.kind == "heat":
        return max(300, min(900, 36 * len(chart.series) + 160)) + below
    return round(HEIGHT_PX * (PANEL if chart.panel else 1.0)) + below


def _clean(values: dict[str, Any]) -> Json:
    """Leave out what is not set, as plotly's own objects do."""
    return {k: v for k, v in values.items() if v is not None}


def figure(chart: Chart) -> Json:
    """The chart as plotly's figure JSON: {"data": [...], "layout": {...}}."""
    layout: Json = {
        "template": _template(),
        "title": {"text": _t(chart.title), "x": 0.01, "font": {"size": 16}},
        "barmode": "group",
        "height": _height(chart),
        "margin": {"t": 60, "r": 20, "b": 60, "l": 70},
        "legend": {"title": {"text": _t(chart.legend) if chart.kind == "bar" else ""}},
        "showlegend": len([s for s in chart.series if not s.faint]) > 1 or bool(chart.regions),
        "colorway": list(PALETTE),
    }
    if chart.kind == "heat":
        data = _heat(chart)
        longest = max((len(s.name) for s in chart.series), default=0)
        # the x axis on top, its title under the chart's: the title pinned to the top edge
        # and the margin room for both, so neither is drawn over the other
        layout["margin"] = {"t": 120, "r": 20, "b": 30, "l": min(360, 40 + 7 * longest)}
        layout["title"] = {**layout["title"], "y": 1, "yanchor": "top", "pad": {"t": 12}}
        layout["xaxis"] = {"title": {"text": _t(chart.x.label)}, "side": "top"}
        layout["yaxis"] = {"title": {"text": _t(chart.y.label)}, "autorange": "reversed"}
        return {"data": data, "layout": _sourced(layout, chart, 8)}
    data = [_bar(s) if chart.kind == "bar" else _line(s) for s in chart.series]
    shapes, notes = [], []
    for region in chart.regions:
        shapes.append(
            {
                "type": "rect",
                "xref": "x",
                "yref": "paper",
                "x0": region.start,
                "x1": region.end,
                "y0": 0,
                "y1": 1,
                "fillcolor": "grey",
                "opacity": region.tone,
                "line": {"width": 0},
                "layer": "below",
            }
        )
        notes.append(
            {
                "text": _t(region.label),
                "xref": "x",
                "yref": "paper",
                "x": region.start,
                "y": 1,
                "xanchor": "left",
                "yanchor": "top",
                "showarrow": False,
            }
        )
    for guide in chart.guides:
        shapes.append(
            {
                "type": "line",
                "xref": "paper",
                "yref": "y",
                "x0": 0,
                "x1": 1,
                "y0": guide.value,
                "y1": guide.value,
                "line": {"dash": "dash", "width": 1.5, "color": "#444"},
            }
        )
        notes.append(
            {
                "text": _t(guide.label),
                "xref": "paper",
                "yref": "y",
                "x": 1,
                "y": guide.value,
                "xanchor": "right",
                "yanchor": "bottom",
                "showarrow": False,
            }
        )
    x_axis: Json = {"type": "category"} if chart.kind == "bar" else _axis(chart.x)
    x_axis["title"] = {"text": _t(chart.x.label)}
    layout.update(xaxis=x_axis, yaxis=_axis(chart.y), shapes=shapes, annotations=notes)
    return {"data": data, "layout": _sourced(layout, chart, 48)}


def _sourced(layout: Json, chart: Chart, below_axis: int) -> Json:
    """The layout with the chart's source line under the plot, `below_axis` pixels under
    the bottom of its axes (past an x axis' title), in the room the margin makes for it."""
    if not chart.source:
        return layout
    margin = {**layout["margin"], "b": layout["margin"]["b"] + SOURCE_PX}
    line = {
        "text": _t(chart.source),
        "xref": "paper",
        "yref": "paper",
        "x": 0,
        "y": 0,
        "xanchor": "left",
        "yanchor": "top",
        "yshift": -below_axis,
        "showarrow": False,
        "font": {"size": 11, "color": "#666666"},
        "align": "left",
    }
    notes = [*layout.get("annotations", []), line]
    return {**layout, "margin": margin, "annotations": notes}


def _errors(error: tuple[float | None, ...]) -> Json | None:
    if not any(e is not None for e in error):
        return None
    return {"array": [e or 0.0 for e in error], "type": "data", "visible": True}


def _bar(series: Series) -> Json:
    errors = _errors(series.error)
    return _clean(
        {
            "type": "bar",
            "name": _t(series.name),
            "x": _values(series.x),
            "y": list(series.y),
            "error_y": errors,
            "text": _values(series.labels) or None,
            "textposition": "inside" if errors else "outside",
            "insidetextanchor": "middle",
            "textangle": 0,
            "cliponaxis": False,
            "marker": _clean({"color": color(series.color)}),
        }
    )


def _line(series: Series) -> Json:
    """A line: bold with markers, or faint (one repetition of many: thin, light, no legend)."""
    line = _clean({"color": color(series.color)})
    if series.faint:
        return {
            "type": "scatter",
            "name": _t(series.name),
            "x": _values(series.x),
            "y": list(series.y),
            "mode": "lines",
            "line": {**line, "width": 1},
            "opacity": 0.35,
            "showlegend": False,
            "legendgroup": _t(series.name.rsplit(" #", 1)[0]),
        }
    return _clean(
        {
            "type": "scatter",
            "name": _t(series.name),
            "x": _values(series.x),
            "y": list(series.y),
            "error_y": _errors(series.error),
            "mode": "lines+markers" if len(series.x) <= DENSE else "lines",
            "line": {**line, "width": 2.5},
        }
    )


def _axis(axis: Axis) -> Json:
    out: Json = {"title": {"text": _t(axis.label)}}
    if axis.log:
        out["type"] = "log"
    if not axis.ticks:
        out["tickformat"] = SEPARATED
    if axis.ticks:
        out["tickvals"] = [v for v, _ in axis.ticks]
        out["ticktext"] = [_t(t) for _, t in axis.ticks]
    if axis.start_at_zero and not axis.log:  # from 0, never below (error bars may reach it)
        out["rangemode"] = "tozero"
        out["autorangeoptions"] = {"minallowed": 0}
    if axis.span is not None:  # plotly takes a log axis' range as powers of ten
        out["range"] = [math.log10(v) for v in axis.span] if axis.log else list(axis.span)
    return out


def _heat(chart: Chart) -> list[Json]:
    """The coloured cells, then the muted ones (not significant) in grey over them."""
    low, high = chart.heat_range()
    muted = [list(s.muted or (False,) * len(s.y)) for s in chart.series]
    x = [_t(str(c)) for c in chart.series[0].x]
    y = [_t(s.name) for s in chart.series]

    def pick(values: list[Any], row: int, grey: bool, empty: Any) -> list[Any]:
        return [v if muted[row][i] == grey else empty for i, v in enumerate(values)]

    traces = [
        {
            "type": "heatmap",
            "x": x,
            "y": y,
            "z": [pick(list(s.y), r, False, None) for r, s in enumerate(chart.series)],
            "text": [pick(_values(s.labels), r, False, "") for r, s in enumerate(chart.series)],
            "texttemplate": "%{text}",
            "colorscale": SEQUENTIAL.get(chart.colors, DIVERGING),
            "zmin": low,
            "zmax": high,
            "colorbar": {
                "title": {"text": _t(chart.scale.label) if chart.scale else ""},
                "tickformat": SEPARATED,
            },
            "hovertemplate": "%{y} · %{x}: %{text}<extra></extra>",
            "hoverongaps": False,
        }
    ]
    if any(any(row) for row in muted):
        traces.append(
            {
                "type": "heatmap",
                "x": x,
                "y": y,
                "z": [pick([0.0] * len(s.y), r, True, None) for r, s in enumerate(chart.series)],
                "text": [pick(_values(s.labels), r, True, "") for r, s in enumerate(chart.series)],
                "texttemplate": "%{text}",
                "textfont": {"color": "#555555"},
                "colorscale": [[0, MUTED], [1, MUTED]],
                "showscale": False,
                "hoverongaps": False,
                "hovertemplate": "%{y} · %{x}: %{text} (not significant)<extra></extra>",
            }
        )
    return traces
