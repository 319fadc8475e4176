"""Change points (analysis.changepoint, E-divisive means): their hit and false-alarm rates on
seeded synthetic series with known noise (Gaussian, sd 1 around 100, 20 to 60 points), the
edge cases, and how `history` carries and shows them."""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
import pytest

from iolab.analysis import changepoint, history
from iolab.analysis.changepoint import ChangePoint, change_points
from iolab.analysis.history import RunPoint
from iolab.report.text import history_text

SERIES = 150  # per kind
NEAR = 2  # a hit is a change point within this many points of the true one


@dataclass(frozen=True)
class Synthetic:
    values: tuple[float, ...]
    at: tuple[int, ...]  # the indices where a true new level starts; none for a drift


def synthetic(kind: str, seed: int, lengths: tuple[int, int] = (20, 60)) -> Synthetic:
    """One seeded series: "none" (noise only), "2x" / "5x" (one shift of 2 or 5 noise sds,
    somewhere in the middle half), "back" (5 sds down for 5 to 10 points, then back: a
    regression later fixed), "drift" (a straight climb of 4 sds over the series)."""
    rng = random.Random(seed)
    n = rng.randint(*lengths)
    at = rng.randint(n // 4, n - n // 4)
    if kind == "drift":
        return Synthetic(tuple(100 + 4 * i / (n - 1) + rng.gauss(0, 1) for i in range(n)), ())
    if kind == "back":
        end = min(n - 3, at + rng.randint(5, 10))
        low = tuple(100 - (5 if at <= i < end else 0) + rng.gauss(0, 1) for i in range(n))
        return Synthetic(low, (at, end))
    shift = {"none": 0.0, "2x": 2.0, "5x": 5.0}[kind]
    values = tuple(100 + (shift if i >= at else 0) + rng.gauss(0, 1) for i in range(n))
    return Synthetic(values, (at,) if shift else ())


@dataclass(frozen=True)
class Rates:
    flagged: float  # share of series with at least one change point
    hits: float  # share with one within NEAR points of each true change
    extra: float  # share with a change point away from the true change


def rates(kind: str, lengths: tuple[int, int] = (20, 60), series: int = SERIES) -> Rates:
    flagged = hits = extra = 0
    for seed in range(series):
        one = synthetic(kind, seed, lengths)
        found = [c.index for c in change_points(one.values)]
        near = [i for i in found if any(abs(i - at) <= NEAR for at in one.at)]
        flagged += bool(found)
        hits += bool(one.at) and all(any(abs(i - at) <= NEAR for i in near) for at in one.at)
        extra += len(near) < len(found)
    return Rates(flagged / series, hits / series, extra / series)


@pytest.mark.slow  # a second or more: SERIES series of 60 points, each permuted
def test_no_shift_gives_few_false_alarms() -> None:
    got = rates("none")
    assert got.flagged <= 0.10, got  # each series is tested once at the 5% level


@pytest.mark.slow  # a second or more: SERIES series of 60 points, each permuted
def test_a_shift_of_five_sds_is_found_where_it_is() -> None:
    got = rates("5x")
    assert got.hits >= 0.95, got
    assert got.extra <= 0.15, got  # each side of a true split is tested again at 5%


@pytest.mark.slow  # a second or more: SERIES series of 60 points, each permuted
def test_a_shift_of_two_sds_is_found_most_of_the_time() -> None:
    got = rates("2x")
    assert got.hits >= 0.80, got
    assert got.extra <= 0.20, got


@pytest.mark.slow  # a second or more: SERIES series of 60 points, each permuted
def test_a_level_that_comes_back_is_found_at_both_ends() -> None:
    got = rates("back")
    assert got.hits >= 0.90, got
    assert got.extra <= 0.15, got


@pytest.mark.slow  # a second or more: SERIES series of 60 points, each permuted
def test_a_slow_drift_is_cut_somewhere() -> None:
    got = rates("drift")
    assert got.flagged >= 0.90, got  # no single level change: cut where halves differ most


LONG = (150, 500)  # a long history: Student's t-test above 60 points, permutations below


@pytest.mark.slow
def test_a_long_history_without_a_change_gives_no_false_alarm() -> None:
    got = rates("none", LONG, 100)
    assert got.flagged <= 0.02, got  # Bonferroni over every split: conservative


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kind", "hits", "extra"), [("2x", 0.85, 0.15), ("5x", 0.98, 0.10), ("back", 0.95, 0.10)]
)
def test_a_long_history_finds_its_changes(kind: str, hits: float, extra: float) -> None:
    got = rates(kind, LONG, 100)
    assert got.hits >= hits and got.extra <= extra, got


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ((), ()),
        ((1.0,), ()),
        ((1.0, 5.0), ()),
        ((1.0, 1.0, 9.0), ()),
        ((1.0, 1.0, 9.0, 9.0), ()),
        ((1.0, 1.0, 1.0, 9.0, 9.0), ()),  # fewer than 2 x 3 points: never split
        ((5.0,) * 6, ()),
        ((5.0,) * 60, ()),  # constant: every shuffle scores the same, p = 1
        ((0.0,) * 60, ()),
        ((1.0, 1.0, 1.0, 9.0, 9.0, 9.0), ()),  # 6 points: 1 split in 20 orders, p >= 0.05
        ((100.0,) * 10 + (50.0,) * 10, ((10, 100.0, 50.0),)),
        ((0.0,) * 10 + (7.0,) * 10, ((10, 0.0, 7.0),)),
        ((1.0,) * 10 + (2.0,) * 10 + (1.0,) * 10, ((10, 1.0, 2.0), (20, 2.0, 1.0))),
        ((1.0,) * 10 + (2.0,) * 2 + (1.0,) * 10, ()),  # held for 2 points: below min size
    ],
)
def test_edge_cases(values: tuple[float, ...], expected: tuple[tuple[int, float, float]]) -> None:
    found = change_points(values)
    assert [(c.index, c.mean_before, c.mean_after) for c in found] == list(expected)
    assert all(0 < c.p_value < 0.05 for c in found)


