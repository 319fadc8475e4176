"""A figure published relative to another set-up's: study E's Write Back as a percentage of
Write Through. Not a measurement: it holds no IOPS and no bytes/s, only how many times the
baseline's figure this set-up's was, as its source printed it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from iolab.model.common import Direction, FioValue

RatioMetric = Literal["iops", "bw"]


@dataclass(frozen=True)
class Ratio:
    """`setup`'s figure of one direction of a workload as a multiple of `baseline`'s (1.0: the
    same, 0.557: 55.7% of it), never a figure of its own."""

    setup: str  # the set-up the figure describes
    baseline: str  # the set-up it is relative to
    workload: str
    direction: Direction
    metric: RatioMetric  # what was divided: IOPS or bytes/s
    value: float  # a multiple of the baseline's figure
    position: int = 0  # the workload's place in its table
    options: Mapping[str, FioValue] = field(default_factory=dict)  # the workload's, as given

    @property
    def percent(self) -> float:
        return self.value * 100
