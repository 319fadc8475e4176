"""A plan's history kept in the store (store.derived, analysis.history_kept) as `iolab run`
keeps it: read back by `iolab history` (which writes nothing) it is the history derived
again, to the last bit; after any change to the runs it is derived again; a kept value that
does not read back, or a store another process is writing, never stops a history nor shows
a figure that is not the runs'."""

from __future__ import annotations

import hashlib
import random
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from iolab import app
from iolab.analysis import history_kept
from iolab.app import gate
from iolab.cli import main
from iolab.model import (
    Case,
    CaseMetrics,
    CheckWarning,
    Code,
    DirectionMetrics,
    Origin,
    Plan,
    Result,
    Setup,
    Workload,
)
from iolab.store import Store
from iolab.store.schema import MIGRATIONS
from iolab.terminal_ui import TerminalUi

RUNS = 24


def quiet() -> TerminalUi:
    return TerminalUi(Console(quiet=True), Console(quiet=True))


def _plan() -> Plan:
    setups = (Setup("disk-a", path="/mnt/a"), Setup("disk-b", path="/mnt/b"))
    workloads = tuple(
        Workload(f"randread QD{q}", {"rw": "randread", "bs": "4k", "iodepth": q}, (), n)
        for n, q in enumerate((1, 8))
    )
    return Plan("nightly", "", "test", "nightly.toml", "", setups, workloads, repeat=3)


def _save_run(store: Store, number: int, rng: random.Random) -> None:
    """One run: disk-a drops 30% from run 16 on, run 9 had other load on the host."""
    plan, start = _plan(), 1_700_000_000.0 + number * 86_400
    results = []
    for setup in plan.setups:
        for workload in plan.workloads:
            rate = 10_000.0 * (0.7 if setup.name == "disk-a" and number >= 16 else 1.0)
            for rep in (1, 2, 3):
                iops = rate * rng.gauss(1.0, 0.02)
                lat = 1e9 / iops
                read = DirectionMetrics(
                    "read",
                    iops,
                    iops * 4096,
                    int(iops * 40960),
                    10_000,
                    lat,
                    lat * 2,
                    {"99": lat * 3},
                )
                load = (CheckWarning(Code.FOREIGN_LOAD, "other load", "rerun"),)
                result = Result(
                    Case(setup, workload, rep),
                    "ok",
                    start,
                    start + 10,
                    CaseMetrics((read,), 5.0, 10.0, 10_000, 0),
                    warnings=load if number == 9 else (),
                )
                results.append((result, workload.table))
    kernel = "6.1.0" if number < 16 else "6.8.0"
    store.save_import(
        plan,
        {"hostname": "lab", "kernel": kernel},
        "test",
        Origin("import"),
        results,
        (start, start + 3600),
    )


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "history.db"
    rng = random.Random(5)
    with Store(path) as store:
        for number in range(RUNS):
            _save_run(store, number, rng)
    return path


def _kept(path: Path) -> list[tuple[str, int]]:
    with sqlite3.connect(path) as con:
        return [(str(r[0]), int(r[1])) for r in con.execute("SELECT key, revision FROM derived")]


def keep(db: Path) -> app.History:
    """What `iolab run` does as it ends: derive its plan's history and keep it."""
    with Store(db) as store:
        return gate.keep_history(store, str(db), "nightly")


