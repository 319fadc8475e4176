"""`iolab history` derived from the runs each time, nothing of it kept in the database (issue
43, finding 3): its points summed in SQL are the cases' own, to the last bit; it shows each
series' latest runs and every change (`--all`: every run); it writes nothing; a store of
schema 5 (which kept a history, counted by triggers) loses the table and the triggers by a
migration; a figure stored that is not a number is refused in one line, never printed, and
`--json` is always valid JSON (issue 40, finding 4)."""

from __future__ import annotations

import gc
import hashlib
import json
import random
import sqlite3
from pathlib import Path

import pytest
from rich.console import Console

from conftest import iolab_here
from iolab.analysis import history
from iolab.app.gate import plan_history
from iolab.errors import StoreError
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
from iolab.report.text import history_text
from iolab.store import APPLICATION_ID, SCHEMA_VERSION, Store, figures
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


def _bytes(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _objects(path: Path) -> set[tuple[str, str]]:
    with sqlite3.connect(path) as con:
        found = {
            (str(r[0]), str(r[1])) for r in con.execute("SELECT type, name FROM sqlite_master")
        }
    con.close()
    return found


def test_the_points_summed_in_sql_are_the_cases_own(db: Path) -> None:
    """Every point, figure, step and change point the same as from the cases read one by one
    (Store.case_figures, the gate's way), to the last bit."""
    found = plan_history(str(db), None, quiet())
    with Store(db) as store:
        runs = store.runs()
        read = store.case_figures([r.id for r in runs])
    assert list(found.series) == history.series([(r, read[r.id]) for r in runs])
    disk_a = next(s for s in found.series if s.setup == "disk-a" and s.metric == "iops")
    assert [c.run_id for c in disk_a.changes] == [17]  # runs 1-24: the drop at the 17th
    assert disk_a.changes[0].facts == ("kernel 6.1.0 -> 6.8.0",)
    assert [p.run_id for p in disk_a.points if p.foreign] == [10]
    assert len(found.runs) == RUNS


@pytest.mark.parametrize("every", [False, True], ids=["default", "all"])
def test_the_text_is_the_one_the_cases_read_one_by_one_give(db: Path, every: bool) -> None:
    """`iolab history` (by default, and --all) prints byte for byte what the series of the
    cases read one by one (Store.case_figures, the gate's reader) print."""
    with Store(db) as store:
        runs = store.runs()
        read = store.case_figures([r.id for r in runs])
    found = history.series([(r, read[r.id]) for r in runs])
    expected = history_text.history("nightly", runs, found, every)
    args = ("history", *(["--all"] if every else []), "--db", str(db))
    assert iolab_here(*args, cwd=db.parent, check=True).stdout == expected


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        ("""percentiles_ns = '{"99": "many"}'""", "is damaged (run 1, 'disk-b' x 'randread QD1'"),
        ("""percentiles_ns = '{"99": -1}'""", "is damaged (run 1, 'disk-b' x 'randread QD1'"),
        ("direction = 'sideways'", "unknown direction 'sideways'"),
        ("bw_bytes = 'x'", "is damaged (run 1, 'disk-b' x 'randread QD1'"),
    ],
    ids=["p99-text", "p99-negative", "direction", "bw-text"],
)
def test_each_figure_a_history_reads_is_checked(db: Path, damage: str, said: str) -> None:
    with sqlite3.connect(db) as con:
        con.execute(f"UPDATE metrics SET {damage} WHERE case_id = 7")
    con.close()
    with pytest.raises(StoreError) as raised:
        plan_history(str(db), None, quiet())
    assert said in str(raised.value)


def test_a_history_reads_the_cases_from_their_index_alone(db: Path) -> None:
    """The cases a history reads come from the index that holds what it reads, in its order
    (schema 7): never the table's rows, whose stored fio output sits before the warnings."""
    with sqlite3.connect(db) as con:
        plan = con.execute(
            "EXPLAIN QUERY PLAN " + figures.POINTS_QUERY.format(marks="1, 2")
        ).fetchall()
    con.close()
    said = [row[-1] for row in plan]
    assert "SEARCH c USING COVERING INDEX cases_history (run_id=?)" in said, said
    assert not any("TEMP B-TREE" in line for line in said), said


@pytest.mark.parametrize("enabled", [True, False], ids=["enabled", "disabled"])
def test_the_garbage_collector_is_left_as_it_was(db: Path, enabled: bool) -> None:
    """A history pauses Python's cyclic collector while it derives (its objects hold no
    cycles) and leaves it as it found it, after a history and after a refusal alike."""
    (gc.enable if enabled else gc.disable)()
    try:
        assert plan_history(str(db), None, quiet()).series
        assert gc.isenabled() is enabled
        with sqlite3.connect(db) as con:
            con.execute("UPDATE metrics SET bw_bytes = 'x' WHERE case_id = 7")
        con.close()
        with pytest.raises(StoreError):
            plan_history(str(db), None, quiet())
        assert gc.isenabled() is enabled
    finally:
        gc.enable()


