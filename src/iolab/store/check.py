"""Whether a file is an iolab database, found out before anything is written to it.

iolab marks every database it creates with `PRAGMA application_id = APPLICATION_ID`; one made
before the mark (schemas 1 and 2) is known by its exact set of tables and its user_version. A
0-byte file, or an SQLite file with nothing in it, is empty: iolab may create its database in
it (a `touch`ed file, or one whose creation was cut short), and reading commands refuse it. Any
other file is refused, and opened by SQLite at most read-only (mode=ro), which writes nothing
beside it.

A database of iolab's is checked for damage before anything reads or writes it, in a time that
does not grow with its size (issue 47: `PRAGMA quick_check` reads every page, 2.4 s of a 169 MB
store's open here): one of up to QUICK_CHECK_MAX bytes passes `PRAGMA quick_check` whole; a
larger one must be as long as its header says (pages x page size: cut short, or grown by
another program), and every connection reads with `PRAGMA cell_size_check` on, so that a
damaged page is refused as SQLite reads it, by a read as by a write (one line, "is damaged"),
before anything is written over it. A damaged page that nothing reads is left unfound.

Its schema must be exactly the one iolab's migrations make for its user_version (every table,
index, trigger and view in sqlite_master, their SQL compared with whitespace normalised): a
trigger or view a database brings would act, or show, where iolab writes or reads (one that
multiplies `metrics` on insert, one that raises). The schema iolab expects is computed from
the migrations themselves, run on an in-memory database; anything else is refused, naming the
first object that differs, before any command reads or writes.
"""

from __future__ import annotations

import functools
import json
import os
import sqlite3
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Concatenate, Literal, ParamSpec, Protocol, TypeVar

from iolab.errors import StoreError
from iolab.files import check_file
from iolab.store.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION, UNMARKED_VERSIONS

BUSY_TIMEOUT_S = 30.0
QUICK_CHECK_MAX = 16 * 1024**2  # bytes: a larger store is checked by its header and as read
KINDS = ("table", "index", "trigger", "view")  # what sqlite_master holds, in the order said
MAGIC = b"SQLite format 3\x00"
HEADER = 100  # bytes of SQLite's file header
USE_ANOTHER = "give the --db that 'iolab run' wrote, or a new file name"
RESTORE = "restore it from a copy, or use a new --db"
# What goes wrong reading a damaged database: SQLite's errors, and stored text or JSON that
# no longer decodes; but not iolab's own mistakes in using SQLite (BUGS).
READ_ERRORS = (sqlite3.DatabaseError, json.JSONDecodeError, UnicodeDecodeError, RecursionError)
BUGS = (sqlite3.ProgrammingError, sqlite3.IntegrityError)


@dataclass(frozen=True)
class DbFound:
    """What a --db path holds: nothing yet, an empty file, or an iolab database (its schema)."""

    kind: Literal["missing", "empty", "iolab"]
    version: int = 0


def openable(path: str | Path, create: bool) -> DbFound:
    """`path` as a database iolab may open: a plain file name that holds an iolab database, or
    is empty (or, to `create`, missing). Anything else is one StoreError, before any write."""
    special(path)
    check_file(
        path,
        f"--db {path}",
        StoreError,
        must_exist=not create,
        fix="give the database file that 'iolab run' wrote (--db FILE)"
        if not create
        else "give a database file such as results.db",
    )
    found = examine(Path(path))
    if found.kind == "empty" and not create:
        raise StoreError(
            f"{path} is empty (no iolab database in it yet); run 'iolab run --db {path}' first"
        )
    return found


def special(path: str | Path) -> None:
    """Names SQLite takes for something else than a file: '', ':memory:', 'file:' URIs."""
    text = str(path)
    if not text.strip():
        raise StoreError("--db is empty; give a database file such as results.db")
    if text == ":memory:":
        raise StoreError(
            "--db :memory: is SQLite's in-memory database, which keeps nothing; give a "
            "database file such as results.db"
        )
    if text.startswith("file:"):
        raise StoreError(
            f"--db {text}: SQLite takes a name starting with 'file:' as a URI; give a plain "
            f"file path (./{text} for a file of that name)"
        )


