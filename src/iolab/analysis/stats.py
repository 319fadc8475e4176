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

import functools
import itertools
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from iolab.model import CaseMetrics, metric_for

CONFIDENCE = 0.95
UNSTABLE_COV = 0.10

# Two-sided 95% (0.975 quantile) of Student's t by degrees of freedom.
_T975: tuple[tuple[float, float], ...] = (
    (1, 12.7062),
    (1.1, 10.2768),
    (1.25, 8.0280),
    (1.5, 6.0167),
    (1.75, 4.9488),
    (2, 4.3027),
    (2.25, 3.8755),
    (2.5, 3.5747),
    (3, 3.1824),
    (3.5, 2.9401),
    (4, 2.7764),
    (5, 2.5706),
    (6, 2.4469),
    (7, 2.3646),
    (8, 2.3060),
    (9, 2.2622),
    (10, 2.2281),
    (11, 2.2010),
    (12, 2.1788),
    (13, 2.1604),
    (14, 2.1448),
    (15, 2.1314),
    (16, 2.1199),
    (17, 2.1098),
    (18, 2.1009),
    (19, 2.0930),
    (20, 2.0860),
    (21, 2.0796),
    (22, 2.0739),
    (23, 2.0687),
    (24, 2.0639),
    (25, 2.0595),
    (26, 2.0555),
    (27, 2.0518),
    (28, 2.0484),
    (29, 2.0452),
    (30, 2.0423),
    (40, 2.0211),
    (60, 2.0003),
    (120, 1.9799),
    (math.inf, 1.9600),
)


@functools.cache  # a long history asks for the same few degrees of freedom again and again
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


def t_two_sided(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with `df` (> 0) degrees of freedom: the regularized
    incomplete beta function I_x(df/2, 1/2) at x = df / (df + t²)."""
    if df <= 0:
        raise ValueError(f"degrees of freedom must be above 0, not {df}")
    if t == 0:
        return 1.0
    return _beta_regularized(df / (df + t * t), df / 2, 0.5)


def _beta_regularized(x: float, a: float, b: float) -> float:
    """I_x(a, b) by its continued fraction (modified Lentz), on the side where it converges."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1) / (a + b + 2):
        return front * _beta_fraction(x, a, b) / a
    return 1 - front * _beta_fraction(1 - x, b, a) / b


def _beta_fraction(x: float, a: float, b: float, steps: int = 300) -> float:
    tiny = 1e-300
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, steps + 1):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1) < 1e-15:
            break
    return result


def student_p(left: Sequence[float], right: Sequence[float]) -> float:
    """Student's t-test of two samples with one variance (pooled; at least three values in
    all): the two-sided p-value of a difference of their means. Exact for Gaussian noise
    alike on both sides, the null hypothesis of a change-point test; Welch's approximation is
    not, far in the tail, when one side has a few points."""
    a, b = summarize(left), summarize(right)
    df = a.n + b.n - 2
    pooled = ((a.n - 1) * a.stdev**2 + (b.n - 1) * b.stdev**2) / df
    if pooled == 0:
        return 1.0 if a.mean == b.mean else 0.0
    return t_two_sided((b.mean - a.mean) / math.sqrt(pooled * (1 / a.n + 1 / b.n)), df)


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
    mean = math.fsum(values) / len(values)
    if len(values) == 1:  # one repetition (most cells of a big sweep): no spread to work out
        return Summary(1, values[0], mean, 0.0)
    # two passes with exact float sums: statistics.stdev to the last bit or so, many times
    # faster (it works in fractions), which matters over a long history
    spread = math.fsum((v - mean) ** 2 for v in values)
    stdev = math.sqrt(spread / (len(values) - 1)) if len(values) > 1 else 0.0
    return Summary(len(values), statistics.median(values), mean, stdev)


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


def primary(options: Mapping[str, object], metrics: CaseMetrics) -> float:
    """The figure a case is judged by: its IOPS, or its bytes/s for large blocks."""
    return metrics.total_iops if metric_for(options) == "iops" else metrics.total_bw_bytes


def relative_half_width(values: Sequence[float]) -> float | None:
    """The 95% interval's half-width as a share of the mean; None below two values."""
    summary = summarize(values)
    hw = summary.half_width
    return None if hw is None or summary.mean == 0 else hw / abs(summary.mean)


def t_quantile(upper: float, df: float) -> float:
    """The `upper` quantile (above 0.5, below 1) of Student's t with `df` (> 0) degrees of
    freedom: the t whose two-sided tail t_two_sided is 2 · (1 - upper), found by bisection
    (the tail falls as t grows), to a relative 1e-10."""
    if not 0.5 < upper < 1:
        raise ValueError(f"the quantile must be between 0.5 and 1, not {upper}")
    tail = 2 * (1 - upper)
    low, high = 0.0, 1.0
    while t_two_sided(high, df) > tail:
        low, high = high, high * 2
    while high - low > 1e-10 * high:
        middle = (low + high) / 2
        low, high = (middle, high) if t_two_sided(middle, df) > tail else (low, middle)
    return (low + high) / 2


PREDICTED = 0.995  # one-sided: the bound a new run falls beyond 1 time in 200 by chance


class Prediction(NamedTuple):
    """What earlier runs' figures predict for the next run's: their mean, their standard
    deviation, and the one-sided prediction bounds mean ± t(PREDICTED, n - 1) · s · √(1 + 1/n)
    (a new observation from the same level falls below `low`, or above `high`, with
    probability 1 - PREDICTED each). A named tuple: a long history makes one per point."""

    n: int
    mean: float
    stdev: float
    low: float
    high: float


@functools.cache
def _predicted_t(df: int) -> float:
    return t_quantile(PREDICTED, df)


def predict(figures: Sequence[float]) -> Prediction:
    """The prediction bounds of the next figure from at least two earlier ones."""
    n = len(figures)
    if n < 2:
        raise ValueError("a prediction needs at least two figures")
    mean = math.fsum(figures) / n  # as summarize does, without the median it needs not
    stdev = math.sqrt(math.fsum([(v - mean) ** 2 for v in figures]) / (n - 1))
    reach = _predicted_t(n - 1) * stdev * math.sqrt(1 + 1 / n)
    return Prediction(n, mean, stdev, mean - reach, mean + reach)


def predict_ratio(figures: Sequence[float]) -> Prediction:
    """The prediction bounds of the next figure of a rate or a latency, whose run-to-run
    noise is a ratio (a loaded host makes a run half as fast, not 5,000 IOPS slower): the
    bounds predict() gives over the figures' logarithms, turned back, so a lower bound is
    never below 0; the mean and standard deviation are predict()'s. A figure at or below 0:
    predict() alone."""
    if min(figures) <= 0:
        return predict(figures)
    return predict_logs(figures, [math.log(v) for v in figures])


def predict_logs(figures: Sequence[float], logs: Sequence[float]) -> Prediction:
    """predict_ratio() of positive `figures` whose logarithms are `logs` (math.log of each,
    taken once by a caller that slides a window over a long series)."""
    n = len(figures)
    if n < 2:
        raise ValueError("a prediction needs at least two figures")
    mean = math.fsum(figures) / n  # as predict() does, each sum once
    stdev = math.sqrt(math.fsum([(v - mean) ** 2 for v in figures]) / (n - 1))
    centre = math.fsum(logs) / n
    spread = math.sqrt(math.fsum([(v - centre) ** 2 for v in logs]) / (n - 1))
    reach = _predicted_t(n - 1) * spread * math.sqrt(1 + 1 / n)
    return Prediction(n, mean, stdev, math.exp(centre - reach), math.exp(centre + reach))
