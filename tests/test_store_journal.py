"""How a run's writes reach the disk (issue 47): one transaction per case through SQLite's
write-ahead log while iolab writes, a committed case kept through kill -9, and the database
one file again at rest, which commands that only read leave as they found it. And what a run
says it cost around fio: its own time, stored by the process that ran it, shown by `iolab
runs` and the report's header; a hostile owner column reads as not said."""

from __future__ import annotations

import hashlib
import json
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import run_iolab
from iolab.store import Store
from iolab.store.rows import laid_time, own_time

GOLDEN = Path(__file__).parent / "golden" / "store.db"

# A child that saves one case of a copy of the golden run, then dies as kill -9 leaves it.
SAVE_AND_DIE = """
import os, sys
from iolab.store import Store

store = Store(sys.argv[1])
run = store.run()
print(store.db.execute("PRAGMA journal_mode").fetchone()[0], flush=True)
store.db.execute("UPDATE runs SET plan_name = 'saved before the kill' WHERE id = ?", (run.id,))
with store._writing():
    store.db.execute("UPDATE runs SET status = 'running' WHERE id = ?", (run.id,))
print(store.db.execute("PRAGMA journal_mode").fetchone()[0], flush=True)
os.kill(os.getpid(), 9)
"""


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def beside(db: Path) -> list[str]:
    return sorted(p.name for p in db.parent.iterdir() if p.name != db.name)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    copy = tmp_path / "iolab.db"
    shutil.copyfile(GOLDEN, copy)
    Store(copy).close()  # migrated now: a reading command has nothing to write
    return copy


def test_a_writer_logs_ahead_and_leaves_one_file(db: Path) -> None:
    with Store(db) as store:
        run = store.run()
        store.finish_run(run.id, "done")
        mode = store.db.execute("PRAGMA journal_mode").fetchone()[0]
        sync = store.db.execute("PRAGMA synchronous").fetchone()[0]
        assert (mode, sync) == ("wal", 1), "write-ahead log, synchronous = NORMAL"
        assert f"{db.name}-wal" in beside(db)
    assert beside(db) == [], "the log folded in and removed when the writer closes"
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "delete"


@pytest.mark.slow  # three iolab processes
def test_reading_commands_leave_the_database_as_they_found_it(db: Path) -> None:
    before = digest(db)
    for command in (["runs"], ["report"], ["report", "--format", "csv"]):
        done = run_iolab(*command, "--db", str(db), cwd=db.parent)
        assert done.returncode == 0, done.stderr
        assert digest(db) == before and beside(db) == [], command


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
def test_a_committed_write_survives_kill_9_and_is_folded_by_the_next_writer(db: Path) -> None:
    child = subprocess.run(
        [sys.executable, "-c", SAVE_AND_DIE, str(db)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert child.stdout.split() == ["delete", "wal"], "the log is turned on by the first write"
    assert f"{db.name}-wal" in beside(db), "a killed writer leaves its log"
    done = run_iolab("runs", "--json", "--db", str(db), cwd=db.parent)
    assert done.returncode == 0, done.stderr
    runs = json.loads(done.stdout)
    assert runs[-1]["status"] == "running", "a reader sees what was committed before the kill"
    assert runs[-1]["plan"] == "saved before the kill", "autocommitted too"
    with Store(db) as store:  # the next writer
        assert beside(db) == [], "the log is folded in when a writer opens the database"
        assert store.run().status == "running"
    copy = db.with_name("copy.db")
    shutil.copyfile(db, copy)  # the file alone holds it now
    with sqlite3.connect(f"file:{copy}?mode=ro", uri=True) as con:
        assert con.execute("SELECT status FROM runs ORDER BY id DESC").fetchone()[0] == "running"


@pytest.mark.parametrize(
    ("owner", "said"),
    [
        ('{"pid": 1, "own_s": 0.42, "cases": 12}', (0.42, 12)),
        ('{"pid": 1, "own_s": 0, "cases": 3}', (0.0, 3)),
        ('{"pid": 1}', None),  # a run that has not ended, or an older iolab's
        ('{"own_s": "0.4", "cases": 12}', None),
        ('{"own_s": -1, "cases": 12}', None),
        ('{"own_s": NaN, "cases": 12}', None),
        ('{"own_s": 1e400, "cases": 12}', None),
        ('{"own_s": true, "cases": 12}', None),
        ('{"own_s": 0.4, "cases": 0}', None),
        ('{"own_s": 0.4, "cases": 1.5}', None),
        ('{"own_s": 0.4}', None),
        ("[0.4, 12]", None),
        ("not json", None),
        ("[" * 100_000, None),
    ],
)
def test_a_runs_own_time_is_read_only_as_it_should_be(owner: str, said: object) -> None:
    assert own_time(owner) == said


@pytest.mark.parametrize(
    ("owner", "said"),
    [
        ('{"own_s": 0.4, "laid_s": 0.37, "cases": 12}', 0.37),
        ('{"own_s": 0.4, "cases": 12}', None),
        ('{"laid_s": -1}', None),
        ('{"laid_s": "0.3"}', None),
        ('{"laid_s": true}', None),
        ("[0.3]", None),
    ],
)
def test_a_runs_layout_time_is_read_only_as_it_should_be(owner: str, said: object) -> None:
    assert laid_time(owner) == said


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
def test_a_hostile_owner_column_is_not_said(db: Path) -> None:
    with sqlite3.connect(db) as con:
        con.execute("UPDATE runs SET owner = ?", ('{"own_s": -5, "cases": "x"}',))
    done = run_iolab("runs", "--db", str(db), cwd=db.parent)
    assert done.returncode == 0 and "a case" not in done.stdout, done.stdout + done.stderr


@pytest.mark.fio
def test_a_run_stores_and_shows_its_own_time_outside_fio(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    args = ["--target", str(target), "--runtime", "1", "--size", "4m", "--repeat", "1"]
    started = time.time()
    done = run_iolab("run", *args, "--db", "r.db", cwd=tmp_path)
    wall = time.time() - started
    assert done.returncode == 0, done.stderr
    assert beside(tmp_path / "r.db") == ["target"], "one file at rest"
    with Store(tmp_path / "r.db", readonly=True) as store:
        run = store.run()
        spans = [e - s for s, e in store.db.execute("SELECT started_at, ended_at FROM cases")]
    assert run.own_s is not None and run.own_s[1] == len(spans) > 0
    own, laid = run.own_s[0], run.laid_s
    assert run.ended_at is not None
    assert laid is not None and laid > 0, "its test file laid out, counted beside"
    # from the process's start to its report built, less fio's and the layout's: within what
    # it took, and no less than its time between its run's start and end outside fio
    assert run.ended_at - run.started_at - sum(spans) < own + laid < wall - sum(spans)
    for span in spans:  # each case's span is fio's own (1 s of I/O), timed by its keeper
        assert 1.0 <= span < 30
    listed = run_iolab("runs", "--db", "r.db", cwd=tmp_path)
    assert f"iolab {own / len(spans):.3f} s a case" in listed.stdout, listed.stdout
    header = run_iolab("report", "--db", "r.db", "--format", "markdown", cwd=tmp_path)
    assert f"iolab's own time outside fio {own:.2f} s" in header.stdout
    assert f"laying out its test file {laid:.2f} s more" in header.stdout
