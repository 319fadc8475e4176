"""What is derived from the stored runs and kept beside them, so that the next reader does
not derive it again: a long history's series (1,000 runs of 50 cases: seconds to read and
judge, a tenth of that to read back).

Each value is kept under a key (what it is, e.g. "history nightly") with the store's revision
it was derived at and the method that derived it (iolab's version and its analysis code). The
store counts a revision for every change to a run, a set-up, a case or a metric (triggers,
schema 5), whoever makes it: a value is valid only at the revision it was derived at, so
nothing that changed since is ever read from it, and a newer iolab derives its own.

Keeping is a favour, never a duty: a database opened read-only, or one another process is
writing, is left as it is (the next reader derives the value again).
"""

from __future__ import annotations

import sqlite3

WAIT_MS = 200  # the most a reader waits for another process's write to keep a value


def revision(db: sqlite3.Connection) -> int:
    """The store's revision now: read before what a value is derived from."""
    row = db.execute("SELECT n FROM revision").fetchone()
    return int(row[0]) if row is not None else -1


def read(db: sqlite3.Connection, key: str, method: str) -> bytes | None:
    """The value kept under `key`, if derived by `method` at the store's revision now."""
    row = db.execute(
        "SELECT d.value FROM derived d JOIN revision r ON d.revision = r.n"
        " WHERE d.key = ? AND d.method = ?",
        (key, method),
    ).fetchone()
    return row[0] if row is not None and isinstance(row[0], bytes) else None


def keep(db: sqlite3.Connection, key: str, method: str, at: int, value: bytes) -> bool:
    """Keep `value`, derived by `method` from the store as it was at revision `at`, unless
    the store changed since (then it is stale already) or cannot be written now (read-only,
    or another process's write holds it longer than WAIT_MS): whether it was kept."""
    waits = db.execute("PRAGMA busy_timeout").fetchone()[0]
    db.execute(f"PRAGMA busy_timeout = {WAIT_MS}")
    try:
        db.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError:  # read-only, locked or busy: not kept
        return False
    finally:
        db.execute(f"PRAGMA busy_timeout = {int(waits)}")
    try:
        if revision(db) != at:
            db.execute("ROLLBACK")
            return False
        db.execute("DELETE FROM derived WHERE key = ? OR revision <> ?", (key, at))  # stale
        db.execute(
            "INSERT INTO derived (key, revision, method, value) VALUES (?, ?, ?, ?)",
            (key, at, method, value),
        )
        db.execute("COMMIT")
        return True
    except sqlite3.OperationalError:  # the disk full, or the file read-only after all
        if db.in_transaction:
            db.execute("ROLLBACK")
        return False
