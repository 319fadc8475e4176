"""The runner's logic through the fake executor: no root, no fio, milliseconds per test.

Saving after each case, a failing case, Ctrl-C, resume, retry of failed cases, the clean-up of
a run whose process died, and the checks that read the executor's host limits.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fakes import FIO_INFO, Behaviour, FakeExecutor, Seen
from iolab.errors import Interrupted, Resume
from iolab.fio.executor import HostLimits
from iolab.model import SteadyRecord, codec
from iolab.plan.load import parse_plan
from iolab.runner.campaign import Campaign, host_problem, plan_campaign
from iolab.runner.executing import execute
from iolab.runner.recovery import recover
from iolab.store import Store
from iolab.targets import process

pytestmark = pytest.mark.usefixtures("no_drives")  # the host's drives are not these tests'

PLAN = """
[defaults]
runtime = 1
size = "8m"
{extra}

[[setup]]
name = "here"
path = "{path}"

[[workload]]
rw = ["randread", "randwrite"]
bs = ["4k", "64k"]
"""
CASES = 4


def campaign(target: Path, fake: FakeExecutor, extra: str = "") -> Campaign:
    the_plan = parse_plan(PLAN.format(path=target, extra=extra), "plan.toml")
    return plan_campaign(the_plan, FIO_INFO, executor=fake)


def new_run(store: Store, built: Campaign) -> int:
    return store.create_run(built.plan, {}, "test", {}, process.me())


def statuses(store: Store, run_id: int) -> list[str]:
    return [c.status for c in store.cases(run_id)]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "results.db")


def test_every_case_is_saved_once_and_the_test_file_removed(tmp_path: Path, store: Store) -> None:
    fake = FakeExecutor()
    built = campaign(tmp_path, fake)
    run_id = new_run(store, built)
    seen = Seen()
    results = execute(built, store, run_id, seen)
    assert [r.status for r in results] == ["ok"] * CASES
    assert seen.started == [1, 2, 3, 4] and len(fake.jobs) == CASES
    assert statuses(store, run_id) == ["ok"] * CASES
    assert store.run(run_id).status == "done"
    assert store.leftovers(run_id) == []
    assert "filename=" + str(tmp_path / "iolab.testfile") in fake.jobs[0]


def test_a_failing_case_is_stored_with_fios_words_and_the_matrix_goes_on(
    tmp_path: Path, store: Store
) -> None:
    built = campaign(tmp_path, FakeExecutor(["ok", "enospc"]))
    run_id = new_run(store, built)
    results = execute(built, store, run_id, Seen())
    assert [r.status for r in results] == ["ok", "failed", "ok", "ok"]
    error = results[1].error or ""
    assert error.startswith("ENOSPC: No space left on device: fio: io_u error"), error


def test_ctrl_c_keeps_finished_cases_and_resume_runs_only_the_rest(
    tmp_path: Path, store: Store
) -> None:
    built = campaign(tmp_path, FakeExecutor(["ok", "ok", "interrupt"]))
    run_id = new_run(store, built)
    with pytest.raises(Interrupted, match="2 of 4 cases are stored") as stopped:
        execute(built, store, run_id, Seen())
    assert stopped.value.resume == Resume(run_id, str(store.path)), "the cli says how to resume"
    assert store.run(run_id).status == "interrupted"
    assert statuses(store, run_id) == ["ok", "ok"]
    assert not (tmp_path / "iolab.testfile").exists() and store.leftovers(run_id) == []
    fake = FakeExecutor()
    again = execute(campaign(tmp_path, fake), store, run_id, Seen())
    assert len(again) == 2 and len(fake.jobs) == 2, "only the two missing cases run"
    keys = [c.workload for c in store.cases(run_id)]
    assert len(keys) == CASES and len(set(keys)) == CASES, "every case exactly once"


def test_a_failed_case_is_retried_and_replaced(tmp_path: Path, store: Store) -> None:
    built = campaign(tmp_path, FakeExecutor(["enospc"]))
    run_id = new_run(store, built)
    execute(built, store, run_id, Seen())
    assert statuses(store, run_id).count("failed") == 1
    fake = FakeExecutor()
    execute(campaign(tmp_path, fake), store, run_id, Seen())
    assert len(fake.jobs) == 1, "only the failed case runs again"
    assert statuses(store, run_id) == ["ok"] * CASES


def test_a_run_whose_process_died_is_marked_by_the_next(tmp_path: Path, store: Store) -> None:
    """The database's word alone (its owner, its leftovers) removes nothing (issue 29, finding
    3); what this host's record vouches for is removed: tests/test_targets_evidence.py."""
    built = campaign(tmp_path, FakeExecutor())
    run_id = new_run(store, built)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    store.claim(run_id, {**process.me(), "pid": int(dead.stdout), "start": 1})
    testfile, scratch = tmp_path / "iolab.testfile", tmp_path / "iolab-run9-x"
    testfile.write_bytes(b"x")
    scratch.mkdir()
    for kind, path in (("file", testfile), ("dir", scratch)):
        store.add_leftover(run_id, kind, str(path))
    said = recover(store)
    assert len(said) == 1 and f"run {run_id} was left running by process" in said[0].said
    assert "nothing removed" in said[0].said
    assert said[0].resume == Resume(run_id, str(store.path))
    assert testfile.exists() and scratch.exists()
    assert store.run(run_id).status == "interrupted"
    assert recover(store) == [], "said once"