def _bytes(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_history_read_back_is_the_history_derived(db: Path) -> None:
    assert app.plan_history(str(db), None, quiet()) == keep(db)  # derived, then kept
    assert _kept(db) == [("history nightly", _revision(db))]
    untouched = _bytes(db)
    read_back = app.plan_history(str(db), None, quiet())
    assert _bytes(db) == untouched  # a reading command writes nothing
    assert read_back == keep(db)  # every point, figure, step and change point, to the last bit
    disk_a = next(s for s in read_back.series if s.setup == "disk-a" and s.metric == "iops")
    assert [c.run_id for c in disk_a.changes] == [17]  # runs 1-24: the drop at the 17th
    assert disk_a.changes[0].facts == ("kernel 6.1.0 -> 6.8.0",)
    assert [p.run_id for p in disk_a.points if p.foreign] == [10]
    assert len(read_back.runs) == RUNS and {p.load for p in disk_a.points} == {
        frozenset(),
        frozenset({Code.FOREIGN_LOAD}),
    }


def test_any_change_to_the_runs_derives_the_history_again(db: Path) -> None:
    first = keep(db)
    with sqlite3.connect(db) as con:  # another program changes one figure of the last run
        con.execute(
            "UPDATE metrics SET iops = iops * 2 WHERE case_id IN (SELECT id FROM cases"
            " WHERE setup = 'disk-b' AND run_id = (SELECT max(run_id) FROM cases))"
        )
    untouched = _bytes(db)
    again = app.plan_history(str(db), None, quiet())
    assert _bytes(db) == untouched and _kept(db)[0][1] < _revision(db)  # stale, and left so
    for before, now in zip(first.series, again.series, strict=True):
        doubled = before.setup == "disk-b" and before.metric == "iops"
        assert now.points[-1].mean == pytest.approx(before.points[-1].mean * (2 if doubled else 1))
        assert now.points[:-1] == before.points[:-1]
    with Store(db) as store:  # a new run, saved by iolab
        _save_run(store, RUNS, random.Random(1))
    assert len(app.plan_history(str(db), None, quiet()).runs) == RUNS + 1
    assert len(keep(db).runs) == RUNS + 1
    assert _kept(db) == [("history nightly", _revision(db))]  # one value, the latest


def _revision(path: Path) -> int:
    with sqlite3.connect(path) as con:
        return int(con.execute("SELECT n FROM revision").fetchone()[0])


@pytest.mark.parametrize(
    "value",
    [b"", b"\x00", b"not json\x00", b'{"runs":[1],"series":[]}\x00\x01', b'{"runs":["1"]}\x00'],
    ids=["empty", "nul", "not-json", "extra-bytes", "wrong-types"],
)
def test_a_kept_value_that_does_not_read_back_is_derived_again(db: Path, value: bytes) -> None:
    derived = keep(db)
    with sqlite3.connect(db) as con:
        con.execute("UPDATE derived SET value = ?", (value,))
    assert history_kept.decode(value) is None
    assert app.plan_history(str(db), None, quiet()) == derived


def test_a_truncated_kept_value_is_derived_again(db: Path) -> None:
    derived = keep(db)
    with sqlite3.connect(db) as con:
        whole = bytes(con.execute("SELECT value FROM derived").fetchone()[0])
        con.execute("UPDATE derived SET value = ?", (whole[:-8],))
    assert history_kept.decode(whole[:-8]) is None
    assert history_kept.decode(whole) is not None
    assert app.plan_history(str(db), None, quiet()) == derived


def test_a_store_another_process_writes_gives_its_history_and_keeps_nothing(db: Path) -> None:
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another iolab saving a case, for now
    try:
        found = keep(db)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert len(found.runs) == RUNS and not _kept(db)


def test_schema_5_counts_every_change_to_what_a_history_reads(tmp_path: Path) -> None:
    con = sqlite3.connect(tmp_path / "s.db")
    for number, script in enumerate(MIGRATIONS):
        con.executescript(script)
        con.execute(f"PRAGMA user_version = {number + 1}")
    tables = {r[0] for r in con.execute("SELECT tbl_name FROM sqlite_master WHERE type='trigger'")}
    assert tables == {"runs", "setups", "cases", "metrics"}
    before = int(con.execute("SELECT n FROM revision").fetchone()[0])
    con.execute(
        "INSERT INTO runs (plan_name, plan_source, plan_hash, plan_text, iolab_version,"
        " environment, started_at, case_count) VALUES ('p', '', '', '', '', '{}', 0, 0)"
    )
    con.execute("UPDATE runs SET status = 'done'")
    con.execute("DELETE FROM runs")
    assert int(con.execute("SELECT n FROM revision").fetchone()[0]) == before + 3


def test_a_history_of_one_run_says_one_run(db: Path) -> None:
    said = CliRunner().invoke(main, ["history", "1", "--db", str(db)])
    assert said.exit_code == 0 and said.output.startswith("plan 'nightly': 1 run, 8 series")
    page = CliRunner().invoke(main, ["history", "1", "--db", str(db), "--format", "markdown"])
    assert page.exit_code == 0 and "1 run, 1, 2023-11-14 22:13:20 UTC" in page.output


def test_a_store_without_a_trigger_that_counts_its_revision_is_damaged(db: Path) -> None:
    """Without it, a change would leave a kept history standing: the store is refused."""
    with sqlite3.connect(db) as con:
        con.execute("DROP TRIGGER metrics_update")
    said = CliRunner().invoke(main, ["history", "--db", str(db)])
    assert said.exit_code == 1 and "is damaged (no trigger metrics_update)" in said.output
