"""Latency distributions from fio's json+ histograms (bucket value in ns -> count)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

Histogram = Mapping[int, int]
HEAD = 0.99


def merge(histograms: Iterable[Mapping[str, int] | Mapping[int, int]]) -> dict[int, int]:
    """One histogram from several (jobs, repetitions): counts added bucket by bucket."""
    total: Counter[int] = Counter()
    for histogram in histograms:
        for value, count in histogram.items():
            total[int(value)] += int(count)
    return dict(total)


def exceedance(histogram: Histogram) -> list[tuple[float, float]]:
    """The 1 - CDF curve: (latency ns, share of I/Os slower than it), the last bucket left out.

    The share is never 0 on the curve, so it can be drawn on a log axis; its smallest value
    is 1 / (number of I/Os), the resolution the histogram has. The flat head (more than 99%
    slower) starts at its last point.
    """
    ordered = sorted((v, c) for v, c in histogram.items() if c > 0)
    total = sum(count for _, count in ordered)
    points: list[tuple[float, float]] = []
    slower = total
    for value, count in ordered:
        slower -= count
        if slower <= 0:
            break
        points.append((float(value), slower / total))
    start = max((i for i, (_, share) in enumerate(points) if share >= HEAD), default=0)
    return points[start:]
