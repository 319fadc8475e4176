"""Change points of a short, noisy series: where its level moves, found by E-divisive means.

Method (Matteson & James 2014, "A nonparametric approach for multiple change point analysis
of multivariate data", with alpha = 1). In a segment, the first τ points (X, m = τ of them)
against the next κ - τ (Y, k of them) are scored by the energy statistic

    Q(τ, κ) = m·k/(m+k) · ( 2/(m·k) Σ|xᵢ - yⱼ| - 1/C(m,2) Σ|xᵢ - xᵢ'| - 1/C(k,2) Σ|yⱼ - yⱼ'| ),

the weighted distance between the two sides' distributions (zero when they are alike, larger
as they move apart). The best split of a segment is the τ of the largest Q over every τ and κ
(κ need not be the segment's end, so a level that moves and comes back, a regression later
fixed, is found too), each side at least `min_size` points long. Its significance is a
permutation test: the segment's values are shuffled `permutations` times (199 by default) and
the best Q recomputed each time; the p-value is (1 + the number of shuffles scoring at least
the observed Q) / (permutations + 1), and the split stands when it is below `level` (0.05).
Then each side is searched the same way (binary segmentation) until no split stands or a side
is too short to split. The shuffles come from a seeded generator, so the same series gives
the same answer every time.

Long segments. A permutation test costs a quadratic number of distances per shuffle, 199
times: about a second for 500 points, too slow for a history of many series. A segment of
more than `PERMUTED_UP_TO` points (60) is tested instead as Apache Otava (Hunter) does, by a
Student's t test of the split found (pooled variance: exact under the null hypothesis of
Gaussian noise alike on both sides, where Welch's approximation is not, this far in the
tail), on the two sides the best Q compared
(τ points against κ - τ), its p-value multiplied by the number of splits the search could
have chosen (Bonferroni), since the split tested is the most different of them all: a
conservative test (it fires less often than its level on a series without a change), with
the power of hundreds of points on each side. Once the segments are 60 points or fewer, the
permutation test takes over, so series of up to 60 runs are tested exactly as described
above, and longer ones in milliseconds.

Limits. The test assumes that, without a change, the points are exchangeable (independent,
alike): a series that drifts slowly has no single level change, and is cut where its parts
differ most, as often as the drift is large against the noise. Each test is at the 5% level,
so a series with no change gets a false change point about one time in twenty, and every
true split opens two more tests, each of which can add a false one. Segments shorter than
2 · `min_size` are not split, so a level held for fewer than `min_size` points (3) is not a
change point, and a series of fewer than 6 points has none. Series longer than `MAX_POINTS`
are searched over their latest `MAX_POINTS` points only.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from iolab.analysis.stats import student_p

PERMUTATIONS = 199
LEVEL = 0.05
MIN_SIZE = 3
SEED = 24
MAX_POINTS = 500
PERMUTED_UP_TO = 60  # longer segments: Student's t-test, Bonferroni-corrected (see above)
_CELLS = 1_000_000  # distance-matrix cells per batch of shuffles (8 MB of float64)

Floats = NDArray[np.float64]


@dataclass(frozen=True)
class ChangePoint:
    """Where a new level starts: `index` is the first point of the segment after the change."""

    index: int
    p_value: float
    mean_before: float  # the mean of the segment before (back to the previous change point)
    mean_after: float  # the mean of the segment after (up to the next change point)

    @property
    def change_pct(self) -> float | None:
        """The change of the mean, as a percentage of the mean before; None when that is 0."""
        if self.mean_before == 0:
            return None
        return (self.mean_after - self.mean_before) / abs(self.mean_before) * 100


@dataclass(frozen=True)
class _Split:
    index: int  # absolute index of the first point after the split
    p_value: float


def change_points(
    values: Sequence[float],
    *,
    permutations: int = PERMUTATIONS,
    level: float = LEVEL,
    min_size: int = MIN_SIZE,
    seed: int = SEED,
) -> tuple[ChangePoint, ...]:
    """The series' change points, in order. Fewer than 2 · `min_size` points: none.

    `values` must be finite. Longer than MAX_POINTS: only the latest MAX_POINTS are searched
    (indices still count from the series' start)."""
    if min_size < 2:  # a side needs two points for its within-side distances
        raise ValueError(f"min_size must be at least 2, not {min_size}")
    data = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(data)):
        raise ValueError("change points need finite values")
    offset = max(0, len(data) - MAX_POINTS)
    data = data[offset:]
    rng = random.Random(seed)
    within = _within(data[np.newaxis, :]) if len(data) >= 2 * min_size else data[np.newaxis]
    found = sorted(
        _search(data, within, 0, len(data), permutations, level, min_size, rng),
        key=lambda s: s.index,
    )
    return _described(data, found, offset)


def _search(
    data: Floats,
    within: Floats,
    start: int,
    end: int,
    permutations: int,
    level: float,
    min_size: int,
    rng: random.Random,
) -> list[_Split]:
    """The splits that stand in data[start:end], recursing into both sides of each;
    `within`: the data's pairwise sums (_within), of which each segment's are a part."""
    if end - start < 2 * min_size:
        return []
    segment = data[start:end]
    scores = _scored(within[:, start : end + 1, start : end + 1], min_size)[0]
    best, far = (int(i) for i in np.unravel_index(int(np.argmax(scores)), scores.shape))
    if len(segment) <= PERMUTED_UP_TO:
        p_value = _p_value(segment, float(scores.max()), permutations, level, min_size, rng)
    else:  # Student's t on the two sides scored, for every split the search could choose
        tau, kappa = min_size + best, 2 * min_size + far
        tried = int(np.count_nonzero(np.isfinite(scores)))
        p_value = min(1.0, student_p(segment[:tau].tolist(), segment[tau:kappa].tolist()) * tried)
    if p_value >= level:
        return []
    cut = start + min_size + int(best)
    left = _search(data, within, start, cut, permutations, level, min_size, rng)
    right = _search(data, within, cut, end, permutations, level, min_size, rng)
    return [*left, _Split(cut, p_value), *right]