def test_a_failed_repetition_leaves_its_point_to_the_others(db: Path) -> None:
    """A repetition that failed (no figures stored) is no damage: its run's point is the
    other repetitions', the same as from the cases read one by one."""
    with sqlite3.connect(db) as con:
        con.execute("UPDATE cases SET status = 'failed' WHERE id = 7")
        con.execute("DELETE FROM metrics WHERE case_id = 7")
        run, setup, workload = con.execute(
            "SELECT run_id, setup, workload FROM cases WHERE id = 7"
        ).fetchone()
    con.close()
    found = plan_history(str(db), None, quiet())
    with Store(db) as store:
        runs = store.runs()
        read = store.case_figures([r.id for r in runs])
    assert list(found.series) == history.series([(r, read[r.id]) for r in runs])
    one = next(
        s for s in found.series if (s.setup, s.workload, s.metric) == (setup, workload, "iops")
    )
    assert [len(p.values) for p in one.points if p.run_id == run] == [2]
    assert iolab_here("history", "--db", str(db), cwd=db.parent).returncode == 0


def test_history_writes_nothing_and_shows_a_changed_figure_at_once(db: Path) -> None:
    first = plan_history(str(db), None, quiet())
    with sqlite3.connect(db) as con:  # another program doubles one figure of the last run
        con.execute(
            "UPDATE metrics SET iops = iops * 2 WHERE case_id IN (SELECT id FROM cases"
            " WHERE setup = 'disk-b' AND run_id = (SELECT max(run_id) FROM cases))"
        )
    con.close()
    untouched = _bytes(db)
    again = plan_history(str(db), None, quiet())
    assert _bytes(db) == untouched
    for before, now in zip(first.series, again.series, strict=True):
        doubled = before.setup == "disk-b" and before.metric == "iops"
        assert now.points[-1].mean == pytest.approx(before.points[-1].mean * (2 if doubled else 1))
        assert now.points[:-1] == before.points[:-1]


def test_by_default_each_series_shows_its_latest_runs_and_every_change(db: Path) -> None:
    shown = iolab_here("history", "--db", str(db), cwd=db.parent, check=True).stdout
    every = iolab_here("history", "--all", "--db", str(db), cwd=db.parent, check=True).stdout
    head = shown.splitlines()[0]
    assert head.endswith("each series' latest 10 runs and every change shown (--all: every run)")
    block = shown.split("\n\ndisk-a · randread QD1 · iops")[1].split("\n\n")[0].splitlines()
    assert block[0].endswith("(14 earlier runs not shown)")
    runs = [int(line.split()[1]) for line in block[1:]]
    assert runs == list(range(15, 25))  # the change point (run 17) among them
    assert "<= new level" in next(line for line in block if line.split()[1] == "17")
    assert len(every.splitlines()) == 1 + 8 * (2 + RUNS)  # 8 series, every run
    as_json = json.loads(iolab_here("history", "--json", "--db", str(db), cwd=db.parent).stdout)
    one = as_json["series"][0]
    assert as_json["all_runs"] is False and one["runs"] == RUNS
    assert [p["run"] for p in one["points"]][-10:] == list(range(15, 25))
    rows = iolab_here("history", "--format", "csv", "--all", "--db", str(db), cwd=db.parent)
    assert len(rows.stdout.splitlines()) == 1 + 8 * RUNS


@pytest.mark.parametrize(
    ("value", "fmt"),
    [
        ("9e999", "--json"),  # infinity, as SQLite stores it
        ("-9e999", "--json"),
        ("-5", "--json"),
        ("'many'", "--json"),  # text in a REAL column
        ("9e999", "--format=csv"),
        ("-5", "--format=table"),
        ("9e999", "--all"),
    ],
)
def test_a_figure_that_is_no_number_is_refused_in_one_line(db: Path, value: str, fmt: str) -> None:
    with sqlite3.connect(db) as con:
        con.execute(f"UPDATE metrics SET iops = {value} WHERE case_id = 7")
    con.close()
    untouched = _bytes(db)
    done = iolab_here("history", fmt, "--db", str(db), cwd=db.parent)
    assert done.returncode == 1 and done.stdout == "" and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and "is damaged (run 1, 'disk-b' x 'randread QD1'" in (
        done.stderr
    )
    assert _bytes(db) == untouched


