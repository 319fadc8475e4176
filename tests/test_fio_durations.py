"""Every wait bounded (issue 29, finding 10), table-driven: how long fio may run or wait
(iolab.fio.durations).

- Durations that make fio run or wait (runtime and its alias timeout, ramp_time, startdelay
  and its ranges, thinktime, thinktime_spin, steadystate_duration, in every unit fio reads)
  beyond their bounds are refused when the plan is loaded, at their file:line, by `show` and
  `run`, in a plan, its [defaults], a sweep, a job file and --runtime: the rows of
  test_bad_input (one line "iolab: error: ...", exit code 1, no traceback, nothing made or
  changed in the scratch or temporary directory).
- A fio stopped with SIGSTOP is waited for only until its case's planned time and a margin
  (IOLAB_CASE_MARGIN_S, 3 s here): it is killed, its case failed in one line, and the next
  case runs and is kept.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

import test_bad_input as bad_input
from conftest import IOLAB, invoke, listing, said, stored_cases
from fakes import Scene, running
from iolab.fio import durations
from test_bad_input import RUNTIME, WORKLOAD, at, bad_plan, case, plan
from test_import_refused import IMPORT_ROWS

TEN_YEARS_S = 10 * 365 * 86400
WEEK = "runtime at most 7 days"
DAY_BOUND = "at most 1 day"
PAUSE = "1 hour at most"
JOB_FILE = "[rr]\nrw=randread\nbs=4k\nsize=8m\n{option}\n"


# ---------------------------------------------------------------- durations: the plan's rows


def duration(case_id: str, key: str, value: str, bound: str, command: str = "show") -> object:
    """A [[workload]] with KEY = VALUE, refused at its line naming the bound."""
    return bad_plan(
        case_id, [at(WORKLOAD), key, bound], plan(workload=f"{key} = {value}"), command=command
    )


DURATION_ROWS = [
    bad_plan(
        "runtime-10-years-defaults",
        [at(RUNTIME), "runtime", WEEK],
        plan(runtime=str(TEN_YEARS_S)),
        command="show",
    ),
    bad_plan(
        "runtime-10-years-run", [at(RUNTIME), "runtime", WEEK], plan(runtime=str(TEN_YEARS_S))
    ),
    duration("runtime-a-second-over-a-week", "runtime", str(7 * 86400 + 1), WEEK),
    duration("runtime-seconds-suffix", "runtime", f'"{TEN_YEARS_S}s"', WEEK),
    duration("runtime-minutes", "runtime", '"5256000m"', WEEK),
    duration("runtime-hours", "runtime", '"87600h"', WEEK, command="run"),
    duration("runtime-milliseconds", "runtime", f'"{TEN_YEARS_S * 1000}ms"', WEEK),
    duration("runtime-microseconds", "runtime", f'"{TEN_YEARS_S * 10**6}us"', WEEK),
    duration("runtime-in-a-sweep", "runtime", f"[1, 2, {TEN_YEARS_S}]", WEEK),
    duration("timeout-alias", "timeout", str(TEN_YEARS_S), WEEK),
    duration("ramp_time-10-years", "ramp_time", str(TEN_YEARS_S), DAY_BOUND),
    duration("ramp_time-days", "ramp_time", '"87600h"', DAY_BOUND, command="run"),
    duration("startdelay-10-years", "startdelay", str(TEN_YEARS_S), DAY_BOUND),
    duration("startdelay-range", "startdelay", f'"1-{TEN_YEARS_S}"', DAY_BOUND),
    duration("startdelay-days", "startdelay", '"3650d"', DAY_BOUND, command="run"),
    duration("thinktime-10-years-us", "thinktime", str(TEN_YEARS_S * 10**6), PAUSE),
    duration("thinktime-days", "thinktime", '"3650d"', PAUSE, command="run"),
    duration("thinktime-hours", "thinktime", '"2h"', PAUSE),
    duration("thinktime-unreadable", "thinktime", '"10 years"', "not a duration"),
    duration("thinktime_spin-days", "thinktime_spin", '"1d"', PAUSE),
    duration("steadystate_duration-10-years", "ss_dur", '"3650d"', "at most 7 days"),
    case(
        "runtime-flag-run",
        f"run plan.toml --runtime {TEN_YEARS_S}",
        ["--runtime", "runtime", WEEK],
        {"plan.toml": plan()},
    ),
    case(
        "runtime-flag-show",
        "show plan.toml --runtime 87600h",
        ["--runtime", "runtime", WEEK],
        {"plan.toml": plan()},
    ),
    case(
        "job-file-thinktime",
        "show job.fio",
        ["job.fio:5", "thinktime", PAUSE],
        {"job.fio": JOB_FILE.format(option="thinktime=3650d")},
    ),
    case(
        "job-file-runtime-run",
        "run job.fio",
        ["job.fio:5", "runtime", WEEK],
        {"job.fio": JOB_FILE.format(option=f"runtime={TEN_YEARS_S}")},
    ),
]


@pytest.mark.parametrize("bad", DURATION_ROWS)
def test_a_duration_beyond_its_bound_is_refused_at_its_line(
    bad: bad_input.Bad,
    request: pytest.FixtureRequest,
    workdir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bad_input.test_bad_input_is_one_line_exit_1_and_changes_nothing(
        bad, request, workdir, tmp_path, monkeypatch
    )


GENEROUS = [
    "runtime = 604800",
    'runtime = "168h"',
    'ramp_time = "24h"',
    'startdelay = "1-86400"',
    'thinktime = "1h"',
    'thinktime = "500ms"',
    "thinktime_spin = 3600000000",
]


@pytest.mark.parametrize("line", GENEROUS)
def test_durations_within_their_bounds_pass(
    line: str, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workdir / "plan.toml").write_text(plan(workload=line).replace("@DIR@", str(workdir)))
    monkeypatch.chdir(workdir)
    outcome = invoke(["show", "plan.toml"], limit_s=60)
    assert outcome.code == 0 and not outcome.crash, outcome.stderr + outcome.crash


def test_a_case_s_deadline_covers_every_wait_and_a_week_bounds_a_case_without_runtime() -> None:
    options = {"runtime": 10, "ramp_time": "2m", "startdelay": "5-30", "thinktime": "1s"}
    assert durations.deadline_s(options, 600) == 10 + 120 + 30 + 1 + 600
    assert durations.deadline_s({"runtime": 0, "time_based": 0}, 3) == 7 * 86400 + 3


def test_the_tables_hold_at_least_twenty_rows() -> None:
    assert len(DURATION_ROWS) + len(IMPORT_ROWS) >= 20


# ---------------------------------------------------------------- a stopped fio

TWO_CASES = """name = "stopped"

