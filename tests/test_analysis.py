"""Statistics, latency curves, warm-up and environment differences, on values worked by hand."""

from __future__ import annotations

import math
import statistics

import pytest

from iolab.analysis import environment, latency, timeseries
from iolab.analysis.stats import Difference, compare, student_p, summarize, t975, t_two_sided
from iolab.report.cells import change_cell, stat_cell
from iolab.units import latency_unit


@pytest.mark.parametrize(
    ("df", "expected"),
    [(1, 12.7062), (2, 4.3027), (4, 2.7764), (30, 2.0423), (35, 2.0301), (1e9, 1.96)],
)
def test_t_quantiles_match_published_tables(df: float, expected: float) -> None:
    assert t975(df) == pytest.approx(expected, rel=2e-4)


def test_t_quantiles_between_entries_err_on_the_wide_side() -> None:
    # exact values from numerical integration of Student's t density
    for df, exact in ((1.37, 6.8851), (2.7, 3.3921), (3.8, 2.8350), (7.3, 2.3451)):
        assert exact <= t975(df) <= exact * 1.015
    with pytest.raises(ValueError, match="at least 1"):
        t975(0.5)


def test_summary_of_three_repetitions() -> None:
    s = summarize([10.0, 14.0, 12.0])
    assert (s.n, s.median, s.mean, s.stdev) == (3, 12.0, 12.0, 2.0)
    hw = 4.3027 * 2 / math.sqrt(3)
    assert s.half_width == pytest.approx(hw, rel=1e-4)
    assert s.low == pytest.approx(12 - hw, rel=1e-4) and s.high == pytest.approx(12 + hw, rel=1e-4)
    assert s.cov == pytest.approx(1 / 6)
    assert s.unstable  # CoV 16.7% > 10%
    assert not summarize([100.0, 101.0, 99.0]).unstable


def test_one_repetition_has_no_interval() -> None:
    s = summarize([5.0])
    assert (s.n, s.median, s.mean, s.stdev) == (1, 5.0, 5.0, 0.0)
    assert s.half_width is None and s.cov is None and not s.unstable
    assert compare([5.0], [6.0]).significant is None
    with pytest.raises(ValueError, match="no values"):
        summarize([])


def test_welch_difference_by_hand() -> None:
    diff = compare([10.0, 12.0, 14.0], [20.0, 22.0, 24.0])
    # equal variances 4/3 each: se = sqrt(8/3), Welch df = 4, t = 2.7764
    assert diff.delta == 10.0
    assert diff.half_width == pytest.approx(2.7764 * math.sqrt(8 / 3), rel=1e-4)
    assert diff.significant is True
    assert diff.change_pct == pytest.approx(10 / 12 * 100)
    assert diff.ratio_pct == pytest.approx(22 / 12 * 100)
    close = compare([100.0, 110.0, 90.0], [102.0, 95.0, 108.0])
    assert close.significant is False
    assert abs(close.delta) < (close.half_width or 0)
    same = Difference(summarize([7.0, 7.0]), summarize([7.0, 7.0]))
    assert same.half_width == 0.0 and same.significant is False


def test_cells_read_median_plus_minus_half_width_and_mark_instability() -> None:
    cell = stat_cell([10.0, 14.0, 12.0], "MB/s", "bw")
    assert cell.text == "12.0 ± 4.97 ⚠" and cell.flags == ("unstable",)
    steady = stat_cell([1000.0, 1010.0, 990.0], "IOPS", "iops")
    assert steady.text == "1,000 ± 25" and steady.flags == ()
    assert stat_cell([1234.0], "IOPS", "iops").text == "1,234"
    ns = change_cell([100.0, 110.0, 90.0], [102.0, 95.0, 108.0])
    assert ns.text.startswith("+1.7% ± ") and ns.text.endswith(" n.s.")
    assert "not significant" in ns.flags and ns.heat == pytest.approx(101.6667, abs=1e-4)
    sig = change_cell([10.0, 10.5, 9.5], [20.0, 20.5, 19.5])
    assert sig.text == "+100.0% ± 11.3%" and sig.flags == ()  # 2.7764 · √(2 · 0.25 / 3) = 1.13
    assert change_cell([], [1.0]).text == "n/a"


def test_exceedance_from_a_histogram() -> None:
    assert latency.exceedance({100: 1, 200: 2, 300: 1}) == [(100.0, 0.75), (200.0, 0.25)]
    merged = latency.merge([{"100": 1, "200": 1}, {100: 2}])
    assert merged == {100: 3, 200: 1}
    # the flat head (more than 99% of I/Os slower) is cut to its last point
    head = latency.exceedance({1: 1, 2: 1, 3: 998, 4: 2})
    assert head[0][0] == 2.0 and all(share < 1 for _, share in head)


def test_latency_unit_is_chosen_from_the_data() -> None:
    assert latency_unit([50_000, 80_000, 2_000_000]) == ("µs", 1e3)
    assert latency_unit([1_500_000, 3_000_000]) == ("ms", 1e6)