def test_nan_in_a_stored_percentile_is_refused_and_json_stays_json(db: Path) -> None:
    """Python's json writes NaN, which is not JSON; SQLite finds such a value malformed."""
    with sqlite3.connect(db) as con:
        con.execute("""UPDATE metrics SET percentiles_ns = '{"99": NaN}' WHERE case_id = 7""")
    con.close()
    done = iolab_here("history", "--json", "--db", str(db), cwd=db.parent)
    assert done.returncode == 1 and done.stdout == "" and "Traceback" not in done.stderr
    assert done.stderr.startswith("iolab: error: ") and done.stderr.count("\n") == 1
    assert "is damaged" in done.stderr


def test_a_history_that_overflows_is_refused_never_printed_as_nan(db: Path) -> None:
    """Figures each within bounds whose change is not a finite number (a figure next to
    the smallest double): refused before anything is shown."""
    with sqlite3.connect(db) as con:
        con.execute(
            "UPDATE metrics SET iops = 5e-324 WHERE case_id IN (SELECT id FROM cases"
            " WHERE setup = 'disk-b' AND workload = 'randread QD1' AND run_id < 8)"
        )
    con.close()
    done = iolab_here("history", "--json", "--all", "--db", str(db), cwd=db.parent)
    if done.returncode == 0:  # nothing overflowed: then it is JSON, with no NaN in it
        json.loads(done.stdout, parse_constant=lambda name: pytest.fail(f"{name} in JSON"))
    else:
        assert done.returncode == 1 and done.stderr.count("\n") == 1
        assert "not a finite number" in done.stderr and "Traceback" not in done.stderr


def schema_5(path: Path) -> None:
    """A store as iolab at schema 5 left it: migrations 1 to 5, a run, a kept history."""
    con = sqlite3.connect(path)
    for script in MIGRATIONS[:5]:
        con.executescript(script)
    con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    con.execute("PRAGMA user_version = 5")
    con.execute("INSERT INTO derived VALUES ('history nightly', 0, 'forged', X'00')")
    con.commit()
    con.close()


def test_a_store_of_schema_5_loses_the_kept_history_and_its_triggers(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    schema_5(path)
    assert ("table", "derived") in _objects(path) and ("trigger", "cases_insert") in _objects(path)
    with Store(path) as store:
        _save_run(store, 0, random.Random(1))
    found = _objects(path)
    assert not {name for kind, name in found if kind == "trigger"}
    assert not {("table", "derived"), ("table", "revision")} & found
    with sqlite3.connect(path) as con:
        assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert con.execute("SELECT count(*) FROM cases").fetchone()[0] == 12
    con.close()
    fresh = tmp_path / "fresh.db"
    Store(fresh).close()
    assert ("table", "derived") not in _objects(fresh)
    assert _objects(fresh) == _objects(path)


def test_a_trigger_added_while_iolab_has_the_store_open_stops_its_next_write(
    tmp_path: Path,
) -> None:
    """The schema is verified again under the write lock when SQLite counts a change to it:
    a trigger another program adds after iolab opened the store never acts."""
    path = tmp_path / "s.db"
    with Store(path) as store:
        _save_run(store, 0, random.Random(1))
        other = sqlite3.connect(path)
        other.execute(
            "CREATE TRIGGER metrics_insert AFTER INSERT ON metrics BEGIN"
            " UPDATE metrics SET iops = iops * 1000 WHERE case_id = new.case_id; END"
        )
        other.commit()
        other.close()
        untouched = _dump(path)  # what the store holds (a write-ahead log may hold some of it)
        with pytest.raises(StoreError, match=r"s\.db: refused, trigger 'metrics_insert' is not"):
            _save_run(store, 1, random.Random(1))
    assert _dump(path) == untouched


def _dump(path: Path) -> str:
    """Every row and object of a store as SQL, read through SQLite (its log folded in)."""
    con = sqlite3.connect(path)
    try:
        return "\n".join(con.iterdump())
    finally:
        con.close()


@pytest.mark.parametrize(
    "damage",
    [
        "UPDATE metrics SET iops = 9e999 WHERE case_id = 7",
        """UPDATE runs SET environment = '{"hostname": "lab", "memory_bytes": NaN}'""",
    ],
    ids=["infinite-iops", "nan-in-the-environment"],
)
def test_export_never_writes_nan_as_json(db: Path, damage: str) -> None:
    with sqlite3.connect(db) as con:
        con.execute(damage)
    con.close()
    untouched = _bytes(db)
    done = iolab_here("export", "1", "--db", str(db), cwd=db.parent)
    assert done.returncode == 1 and done.stdout == "" and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1
    assert "refused, run 1 holds a value that is not a finite number" in done.stderr
    assert _bytes(db) == untouched
