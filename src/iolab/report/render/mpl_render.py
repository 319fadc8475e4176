"""Charts as PNG or SVG files, drawn with matplotlib (Agg, no display, no global pyplot state).

matplotlib is imported when a chart is drawn, not when iolab starts: most commands draw none.
Text is drawn as it is written (no "$...$" mathematics: a title is an author's, a name a
plan's); numeric axes carry thousands separators; the chart's source line is drawn under it.
"""

from __future__ import annotations

import io
import math
import re
import warnings
from typing import TYPE_CHECKING, Literal

from iolab.report.charts import DENSE, PANEL, Axis, Chart, plain_number

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

ImageFormat = Literal["png", "svg"]
WIDTH_IN, HEIGHT_IN, DPI = 8.0, 4.5, 120
BEST_LEGEND_CATEGORIES = 12  # more workloads in a bar chart: its legend beside it, since
# matplotlib's search for the best corner tries each against every bar and label


_GLYPH = re.compile(r"Glyph \d+ ")  # matplotlib's "Glyph 128190 (...) missing from font(s)"


def render(chart: Chart, fmt: ImageFormat = "png") -> bytes:
    """The chart as image bytes."""
    import matplotlib as mpl
    from matplotlib.figure import Figure

    mpl.rcParams["svg.hashsalt"] = "iolab"  # stable ids in SVG output
    mpl.rcParams["svg.fonttype"] = "none"  # text stays text: selectable, searchable, smaller
    mpl.rcParams["text.parse_math"] = False  # "$" is a dollar sign, not mathematics
    figure = Figure(figsize=_size(chart), dpi=DPI, layout="constrained")
    ax = figure.add_subplot()
    if chart.kind == "heat":
        _heat(figure, ax, chart)
    elif chart.kind == "bar":
        _bars(figure, ax, chart)
    else:
        _lines(ax, chart)
    ax.set_title(chart.title, fontsize=11, loc="left")
    if chart.source:
        figure.supxlabel(chart.source, fontsize=7, color="0.4", x=0.01, ha="left")
    buffer = io.BytesIO()
    metadata = {"Date": None} if fmt == "svg" else {"Software": None}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if fmt == "png":
            _laid_out(figure)
        figure.savefig(buffer, format=fmt, metadata=metadata)
    _said(chart, fmt, [str(w.message) for w in caught])
    return buffer.getvalue()


def _laid_out(figure: Figure) -> None:
    """The constrained layout computed once, then fixed: savefig would otherwise draw the
    whole figure twice (once, not shown, to lay it out), laying out every text again. Same
    pixels; PNG only (an SVG's text is measured by its own renderer)."""
    import matplotlib as mpl
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure)
    engine = figure.get_layout_engine()
    if engine is not None:
        engine.execute(figure)
    with mpl.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
        figure.set_layout_engine(None)  # none at all: "none" would still draw to lay out


def _said(chart: Chart, fmt: str, messages: list[str]) -> None:
    """matplotlib's warnings while drawing, as one for the chart: a glyph per character its
    font lacks (an emoji, a CJK name) is folded into one count."""
    glyphs = sorted({m.split(" (", 1)[0] for m in messages if _GLYPH.match(m)})
    others = list(dict.fromkeys(m for m in messages if not _GLYPH.match(m)))
    if glyphs:
        others.insert(
            0,
            f"{len(glyphs)} characters of its text are not in the {fmt.upper()} font and are "
            "drawn as boxes (the HTML page shows them)",
        )
    if others:
        warnings.warn(f"chart {chart.name}: {'; '.join(others)}", stacklevel=2)


def _size(chart: Chart) -> tuple[float, float]:
    if chart.kind == "bar":
        bars = sum(len(s.x) for s in chart.series)
        return max(WIDTH_IN, min(16.0, 0.3 * bars + 2)), HEIGHT_IN + 0.5
    if chart.kind == "heat":
        rows = max((len(chart.series)), 1)
        return WIDTH_IN, max(3.0, min(14.0, 0.4 * rows + 1.5))
    return WIDTH_IN, HEIGHT_IN * (PANEL if chart.panel else 1.0)


def _nan(values: tuple[float | None, ...]) -> list[float]:
    return [math.nan if v is None else v for v in values]


def _separated(value: float, _position: object = None) -> str:
    return plain_number(value)


def _axis(ax: Axes, axis: Axis, which: Literal["x", "y"]) -> None:
    from matplotlib.ticker import FuncFormatter, NullLocator

    is_x = which == "x"
    (ax.set_xlabel if is_x else ax.set_ylabel)(axis.label)
    if axis.log:
        (ax.set_xscale if is_x else ax.set_yscale)("log", base=axis.base)
    if not axis.ticks:  # 1,000, not 1000 (nor 10³ on a log axis)
        (ax.xaxis if is_x else ax.yaxis).set_major_formatter(FuncFormatter(_separated))
    if axis.ticks:
        values, labels = [v for v, _ in axis.ticks], [t for _, t in axis.ticks]
        (ax.set_xticks if is_x else ax.set_yticks)(values, labels)
        if axis.log:
            (ax.xaxis if is_x else ax.yaxis).set_minor_locator(NullLocator())
    if axis.start_at_zero and not axis.log:
        if is_x:
            ax.set_xlim(left=0)
        else:
            ax.set_ylim(bottom=0)
    if axis.span is not None:
        (ax.set_xlim if is_x else ax.set_ylim)(*axis.span)


