"""One way from fio's output to a result (analysis.reading): a fio JSON whose numbers break a
check gets the same warning imported as the same job run live through iolab, check by check
(issue 20). Each job runs twice with real fio: once in a plan, once by plain fio writing its
JSON, which `iolab import` then reads."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import run_iolab

pytestmark = pytest.mark.fio

# (check, the job's options, the target: "file" = iolab's test file / a plain file, or
# "fallocated" = a 16 MiB fallocated file both read)
JOBS = [
    ("compressible", {"rw": "write", "zero_buffers": 1, "time_based": 1, "runtime": 1}, "file"),
    ("too-short", {"rw": "read", "bs": "1m", "time_based": 0}, "file"),
    ("unwritten-read", {"rw": "randread", "time_based": 1, "runtime": 1}, "fallocated"),
]
COMMON = {"bs": "4k", "size": "16m", "direct": 1, "ioengine": "psync"}


def codes(db: Path) -> set[str]:
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT warnings FROM cases").fetchall()
    return {w["code"] for (stored,) in rows for w in json.loads(stored)}


def toml(value: object) -> str:
    return str(value) if isinstance(value, int) else f'"{value}"'


def live(workdir: Path, options: dict[str, object], target: Path) -> set[str]:
    lines = [f"{k} = {toml(v)}" for k, v in options.items()]
    plan = "\n".join(
        ["[[setup]]", 'name = "here"', f'path = "{target}"', "[[workload]]", 'name = "job"', *lines]
    )
    (workdir / "plan.toml").write_text(plan + "\n")
    run_iolab("run", "plan.toml", "--db", "live.db", cwd=workdir, check=True)
    return codes(workdir / "live.db")


def plain(workdir: Path, options: dict[str, object], target: Path) -> Path:
    out = workdir / "fio.json"
    args = [f"--{k}={v}" for k, v in options.items()]
    subprocess.run(
        [
            "fio",
            "--name=job",
            f"--filename={target}",
            *args,
            "--output-format=json",
            f"--output={out}",
        ],
        check=True,
        capture_output=True,
    )
    return out


def imported(workdir: Path, out: Path, db: str = "imported.db") -> set[str]:
    run_iolab("import", str(out), "--db", db, cwd=workdir, check=True)
    return codes(workdir / db)


def target_for(workdir: Path, kind: str) -> tuple[Path, Path]:
    """(the live plan's target, plain fio's file)."""
    if kind == "file":
        return workdir, workdir / "plain.img"
    fallocated = workdir / "fallocated.img"
    subprocess.run(["fallocate", "-l", "16M", str(fallocated)], check=True)
    return fallocated, fallocated


@pytest.mark.parametrize(("check", "options", "kind"), JOBS, ids=[j[0] for j in JOBS])
def test_imported_as_live(workdir: Path, check: str, options: dict[str, object], kind: str) -> None:
    job = {**COMMON, **options}
    live_target, plain_target = target_for(workdir, kind)
    out = plain(workdir, job, plain_target)
    from_file = imported(workdir, out)
    measured = live(workdir, job, live_target)
    assert check in measured, measured
    assert check in from_file, from_file


def test_a_file_written_since_the_job_is_not_judged(workdir: Path) -> None:
    """The importer reads a fallocated file's extent map only when nothing wrote to the file
    after the job ended: otherwise what it says now is not what the job read."""
    _, target = target_for(workdir, "fallocated")
    out = plain(workdir, {**COMMON, "rw": "randread", "time_based": 1, "runtime": 1}, target)
    later = json.loads(out.read_text())["timestamp"] + 60
    os.utime(target, (later, later))
    assert "unwritten-read" not in imported(workdir, out)
