"""The neutral chart model that both renderers draw: plotly for HTML, matplotlib for PNG/SVG.

Every axis has a title and a unit (categorical axes name what their categories are); a log
axis says so, and carries its own ticks written as plain numbers. One chart has one y axis:
different units never share one. A series' `color` is a palette index: the report gives
each set-up one index, so a set-up has the same colour on every chart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

ChartKind = Literal["bar", "line", "heat"]
HEAT_FLOOR = 10.0  # the least half-range of a heat map's colours (percentage points)
DENSE = 40  # lines of more points than this are drawn without markers


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
    span: tuple[float, float] | None = None  # a fixed range, when data alone would not show it

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
    scale: Axis | None = None
    center: float | None = None
    legend: str = "set-up"  # the legend's title on bar charts ("" for none)

    def heat_range(self) -> tuple[float, float]:
        """Colour limits symmetric about `center`, so that equal distances look alike; muted
        cells (drawn grey) do not stretch them."""
        center = self.center or 0.0
        values = [
            v
            for s in self.series
            for v, muted in zip(s.y, s.muted or (False,) * len(s.y), strict=True)
            if v is not None and not muted
        ]
        spread = max((abs(v - center) for v in values), default=1.0) or 1.0
        spread = max(spread, HEAT_FLOOR)  # a small change never gets the darkest colour
        return center - spread, center + spread
