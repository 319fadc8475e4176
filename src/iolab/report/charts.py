"""The neutral chart model that both renderers draw: plotly for HTML, matplotlib for PNG/SVG.

Every axis has a title and a unit (categorical axes name what their categories are); a log
axis says so, and carries its own ticks written as plain numbers. One chart has one y axis:
different units never share one. A series' `color` is a palette index: the report gives
each set-up one index, so a set-up has the same colour on every chart. Numbers on an axis
are written as people write them (1,000, not 1000 or 1k). A chart's `source` line says where
its figures come from (iolab, the plan, the run's date, the host): both renderers draw it
under the chart, so a copied image keeps it.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from typing import Literal

ChartKind = Literal["bar", "line", "heat"]
# a heat map's colours: diverging about `center` (a change), or one hue rising with the value
# (a measure: "rising" darker where higher, as IOPS; "falling" for latency, darker where slower)
HeatColors = Literal["diverging", "rising", "falling"]
HEAT_FLOOR = 10.0  # the least half-range of a heat map's colours (percentage points)
HEAT_OUTLIER = 3.0  # a distance over this many times the median one does not stretch them
DENSE = 40  # lines of more points than this are drawn without markers
PANEL = 0.6  # a panel's height, as a share of a chart's


def slug(text: str) -> str:
    """A file-safe, anchor-safe name made from a title."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "chart"


@dataclass(frozen=True)
class Axis:
    title: str
    unit: str = ""  # "" for categorical axes
    log: bool = False
    base: int = 10
    ticks: tuple[tuple[float, str], ...] = ()  # fixed ticks: value and its label
    start_at_zero: bool = False
    span: tuple[float, float] | None = None  # a fixed range (data units, log or not), when
    # the data alone would not show it

    @property
    def label(self) -> str:
        text = f"{self.title} ({self.unit})" if self.unit else self.title
        if self.log:
            text += f", log{'₂' if self.base == 2 else '₁₀'} scale"
        return text


@dataclass(frozen=True)
class Series:
    name: str
    x: tuple[float | str, ...]
    y: tuple[float | None, ...]
    error: tuple[float | None, ...] = ()  # half-widths of 95% intervals, one per point
    labels: tuple[str, ...] = ()  # text written on each point or bar
    color: int | None = None  # a palette index, so that a set-up has one colour everywhere
    faint: bool = False  # drawn thin and light, out of the legend (one repetition of many)
    muted: tuple[bool, ...] = ()  # heat cells shown grey: not significant


@dataclass(frozen=True)
class Region:
    """A shaded stretch of the x axis, such as the warm-up of a time series."""

    start: float
    end: float
    label: str
    tone: float = 0.15  # how dark the shade is, 0 to 1


@dataclass(frozen=True)
class Guide:
    """A dashed line across the chart at a value of the y axis, such as a latency target."""

    value: float
    label: str


@dataclass(frozen=True)
class Chart:
    """One figure. For "heat", each series is one row (its name the row label), x the column
    labels, y the values, coloured on `scale` diverging at `center`."""

    name: str  # file-safe, unique within a report
    kind: ChartKind
    title: str
    x: Axis
    y: Axis
    series: tuple[Series, ...]
    regions: tuple[Region, ...] = ()
    caption: str = ""
    guides: tuple[Guide, ...] = ()  # dashed lines across, at values of the y axis
    scale: Axis | None = None
    center: float | None = None
    legend: str = "set-up"  # the legend's title on bar charts ("" for none)
    colors: HeatColors = "diverging"
    source: str = ""  # where the figures come from, drawn under the chart
    panel: bool = False  # a small panel that goes with the chart before it: drawn shorter

    def heat_range(self) -> tuple[float, float]:
        """Colour limits symmetric about `center`, so that equal distances look alike; muted
        cells (drawn grey) do not stretch them, nor do outliers (see `heat_spread`). A
        rising or falling map: from the least value to the greatest."""
        if self.colors != "diverging":
            values = self._coloured()
            low, high = min(values, default=0.0), max(values, default=1.0)
            return low, high if high > low else low + 1.0
        center = self.center or 0.0
        spread = heat_spread([abs(v - center) for v in self._coloured()])
        return center - spread, center + spread

    def heat_clipped(self) -> list[float]:
        """The coloured values beyond the colour limits (drawn at the darkest shade)."""
        low, high = self.heat_range()
        return [v for v in self._coloured() if v < low or v > high]

    def _coloured(self) -> list[float]:
        return [
            v
            for s in self.series
            for v, muted in zip(s.y, s.muted or (False,) * len(s.y), strict=True)
            if v is not None and not muted
        ]


def plain_number(value: float) -> str:
    """A number as an axis shows it: thousands separated (1,000; 12,500), smaller ones as
    they are (0.5, 20)."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:g}"


def heat_spread(distances: list[float]) -> float:
    """Half the colour range of a heat map: the largest distance from the centre that is not
    an outlier (more than HEAT_OUTLIER times the median distance; with 3 values or more), so
    that one +942% does not make every -94% pale; never under HEAT_FLOOR."""
    if len(distances) < 3:
        return max(max(distances, default=0.0), HEAT_FLOOR)
    fence = HEAT_OUTLIER * statistics.median(distances)
    kept = [d for d in distances if d <= fence]
    return max(max(kept, default=0.0), HEAT_FLOOR)