def _bars(figure: Figure, ax: Axes, chart: Chart) -> None:
    from matplotlib.transforms import offset_copy

    categories = list(chart.series[0].x) if chart.series else []
    count = max(len(chart.series), 1)
    width = 0.8 / count
    highest = 0.0
    # each bar's label 3 points above it: a plain text moved by a fixed offset, which draws
    # as an annotation "offset points" would, without checking its point at every draw
    lifted = offset_copy(ax.transData, fig=figure, y=3, units="points")
    for index, series in enumerate(chart.series):
        positions = [i + (index - (count - 1) / 2) * width for i in range(len(categories))]
        errors = _nan(series.error) if any(e is not None for e in series.error) else None
        ax.bar(
            positions,
            _nan(series.y),
            width,
            yerr=errors,
            capsize=3,
            label=series.name,
            color=_color(series.color),
        )
        spread = series.error or tuple(None for _ in series.y)
        tops = [(y or 0.0) + (e or 0.0) for y, e in zip(series.y, spread, strict=True)]
        highest = max([highest, *tops])
        for position, top, text in zip(positions, tops, series.labels, strict=False):
            ax.text(
                position,
                top,
                text,
                transform=lifted,
                ha="center",
                va="bottom",
                fontsize=7,
                rotation=90,
            )
    ax.set_xticks(range(len(categories)), [str(c) for c in categories], rotation=25, ha="right")
    ax.set_xlabel(chart.x.label)
    _axis(ax, chart.y, "y")
    if highest > 0:
        ax.set_ylim(0, highest * 1.3)  # room for the rotated labels
    ax.grid(axis="y", alpha=0.3)
    if len(chart.series) > 1:
        title = chart.legend or None
        if len(categories) <= BEST_LEGEND_CATEGORIES:  # the best free corner
            ax.legend(title=title, fontsize=8)
        else:  # beside the axes: it hides no bar, and finding a corner would cost seconds
            ax.legend(title=title, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))


def _color(index: int | None) -> str | None:
    return None if index is None else f"C{index % 10}"


def _lines(ax: Axes, chart: Chart) -> None:
    for region in chart.regions:
        grey = f"{1 - region.tone * 0.8:.2f}"
        ax.axvspan(region.start, region.end, color=grey, zorder=0, label=region.label)
    for guide in chart.guides:
        ax.axhline(guide.value, color="0.27", linestyle="--", linewidth=1.2, label=guide.label)
    for series in chart.series:
        xs = [float(v) for v in series.x]
        if series.faint:
            ax.plot(
                xs,
                _nan(series.y),
                color=_color(series.color),
                lw=0.8,
                alpha=0.35,
                label="_nolegend_",
            )
            continue
        errors = _nan(series.error) if any(e is not None for e in series.error) else None
        ax.errorbar(
            xs,
            _nan(series.y),
            yerr=errors,
            marker="o" if len(xs) <= DENSE else None,
            markersize=3,
            capsize=3,
            label=series.name,
            color=_color(series.color),
            lw=1.8,
        )
    _axis(ax, chart.x, "x")
    _axis(ax, chart.y, "y")
    tops = [
        (y or 0.0) + (e or 0.0)
        for s in chart.series
        for y, e in zip(s.y, s.error or tuple(None for _ in s.y), strict=True)
    ]
    if chart.y.start_at_zero and not chart.y.log and tops and max(tops) > 0:
        ax.set_ylim(0, max(tops) * 1.1)
    ax.grid(alpha=0.3, which="major")
    if len([s for s in chart.series if not s.faint]) > 1 or chart.regions or chart.guides:
        ax.legend(fontsize=8)


def _heat(figure: Figure, ax: Axes, chart: Chart) -> None:
    import matplotlib as mpl
    from matplotlib.ticker import FuncFormatter

    columns = [str(c) for c in chart.series[0].x] if chart.series else []
    muted = [s.muted or (False,) * len(s.y) for s in chart.series]
    matrix = [
        [math.nan if m else v for v, m in zip(_nan(s.y), row, strict=True)]
        for s, row in zip(chart.series, muted, strict=True)
    ]
    low, high = chart.heat_range()
    cmap = mpl.colormaps[HEAT_MAPS[chart.colors]].with_extremes(bad="0.85")  # muted: grey
    image = ax.imshow(matrix, cmap=cmap, vmin=low, vmax=high, aspect="auto")
    for row, series in enumerate(chart.series):
        for col, (text, value) in enumerate(zip(series.labels, series.y, strict=False)):
            dark = value is not None and _dark(chart, value, low, high)
            color = "0.3" if muted[row][col] else "white" if dark else "black"
            ax.text(col, row, text, ha="center", va="center", fontsize=8, color=color)
    ax.set_xticks(range(len(columns)), columns)
    ax.set_yticks(range(len(chart.series)), [s.name for s in chart.series])
    ax.set_xlabel(chart.x.label)
    ax.set_ylabel(chart.y.label)
    beyond = chart.heat_clipped()
    above, below = any(v > high for v in beyond), any(v < low for v in beyond)
    ends = {(True, True): "both", (True, False): "max", (False, True): "min"}
    bar = figure.colorbar(image, ax=ax, extend=ends.get((above, below), "neither"))
    bar.formatter = FuncFormatter(_separated)
    bar.update_ticks()
    if chart.scale is not None:
        bar.set_label(chart.scale.label)


HEAT_MAPS = {"diverging": "RdBu", "rising": "Blues", "falling": "Oranges"}


def _dark(chart: Chart, value: float, low: float, high: float) -> bool:
    """Whether a cell's colour is dark enough for white text."""
    if chart.colors != "diverging":
        return value - low > 0.6 * (high - low)
    center = chart.center or 0.0
    return abs(value - center) > 0.6 * (high - center)
