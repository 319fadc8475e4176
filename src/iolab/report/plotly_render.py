"""Charts as interactive plotly figures, for the self-contained HTML report.

plotly is imported when a page is drawn, not when iolab starts: most commands draw none.
"""

from __future__ import annotations

from typing import Any

from iolab.report.charts import Axis, Chart

HEIGHT_PX = 460
CONFIG = {"displaylogo": False, "responsive": True}


def plotly_js() -> str:
    """plotly.js itself, to inline once per page (no CDN, works offline)."""
    import plotly.offline  # type: ignore[import-untyped]

    return str(plotly.offline.get_plotlyjs())


def div(chart: Chart) -> str:
    """The chart as an HTML fragment: a div and the script that draws it (plotly.js not
    included)."""
    import plotly.io as pio  # type: ignore[import-untyped]

    config = {**CONFIG, "toImageButtonOptions": {"filename": chart.name}}
    return str(
        pio.to_html(
            figure(chart),
            full_html=False,
            include_plotlyjs=False,
            div_id=f"chart-{chart.name}",
            config=config,
            default_height=f"{_height(chart)}px",
        )
    )


def _height(chart: Chart) -> int:
    if chart.kind == "heat":
        return max(300, min(900, 36 * len(chart.series) + 160))
    return HEIGHT_PX


def figure(chart: Chart) -> Any:
    import plotly.graph_objects as go  # type: ignore[import-untyped]

    fig = go.Figure()
    if chart.kind == "heat":
        _heat(fig, chart)
    else:
        for series in chart.series:
            errors = _errors(series.error)
            if chart.kind == "bar":
                fig.add_trace(
                    go.Bar(
                        name=series.name,
                        x=list(series.x),
                        y=list(series.y),
                        error_y=errors,
                        text=list(series.labels) or None,
                        textposition="inside" if errors else "outside",
                        insidetextanchor="middle",
                        textangle=0,
                        cliponaxis=False,
                    )
                )
            else:
                fig.add_trace(
                    go.Scatter(
                        name=series.name,
                        x=list(series.x),
                        y=list(series.y),
                        error_y=errors,
                        mode="lines+markers",
                    )
                )
        for region in chart.regions:
            fig.add_vrect(
                x0=region.start,
                x1=region.end,
                fillcolor="grey",
                opacity=0.15,
                line_width=0,
                layer="below",
                annotation_text=region.label,
                annotation_position="top left",
            )
        fig.update_xaxes(**_axis(chart.x))
        fig.update_yaxes(**_axis(chart.y))
    fig.update_layout(
        title={"text": chart.title, "x": 0.01, "font": {"size": 16}},
        template="plotly_white",
        barmode="group",
        height=_height(chart),
        margin={"t": 60, "r": 20, "b": 60, "l": 70},
        legend={"title": {"text": "set-up" if chart.kind == "bar" else ""}},
        showlegend=len(chart.series) > 1 or bool(chart.regions),
    )
    return fig


def _errors(error: tuple[float | None, ...]) -> dict[str, Any] | None:
    if not any(e is not None for e in error):
        return None
    return {"type": "data", "array": [e or 0.0 for e in error], "visible": True}


def _axis(axis: Axis) -> dict[str, Any]:
    out: dict[str, Any] = {"title": {"text": axis.label}}
    if axis.log:
        out["type"] = "log"
    if axis.ticks:
        out["tickvals"] = [v for v, _ in axis.ticks]
        out["ticktext"] = [t for _, t in axis.ticks]
    if axis.start_at_zero and not axis.log:
        out["rangemode"] = "tozero"
    return out


def _heat(fig: Any, chart: Chart) -> None:
    import plotly.graph_objects as go

    low, high = chart.heat_range()
    fig.add_trace(
        go.Heatmap(
            z=[list(s.y) for s in chart.series],
            x=[str(c) for c in chart.series[0].x],
            y=[s.name for s in chart.series],
            text=[list(s.labels) for s in chart.series],
            texttemplate="%{text}",
            colorscale="RdBu",
            zmin=low,
            zmax=high,
            colorbar={"title": {"text": chart.scale.label if chart.scale else ""}},
            hovertemplate="%{y} · %{x}: %{text}<extra></extra>",
        )
    )
    fig.update_xaxes(title={"text": chart.x.label}, side="top")
    fig.update_yaxes(title={"text": chart.y.label}, autorange="reversed")