[defaults]
runtime = 2
size = "8m"

[[setup]]
name = "here"
path = "{dir}"

[[workload]]
name = "stopped"
rw = "randread"

[[workload]]
name = "after"
rw = "read"
"""
MARGIN_S = 3


def _case_fio(scene: Scene) -> int | None:
    """The first fio started to run a case (not to answer a question), once it has started."""
    calls, pids = scene.fio_calls(), scene.started()
    for call, pid in zip(calls, pids, strict=False):
        if call.startswith("--output-format"):
            return pid
    return None


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text() if entry.isdigit() else ""
        except OSError:
            continue
        if stat and int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry))
    return found


@pytest.mark.fio
def test_a_stopped_fio_is_killed_at_its_deadline_and_the_run_goes_on(
    scene: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene.fio('exec @REAL@ "$@"\n')
    (scene.cwd / "plan.toml").write_text(TWO_CASES.format(dir=scene.cwd))
    before = listing(scene.cwd)
    env = {**os.environ, "TMPDIR": str(scene.tmp), durations.MARGIN_ENV: str(MARGIN_S)}
    child = subprocess.Popen(
        [*IOLAB, "run", "plan.toml", "--db", "x.db"],
        cwd=scene.cwd,
        env=env,
        text=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while (fio := _case_fio(scene)) is None and child.poll() is None:
            assert time.monotonic() < deadline, "no case's fio started"
            time.sleep(0.05)
        assert fio is not None, child.communicate()
        stopped_at = time.monotonic()
        for pid in (fio, *_children(fio)):
            os.kill(pid, signal.SIGSTOP)
        out, err = child.communicate(timeout=150)
        took = time.monotonic() - stopped_at
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert "Traceback" not in out + err
    assert child.returncode == 3, err
    lines = said(err)
    assert lines == ["iolab: 1 of 2 cases failed (fio's errors above)"], err
    assert "stopped #1: failed: fio did not finish in time and was stopped" in err
    # its planned 2 s, the margin, the next case's run and a loaded machine's slack; an
    # unbounded wait never ends
    assert took < 2 + MARGIN_S + 60, took
    assert [(w, s) for _, w, _, s in stored_cases(scene.cwd / "x.db")] == [
        ("stopped", "failed"),
        ("after", "ok"),
    ]
    assert running(scene.started()) == []
    after = {k: v for k, v in listing(scene.cwd).items() if not k.startswith("x.db")}
    assert after == before
    assert sorted(scene.tmp.iterdir()) == []