def examine(path: Path) -> DbFound:
    """Look at `path` without changing it: first its header, then (read-only) its schema."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(HEADER)
    except FileNotFoundError:
        return DbFound("missing")
    except OSError as error:
        raise StoreError(f"{path} cannot be read ({error.strerror}); {USE_ANOTHER}") from None
    if not head:
        return DbFound("empty")
    if len(head) < HEADER or not head.startswith(MAGIC):
        raise StoreError(f"{path} is not an iolab database ({_what(path)}); {USE_ANOTHER}")
    mark = int.from_bytes(head[68:72], "big")
    wal = 2 in (head[18], head[19])  # iolab's own are marked before it logs ahead (journal)
    if mark not in (0, APPLICATION_ID) or (wal and mark != APPLICATION_ID):
        raise _foreign(path)
    return _schema(path, mark == APPLICATION_ID)


def _what(path: Path) -> str:
    """A file that is not SQLite's, in words (its content is never quoted)."""
    with open(path, "rb") as handle:
        head = handle.read(4096)
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as error:
        cut = error.reason == "unexpected end of data"  # a character split by the 4 KiB
        text = head[: error.start].decode("utf-8") if cut else "\x00"
    if all(c.isprintable() or c in "\t\r\n" for c in text):
        return "a text file"
    return "not an SQLite file"


def _foreign(path: Path) -> StoreError:
    return StoreError(
        f"{path} is an SQLite database that iolab did not create; iolab leaves it alone: "
        f"{USE_ANOTHER}"
    )


def _schema(path: Path, marked: bool) -> DbFound:
    """The schema, read through a read-only connection. A journal that a dead iolab left on
    its own database is rolled back first; a dead program's journal on another file is left
    alone."""
    try:
        return _look(path)
    except sqlite3.DatabaseError as error:
        if getattr(error, "sqlite_errorname", "") != "SQLITE_READONLY_ROLLBACK":
            raise unreadable(path, error) from None
    if not marked:
        raise StoreError(
            f"{path} holds a write that its program did not finish ({path}-journal) and is "
            f"not marked as iolab's; iolab leaves it alone: {USE_ANOTHER}"
        )
    _roll_back(path)
    try:
        return _look(path)
    except sqlite3.DatabaseError as error:
        raise unreadable(path, error) from None


def _look(path: Path) -> DbFound:
    """What the file holds; an iolab database must be undamaged (quick_check up to
    QUICK_CHECK_MAX bytes, its length beyond)."""
    with read_only(path) as db:
        found = _classify(path, db)
        if found.kind == "iolab" and path.stat().st_size <= QUICK_CHECK_MAX:
            _quick_check(path, db)
        elif found.kind == "iolab":
            _whole(path, db)
        return found


def _whole(path: Path, db: sqlite3.Connection) -> None:
    """The file is as long as SQLite's header says (its pages x the page size); with a log
    that a killed iolab left beside it, whose pages count too, as SQLite reads it."""
    if os.path.exists(f"{path}-wal"):
        return
    pages = int(db.execute("PRAGMA page_count").fetchone()[0])
    size = int(db.execute("PRAGMA page_size").fetchone()[0])
    if path.stat().st_size != pages * size:
        raise StoreError(
            f"{path} is damaged (its length is not the {pages} pages of {size} bytes its header "
            f"says); {RESTORE}"
        )


def _roll_back(path: Path) -> None:
    """Open iolab's own database for writing, so that SQLite rolls back the journal a dead
    iolab left."""
    try:
        db = sqlite3.connect(uri(path, "rw"), uri=True, timeout=BUSY_TIMEOUT_S)
        try:
            db.execute("PRAGMA schema_version").fetchone()
        finally:
            db.close()
    except sqlite3.DatabaseError as error:
        raise unreadable(path, error) from None


def _classify(path: Path, db: sqlite3.Connection) -> DbFound:
    mark = int(db.execute("PRAGMA application_id").fetchone()[0])
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    objects = int(db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0])
    tables = {
        str(row[0])
        for row in db.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger')"
            " AND name NOT LIKE 'sqlite_%'"
        )
    }
    if version > SCHEMA_VERSION and (mark == APPLICATION_ID or not tables or "runs" in tables):
        raise newer(path, version)  # unmarked: made by hand (a newer iolab marks its own)
    if mark == APPLICATION_ID or (version in UNMARKED_VERSIONS and tables == tables_of(version)):
        verify(path, db, version)
        return DbFound("iolab", version)
    if objects == 0 and version == 0:
        return DbFound("empty")
    raise _foreign(path)


def newer(path: Path, version: int) -> StoreError:
    return StoreError(
        f"{path} was written by a newer iolab (schema {version}, this one reads up to "
        f"{SCHEMA_VERSION}); upgrade iolab or use another --db"
    )


def tables_of(version: int) -> frozenset[str]:
    """The tables and triggers of schema `version`, as its migrations make them."""
    return frozenset(name for kind, name in schema_of(version) if kind in ("table", "trigger"))


