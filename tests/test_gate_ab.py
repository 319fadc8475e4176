"""The gate's interleaved A/B (issue 41): a plan with order = "interleaved" runs its set-ups
round by round, A B then B A, and `iolab check --ab` judges each set-up against the baseline
by the rounds' paired ratios, so a neighbour that loads both sides of a round widens the
interval but does not move the verdict. Pure tests on seeded rounds (a common drift that a
history-based gate could not see through), then real runs on two loop devices, one of them
throttled through the block cgroup, with a busy loop on a CPU."""

from __future__ import annotations

import random
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import IOLAB, needs_root, run_iolab
from iolab.analysis import ab
from iolab.analysis.gate_verdicts import SeriesVerdict
from iolab.analysis.history import Metric
from iolab.cli import EXIT_NOT_JUDGED, EXIT_REGRESSION, main
from iolab.errors import PlanError
from iolab.plan.load import parse_plan
from iolab.report.text import gate_junit, history_text
from loopdevs import LoopDevs, loops_fixture
from test_gate_history import JUNIT_XSD, checked
from test_gate_history import PLAN as NIGHTLY
from test_history import GOLDEN, throttle, throttle_device
from xsd_subset import Schema

_ = (loops_fixture, throttle)


def rounds(a: list[float], b: list[float], metric: Metric = "iops") -> ab.Rounds:
    return ab.Rounds("a", "b", "4k", metric, dict(enumerate(a, 1)), dict(enumerate(b, 1)))


def drifting(seed: int, n: int, ratio: float, noise: float = 0.02) -> ab.Rounds:
    """n rounds whose level swings by a factor of three (a neighbour coming and going) while
    B/A stays at `ratio` within `noise`: what interleaving is for."""
    rng = random.Random(seed)
    levels = [10_000 * rng.choice((1.0, 0.33, 0.6)) for _ in range(n)]
    a = [level * rng.gauss(1, noise) for level in levels]
    b = [level * ratio * rng.gauss(1, noise) for level in levels]
    return rounds(a, b)


def verdict(found: ab.Rounds, allowed: float = 5.0) -> SeriesVerdict:
    return ab.judge((7, 0.0), found, allowed, frozenset())


def test_a_common_drift_cancels_in_the_pairs() -> None:
    """Levels swinging threefold between rounds, B equal to A: the change is near 0 and the
    interval narrow enough to judge a 5% rule; 20 seeds, no false alarm."""
    for seed in range(20):
        v = verdict(drifting(seed, 8, 1.0))
        assert not v.regression and v.judged, history_text.verdict(v)
        assert v.paired is not None and abs(v.paired.change_pct) < 5
        assert v.detectable_pct is not None and v.detectable_pct < 5


@pytest.mark.parametrize("drop", [0.2, 0.5, 0.9])
def test_a_drop_beyond_the_rule_is_caught_through_the_drift(drop: float) -> None:
    for seed in range(20):
        v = verdict(drifting(seed, 8, 1 - drop))
        assert v.regression, history_text.verdict(v)
        line = history_text.verdict(v)
        assert line.startswith("REGRESSION: b · 4k · iops: geometric mean ")
        assert v.paired is not None and abs(v.paired.change_pct + drop * 100) < 5, line


def test_the_pairs_change_is_the_geometric_means_ratio() -> None:
    found = ab.paired([(100.0, 90.0), (200.0, 180.0), (50.0, 45.0)])
    assert found is not None
    assert found.change_pct == pytest.approx(-10.0)
    assert found.b_mean / found.a_mean == pytest.approx(0.9)
    assert found.lo_pct == pytest.approx(-10.0) and found.hi_pct == pytest.approx(-10.0)


def test_rounds_too_noisy_for_the_rule_are_not_judged() -> None:
    v = verdict(rounds([100, 100, 100, 100], [80, 120, 95, 105]))
    assert not v.judged and v.how == "blind" and not v.regression
    assert "these rounds detect only drops beyond" in history_text.verdict(v)


def test_too_few_rounds_are_not_judged() -> None:
    v = verdict(rounds([100, 100], [50, 50]))
    assert v.how == "short" and not v.regression
    assert "a paired interval needs 3" in history_text.verdict(v)


def test_latency_is_worse_when_it_rises() -> None:
    up = verdict(rounds([100, 200, 50, 100], [130, 262, 64, 131], "p99"), 10.0)
    assert up.regression and "; these rounds detect rises beyond" in history_text.verdict(up)
    down = verdict(rounds([100, 200, 50, 100], [70, 141, 35, 70], "p99"), 10.0)
    assert not down.regression and down.judged