def test_a_live_run_is_left_alone(tmp_path: Path, store: Store) -> None:
    built = campaign(tmp_path, FakeExecutor())
    run_id = new_run(store, built)
    store.claim(run_id, process.me())
    assert recover(store) == []
    assert store.run(run_id).status == "running"


@pytest.mark.parametrize(("memory", "warned"), [(8 * 1024**3, True), (2 * 1024**2, False)])
def test_page_cache_check_reads_the_executors_host(
    tmp_path: Path, store: Store, memory: int, warned: bool
) -> None:
    fake = FakeExecutor(limits_=HostLimits(cpus=4, memory_bytes=memory, aio_room=65536))
    built = campaign(tmp_path, fake, extra="direct = 0")
    results = execute(built, store, new_run(store, built), Seen())
    codes = {w.code for r in results for w in r.warnings}
    assert ("page-cache" in codes) is warned


def test_host_limits_come_from_the_executor(tmp_path: Path) -> None:
    small = FakeExecutor(limits_=HostLimits(cpus=2, memory_bytes=1024**3, aio_room=16))
    built = campaign(tmp_path, small, extra='ioengine = "libaio"\niodepth = 32')
    problem = host_problem(built.plan.workloads[0].options, FIO_INFO, small.limits())
    assert problem is not None and problem[0] == "iodepth" and "allows 16" in problem[1]
    cpus = host_problem({"cpus_allowed": "0-3"}, FIO_INFO, small.limits())
    assert cpus is not None and "CPUs 0-1" in cpus[1]


def test_preconditioning_runs_before_the_cases_and_the_state_travels(
    tmp_path: Path, store: Store
) -> None:
    fake = FakeExecutor()
    text = PLAN.format(path=tmp_path, extra="").replace(
        'path = "', 'precondition = "both"\npath = "'
    )
    built = plan_campaign(parse_plan(text, "plan.toml"), FIO_INFO, executor=fake)
    run_id = new_run(store, built)
    seen = Seen()
    results = execute(built, store, run_id, seen)
    assert [job.split("\n")[1] for job in fake.jobs[:2]] == [
        "[precondition-sequential]",
        "[precondition-random]",
    ]
    assert "rw=write\nbs=128k\nloops=2" in fake.jobs[0]
    assert "io_size=16777216" in fake.jobs[1], "twice the 8 MiB area"
    notes = own_notes(seen.notes)
    assert len(notes) == 2 and "sequential fill" in notes[0]
    assert {r.target_state for r in results} == {"sequential+random"}
    assert {c.target_state for c in store.cases(run_id)} == {"sequential+random"}


def own_notes(notes: list[str]) -> list[str]:
    """The run's notes less what smartctl said of the disk under tmp_path, where it is
    installed (this host's virtio disk has no account of its own)."""
    return [note for note in notes if not note.startswith("drive not read: ")]


