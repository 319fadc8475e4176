"""Steady state by rounds, as SNIA's Solid State Storage Performance Test Specification judges it.

A set of workloads is run in rounds; one of them is tracked (the PTS IOPS test tracks 4 KiB
random writes). Steady state is reached when, over the last `window` rounds (the measurement
window, 5 in the PTS):
- the data excursion, max - min of the tracked values, is within `data_excursion` (20%) of
  their mean, and
- the slope excursion, how far the least-squares line through them moves across the window
  (|slope| x (window - 1)), is within `slope_excursion` (10%) of their mean.
The PTS stops at 25 rounds and says plainly when steady state was not reached.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from iolab.model import SteadyRounds as Rule

__all__ = ["Determination", "Rule", "determine", "slope"]


@dataclass(frozen=True)
class Determination:
    """The judgement over the last `window` rounds of the tracked values."""

    rounds: int  # rounds run so far
    window: tuple[float, ...]  # the tracked values of the measurement window
    mean: float
    data_excursion: float  # max - min, as a share of the mean
    slope_excursion: float  # the fitted line's travel across the window, as a share
    steady: bool

    @property
    def first_round(self) -> int:
        return self.rounds - len(self.window) + 1


def slope(values: Sequence[float]) -> float:
    """Least-squares slope of values against 1, 2, 3, ..."""
    xs = range(1, len(values) + 1)
    x_mean, y_mean = statistics.fmean(xs), statistics.fmean(values)
    spread = sum((x - x_mean) ** 2 for x in xs)
    return sum((x - x_mean) * (y - y_mean) for x, y in zip(xs, values, strict=True)) / spread


def determine(values: Sequence[float], rule: Rule) -> Determination | None:
    """Steady or not over the last `rule.window` values; None before a full window."""
    if len(values) < rule.window:
        return None
    window = tuple(values[-rule.window :])
    mean = statistics.fmean(window)
    if mean <= 0:
        return Determination(len(values), window, mean, float("inf"), float("inf"), False)
    data = (max(window) - min(window)) / mean
    travel = abs(slope(window)) * (rule.window - 1) / mean
    steady = data <= rule.data_excursion and travel <= rule.slope_excursion
    return Determination(len(values), window, mean, data, travel, steady)
