"""End to end with real fio: two set-ups x four workloads, Ctrl-C, resume, failures, errors."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ctrl_c_when, needs_root, results_of, run_iolab, said, stored_cases

PLAN = """
name = "e2e"

[defaults]
runtime = 1
size = "16m"
iodepth = 4

[[setup]]
name = "one"
path = "{one}"

[[setup]]
name = "two"
path = "{two}"

[[workload]]
rw = ["randread", "randwrite"]
bs = "4k"

[[workload]]
rw = ["read", "write"]
bs = "128k"
"""


@pytest.fixture
def e2e(workdir: Path) -> Path:
    for name in ("one", "two"):
        (workdir / name).mkdir()
    (workdir / "plan.toml").write_text(PLAN.format(one=workdir / "one", two=workdir / "two"))
    return workdir


stored = stored_cases


def fio_running(where: Path) -> list[str]:
    """fio processes (not zombies) working on files under `where`: this test's, not another's
    (by the files they hold open, or the job file they were given)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            held = [os.readlink(fd) for fd in (entry / "fd").iterdir()]
        except (OSError, IndexError):
            continue
        if state == "Z" or not words[0].endswith(b"/fio"):
            continue
        job = Path(words[-2].decode()) if len(words) > 1 else None
        mine = any(str(where) in target for target in held) or (
            job is not None and job.is_file() and str(where) in job.read_text(errors="replace")
        )
        if mine:
            found.append(entry.name)
    return found


@pytest.mark.fio
def test_full_run_stores_every_case_and_prints_the_table(e2e: Path) -> None:
    done = run_iolab("run", "plan.toml", cwd=e2e, check=True)
    rows = stored(e2e / "iolab.db")
    assert len(rows) == 8 and {r[3] for r in rows} == {"ok"}
    assert {r[0] for r in rows} == {"one", "two"}
    table = done.stdout
    for label in ("4k randread", "4k randwrite", "128k read", "128k write"):
        assert label in table
    header = next(line for line in results_of(table).splitlines() if "workload" in line)
    assert "one" in header and "two" in header, "set-ups are columns"
    assert "set-up one: path" in table and "set-up two: path" in table
    assert not list(e2e.glob("*/iolab.testfile")), "test files must be removed"
    # the same plan again: a fresh run (the last one finished), not a resume
    again = run_iolab("run", "plan.toml", "--runtime", "1", cwd=e2e, check=True)
    assert "run 2:" in again.stdout


@pytest.mark.fio
def test_ctrl_c_keeps_finished_cases_and_resume_completes_without_duplicates(e2e: Path) -> None:
    db = e2e / "iolab.db"
    code, err = ctrl_c_when(
        ["run", "plan.toml"], e2e, lambda: len(stored(db)) >= 3 and bool(fio_running(e2e))
    )
    assert code == 130, err
    assert "resume with: iolab run --resume 1" in err
    assert "Traceback" not in err and len(said(err)) == 1, "one line, past the progress"
    kept = stored(db)
    assert 3 <= len(kept) < 8
    assert not fio_running(e2e), "no fio may outlive iolab"
    assert not list(e2e.glob("*/iolab.testfile")), "test files must be removed on Ctrl-C"

    resumed = run_iolab("run", "plan.toml", cwd=e2e, check=True)
    assert f"resuming run 1: {len(kept)} of 8 cases already stored" in resumed.stderr
    rows = stored(db)
    assert len(rows) == 8
    assert len({(r[0], r[1], r[2]) for r in rows}) == 8, "no case may be duplicated"
    assert rows[: len(kept)] == kept
    assert "incomplete" not in resumed.stdout


@pytest.mark.fio
def test_resume_by_run_id(e2e: Path) -> None:
    db = e2e / "iolab.db"
    code, _ = ctrl_c_when(["run", "plan.toml", "--runtime", "1"], e2e, lambda: bool(stored(db)))
    assert code == 130
    report = run_iolab("report", cwd=e2e, check=True).stdout
    assert "incomplete:" in report and "iolab run --resume 1" in report
    done = run_iolab("run", "--resume", "1", cwd=e2e, check=True)
    assert "resuming run 1" in done.stderr and len(stored(db)) == 8
    refused = run_iolab("run", "--resume", "1", "--size", "1m", cwd=e2e)
    assert refused.returncode == 1 and "takes no plan or overrides" in refused.stderr


@pytest.fixture
def immutable_file(workdir: Path) -> Iterator[Path]:
    """A file of the user's that nothing may write to (chattr +i), until the test says so."""
    mine = workdir / "mine.file"
    mine.write_bytes(b"\0" * 8 * 1024**2)
    subprocess.run(["chattr", "+i", str(mine)], check=True)
    yield mine
    subprocess.run(["chattr", "-i", str(mine)], check=False)


@pytest.mark.fio
@needs_root()
def test_a_failing_case_is_stored_as_failed_and_the_matrix_goes_on(
    workdir: Path, immutable_file: Path
) -> None:
    plan = f"""
[defaults]
runtime = 1
size = "4m"
[[setup]]
name = "mine"
path = "{immutable_file}"
[[setup]]
name = "disk"
path = "{workdir}"
[[workload]]
name = "write"
rw = "write"
[[workload]]
name = "read"
rw = "read"
"""
    (workdir / "plan.toml").write_text(plan)
    done = run_iolab("run", "plan.toml", "--yes-destroy", str(immutable_file), cwd=workdir)
    assert done.returncode == 3, done.stderr
    assert "1 of 4 cases failed" in done.stderr
    assert (
        "✗ case 1/4 mine · write #1: failed: fio's job stopped with EPERM: Operation" in done.stderr
    )
    rows = stored(workdir / "iolab.db")
    assert [r[3] for r in rows] == ["failed", "ok", "ok", "ok"]
    assert "failed" in done.stdout.split("┏")[-1]
    # the cause removed, the same plan again retries just the failed case, in the same run
    subprocess.run(["chattr", "-i", str(immutable_file)], check=True)
    again = run_iolab(
        "run", "plan.toml", "--yes-destroy", str(immutable_file), cwd=workdir, check=True
    )
    assert "resuming run 1: 3 of 4 cases already stored; 1 failed will run again" in again.stderr
    assert "case 4/4 mine · write #1" in again.stderr
    rows = stored(workdir / "iolab.db")
    assert sorted(r[3] for r in rows) == ["ok"] * 4 and len(rows) == 4