def test_repeat_auto_adds_repetitions_until_the_interval_is_narrow(
    tmp_path: Path, store: Store
) -> None:
    text = PLAN.format(path=tmp_path, extra="").replace(
        "[defaults]", 'repeat = "auto"\nrepeat_target = "1%"\nrepeat_max = 5\n[defaults]'
    )
    the_plan = parse_plan(text, "plan.toml")
    assert the_plan.repeat == 3 and the_plan.auto_repeat is not None
    fake = FakeExecutor()  # the same recorded output every time: a perfectly stable target
    built = plan_campaign(the_plan, FIO_INFO, executor=fake)
    run_id = new_run(store, built)
    seen = Seen()
    execute(built, store, run_id, seen)
    assert len(fake.jobs) == CASES * 3, "stable: no repetition past the first three"
    assert all("within the ±1.0% asked" in note for note in own_notes(seen.notes))


def test_repeat_auto_stops_at_the_most_and_says_so(tmp_path: Path, store: Store) -> None:
    text = PLAN.format(path=tmp_path, extra="").replace(
        "[defaults]", 'repeat = "auto"\nrepeat_target = "1%"\nrepeat_max = 4\n[defaults]'
    )
    fails: list[Behaviour] = ["enospc"] * 40
    script: list[Behaviour] = ["ok", *fails]  # all but the first repetition fail
    fake = FakeExecutor(script)
    built = plan_campaign(parse_plan(text, "plan.toml"), FIO_INFO, executor=fake)
    run_id = new_run(store, built)
    seen = Seen()
    execute(built, store, run_id, seen)
    per_point = {c.workload: 0 for c in store.cases(run_id)}
    for c in store.cases(run_id):
        per_point[c.workload] += 1
    assert max(per_point.values()) == 4, "up to repeat_max and no further, failures counted"
    assert any("NOT within" in note for note in seen.notes)


@pytest.mark.slow  # runs the runner over the fake executor and reports
def test_steady_rounds_stop_at_the_first_full_steady_window(tmp_path: Path, store: Store) -> None:
    text = PLAN.format(path=tmp_path, extra="") + '\n[steady]\ntrack = "4k randwrite"\n'
    the_plan = parse_plan(text, "plan.toml")
    assert the_plan.rounds is not None and the_plan.repeat == 5
    cases = the_plan.cases()
    assert [c.repetition for c in cases[:CASES]] == [1] * CASES, "round by round"
    fake = FakeExecutor()  # the same output every round: steady at once
    built = plan_campaign(the_plan, FIO_INFO, executor=fake)
    run_id = new_run(store, built)
    seen = Seen()
    execute(built, store, run_id, seen)
    assert len(fake.jobs) == CASES * 5
    assert any("steady state reached after 5 rounds" in note for note in seen.notes)
    recorded = codec.from_json(SteadyRecord, store.setups(run_id)[0][2]["steady_rounds"])
    assert recorded.steady and recorded.window_rounds == (1, 5)


@pytest.mark.slow  # runs the runner over the fake executor and reports
def test_steady_rounds_go_on_to_the_most_and_say_it_was_not_reached(
    tmp_path: Path, store: Store
) -> None:
    text = PLAN.format(path=tmp_path, extra="") + "\n[steady]\nwindow = 2\nrounds = 3\n"
    fails: list[Behaviour] = ["enospc"] * 40  # nothing to judge: never steady
    fake = FakeExecutor(fails)
    built = plan_campaign(parse_plan(text, "plan.toml"), FIO_INFO, executor=fake)
    run_id = new_run(store, built)
    seen = Seen()
    execute(built, store, run_id, seen)
    assert len(fake.jobs) == CASES * 3, "three rounds of every workload, then it stops"
    assert any("NOT reached after 3 rounds" in note for note in seen.notes)


def test_a_case_that_ran_short_of_its_runtime_is_flagged(tmp_path: Path, store: Store) -> None:
    """fio's recorded output ran about a second; a 60 s case that got only that ended early."""
    text = PLAN.format(path=tmp_path, extra="").replace("runtime = 1", "runtime = 60")
    built = plan_campaign(parse_plan(text, "plan.toml"), FIO_INFO, executor=FakeExecutor())
    results = execute(built, store, new_run(store, built), Seen())
    assert all("ended-early" in {w.code for w in r.warnings} for r in results)
    short = PLAN.format(path=tmp_path, extra="")
    built = plan_campaign(parse_plan(short, "plan.toml"), FIO_INFO, executor=FakeExecutor())
    results = execute(built, store, new_run(store, built), Seen())
    assert not any("ended-early" in {w.code for w in r.warnings} for r in results)