@pytest.mark.parametrize(
    ("point", "pct"),
    [
        (ChangePoint(3, 0.01, 100.0, 50.0), -50.0),
        (ChangePoint(3, 0.01, -10.0, -5.0), 50.0),
        (ChangePoint(3, 0.01, 0.0, 7.0), None),
    ],
)
def test_change_in_percent(point: ChangePoint, pct: float | None) -> None:
    assert point.change_pct == pct


@pytest.mark.parametrize(
    ("values", "error"),
    [
        ((1.0, float("nan"), 2.0), "finite"),
        ((1.0, float("inf")), "finite"),
    ],
)
def test_bad_values_are_refused(values: tuple[float, ...], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        change_points(values)


def test_results_are_reproducible() -> None:
    one = synthetic("2x", 7).values
    assert change_points(one) == change_points(one)
    assert change_points(one, seed=1) == change_points(one, seed=1)


@pytest.mark.parametrize("seed", range(6))
def test_a_segments_pairwise_sums_are_a_part_of_its_series(seed: int) -> None:
    """The search computes a series' pairwise sums once and reads each segment's from them:
    the same doubles, to the last bit, as the segment alone gives (ties and repeated values
    too, which a different sum would break differently)."""
    rng = random.Random(seed)
    n = rng.randint(6, 140)
    values = [round(rng.gauss(100, 3), seed % 3) + (8 if i > n // 2 else 0) for i in range(n)]
    data = np.asarray(values)[np.newaxis, :]
    whole = changepoint._within(data)
    for _ in range(20):
        start = rng.randint(0, n - 2)
        end = rng.randint(start + 1, n)
        alone = changepoint._within(data[:, start:end])
        assert np.array_equal(whole[:, start : end + 1, start : end + 1], alone)
        if end - start >= 6:  # a segment the search scores
            scored = changepoint._scored(whole[:, start : end + 1, start : end + 1], 3)
            assert np.array_equal(scored, changepoint._scores(data[:, start:end], 3))


def test_history_carries_change_points_with_their_run_and_facts() -> None:
    rng = random.Random(5)
    levels = [60_000.0] * 8 + [52_000.0] * 8
    points = [
        RunPoint(run, float(run), tuple(rng.gauss(level, 600) for _ in range(3)))
        for run, level in enumerate(levels, start=101)
    ]
    facts: dict[int, dict[str, object]] = {p.run_id: {"kernel": "6.1"} for p in points[:8]}
    facts.update({p.run_id: {"kernel": "6.8"} for p in points[8:]})
    (change,) = history.run_changes(points, facts)
    assert change.run_id == 109 and change.facts == ("kernel 6.1 -> 6.8",)
    assert change.change_pct is not None and change.half_width_pct is not None
    assert abs(change.change_pct - (-13.3)) < 2 and change.half_width_pct < 5
    found = history.RunSeries("disk", "4k", "iops", tuple(points), (), (change,))
    shown = history_text.history("nightly", [], [found])
    marked = [line for line in shown.splitlines() if "<= new level" in line]
    assert len(marked) == 1 and marked[0].split()[1] == "109", shown
    assert "changed: kernel 6.1 -> 6.8" in marked[0]
    assert '"change_points"' in history_text.history_json("nightly", [found])