def test_junit_holds_an_ab_verdict() -> None:
    regression = verdict(drifting(1, 8, 0.5))
    found = checked([regression], 7)
    document = gate_junit.junit(found, history_text.summary(found, EXIT_REGRESSION))
    Schema(JUNIT_XSD).validate(document)
    failure = ET.fromstring(document).find("testsuite/testcase/failure")
    assert failure is not None and failure.get("message") == history_text.verdict(regression)


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ('order = "abba"', 'must be "setups" or "interleaved"'),
        ('order = "interleaved"\nrepeat = 1', "give a whole repeat of at least 2"),
        ('order = "interleaved"\nrepeat = "auto"', "give a whole repeat of at least 2"),
    ],
)
def test_a_bad_order_is_refused_at_its_line(extra: str, said: str) -> None:
    with pytest.raises(PlanError, match=said):
        parse_plan(PLAN.format(a="/tmp", b="/var/tmp", extra=extra), "plan.toml")


def test_interleaved_cases_run_a_b_then_b_a() -> None:
    text = PLAN.format(a="/tmp", b="/var/tmp", extra='order = "interleaved"\nrepeat = 4')
    order = [(c.setup.name, c.repetition) for c in parse_plan(text, "plan.toml").cases()]
    assert order == [("a", 1), ("b", 1), ("b", 2), ("a", 2), ("a", 3), ("b", 3), ("b", 4), ("a", 4)]


def test_check_ab_refuses_a_run_that_did_not_interleave(tmp_path: Path) -> None:
    store = tmp_path / "store.db"
    store.write_bytes(GOLDEN.read_bytes())
    done = CliRunner().invoke(main, ["check", "--ab", "--db", str(store)])
    assert done.exit_code == 1 and "did not interleave its set-ups" in done.output, done.output
    assert "Traceback" not in done.output and len(done.output.strip().splitlines()) == 1


WORKLOAD = NIGHTLY[NIGHTLY.index("[[workload]]") :]  # the history gate's 4k QD4 reads
PLAN = """
name = "ab"
{extra}
[[setup]]
name = "a"
path = "{a}"
[[setup]]
name = "b"
path = "{b}"
""" + WORKLOAD.replace("{", "{{").replace("}", "}}")
DEVICES = (
    """
name = "ab"
repeat = 6
order = "interleaved"
[check]
iops = "25%"
[[setup]]
name = "a"
devices = ["{a}"]
[[setup]]
name = "b"
devices = ["{b}"]
"""
    + WORKLOAD
)


@pytest.mark.fio
@pytest.mark.root
@needs_root()
def test_interleaved_rounds_judge_a_throttled_device_beside_a_busy_loop(
    tmp_path: Path, loops: LoopDevs, throttle: tuple[Path, str]
) -> None:
    """Two loop devices, a busy loop on one CPU through both runs: untouched, `check --ab`
    passes or says it could not judge (never a regression); with b's reads held to 10% of
    what it did, it exits 4 and names b."""
    a, b = loops.make(64), loops.make(64)
    (tmp_path / "plan.toml").write_text(DEVICES.format(a=a, b=b))
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        untouched = _run_and_check(tmp_path, throttle, a, b)
        assert untouched.returncode in (0, EXIT_NOT_JUDGED), untouched.stdout
        free = _iops(untouched.stdout)
        throttle_device(throttle, b, "riops", max(int(free / 10), 10))
        held = _run_and_check(tmp_path, throttle, a, b)
    finally:
        throttle_device(throttle, b, "riops", None)
        hog.kill()
        hog.wait()
    assert held.returncode == EXIT_REGRESSION, held.stdout
    assert "REGRESSION: b · 4k randread QD4 · iops: geometric mean " in held.stdout
    last = held.stdout.splitlines()[-1]
    assert "(b against a, 6 interleaved rounds)" in last and last.endswith("(exit 4)"), last


def _run_and_check(
    workdir: Path, group: tuple[Path, str], a: str, b: str
) -> subprocess.CompletedProcess[str]:
    procs = group[0] / "cgroup.procs"
    command = f'echo $$ > {procs} && exec "$@"'
    args = ["sh", "-c", command, "sh", *IOLAB, "run", "plan.toml", "--new"]
    args += ["--yes-destroy", a, "--yes-destroy", b]
    done = subprocess.run(args, cwd=workdir, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return run_iolab("check", "--ab", cwd=workdir)


def _iops(said: str) -> float:
    """A's geometric mean IOPS from the check's line."""
    line = next(line for line in said.splitlines() if "· iops:" in line)
    return float(line.split("geometric mean ")[1].split(" ->")[0].replace(",", ""))