Schema = dict[tuple[str, str], str]  # (kind, name): the table it is on and its SQL


@functools.cache
def schema_of(version: int) -> Schema:
    """Schema `version` as iolab's migrations make it: run on an in-memory database."""
    db = sqlite3.connect(":memory:")
    try:
        for script in MIGRATIONS[:version]:
            db.executescript(script)
        return schema(db)
    finally:
        db.close()


def schema(db: sqlite3.Connection) -> Schema:
    """Every table, index, trigger and view a database holds (SQLite's own aside: its
    automatic indexes of UNIQUE columns, its statistics), whitespace in their SQL normalised."""
    rows = db.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master"
        " WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
    )
    return {(str(k), str(n)): f"{t} {' '.join(str(sql).split())}" for k, n, t, sql in rows}


def verify(path: Path, db: sqlite3.Connection, version: int) -> None:
    """The schema of `db` is exactly iolab's at `version`, else one StoreError that names
    the first object that differs."""
    differs = difference(schema(db), schema_of(version))
    if differs is not None:
        raise StoreError(
            f"{path}: refused, {differs} (iolab reads and writes only a database whose schema "
            f"is its own); {RESTORE}"
        )


def difference(found: Schema, expected: Schema) -> str | None:
    """The first object that is not as iolab's migrations make it, in words."""
    for key in sorted(found.keys() | expected.keys(), key=lambda k: (KINDS.index(k[0]), k[1])):
        kind, name = key
        said = f"{kind} '{_clean(name)}'"
        if key not in expected:
            return f"{said} is not iolab's"
        if key not in found:
            return f"{said} is missing"
        if found[key] != expected[key]:
            return f"{said} is not as iolab made it"
    return None


def _quick_check(path: Path, db: sqlite3.Connection) -> None:
    said = [str(row[0]) for row in db.execute("PRAGMA quick_check")]
    if said != ["ok"]:
        lines = [line for text in said for line in text.splitlines() if not line.startswith("*")]
        raise StoreError(f"{path} is damaged ({_clean(lines[0] if lines else '?')}); {RESTORE}")


@contextmanager
def read_only(path: Path) -> Iterator[sqlite3.Connection]:
    """A connection that cannot write nor create anything, the file's own or beside it."""
    db = sqlite3.connect(uri(path, "ro"), uri=True, isolation_level=None, timeout=BUSY_TIMEOUT_S)
    db.execute("PRAGMA cell_size_check = ON")
    try:
        yield db
    finally:
        db.close()


def uri(path: Path, mode: str) -> str:
    """SQLite's URI for `path` (no character of its name is taken as a URI's)."""
    return f"file:{urllib.parse.quote(str(path.resolve()))}?mode={mode}"


def unreadable(path: Path, error: BaseException) -> StoreError:
    """What went wrong reading `path`, as one line: locked, unreadable, or damaged."""
    name = getattr(error, "sqlite_errorname", "") or ""
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return StoreError(f"{path} is locked by another process ({error}); try again later")
    if name.startswith("SQLITE_IOERR"):
        return StoreError(f"{path} cannot be read ({error}); check the disk, or use a new --db")
    if isinstance(error, json.JSONDecodeError):
        detail = "a stored value is not valid JSON"
    elif isinstance(error, RecursionError):
        detail = "a stored value is nested too deep to read"
    elif isinstance(error, UnicodeDecodeError) or str(error).startswith("Could not decode"):
        detail = "a stored text is not valid UTF-8"
    else:
        detail = _clean(str(error))
    return StoreError(f"{path} is damaged ({detail}); {RESTORE}")


def _clean(text: str) -> str:
    """SQLite's words as part of one printable line, at most 100 characters."""
    line = "".join(c if c.isprintable() else " " for c in text)
    return line[:97] + "..." if len(line) > 100 else line


class HasPath(Protocol):
    path: Path


Self = TypeVar("Self", bound=HasPath)
Args = ParamSpec("Args")
Value = TypeVar("Value")


def reads(
    method: Callable[Concatenate[Self, Args], Value],
) -> Callable[Concatenate[Self, Args], Value]:
    """A Store method that reads: a damaged database is one StoreError naming the file."""

    @functools.wraps(method)
    def reading(store: Self, /, *args: Args.args, **kwargs: Args.kwargs) -> Value:
        try:
            return method(store, *args, **kwargs)
        except BUGS:
            raise
        except READ_ERRORS as error:
            raise unreadable(store.path, error) from None

    return reading
