"""The peak search and the curve: the method on its own (analysis.peak), planned (plan.methods)
and run (runner.search) on a fake device of known shape, resumed after Ctrl-C, and checked."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from conftest import HERE_SETUP
from fake_device import FakeDevice, options_of, shaped
from fakes import FIO_INFO, Seen
from iolab.analysis import check_context, checks, peak
from iolab.errors import Interrupted, PlanError
from iolab.model import CaseMetrics, DirectionMetrics, Method, PeakRecord, codec
from iolab.plan.load import parse_plan
from iolab.plan.matrix import matrix_lines
from iolab.runner.campaign import plan_campaign, resolve
from iolab.runner.executing import execute
from iolab.store import Store
from iolab.targets import process

PLAN = (
    HERE_SETUP
    + """
[[workload]]
rw = "randread"
bs = "4k"
{extra}
"""
)
SEARCH = 'method = "peak"\nnumjobs = [1, 8]\niodepth = [1, 128]'


def run(
    tmp_path: Path, device: FakeDevice, extra: str = SEARCH, run_id: int | None = None
) -> tuple[Store, int, Seen]:
    the_plan = parse_plan(PLAN.format(path=tmp_path, extra=extra), "plan.toml")
    built = plan_campaign(the_plan, FIO_INFO, executor=device)
    store = Store(tmp_path / "results.db")
    if run_id is None:
        run_id = store.create_run(built.plan, {}, "test", {}, process.me())
    seen = Seen()
    execute(built, store, run_id, seen)
    return store, run_id, seen


def search_of(store: Store, run_id: int) -> dict[str, Any]:
    found: dict[str, Any] = store.setups(run_id)[0][2]["peak_search"]["4k randread"]  # type: ignore[index,call-overload,assignment]
    decoded = codec.from_json(PeakRecord, found)  # what the report reads: the same, typed
    assert codec.to_json(decoded) == found
    return found


# ---------------------------------------------------------------- the method alone


def test_ladders_double_up_to_the_high_bound() -> None:
    assert peak.ladder(1, 256) == (1, 2, 4, 8, 16, 32, 64, 128, 256)
    assert peak.ladder(3, 20) == (3, 6, 12, 20)
    assert peak.ladder(4, 4) == (4,)


def test_the_climb_finds_the_best_point_in_a_third_of_the_grid() -> None:
    bounds = peak.Bounds((1, 8), (1, 128))
    grid = list(itertools.product(peak.ladder(1, 8), peak.ladder(1, 128)))
    best = max(grid, key=lambda p: shaped(*p))
    climb = peak.climb(bounds, lambda p: shaped(*p))
    assert climb.winner == best == (2, 32)
    assert len(climb.tried) <= len(grid) / 3, climb.tried
    assert climb.tried[0] == (2, 2) == peak.first_point(bounds), "x4 above the low corner"
    assert len(set(climb.tried)) == len(climb.tried)
    assert climb.steps == (
        "I/Os in flight climbed to numjobs 4 x iodepth 4",
        "the same I/Os in flight did better at numjobs 2 x iodepth 8",
        "deeper queues at that numjobs: numjobs 2 x iodepth 32",
    )


def test_the_climb_walks_in_flight_then_its_split() -> None:
    # in flight 1, 4, 16, 64, 256: best at 64 I/Os, over 4 jobs of 16
    surface = {
        (2, 2): 10.0,
        (4, 4): 30.0,
        (8, 8): 50.0,
        (8, 32): 45.0,
        (8, 128): 40.0,
        (4, 16): 60.0,
        (2, 32): 55.0,
        (4, 32): 58.0,
    }
    climb = peak.climb(peak.Bounds((1, 8), (1, 128)), surface.get)
    assert climb.tried == (
        (2, 2),
        (4, 4),
        (8, 8),
        (8, 32),
        (8, 128),  # the diagonal, two misses after 8 x 8
        (4, 16),
        (2, 32),  # the split (16 x 4 is beyond the bounds): 4 x 16 wins, 2 x 32 not
        (4, 32),  # fewer jobs won: deeper queues there, which miss
    )
    assert climb.winner == (4, 16)
    corner = {(2, 2): 10.0, (4, 4): 30.0, (4, 16): 50.0, (4, 8): 45.0, (2, 16): 55.0}
    climb = peak.climb(peak.Bounds((1, 4), (1, 16)), corner.get)
    assert climb.tried == ((2, 2), (4, 4), (4, 16), (4, 8), (2, 16)), "a corner: the rungs below"
    assert climb.winner == (2, 16)


def test_a_gain_within_the_margin_is_no_gain_and_failures_never_win() -> None:
    flat = {(1, 4): 100.0, (1, 16): 102.0, (1, 2): 101.0, (1, 1): 90.0}
    climb = peak.climb(peak.Bounds((1, 1), (1, 16)), flat.get, margin=0.03)
    assert climb.tried[:3] == ((1, 4), (1, 16), (1, 2)), "nothing beat the first: one below"
    assert climb.tried[3:] == ((1, 8),), "numjobs fixed: the rungs jumped over beside the best"
    assert climb.winner == (1, 16), "the highest measured wins"
    rising = {(1, 4): 100.0, (1, 16): 90.0, (1, 64): 300.0, (1, 256): 250.0, (1, 128): 320.0}
    climb = peak.climb(peak.Bounds((1, 1), (1, 256)), rising.get, margin=0.03)
    assert climb.tried[:4] == ((1, 4), (1, 16), (1, 64), (1, 256)), "one miss is not the end"
    assert climb.tried[4:] == ((1, 32), (1, 128)), "then the rungs jumped over, both sides"
    assert climb.winner == (1, 128)
    assert climb.steps[-1] == "a rung the steps jumped over did better: numjobs 1 x iodepth 128"
    failed = peak.climb(peak.Bounds((1, 2), (1, 4)), lambda p: None)
    assert failed.winner is None


def test_the_knee_is_the_last_load_before_p99_doubles() -> None:
    def at(load: int, p99: float) -> peak.LoadPoint:
        return peak.LoadPoint(load, 100.0 * load, 100.0 * load, 50.0, p99, 2 * p99)

    points = [at(10, 100), at(20, 110), at(30, 150), at(40, 190), at(50, 450), at(60, 900)]
    assert peak.knee(points) == 3
    assert peak.knee(points[:4]) is None, "p99 stays within 2x: no knee"
    short = peak.LoadPoint(100, 1000.0, 940.0, None, None, None)
    assert not short.delivered and peak.LoadPoint(100, 1000.0, 950.0, None, None, None).delivered


def test_rates_are_per_job_and_split_by_the_read_share() -> None:
    assert peak.rates(1000, 4, None) == ("250", 1000.0)
    assert peak.rates(1000, 4, 0.7) == ("175,75", 1000.0)
    assert peak.rates(3, 8, None) == ("1", 8.0), "never 0, which fio reads as no limit"


# ---------------------------------------------------------------- planned


def test_a_method_workload_is_planned_as_its_start_and_the_start_again(tmp_path: Path) -> None:
    the_plan = parse_plan(PLAN.format(path=tmp_path, extra=SEARCH), "plan.toml")
    names = [w.name for w in the_plan.workloads]
    assert names == ["4k randread numjobs=2 iodepth=2", "4k randread numjobs=2 iodepth=2 again"]
    options, method = the_plan.workloads[0].options, the_plan.workloads[0].method
    assert options["numjobs"] == 2 and method == Method("peak", (1, 8), (1, 128))
    assert not set(options) & set(peak.IOLAB_ONLY), "the method is typed, not a fio option"
    assert the_plan.workloads[1].method == Method("peak", (1, 8), (1, 128), again=True)
    recorded = the_plan.workloads[0].recorded  # as the store keeps it
    assert recorded["peak_numjobs"] == "1-8" and recorded["method"] == "peak"
    assert any(
        "a search (method) adds the points it tries" in line for line in matrix_lines(the_plan)
    )
    step = plan_campaign(the_plan, FIO_INFO, executor=FakeDevice()).steps[0]
    job = resolve(step.case, plan_campaign(the_plan, FIO_INFO).paths["here"], FIO_INFO)
    assert not set(job) & set(peak.IOLAB_ONLY), "iolab's own keys never reach fio"


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ('method = "peak"\nnumjobs = [1, 4, 8]', "numjobs = [low, high] gives the search's bounds"),
        ('method = "peak"\nnumjobs = [8, 1]', "numjobs = [low, high]"),
        ('method = "fastest"', "method = 'fastest' is not allowed; choose one of peak, curve"),
        ('peak_margin = "5%"', 'peak_margin goes with method = "peak" or "curve"'),
        ('method = "peak"\npeak_margin = "150%"', 'must be a share such as "3%"'),
        ('method = "peak"\npeak_numjobs = "1-4"', "peak_numjobs is set by iolab itself"),
        ('method = "peak"\nioengine = "psync"\niodepth = [1, 8]', "has no effect with ioengine"),
    ],
)
def test_bad_method_settings_are_refused_in_one_line(tmp_path: Path, extra: str, said: str) -> None:
    with pytest.raises(PlanError) as caught:
        parse_plan(PLAN.format(path=tmp_path, extra=extra), "plan.toml")
    assert str(caught.value).startswith("plan.toml:1") and said in str(caught.value)


def test_a_method_does_not_mix_with_auto_repeat(tmp_path: Path) -> None:
    text = 'repeat = "auto"\n' + PLAN.format(path=tmp_path, extra=SEARCH)
    with pytest.raises(PlanError, match='does not mix with repeat = "auto"'):
        parse_plan(text, "plan.toml")


# ---------------------------------------------------------------- run


@pytest.mark.slow  # runs the runner over the fake executor and reports
def test_the_search_stores_every_point_and_records_the_winner(tmp_path: Path) -> None:
    device = FakeDevice()
    store, run_id, seen = run(tmp_path, device)
    found = search_of(store, run_id)
    winner = found["winner"]
    assert (winner["numjobs"], winner["iodepth"]) == (2, 32)
    assert len(winner["values"]) == 3 and winner["median"] == pytest.approx(shaped(2, 32))
    assert winner["low"] == pytest.approx(winner["high"]), "the fake has no noise"
    tried = [(p["numjobs"], p["iodepth"]) for p in found["points"]]
    assert tried[0] == (2, 2) and len(tried) <= found["grid"] / 3 and found["grid"] == 32
    cases = store.cases(run_id)
    assert len(cases) == len(device.jobs) == len(tried) + 2 + 1, "points, 2 confirmations, again"
    assert cases[-1].workload == "4k randread numjobs=2 iodepth=2 again"
    assert all("method" not in options_of(job) for job in device.jobs)
    for confirmation in device.jobs[-3:-1]:
        assert "numjobs=2\n" in confirmation and "iodepth=32\n" in confirmation
    assert found["drift"]["change"] == pytest.approx(0.0)
    assert any(
        "peak 97,778 ± 0 IOPS (95%, 3 runs) at numjobs=2 iodepth=32" in n for n in seen.notes
    )
    assert any("no drift beyond the margin" in n for n in seen.notes)
    assert seen.counted[0] == (1, 2) and seen.counted[-1] == (len(cases), len(cases))
    assert all(index <= total for index, total in seen.counted), "the total grows with the search"


@pytest.mark.slow  # runs the runner over the fake executor and reports
def test_noise_wider_than_the_margin_is_said_with_the_points_tied(tmp_path: Path) -> None:
    store, run_id, seen = run(tmp_path, FakeDevice(noise=0.1, seed=3))
    winner = search_of(store, run_id)["winner"]
    assert winner["noise"] > 0.03
    assert any("is wider than the 3% margin" in n for n in seen.notes)


@pytest.mark.slow  # runs the runner over the fake executor and reports
def test_an_interrupted_search_resumes_without_running_a_stored_point_again(
    tmp_path: Path,
) -> None:
    whole = tmp_path / "whole"
    whole.mkdir()
    store, run_id, _ = run(whole, FakeDevice())
    expected = search_of(store, run_id)
    part = tmp_path / "part"
    part.mkdir()
    with pytest.raises(Interrupted) as stopped:
        run(part, FakeDevice(interrupt_at=6))
    assert stopped.value.resume is not None and stopped.value.resume.run_id == 1
    the_plan = parse_plan(PLAN.format(path=part, extra=SEARCH), "plan.toml")
    with Store(part / "results.db") as stored:
        interrupted = stored.resumable(the_plan.hash)
        assert interrupted and interrupted.ok > interrupted.case_count, "more stored than planned"
    again = FakeDevice()
    store, run_id, _ = run(part, again, run_id=1)
    found = search_of(store, run_id)
    assert len(again.jobs) == len(store.cases(run_id)) - 5, "only what was not stored"
    assert found["winner"]["workload"] == expected["winner"]["workload"]
    assert found["points"] == expected["points"]
    assert "workload '4k randread numjobs=2 iodepth=2 again'" in again.jobs[0], "planned first"


@pytest.mark.slow  # runs the runner over the fake executor and reports
def test_the_curve_runs_fixed_rates_flags_the_undelivered_and_finds_the_knee(
    tmp_path: Path,
) -> None:
    device = FakeDevice()
    extra = 'method = "curve"\nnumjobs = 2\niodepth = 32'
    store, run_id, seen = run(tmp_path, device, extra)
    found = search_of(store, run_id)
    curve = found["curve"]
    points = curve["points"]
    assert [p["load_pct"] for p in points] == [*range(10, 101, 10), None]
    assert curve["peak_iops"] == pytest.approx(shaped(2, 32), rel=1e-3)
    assert points[0]["asked_iops"] == pytest.approx(curve["peak_iops"] / 10, rel=1e-3)
    assert [p["delivered"] for p in points[:-1]] == [True] * 9 + [False]
    assert points[curve["knee"]]["load_pct"] == 50, "p99 doubles past half load (1 / (1 - load))"
    rated = [j for j in device.jobs if "rate_iops=" in j]
    assert len(rated) == 10 and "rate_iops=4889\n" in rated[0], "10% of the peak over 2 jobs"
    warned = {c.workload: [w.code for w in c.warnings] for c in store.cases(run_id)}
    assert "rate-not-delivered" in warned["4k randread numjobs=2 iodepth=32 load=100%"]
    assert "rate-not-delivered" not in warned["4k randread numjobs=2 iodepth=32 load=90%"]
    assert any("knee at" in n and "(50% of the peak)" in n for n in seen.notes)
    assert any("1 rate not delivered" in n for n in seen.notes)


# ---------------------------------------------------------------- the check


def _context(options: dict[str, Any], iops: float) -> check_context.Context:
    direction = DirectionMetrics("read", iops, iops * 4096, int(iops * 4096), 1000, 1.0, 2.0)
    return check_context.Context(
        options=options, metrics=CaseMetrics((direction,), 1.0, 1.0, 1000, 0)
    )


@pytest.mark.parametrize(
    ("options", "iops", "warned"),
    [
        ({"rw": "randread", "rate_iops": "1000", "numjobs": 4}, 3700.0, True),
        ({"rw": "randread", "rate_iops": "1000", "numjobs": 4}, 3900.0, False),
        ({"rw": "randrw", "rate_iops": "700,300", "numjobs": 1}, 900.0, True),
        ({"rw": "randwrite", "rate_iops": "5,1000"}, 990.0, False),
        ({"rw": "randread"}, 10.0, False),
        ({"rw": "randread", "rate_iops": "1k"}, 10.0, False),
    ],
)
def test_rate_not_delivered(options: dict[str, Any], iops: float, warned: bool) -> None:
    found = checks.rate_not_delivered(_context(options, iops))
    assert (found is not None) is warned
    if found:
        assert found.code == "rate-not-delivered" and "delivered" in found.message
