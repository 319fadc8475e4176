"""iolab killed, run twice at once, or handed a database many processes create together."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from conftest import IOLAB, run_iolab, stored_cases, wait_for
from iolab.store import SCHEMA_VERSION, Store

PLAN = """
name = "hardening"

[defaults]
runtime = 1
size = "16m"
iodepth = 4

[[setup]]
name = "here"
path = "{path}"

[[workload]]
rw = ["randread", "randwrite", "read", "write"]
bs = "64k"
numjobs = 2
"""
CASES = 4


@pytest.fixture
def target(workdir: Path) -> Path:
    (workdir / "scratch").mkdir()
    (workdir / "plan.toml").write_text(PLAN.format(path=workdir))
    return workdir


def env_for(workdir: Path) -> dict[str, str]:
    """iolab's scratch folders go under the test's own folder, so its fio is easy to find."""
    return {**os.environ, "TMPDIR": str(workdir / "scratch")}


def live_fio(workdir: Path) -> list[int]:
    """fio processes (not zombies) working for this test's iolab."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z" and "fio --output" in cmdline and str(workdir) in cmdline:
            found.append(int(entry.name))
    return found


def start(workdir: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*IOLAB, "run", "plan.toml", *args],
        cwd=workdir,
        env=env_for(workdir),
        text=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


@pytest.mark.fio
def test_sigkill_leaves_no_fio_and_the_next_command_cleans_up(target: Path) -> None:
    db = target / "iolab.db"
    for attempt in range(10):
        child = start(target)
        # kill at different moments: as fio starts, and a little into a case
        wait_for(lambda: bool(live_fio(target)))
        time.sleep(0.1 * (attempt % 5))
        child.send_signal(signal.SIGKILL)
        child.wait()
        time.sleep(2)
        assert not live_fio(target), f"attempt {attempt}: fio outlived iolab by 2 s"
        runs = subprocess.run(
            [*IOLAB, "runs"],
            cwd=target,
            env=env_for(target),
            capture_output=True,
            text=True,
            check=False,
        )
        assert runs.returncode == 0, runs.stderr
        said = runs.stderr.strip().splitlines()
        assert len(said) == 1 and "run 1's iolab (pid " in said[0], runs.stderr
        assert "died; the next 'iolab run' on this database removes what it left" in said[0]
        assert "resume with: iolab run --resume 1" in said[0]
        # a command that only reads removes nothing (issue 29, finding 3): the next run does
        assert (target / "iolab.testfile").exists() and list((target / "scratch").iterdir())
    resumed = run_iolab("run", "plan.toml", cwd=target, check=True)
    assert "resuming run 1" in resumed.stderr
    cleaned = resumed.stderr.splitlines()[0]
    assert cleaned.startswith("iolab: run 1 was left running by process "), cleaned
    assert f"removed {target / 'iolab.testfile'}" in cleaned, "the dead run's test file"
    assert not (target / "iolab.testfile").exists()
    assert not list((target / "scratch").iterdir()), "the scratch folders are removed"
    rows = stored_cases(db)
    assert len(rows) == CASES and {r[3] for r in rows} == {"ok"}
    assert len({(r[0], r[1], r[2]) for r in rows}) == CASES, "every case exactly once"
    again = run_iolab("runs", cwd=target, check=True)
    assert again.stderr == "" and "done" in again.stdout


def intervals(db: Path) -> list[tuple[int, float, float]]:
    with sqlite3.connect(db) as con:
        return list(con.execute("SELECT run_id, started_at, ended_at FROM cases ORDER BY 2"))


@pytest.mark.fio
@pytest.mark.parametrize("stagger_s", [0.0, 1.5])
def test_two_runs_of_one_plan_never_share_the_target(target: Path, stagger_s: float) -> None:
    first = start(target)
    time.sleep(stagger_s)
    second = start(target)
    outcomes = [(first.wait(120), first.stderr), (second.wait(120), second.stderr)]
    errors = {code: stream.read() if stream else "" for code, stream in outcomes}
    assert sorted(errors) == [0, 1], errors
    refused = errors[1].strip().splitlines()
    assert len(refused) == 1 and "is in use by another iolab (pid" in refused[0], refused
    assert "Traceback" not in errors[0] + errors[1]
    rows = stored_cases(target / "iolab.db")
    assert len(rows) == CASES and {r[3] for r in rows} == {"ok"}, "nothing lost, nothing twice"
    spans = intervals(target / "iolab.db")
    assert {run for run, _, _ in spans} == {1}, "the refused run measured nothing"
    assert not (target / "iolab.testfile").exists()


def _open_store(path: str) -> int:
    with Store(path) as store:
        return store.db.execute("PRAGMA user_version").fetchone()[0]  # type: ignore[no-any-return]


@pytest.mark.slow  # 90 Python processes started, 6 at a time
def test_many_processes_creating_one_database_all_succeed(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    with context.Pool(6) as pool:
        for attempt in range(15):
            db = str(tmp_path / f"new{attempt}.db")
            assert pool.map(_open_store, [db] * 6) == [SCHEMA_VERSION] * 6


@pytest.mark.fio
def test_a_read_only_database_still_reports_and_refuses_writes_in_one_line(
    target: Path,
) -> None:
    run_iolab("run", "plan.toml", "--runtime", "1", cwd=target, check=True)
    db = target / "iolab.db"
    subprocess.run(["chattr", "+i", str(db)], check=True)
    try:
        listed = run_iolab("runs", cwd=target)
        assert listed.returncode == 0 and "hardening" in listed.stdout, listed.stderr
        report = run_iolab("report", cwd=target)
        assert report.returncode == 0 and "randread" in report.stdout, report.stderr
        again = run_iolab("run", "plan.toml", "--new", cwd=target)
        assert again.returncode == 1 and "Traceback" not in again.stderr
        lines = again.stderr.strip().splitlines()
        assert len(lines) == 1 and "cannot be written" in lines[0], again.stderr
    finally:
        subprocess.run(["chattr", "-i", str(db)], check=True)
    assert not (target / "iolab.testfile").exists()