def test_warm_up_ends_where_the_series_settles() -> None:
    assert timeseries.settled_from([100, 500, 1000, 1010, 990, 1000]) == 2
    assert timeseries.settled_from([1000, 1000, 1000]) == 0
    assert timeseries.settled_from([100, 1000, 100, 1000]) is None
    assert timeseries.settled_from([5]) is None


def test_environment_differences_name_the_facts() -> None:
    a = {"fio_version": "fio-3.33", "kernel": "6.1", "devices": {"sda": {"model": "x"}}}
    b = {"fio_version": "fio-3.36", "kernel": "6.1", "devices": {"sda": {"model": "y"}}}
    found = environment.differences("host", [a, b])
    assert [(d.key, d.values) for d in found] == [("fio_version", ("fio-3.33", "fio-3.36"))]
    nested = environment.differences("set-up 'x'", [{"device": {"firmware": "1"}}, {}])
    assert [(d.key, d.values) for d in nested] == [("device.firmware", ("1", "—"))]


def test_mixed_versions_names_what_differs() -> None:
    from iolab.analysis import comparison

    same = [
        (1, {"fio_version": "fio-3.33", "kernel": "6.1"}),
        (2, {"fio_version": "fio-3.33", "kernel": "6.1"}),
    ]
    assert comparison.mixed_versions(same) is None
    other = [*same[:1], (2, {"fio_version": "fio-3.36", "kernel": "6.1"})]
    found = comparison.mixed_versions(other)
    assert found is not None and found.code == "mixed-versions"
    assert "fio run 1: fio-3.33, run 2: fio-3.36" in found.message


def test_few_repeats_flags_a_significant_change_within_the_noise_floor() -> None:
    from iolab.analysis import comparison
    from iolab.analysis.stats import compare, summarize

    noisy = [100.0, 112.0, 90.0]  # this machine's cells vary by about 11%
    diff = compare([100.0, 100.5, 99.5], [95.0, 95.5, 94.5])  # -5%, tight: "significant"
    assert diff.significant
    found = comparison.few_repeats([summarize(noisy)], [diff])
    assert found is not None and found.code == "few-repeats" and "3 repetitions" in found.message
    big = compare([100.0, 101.0, 99.0], [50.0, 51.0, 49.0])
    assert comparison.few_repeats([summarize([100.0, 101.0, 99.0])], [big]) is None, (
        "a 50% drop on a quiet machine is resolvable"
    )
    resolvable = comparison.smallest_resolvable([summarize(noisy)])
    assert resolvable is not None and resolvable[1] == 3 and 0.1 < resolvable[0] < 0.5


def test_above_ceiling_catches_study_cs_raid0_beating_four_drives() -> None:
    from iolab.analysis import comparison

    single = {"seq write": 170.0}  # one X25-E, rated 170 MB/s (study C)
    why = "its 4 devices can deliver"
    found = comparison.above_ceiling(single, [("RAID0 of 4", 4.0, "seq write", 821.0, why)])
    assert len(found) == 1 and found[0].code == "above-ceiling"
    assert "4.8x one device" in found[0].message
    honest = comparison.above_ceiling(single, [("RAID0 of 4", 4.0, "seq write", 640.0, why)])
    assert honest == [], "under 4x: possible"
    mirror = comparison.above_ceiling(single, [("RAID1 of 2", 1.0, "seq write", 227.0, why)])
    assert len(mirror) == 1, "a mirror writes no faster than one device (study C's Adaptec)"


@pytest.mark.parametrize("df", [1, 2, 3, 5, 10, 30, 120])
def test_the_t_tail_at_the_tables_quantile_is_five_percent(df: int) -> None:
    assert t_two_sided(t975(df), df) == pytest.approx(0.05, abs=2e-4)


@pytest.mark.parametrize(
    ("t", "df", "p"),
    [
        (1.0, 1, 0.5),  # Cauchy: P(|T| >= 1) = 1/2
        (10.0, 1, 2 * math.atan(0.1) / math.pi),
        (2.0, 4, 0.116117),  # 1 - I(4/(4+4); 2, 1/2), from a t table
        (0.0, 7, 1.0),
    ],
)
def test_the_t_tail_against_closed_forms(t: float, df: int, p: float) -> None:
    assert t_two_sided(t, df) == pytest.approx(p, rel=1e-5)


def test_students_test_of_two_samples() -> None:
    # 1,2,3 against 4,5,6: pooled variance 1, t = 3 / sqrt(2/3) = 3.674 on 4 degrees of freedom
    assert student_p([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]) == pytest.approx(0.0213116, rel=1e-5)
    assert student_p([5.0, 5.0, 5.0], [5.0, 5.0]) == 1.0  # no spread and no difference
    assert student_p([5.0, 5.0], [6.0, 6.0]) == 0.0  # no spread, a difference


def test_the_standard_deviation_matches_exact_arithmetic() -> None:
    values = [1e9 + 0.1, 1e9 + 0.2, 1e9 + 0.3, 1e9 + 0.7]
    assert summarize(values).stdev == pytest.approx(statistics.stdev(values), rel=1e-12)
