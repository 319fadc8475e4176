"""Time-series captions: "never settled" judged only on series with enough intervals, and
ramp_time named only when the plan sets one (issue 25, item 4)."""

from __future__ import annotations

from typing import Any

import pytest

from iolab.report.views.time_figures import SETTLING_POINTS, _time_chart, _TimeNotes

STEADY = [(float(t), 1000.0) for t in range(1, 11)]
RISING = [(float(t), 100.0 * t * t) for t in range(1, 11)]  # never within ±10% at the end


def _caption(points: list[tuple[float, float]], options: dict[str, Any], dropped: int = 0) -> str:
    notes = _TimeNotes(options, "", dropped)
    return _time_chart("4k randread", "iops", {"a": [points]}, notes, {}, set()).caption


@pytest.mark.parametrize(
    ("points", "says", "never_says"),
    [
        (RISING[:2], "Too few points to judge settling", "Never settled"),
        (RISING[:4], "Too few points to judge settling", "Never settled"),
        (RISING[: SETTLING_POINTS - 1], "Too few points", "Never settled"),
        (RISING, "Never settled within ±10%: a.", "Too few points"),
        (STEADY[:SETTLING_POINTS], "", "Never settled"),
        (STEADY, "", "Too few points"),
        ([(1.0, 5.0), (2.0, 500.0)], "Too few points to judge settling", "Never settled"),
    ],
)
def test_settling_is_judged_only_on_enough_points(
    points: list[tuple[float, float]], says: str, never_says: str
) -> None:
    caption = _caption(points, {"log_avg_msec": 1000})
    assert says in caption
    assert never_says not in caption


@pytest.mark.parametrize(
    ("options", "dropped", "mentions_ramp"),
    [
        ({"log_avg_msec": 1000}, 0, False),
        ({"log_avg_msec": 1000}, 2, False),
        ({"log_avg_msec": 1000, "ramp_time": 0}, 1, False),
        ({"log_avg_msec": 1000, "ramp_time": "2s"}, 0, True),
        ({"log_avg_msec": 1000, "ramp_time": 3}, 1, True),
    ],
)
def test_ramp_time_is_named_only_when_the_plan_sets_one(
    options: dict[str, Any], dropped: int, mentions_ramp: bool
) -> None:
    caption = _caption(STEADY, options, dropped)
    assert ("ramp_time" in caption) is mentions_ramp
    assert ("left out" in caption) is (dropped > 0)
