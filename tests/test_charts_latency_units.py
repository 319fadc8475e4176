"""Latency tables: the unit that reads 1-999 (ns, µs, ms, s), one per row, chosen by its
largest figure (issue 32, finding 3); no non-zero value ever shown as 0.00 (issue 25, item 4)."""

from __future__ import annotations

import statistics

import pytest

from iolab.report.views.tables import _cell, _format, column_unit, row_unit

NS, US, MS, S = 1.0, 1e3, 1e6, 1e9


@pytest.mark.parametrize(
    ("values_ns", "unit"),
    [
        ([512.0], "ns"),
        ([1.0, 999.0, 998.0], "ns"),
        ([999.0], "ns"),
        ([1000.0], "µs"),
        ([512.0, 20 * US, 30 * US], "µs"),
        ([999 * US], "µs"),
        ([1 * MS], "ms"),
        ([512.0, 2 * MS, 3 * MS], "ms"),
        ([250 * MS, 900 * MS], "ms"),
        ([1 * S], "s"),
        ([5000 * S], "s"),
        ([0.0, 0.0, 700.0], "ns"),
        ([], "µs"),
        ([0.0], "µs"),
    ],
)
def test_column_unit_reads_1_to_999_at_the_median(values_ns: list[float], unit: str) -> None:
    chosen = column_unit(values_ns)
    assert chosen[0] == unit
    positive = [v for v in values_ns if v > 0]
    if positive and unit != "s":
        assert 1 <= statistics.median(positive) / chosen[1] < 1000


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (512 * NS / MS, "0.00051"),
        (51 * NS / MS, "0.000051"),
        (5.12 * US / MS, "0.0051"),
        (42.2 * US / MS, "0.042"),
        (0.5, "0.50"),
        (5.0, "5.00"),
        (50.0, "50.0"),
        (500.0, "500"),
        (5000.0, "5,000"),
        (0.0, "0.00"),
    ],
)
def test_format_never_rounds_a_nonzero_latency_to_zero(value: float, text: str) -> None:
    assert _format(value) == text
    if value:
        assert float(text.replace(",", "")) > 0


@pytest.mark.parametrize(
    ("column_ns", "value_ns"),
    [
        ([512.0, 3 * MS, 4 * MS], 512.0),
        ([1.0, 2 * S, 3 * S], 1.0),
        ([40 * NS, 70 * US, 80 * US], 40.0),
    ],
)
def test_a_small_value_in_a_large_unit_column_is_not_zero(
    column_ns: list[float], value_ns: float
) -> None:
    unit = column_unit(column_ns)
    cell = _cell([value_ns], unit)
    assert cell.unit == unit[0]
    assert not cell.text.startswith("0.00 ") and cell.text != "0.00"
    assert float(cell.text.split()[0]) == pytest.approx(value_ns / unit[1], rel=0.1)


@pytest.mark.parametrize(
    ("row_ns", "unit"),
    [
        ({"mean": [6685 * US], "p50": [5 * MS], "p99": [8.85 * MS], "max": [40 * MS]}, "ms"),
        ({"mean": [66 * US], "p50": [42 * US], "p99.99": [6.57 * MS], "max": [8 * MS]}, "ms"),
        ({"mean": [80 * US], "p99": [300 * US], "max": [2 * S]}, "µs"),  # max: one outlier
        ({"mean": [], "max": [3 * MS]}, "ms"),
    ],
)
def test_a_latency_row_reads_in_the_unit_of_its_largest_figure(
    row_ns: dict[str, list[float]], unit: str
) -> None:
    """One unit per row (issue 32, finding 3): never "mean (µs) 6,685 ... p99 (ms) 8.85"."""
    assert row_unit(row_ns)[0] == unit
