"""How writes reach the disk: a write-ahead log while iolab writes, one file at rest.

A writing connection turns on SQLite's write-ahead log (WAL) before its first transaction,
with `synchronous = NORMAL`: a commit appends the transaction to `<db>-wal` and returns
without waiting for the disk, so a finished case costs one write, not the three to five
synced ones of a rollback journal. A committed transaction survives iolab being killed (the
log is in the kernel's hands at once, and the next connection reads it); a power loss or a
kernel crash may lose the transactions committed since the last checkpoint, which SQLite
makes every 1,000 pages (about 4 MB) and iolab makes when it closes the database.

When the connection closes, `settle` folds the log into the database and turns it off: the
database is one file again, as a user copies it, and a reading command (opened read-only,
which cannot fold a log) finds no log to keep beside it. A log left by a killed iolab is
read by every reader as it is, and folded by the next iolab that opens the database to
write (`left`).
"""

from __future__ import annotations

import sqlite3

SETTLE_WAIT_MS = 1000  # how long closing waits for a reader to let go of the log


def log_ahead(db: sqlite3.Connection) -> bool:
    """Write-ahead logging with commits that wait for no disk; whether it is on (a file
    system that has no shared memory for SQLite keeps its rollback journal)."""
    mode = db.execute("PRAGMA journal_mode = WAL").fetchone()
    if mode is None or str(mode[0]).lower() != "wal":
        return False
    db.execute("PRAGMA synchronous = NORMAL")
    return True


def settle(db: sqlite3.Connection) -> None:
    """Fold the log into the database, synced, and go back to a rollback journal; while
    another process reads the database the log stays, and the last to close folds it."""
    patience = db.execute("PRAGMA busy_timeout").fetchone()[0]
    try:
        db.execute(f"PRAGMA busy_timeout = {SETTLE_WAIT_MS}")
        db.execute("PRAGMA synchronous = FULL")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        db.execute("PRAGMA journal_mode = DELETE").fetchone()
    except sqlite3.OperationalError:
        pass  # busy: a reader holds the log; it is folded when the last connection closes
    finally:
        db.execute(f"PRAGMA busy_timeout = {int(patience)}")


def left(db: sqlite3.Connection) -> None:
    """A log that a killed iolab left beside the database, folded into it by the next
    connection that may write, so that the file alone holds every committed case."""
    if str(db.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
        settle(db)
