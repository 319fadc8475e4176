"""The neutral chart model that both renderers draw: plotly for HTML, matplotlib for PNG/SVG.

Every axis has a title and a unit (categorical axes name what their categories are); a log
axis says so. One chart has one y axis: different units never share one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

ChartKind = Literal["bar", "line", "heat"]


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


@dataclass(frozen=True)
class Region:
    """A shaded stretch of the x axis, such as the warm-up of a time series."""

    start: float
    end: float
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
    scale: Axis | None = None
    center: float | None = None

    def heat_range(self) -> tuple[float, float]:
        """Colour limits symmetric about `center`, so that equal distances look alike."""
        center = self.center or 0.0
        values = [v for s in self.series for v in s.y if v is not None]
        spread = max((abs(v - center) for v in values), default=1.0) or 1.0
        return center - spread, center + spread