def _scores(batch: Floats, min_size: int) -> Floats:
    """Q(τ, κ) for each row of `batch` (shape: rows x n): the first τ points against the
    next κ - τ, each side at least min_size long. Shape: rows x (τ from min_size to
    n - min_size) x (κ from 2·min_size to n), -inf where κ - τ < min_size. Vectorised with
    prefix sums of the pairwise distances: O(rows · n²)."""
    return _scored(_within(batch), min_size)


def _within(batch: Floats) -> Floats:
    """within[r, a, b]: Σ |xᵢ - xⱼ| over a <= i < j < b of row r of `batch` (shape: rows x
    (n + 1) x (n + 1)). A segment's own is a part of it, to the last bit: within[:, s:e + 1,
    s:e + 1] is what the segment data[s:e] alone gives, since every sum over pairs outside
    it only ever added exact zeros (so a series' segments share one, computed once)."""
    rows, n = batch.shape
    upper = np.abs(batch[:, :, np.newaxis] - batch[:, np.newaxis, :])
    upper *= _pairs(n)  # each pair once: i < j
    within = np.zeros((rows, n + 1, n + 1))
    np.cumsum(upper, axis=2, out=within[:, :n, 1:])  # [i, b]: Σ over j < b
    flipped = within[:, ::-1]
    np.cumsum(flipped, axis=1, out=flipped)  # [a, b]: Σ over i >= a as well
    return within


def _scored(within: Floats, min_size: int) -> Floats:
    """Q(τ, κ) from a segment's pairwise sums (_within: rows x (n + 1) x (n + 1))."""
    n = within.shape[1] - 1
    taus, kappas = slice(min_size, n - min_size + 1), slice(2 * min_size, n + 1)
    both, left, right, mask = _weights(n, min_size)
    # Q = w·(2·between/(τk) - left/C(τ,2) - right/C(k,2)), between = all - left - right
    scores: Floats = within[:, taus, kappas] * right
    scores += within[:, np.newaxis, 0, kappas] * both
    scores += within[:, 0, taus, np.newaxis] * left
    scores += mask
    return scores


@functools.lru_cache(maxsize=64)
def _pairs(n: int) -> Floats:
    """1 above the diagonal of an n x n matrix (each pair i < j once), 0 elsewhere."""
    return np.triu(np.ones((n, n)), 1)


@functools.lru_cache(maxsize=64)
def _weights(n: int, min_size: int) -> tuple[Floats, Floats, Floats, Floats]:
    """The factors of Q(τ, κ) on the sum of all pairs in the first κ points, on the pairs in
    the first τ, and on the pairs from τ to κ, and what to add: 0, or -inf where
    κ - τ < min_size (τ x κ each)."""
    tau = np.arange(min_size, n - min_size + 1, dtype=np.float64)[:, np.newaxis]
    k = np.arange(2 * min_size, n + 1, dtype=np.float64)[np.newaxis, :] - tau
    short = k < min_size
    k = np.where(short, 2.0, k)  # any size that divides safely: masked below
    weight = tau * k / (tau + k)
    across = 2 / (tau * k) * weight
    left = -(across + weight / (tau * (tau - 1) / 2))
    right = -(across + weight / (k * (k - 1) / 2))
    mask = np.where(short, -np.inf, 0.0)
    return across, left, right, mask


def _p_value(
    segment: Floats,
    observed: float,
    permutations: int,
    level: float,
    min_size: int,
    rng: random.Random,
) -> float:
    """The permutation test's p-value of the best split scoring `observed`. Shuffles run in
    batches; once enough of them score at least `observed` that the split cannot stand, the
    rest are skipped (the p-value is then estimated from the shuffles done, and is >= level)."""
    generator = np.random.default_rng(rng.getrandbits(64))
    n = len(segment)
    batch_size = max(1, min(permutations, _CELLS // (n * n)))
    enough = max(0, math.ceil(level * (permutations + 1) - 1e-9) - 1)  # then p >= level
    higher, done = 0, 0
    tolerance = 1e-9 * abs(observed)  # the same split, summed in another order, is a tie
    while done < permutations and higher < enough:
        rows = min(batch_size, permutations - done)
        shuffled = generator.permuted(np.tile(segment, (rows, 1)), axis=1)
        best = _scores(shuffled, min_size).max(axis=(1, 2))
        higher += int(np.count_nonzero(best >= observed - tolerance))
        done += rows
    return (1 + higher) / (done + 1)


def _described(data: Floats, found: Sequence[_Split], offset: int) -> tuple[ChangePoint, ...]:
    """Each split with the means of the segments on either side of it."""
    if not found:
        return ()
    bounds = [0, *(s.index for s in found), len(data)]
    means = [float(np.mean(data[a:b])) for a, b in itertools.pairwise(bounds)]
    return tuple(
        ChangePoint(s.index + offset, s.p_value, means[i], means[i + 1])
        for i, s in enumerate(found)
    )
