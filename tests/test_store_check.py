"""iolab never touches a database it did not create, read-only commands create nothing, and a
damaged database is one line (issue 19, finding 6).

Table-driven: every command that takes --db, against every kind of file that is not an iolab
database iolab may use. Each row asserts: exit code 1; exactly one line on stderr, starting
"iolab: error: " and holding the row's words; no traceback; the file's sha256 unchanged; and
nothing created, changed or removed beside it (no -journal, -wal or -shm left, no database
made where none was). Then what is not refused: a fresh run's database, an empty file to
create into, the committed databases of older iolab versions (copies), and a journal that a
dead iolab left on its own database.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, Word, invoke, iolab_here, listing, problems_with_output, run_iolab
from iolab.errors import StoreError
from iolab.store import APPLICATION_ID, SCHEMA_VERSION, Store

GOLDEN = Path(__file__).parent / "golden"
FIO_JSON = FIXTURES / "fio" / "randread-json" / "randread-json.json"
PAGE = 4096
SEED = 19  # the random bytes of every damaged file: the same in every run

PLAN = """name = "hostile db"

[defaults]
runtime = 1
size = "8m"

[[setup]]
name = "here"
path = "@DIR@/target"

[[workload]]
name = "rr"
rw = "randread"
bs = "4k"
"""

# ---------------------------------------------------------------- the files


def golden_copy(path: Path) -> None:
    """The committed store (schema 1, made before iolab's mark)."""
    shutil.copyfile(GOLDEN / "store.db", path)


def marked_copy(path: Path) -> None:
    """The committed store, upgraded and marked by this iolab."""
    golden_copy(path)
    Store(path).close()


def random_over(path: Path, offset: int, size: int) -> None:
    with open(path, "r+b") as handle:
        handle.seek(offset)
        handle.write(random.Random(SEED).randbytes(size))


def damaged_mid_file(make: Callable[[Path], None]) -> Callable[[Path], None]:
    """An iolab database with 4 KiB of random bytes written over the middle of the file."""

    def damaged(path: Path) -> None:
        make(path)
        random_over(path, path.stat().st_size // 2, PAGE)

    return damaged


def pages_damaged(path: Path) -> None:
    """Its header (page 1) intact, every other page random."""
    golden_copy(path)
    random_over(path, PAGE, path.stat().st_size - PAGE)


def truncated(path: Path) -> None:
    golden_copy(path)
    os.truncate(path, path.stat().st_size // 2)


def header_cut(path: Path) -> None:
    """The first 60 bytes of an iolab database: shorter than SQLite's header."""
    path.write_bytes((GOLDEN / "store.db").read_bytes()[:60])


def foreign(*pragmas: str, tables: Sequence[str] = ("customers (id, name)",)) -> Any:
    """Another program's SQLite database: its tables, a customer, and `pragmas`."""

    def make(path: Path) -> None:
        con = sqlite3.connect(path)
        try:
            for pragma in pragmas:
                con.execute(f"PRAGMA {pragma}")
            for table in tables:
                con.execute(f"CREATE TABLE {table}")
            con.execute(f"INSERT INTO {tables[0].split()[0]} VALUES (1, 'ACME')")
            con.commit()
        finally:
            con.close()

    return make


def with_extra_table(path: Path) -> None:
    """An older iolab's database (no mark) that also holds a table of someone else's."""
    golden_copy(path)
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE customers (id, name)")
    con.close()


def altered(*statements: str) -> Callable[[Path], None]:
    """iolab's own database (upgraded and marked), to which `statements` added or changed
    something of its schema (issue 40, finding 4)."""

    def make(path: Path) -> None:
        marked_copy(path)
        with sqlite3.connect(path) as con:
            for statement in statements:
                con.execute(statement)
        con.close()

    return make


# What the databases brought: a trigger that multiplies what fio measured as it is
# stored (13,357 IOPS became 13,356,643), and one that raises on every case written.
MULTIPLIES = (
    "CREATE TRIGGER metrics_insert AFTER INSERT ON metrics BEGIN"
    " UPDATE metrics SET iops = iops * 1000 WHERE case_id = new.case_id; END"
)
RAISES = "CREATE TRIGGER x BEFORE INSERT ON cases BEGIN SELECT RAISE(ABORT, 'no'); END"


def journal_left(path: Path) -> None:
    """Another program's database with the journal of a write its program never finished."""
    foreign()(path)
    killed_mid_write(path)


def killed_mid_write(path: Path) -> None:
    """A process that writes to `path` in one transaction, killed before it commits: the
    pages it changed are already in the file, and its journal (hot) is left beside it."""
    script = (
        "import os, signal, sqlite3, sys\n"
        "con = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "con.execute('PRAGMA cache_size = 2')\n"
        "con.execute('BEGIN IMMEDIATE')\n"
        "con.execute('CREATE TABLE filler (x)')\n"
        "con.executemany('INSERT INTO filler VALUES (?)', [('x' * 1000,)] * 3000)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(path)], check=False)
    assert done.returncode == -signal.SIGKILL
    assert Path(f"{path}-journal").stat().st_size > 0


def bad_json(path: Path) -> None:
    """An iolab database whose structure is sound but a stored JSON value is not."""
    marked_copy(path)
    with sqlite3.connect(path) as con:
        con.execute("UPDATE runs SET environment = '{\"hostname\": ' WHERE id = 1")
    con.close()


def bad_utf8(path: Path) -> None:
    """An iolab database whose structure is sound but a stored text is not UTF-8."""
    marked_copy(path)
    with sqlite3.connect(path) as con:
        con.execute("UPDATE runs SET plan_name = CAST(X'fffe41' AS TEXT) WHERE id = 1")
    con.close()


def text_file(path: Path) -> None:
    path.write_text("customers: ACME, Initech\n")


def random_file(path: Path) -> None:
    path.write_bytes(random.Random(SEED).randbytes(64 * 1024))


def zero_bytes(path: Path) -> None:
    path.write_bytes(b"")


@dataclass(frozen=True)
class Kind:
    """A --db argument and how to make the file it names (None: nothing is made)."""

    db: str
    make: Callable[[Path], None] | None
    words: tuple[Word, ...]


# Files that no command may use: refused before anything writes.
REFUSED = {
    "foreign": Kind("other.db", foreign(), ("other.db", "did not create")),
    "foreign-user-version": Kind(
        "other.db", foreign("user_version = 2"), ("other.db", "did not create")
    ),
    "foreign-application-id": Kind(
        "other.db", foreign("application_id = 1598903374"), ("other.db", "did not create")
    ),
    "foreign-wal": Kind("other.db", foreign("journal_mode = WAL"), ("other.db", "did not create")),
    "foreign-runs-table": Kind(
        "other.db",
        foreign("user_version = 1", tables=("runs (id, name)",)),
        ("other.db", "did not create"),
    ),
    "older-iolab-plus-a-table": Kind("x.db", with_extra_table, ("x.db", "did not create")),
    "foreign-with-journal": Kind("other.db", journal_left, ("other.db", "did not finish")),
    "text": Kind("notes.txt", text_file, ("notes.txt", "text file", "not an iolab database")),
    "random-bytes": Kind("x.db", random_file, ("x.db", "not an SQLite file")),
    "header-cut-short": Kind("x.db", header_cut, ("x.db", "not an iolab database")),
    "trigger-multiplies-metrics": Kind(
        "x.db", altered(MULTIPLIES), ("x.db: refused", "trigger 'metrics_insert' is not iolab's")
    ),
    "trigger-raises": Kind("x.db", altered(RAISES), ("x.db: refused", "trigger 'x' is not")),
    "extra-view": Kind(
        "x.db",
        altered("CREATE VIEW runs_v AS SELECT id * 2 AS id FROM runs"),
        ("x.db: refused", "view 'runs_v' is not iolab's"),
    ),
    "extra-index": Kind(
        "x.db",
        altered("CREATE INDEX mine ON cases(setup)"),
        ("x.db: refused", "index 'mine' is not iolab's"),
    ),
    "extra-table": Kind(
        "x.db", altered("CREATE TABLE notes (x)"), ("x.db: refused", "table 'notes' is not")
    ),
    "table-changed": Kind(
        "x.db",
        altered("ALTER TABLE metrics ADD COLUMN x REAL DEFAULT 1"),
        ("x.db: refused", "table 'metrics' is not as iolab made it"),
    ),
    "index-missing": Kind(
        "x.db", altered("DROP INDEX samples_case"), ("x.db: refused", "index 'samples_case'")
    ),
    "control-characters-in-a-name": Kind(
        "x.db",
        altered('CREATE VIEW "v\x1b[2J\nx" AS SELECT 1'),
        ("x.db: refused", "is not iolab's"),
    ),
    "damaged-older-iolab": Kind("x.db", damaged_mid_file(golden_copy), ("x.db", "damaged")),
    "damaged-marked": Kind("x.db", damaged_mid_file(marked_copy), ("x.db", "damaged")),
    "damaged-pages-header-fine": Kind("x.db", pages_damaged, ("x.db", "damaged")),
    "truncated": Kind("x.db", truncated, ("x.db", "damaged")),
    "memory": Kind(":memory:", None, (":memory:", "keeps nothing")),
    "empty-string": Kind("", None, ("--db", "is empty")),
    "file-uri": Kind("file:x.db", None, ("file:x.db", "URI")),
    "file-uri-memory": Kind("file::memory:?cache=shared", None, ("file::memory:", "URI")),
}
# What only commands that read refuse: `run` and `import` create a database there.
NOTHING_YET = {
    "missing": Kind("x.db", None, ("x.db", "does not exist")),
    "zero-bytes": Kind("x.db", zero_bytes, ("x.db", "is empty")),
}
# Sound structure, damaged values (quick_check passes): refused by what reads the runs.
BAD_VALUES = {
    "bad-json": Kind("x.db", bad_json, ("x.db", "damaged", "JSON")),
    "bad-utf8": Kind("x.db", bad_utf8, ("x.db", "damaged", "UTF-8")),
}

# ---------------------------------------------------------------- the commands

READING = {
    "runs": "runs --db @DB@",
    "report": "report --db @DB@",
    "report-markdown-file": "report --format markdown -o out.md --db @DB@",
    "compare": "compare 1 2 --db @DB@",
    "export-json": "export --db @DB@",
    "export-csv": "export --format csv -o out.csv --db @DB@",
    "advise": "advise 1 --db @DB@",
    "history": "history --db @DB@",
    "history-json": "history --json --db @DB@",
    "check": "check --db @DB@",
    "resume": "run --resume 1 --db @DB@",
}
WRITING = {
    "run": "run plan.toml --db @DB@",
    "import": "import run.json --db @DB@",
    "peak": "peak --target target --runtime 1 --db @DB@",
}


def rows() -> list[Any]:
    found = []
    for command, args in {**READING, **WRITING}.items():
        kinds = {**REFUSED, **(NOTHING_YET if command in READING else {})}
        if command in READING or command == "run":
            kinds |= BAD_VALUES
        for name, kind in kinds.items():
            # `run` gets as far as fio's own check of the plan before it reads the runs
            fio = command == "run" and name in BAD_VALUES
            marks = [pytest.mark.fio] if fio else []
            found.append(pytest.param(command, args, kind, id=f"{command}-{name}", marks=marks))
    return found


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "none"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Kind, Path], None]:
    """Puts a kind's file in a folder: made once a module (a maker makes the same bytes each
    time: its random bytes are seeded), then copied, with what its maker left beside it (a
    journal), into each row's own folder; a row changes only its copy."""
    templates: dict[Kind, Path] = {}

    def made_in(kind: Kind, folder: Path) -> None:
        assert kind.make is not None
        if kind not in templates:
            templates[kind] = tmp_path_factory.mktemp("kind")
            kind.make(templates[kind] / kind.db)
        for path in sorted(templates[kind].iterdir()):
            shutil.copyfile(path, folder / path.name)

    return made_in


@pytest.mark.parametrize(("command", "args", "kind"), rows())
def test_a_database_iolab_may_not_use_is_one_line_and_left_alone(
    command: str,
    args: str,
    kind: Kind,
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
    made: Callable[[Kind, Path], None],
) -> None:
    (workdir / "target").mkdir()
    (workdir / "plan.toml").write_text(PLAN.replace("@DIR@", str(workdir)))
    shutil.copyfile(FIO_JSON, workdir / "run.json")
    db = workdir / kind.db
    if kind.make is not None:
        made(kind, workdir)
    before, digest = listing(workdir), sha256(db)
    monkeypatch.chdir(workdir)
    argv = [kind.db if arg == "@DB@" else arg for arg in args.split()]
    outcome = invoke(argv, limit_s=60)

    problems = problems_with_output(outcome, kind.words)
    if sha256(db) != digest:
        problems.append(f"{kind.db} changed")
    after = listing(workdir)
    for name in sorted(before.keys() | after.keys()):
        if before.get(name) != after.get(name):
            problems.append(f"{name}: {before.get(name)} became {after.get(name)}")
    assert not problems, "\n".join([f"iolab {' '.join(argv)}", *problems])


# ---------------------------------------------------------------- what is not refused


def mark_and_version(db: Path) -> tuple[int, int]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        found = (
            int(con.execute("PRAGMA application_id").fetchone()[0]),
            int(con.execute("PRAGMA user_version").fetchone()[0]),
        )
    con.close()
    return found


def accepted(db: Path, cwd: Path) -> None:
    """Every reading command works on `db` and leaves nothing beside it."""
    before = sorted(p.name for p in cwd.iterdir())
    for args in (
        ("runs",),
        ("report",),
        ("export",),
        ("export", "--format", "csv"),
        ("compare", "1", "2"),
    ):
        done = run_iolab(*args, "--db", str(db), cwd=cwd)
        assert done.returncode == 0, f"{args}: {done.stderr}"
        assert "Traceback" not in done.stderr
    assert sorted(p.name for p in cwd.iterdir()) == before


@pytest.mark.fio
def test_a_fresh_run_creates_a_marked_database_that_later_commands_accept(workdir: Path) -> None:
    (workdir / "target").mkdir()
    (workdir / "plan.toml").write_text(PLAN.replace("@DIR@", str(workdir)))
    for extra in ((), ("--new",)):
        run_iolab("run", "plan.toml", "--db", "new.db", *extra, cwd=workdir, check=True)
    assert mark_and_version(workdir / "new.db") == (APPLICATION_ID, SCHEMA_VERSION)
    accepted(workdir / "new.db", workdir)


@pytest.mark.slow
@pytest.mark.parametrize("start", ["missing", "zero-bytes", "sqlite-without-tables"])
def test_import_creates_the_database_in_a_new_name_or_an_empty_file(
    start: str, workdir: Path
) -> None:
    db = workdir / "new.db"
    if start == "zero-bytes":
        db.write_bytes(b"")
    elif start == "sqlite-without-tables":
        with sqlite3.connect(db) as con:
            con.execute("CREATE TABLE t (x)")
            con.execute("DROP TABLE t")  # a valid SQLite file that holds nothing
        con.close()
        assert db.stat().st_size > 0
    shutil.copyfile(FIO_JSON, workdir / "a.json")
    shutil.copyfile(FIO_JSON, workdir / "b.json")
    (workdir / "b.json").write_text((workdir / "b.json").read_text() + "\n")  # another file
    done = run_iolab("import", "a.json", "b.json", "--db", "new.db", cwd=workdir, check=True)
    assert "run 1:" in done.stdout
    assert mark_and_version(db) == (APPLICATION_ID, SCHEMA_VERSION)
    done = run_iolab("import", "b.json", "--setup", "other", "--db", "new.db", cwd=workdir)
    assert done.returncode == 0 and "already imported" in done.stderr, done.stderr


@pytest.mark.slow
@pytest.mark.parametrize(("name", "version"), [("store.db", 1), ("devices.db", 2), ("cdm.db", 2)])
def test_databases_of_older_iolab_versions_still_open(
    name: str, version: int, workdir: Path
) -> None:
    """A committed database, copied: it has no mark; schema 1 is upgraded (and marked from
    then on), schema 2 is read as it is, unchanged."""
    committed = GOLDEN / name
    digest = sha256(committed)
    db = workdir / name
    shutil.copyfile(committed, db)
    assert mark_and_version(db) == (0, version)
    done = run_iolab("runs", "--db", name, cwd=workdir)
    assert done.returncode == 0 and done.stdout.strip(), done.stderr
    if version < SCHEMA_VERSION:
        assert mark_and_version(db) == (APPLICATION_ID, SCHEMA_VERSION)
    else:
        assert sha256(db) == digest, "a reading command wrote to a current database"
    done = run_iolab("report", "--db", name, cwd=workdir)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert sha256(committed) == digest
    assert sorted(p.name for p in workdir.iterdir()) == [name]


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
def test_a_journal_left_by_a_dead_iolab_is_rolled_back(workdir: Path) -> None:
    shutil.copyfile(FIO_JSON, workdir / "a.json")
    iolab_here("import", "a.json", "--db", "x.db", cwd=workdir, check=True)
    listed = iolab_here("runs", "--db", "x.db", cwd=workdir, check=True).stdout
    killed_mid_write(workdir / "x.db")
    done = run_iolab("runs", "--db", "x.db", cwd=workdir)
    assert done.returncode == 0, done.stderr
    assert done.stdout == listed
    assert sorted(p.name for p in workdir.iterdir()) == ["a.json", "x.db"]
    with sqlite3.connect(workdir / "x.db") as con:  # the dead write is undone
        assert not con.execute("SELECT name FROM sqlite_master WHERE name = 'filler'").fetchall()
    con.close()


@pytest.mark.parametrize(
    ("name", "make", "words"),
    [
        ("other.db", foreign(), "did not create"),
        ("x.db", damaged_mid_file(golden_copy), "damaged"),
        ("x.db", zero_bytes, "is empty"),
        (":memory:", None, "keeps nothing"),
        ("", None, "--db is empty"),
        ("file:x.db?mode=memory", None, "URI"),
    ],
)
def test_the_store_refuses_before_it_opens(
    name: str, make: Callable[[Path], None] | None, words: str, workdir: Path
) -> None:
    """The library too: Store() raises one StoreError and changes nothing (reading: create
    is False)."""
    if make is not None:
        make(workdir / name)
    before = listing(workdir)
    with pytest.raises(StoreError, match=words):
        Store(workdir / name if make else name, create=False)
    assert listing(workdir) == before


def test_read_errors_name_the_file(workdir: Path) -> None:
    """Damage that only shows when a value is read is one StoreError naming the file."""
    db = workdir / "x.db"
    marked_copy(db)
    with sqlite3.connect(db) as con:
        con.execute("UPDATE cases SET options = '{' WHERE id = 1")
    con.close()
    with Store(db, create=False) as store:
        assert len(store.runs()) == 2  # the runs themselves read fine
        with pytest.raises(StoreError, match=r"x\.db is damaged \(a stored value is not valid"):
            store.cases(1)
        with pytest.raises(StoreError, match=r"x\.db is damaged"):
            store.dump(1)
