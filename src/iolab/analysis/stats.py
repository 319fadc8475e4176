"""Median, 95% confidence interval, coefficient of variation, and significant differences.

Method. A cell has few repetitions (typically 3 to 5): too few for a bootstrap or an
order-statistic interval of the median to reach 95% coverage (with n = 3 the widest one,
min to max, covers only 75%). So the interval is Student's t interval of the mean,

    mean ± t(0.975, n - 1) · s / √n,    s the sample standard deviation (n - 1),

and reports show the median, which one odd repetition cannot drag, with that half-width:
"median ± half-width". The coefficient of variation is s / mean; a cell whose CoV is over
10% is unstable. A difference between two cells is Welch's: the difference of the means
± t(0.975, df) · √(s₁²/n₁ + s₂²/n₂), with df from the Welch-Satterthwaite equation; it is
significant when that interval excludes 0. Either side with fewer than two repetitions
gives no interval, and significance is then unknown (None). The t quantiles come from a
table (df 1 to 30 with fractional steps below 4, then 40, 60, 120, infinity) interpolated
linearly in 1/df: exact at the entries; between them (Welch's df is fractional) a little wide,
so on the safe side: by under 1.5% below df 2, 0.3% below df 5 and 0.1% above.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from iolab.model import CaseMetrics
from iolab.units import parse_size

CONFIDENCE = 0.95
UNSTABLE_COV = 0.10

# Two-sided 95% (0.975 quantile) of Student's t by degrees of freedom.
_T975: tuple[tuple[float, float], ...] = (
    (1, 12.7062), (1.1, 10.2768), (1.25, 8.0280), (1.5, 6.0167), (1.75, 4.9488),
    (2, 4.3027), (2.25, 3.8755), (2.5, 3.5747), (3, 3.1824), (3.5, 2.9401), (4, 2.7764),
    (5, 2.5706), (6, 2.4469),
    (7, 2.3646), (8, 2.3060), (9, 2.2622), (10, 2.2281), (11, 2.2010), (12, 2.1788),
    (13, 2.1604), (14, 2.1448), (15, 2.1314), (16, 2.1199), (17, 2.1098), (18, 2.1009),
    (19, 2.0930), (20, 2.0860), (21, 2.0796), (22, 2.0739), (23, 2.0687), (24, 2.0639),
    (25, 2.0595), (26, 2.0555), (27, 2.0518), (28, 2.0484), (29, 2.0452), (30, 2.0423),
    (40, 2.0211), (60, 2.0003), (120, 1.9799), (math.inf, 1.9600),
)  # fmt: skip


def t975(df: float) -> float:
    """The 0.975 quantile of Student's t with `df` (real, at least 1) degrees of freedom."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, not {df}")
    for (lo, t_lo), (hi, t_hi) in itertools.pairwise(_T975):
        if lo <= df <= hi:
            if df == lo:
                return t_lo
            share = (1 / lo - 1 / df) / (1 / lo - (0 if math.isinf(hi) else 1 / hi))
            return t_lo + (t_hi - t_lo) * share
    return _T975[-1][1]


@dataclass(frozen=True)
class Summary:
    """The repetitions of one cell, summarised."""

    n: int
    median: float
    mean: float
    stdev: float

    @property
    def half_width(self) -> float | None:
        """Half-width of the 95% t interval of the mean; None with one repetition."""
        if self.n < 2:
            return None
        return t975(self.n - 1) * self.stdev / math.sqrt(self.n)

    @property
    def low(self) -> float | None:
        hw = self.half_width
        return None if hw is None else self.mean - hw

    @property
    def high(self) -> float | None:
        hw = self.half_width
        return None if hw is None else self.mean + hw

    @property
    def cov(self) -> float | None:
        """Coefficient of variation, s / mean; None with one repetition or a zero mean."""
        if self.n < 2 or self.mean == 0:
            return None
        return self.stdev / abs(self.mean)

    @property
    def unstable(self) -> bool:
        cov = self.cov
        return cov is not None and cov > UNSTABLE_COV


def summarize(values: Sequence[float]) -> Summary:
    """Median, mean and sample standard deviation of one cell's repetitions."""
    if not values:
        raise ValueError("no values to summarise")
    stdev = statistics.stdev(values) if len(values) > 1 else 0.0
    return Summary(len(values), statistics.median(values), statistics.fmean(values), stdev)


@dataclass(frozen=True)
class Difference:
    """`other` against `base`: Welch's interval of the difference of their means."""

    base: Summary
    other: Summary

    @property
    def delta(self) -> float:
        return self.other.mean - self.base.mean

    @property
    def half_width(self) -> float | None:
        if self.base.n < 2 or self.other.n < 2:
            return None
        va, vb = self.base.stdev**2 / self.base.n, self.other.stdev**2 / self.other.n
        if va + vb == 0:
            return 0.0
        df = (va + vb) ** 2 / (va**2 / (self.base.n - 1) + vb**2 / (self.other.n - 1))
        return t975(max(df, 1.0)) * math.sqrt(va + vb)

    @property
    def significant(self) -> bool | None:
        """True when the 95% interval excludes 0; None when either side has one repetition."""
        hw = self.half_width
        if hw is None:
            return None
        return abs(self.delta) > hw

    @property
    def ratio_pct(self) -> float | None:
        """`other` as a percentage of `base`, by medians (100 = the same)."""
        return self.other.median / self.base.median * 100 if self.base.median else None

    @property
    def change_pct(self) -> float | None:
        """The difference of the means as a percentage of the base mean."""
        return self.delta / self.base.mean * 100 if self.base.mean else None

    @property
    def half_width_pct(self) -> float | None:
        """The interval's half-width as a percentage of the base mean."""
        hw = self.half_width
        if hw is None or not self.base.mean:
            return None
        return hw / abs(self.base.mean) * 100


def compare(base: Sequence[float], other: Sequence[float]) -> Difference:
    """Two cells' repetitions compared: `other` against `base`."""
    return Difference(summarize(base), summarize(other))


IOPS_MAX_BS = 64 * 1024


def metric_for(options: Mapping[str, Any], forced: str = "auto") -> str:
    """IOPS for blocks up to 64 KiB, MB/s above, unless the user forces one."""
    if forced in ("iops", "bw"):
        return forced
    return "iops" if parse_size(str(options.get("bs", "4k"))) <= IOPS_MAX_BS else "bw"


def primary(options: Mapping[str, Any], metrics: CaseMetrics) -> float:
    """The figure a case is judged by: its IOPS, or its bytes/s for large blocks."""
    return metrics.total_iops if metric_for(options) == "iops" else metrics.total_bw_bytes


def relative_half_width(values: Sequence[float]) -> float | None:
    """The 95% interval's half-width as a share of the mean; None below two values."""
    summary = summarize(values)
    hw = summary.half_width
    return None if hw is None or summary.mean == 0 else hw / abs(summary.mean)
