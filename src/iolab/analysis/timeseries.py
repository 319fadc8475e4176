"""Per-interval series: where the warm-up ends."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

SETTLED_BAND = 0.10


def settled_from(values: Sequence[float], band: float = SETTLED_BAND) -> int | None:
    """Index of the first sample from which every later sample stays within ±band of the
    median of the series' second half; None when the series never settles (fewer than two
    samples inside the band at the end)."""
    if len(values) < 2:
        return None
    steady = statistics.median(values[len(values) // 2 :])
    if steady == 0:
        return None
    start = len(values)
    for index in range(len(values) - 1, -1, -1):
        if abs(values[index] - steady) > band * abs(steady):
            break
        start = index
    return start if len(values) - start >= 2 else None
