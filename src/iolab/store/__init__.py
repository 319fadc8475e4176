"""The results database: SQLite, numbered migrations, one transaction per finished case."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sqlite3
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path

from iolab.errors import StoreError
from iolab.model import (
    JSON,
    JSONObject,
    Origin,
    Plan,
    Ratio,
    Result,
    codec,
)
from iolab.model.setup_record import SetupRecord
from iolab.model.telemetry import Telemetry
from iolab.store import (
    case_reads,
    check,
    dumps,
    figures,
    inserts,
    journal,
    ratio_rows,
    telemetry_rows,
)
from iolab.store import rows as decode
from iolab.store.check import BUSY_TIMEOUT_S, reads
from iolab.store.rows import PLAN_ORIGIN, CaseRow, CaseSample, RunRow
from iolab.store.schema import (
    APPLICATION_ID,
    MAIN_WINDOW,
    MIGRATIONS,
    SCHEMA_VERSION,
)

__all__ = ["APPLICATION_ID", "SCHEMA_VERSION", "CaseRow", "CaseSample", "RunRow", "Store"]


class Store:
    """One SQLite file. Use as a context manager, or call close().

    `create`: a missing (or empty) file becomes a new database (else it is an error).
    `readonly`: opened for reading only when its schema is current, so reports work on
    read-only copies. Before anything opens it for writing, the path must be a regular file
    that holds an iolab database, undamaged (`check`); a file iolab did not create is refused.
    A damaged database found while reading is one StoreError naming the file.
    """

    def __init__(self, path: str | Path, *, create: bool = True, readonly: bool = False) -> None:
        self.path = Path(path)
        found = self.check_path(path, create)
        self.readonly = False
        self.logging = False  # write-ahead logging turned on by this connection's first write
        self.verified = -1  # the schema's own count of its changes when last verified
        try:
            self.db = self._connect(readonly and found.kind == "iolab", found.kind == "missing")
            if self.readonly and self._version() < SCHEMA_VERSION:
                self.db.close()
                self.db = self._connect(False, False)
            if not self.readonly:
                journal.left(self.db)
            self._migrate()
            self._verify()
        except (sqlite3.DatabaseError, StoreError) as error:
            if hasattr(self, "db"):
                self.db.close()
            if isinstance(error, StoreError):
                raise
            raise check.unreadable(self.path, error) from None

    @staticmethod
    def check_path(path: str | Path, create: bool = True) -> check.DbFound:
        """A database is a regular file that iolab created (or, to create, a new name in an
        existing folder, or an empty file), and not damaged; found out without writing."""
        return check.openable(path, create)

    def _connect(self, readonly: bool, create: bool) -> sqlite3.Connection:
        self.readonly = readonly
        mode = "ro" if readonly else "rwc" if create else "rw"
        db = sqlite3.connect(
            check.uri(self.path, mode), uri=True, isolation_level=None, timeout=BUSY_TIMEOUT_S
        )
        db.row_factory = sqlite3.Row
        db.execute("PRAGMA foreign_keys = ON")
        db.execute("PRAGMA cell_size_check = ON")  # a damaged page refused as read (check)
        return db

    def __enter__(self) -> Store:
        return self

    def __exit__(self, kind: object, error: BaseException | None, trace: object) -> None:
        """Closes; an SQLite error that escaped a read (a cursor iterated by the caller) is
        one StoreError naming the file."""
        self.close()
        if isinstance(error, sqlite3.DatabaseError) and not isinstance(error, check.BUGS):
            raise check.unreadable(self.path, error) from None

    def close(self) -> None:
        """The database is one file again: a write-ahead log this connection turned on is
        folded into it and turned off (journal.settle)."""
        try:
            if self.logging:
                journal.settle(self.db)
        finally:
            self.db.close()

    def _version(self) -> int:
        return int(self.db.execute("PRAGMA user_version").fetchone()[0])

    def _verify(self) -> None:
        """The schema is iolab's own (store.check.verify), checked again whenever it changed
        since (SQLite counts every change to it): before each write, under the write lock."""
        changes = int(self.db.execute("PRAGMA schema_version").fetchone()[0])
        if changes != self.verified:
            check.verify(self.path, self.db, self._version())
            self.verified = changes

    def _migrate(self) -> None:
        version = self._version()
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} was written by a newer iolab (schema {version}, this one reads up "
                f"to {SCHEMA_VERSION}); upgrade iolab or use another --db"
            )
        if version == SCHEMA_VERSION:
            return
        with self._writing(log=False):  # the mark reaches the file itself (check.examine)
            version = self._version()  # another process may have migrated meanwhile
            if version < SCHEMA_VERSION:  # iolab's own, new or older: marked from now on
                self.db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            for number in range(version, SCHEMA_VERSION):
                for statement in _statements(MIGRATIONS[number]):
                    self.db.execute(statement)
                self.db.execute(f"PRAGMA user_version = {number + 1}")

    @contextlib.contextmanager
    def _writing(self, log: bool = True) -> Iterator[None]:
        """One write transaction, through the write-ahead log unless `log` is False; a
        database that cannot be written is one plain error."""
        try:
            if log and not self.logging:
                self.logging = journal.log_ahead(self.db)
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.DatabaseError as error:
            raise self._unwritable(error) from None
        try:
            if self.verified >= 0:  # not while migrating: verified once migrated
                self._verify()
            yield
            self.db.execute("COMMIT")
        except sqlite3.DatabaseError as error:
            self._rollback()
            raise self._unwritable(error) from None
        except BaseException:
            self._rollback()
            raise

    def _rollback(self) -> None:
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")

    def _unwritable(self, error: sqlite3.DatabaseError) -> StoreError:
        name = getattr(error, "sqlite_errorname", "") or ""
        if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
            return check.unreadable(self.path, error)
        return StoreError(
            f"{self.path} cannot be written ({error}); make it writable or use another --db"
        )

    # ------------------------------------------------------------ writing

    def create_run(
        self,
        plan: Plan,
        environment: JSONObject,
        iolab_version: str,
        overrides: JSONObject,
        owner: JSONObject,
        origin: Origin = PLAN_ORIGIN,
    ) -> int:
        """A new run of `plan` (for an import: the plan its files describe), with its origin."""
        with self._writing():
            return inserts.insert_run(
                self.db, plan, environment, iolab_version, overrides, owner, origin
            )

    def set_setup_environment(self, run_id: int, name: str, environment: JSONObject) -> None:
        with self._writing():
            self.db.execute(
                "UPDATE setups SET environment = ? WHERE run_id = ? AND name = ?",
                (json.dumps(environment), run_id, name),
            )

    def set_setup_record(self, run_id: int, name: str, record: SetupRecord) -> None:
        """One set-up's record in a run, saved whole."""
        self.set_setup_environment(run_id, name, codec.to_object(record))

    @reads
    def setup_records(self, run_id: int) -> dict[str, SetupRecord]:
        """Each set-up's record in a run, by name, loaded whole (what any version stored)."""
        rows = self.db.execute("SELECT name, environment FROM setups WHERE run_id = ?", (run_id,))
        return {
            r["name"]: codec.from_json(
                SetupRecord, json.loads(r["environment"]), f"the record of set-up {r['name']!r}"
            )
            for r in rows
        }

    def claim(self, run_id: int, owner: JSONObject) -> None:
        """This process now runs `run_id` (a resumed run is running again)."""
        with self._writing():
            self.db.execute(
                "UPDATE runs SET status = 'running', owner = ?, ended_at = NULL WHERE id = ?",
                (json.dumps(owner), run_id),
            )

    def add_leftover(self, run_id: int, kind: str, path: str) -> None:
        """Something a run makes and must remove: kind 'file', 'dir' or 'mount'."""
        with self._writing():
            self.db.execute(
                "INSERT OR IGNORE INTO leftovers VALUES (?, ?, ?)", (run_id, kind, path)
            )

    def drop_leftover(self, run_id: int, kind: str, path: str) -> None:
        with self._writing():
            self.db.execute(
                "DELETE FROM leftovers WHERE run_id = ? AND kind = ? AND path = ?",
                (run_id, kind, path),
            )

    @reads
    def leftovers(self, run_id: int) -> list[tuple[str, str]]:
        rows = self.db.execute(
            "SELECT kind, path FROM leftovers WHERE run_id = ? ORDER BY kind, path", (run_id,)
        )
        return [(str(r[0]), str(r[1])) for r in rows]

    @reads
    def running(self) -> list[tuple[int, JSONObject]]:
        """Runs marked running, with the process that claimed them, as the database says (an
        owner that is not a JSON object reads as none: the database is data from anywhere)."""
        rows = self.db.execute("SELECT id, owner FROM runs WHERE status = 'running' ORDER BY id")
        return [(int(r[0]), _object(r[1])) for r in rows]

    @reads
    def dump(self, run_id: int) -> dict[str, list[dict[str, JSON]]]:
        """Every stored row of one run, as `iolab export --format json` writes it."""
        self.run(run_id)  # a missing run is one plain error
        return dumps.dump(self.db, run_id)

    def restore(self, tables: Mapping[str, Sequence[JSONObject]], origin: Origin) -> int:
        """One run as `dump` gave it (an export), under a new id and with `origin`."""
        with self._writing():
            return dumps.restore(self.db, tables, origin)

    def save(self, run_id: int, result: Result, workload_position: int) -> None:
        """Store one finished case, its metrics and samples, in one transaction."""
        with self._writing():
            inserts.insert_case(self.db, run_id, result, workload_position)

    def finish_run(self, run_id: int, status: str, owner: JSONObject | None = None) -> None:
        """The run's end; with `owner`, what the process that ran it says of itself then
        (its own time outside fio: RunRow.own_s)."""
        with self._writing():
            self.db.execute(
                "UPDATE runs SET status = ?, ended_at = ?, owner = coalesce(?, owner) WHERE id = ?",
                (status, time.time(), None if owner is None else json.dumps(owner), run_id),
            )

    def own_until_now(self, run_id: int) -> None:
        """The run's own time (RunRow.own_s), stored at its end by this process, counts on
        to now: what it did since (the run's report built) is iolab's too (issue 47)."""
        with self._writing():
            self.db.execute(
                "UPDATE runs SET owner = json_set(owner, '$.own_s', round(json_extract(owner, "
                "'$.own_s') + max(? - ended_at, 0), 4)) WHERE id = ? AND ended_at IS NOT NULL "
                "AND json_valid(owner) AND json_type(owner, '$.own_s') IN ('real', 'integer') "
                "AND json_extract(owner, '$.pid') = ?",
                (time.time(), run_id, os.getpid()),
            )

    # ------------------------------------------------------------ reading

    @reads
    def done_keys(self, run_id: int) -> set[str]:
        """The cases of a run that need no running again: those that ran to the end."""
        rows = self.db.execute(
            "SELECT case_key FROM cases WHERE run_id = ? AND status = 'ok'", (run_id,)
        )
        return {str(row[0]) for row in rows}

    @reads
    def runs(self) -> list[RunRow]:
        rows = self.db.execute(
            "SELECT r.*, (SELECT count(*) FROM cases c WHERE c.run_id = r.id) AS done,"
            " (SELECT count(*) FROM cases c WHERE c.run_id = r.id AND c.status = 'failed')"
            " AS failed FROM runs r ORDER BY r.id"
        )
        return [decode.run_row(row) for row in rows]

    def run(self, run_id: int | None = None) -> RunRow:
        """One run by id; the latest when id is None."""
        runs = self.runs()
        if not runs:
            raise StoreError(f"{self.path} holds no runs yet; start one with 'iolab run'")
        if run_id is None:
            return runs[-1]
        found = next((r for r in runs if r.id == run_id), None)
        if found is None:
            ids = ", ".join(str(r.id) for r in runs)
            raise StoreError(f"{self.path} has no run {run_id}; its runs are {ids} (iolab runs)")
        return found

    def resumable(self, plan_hash: str) -> RunRow | None:
        """The latest run of the same plan that did not finish, or finished with cases failed."""
        runs = [r for r in self.runs() if r.plan_hash == plan_hash and r.unfinished]
        return runs[-1] if runs else None

    @reads
    def setups(self, run_id: int) -> list[tuple[str, JSONObject, JSONObject]]:
        rows = self.db.execute(
            "SELECT name, definition, environment FROM setups WHERE run_id = ? ORDER BY position",
            (run_id,),
        )
        return [
            (r["name"], json.loads(r["definition"]), json.loads(r["environment"])) for r in rows
        ]

    @reads
    def cases(
        self, run_id: int, setup: str | None = None, workload: str | None = None
    ) -> list[CaseRow]:
        """A run's cases with their main window's figures (and each host's): all of them, or
        those of one set-up, or of one workload on it."""
        where = "c.run_id = ?"
        args: list[int | str] = [run_id]
        for column, value in (("setup", setup), ("workload", workload)):
            if value is not None:
                where += f" AND c.{column} = ?"
                args.append(value)
        return case_reads.read_cases(self.db, self.path, where, args).get(run_id, [])

    @reads
    def cases_of_runs(
        self, run_ids: Sequence[int], percentiles: tuple[str, ...] | None = None
    ) -> dict[int, list[CaseRow]]:
        """The cases of several runs, read together (a long history: two queries, not two a
        run), each run's as `cases` gives them; with `percentiles` ("99", ...), only those of
        each direction's completion latency percentiles are read."""
        found: dict[int, list[CaseRow]] = {i: [] for i in run_ids}
        for start in range(0, len(run_ids), 500):  # SQLite's limit on parameters
            chunk = run_ids[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            found.update(
                case_reads.read_cases(
                    self.db, self.path, f"c.run_id IN ({marks})", list(chunk), percentiles
                )
            )
        return found

    @reads
    def case_figures(self, run_ids: Sequence[int]) -> dict[int, list[figures.CaseFigures]]:
        """The cases of several runs as a history reads them: a row of figures each, summed in
        SQL (store.figures)."""
        return figures.of_runs(self.db, self.path, run_ids)

    @reads
    def point_figures(self, run_ids: Sequence[int]) -> list[figures.PointFigures]:
        """The cases of several runs as a history's points: each run's repetitions of a
        set-up x workload as one row, their figures summed in SQL (store.figures)."""
        return figures.points_of_runs(self.db, self.path, run_ids)

    # ------------------------------------------------------------ reading, for reports

    @reads
    def case_samples(
        self, run_id: int, workloads: Collection[str] | None = None
    ) -> list[CaseSample]:
        """Per-interval samples of a run's ok cases (of `workloads` only, if given), in case
        and time order."""
        chosen, names = _among("c.workload", workloads)
        rows = self.db.execute(
            "SELECT c.setup, c.workload, c.repetition, s.metric, s.direction, s.time_ms,"
            " s.value FROM samples s JOIN cases c ON c.id = s.case_id"
            f" AND {MAIN_WINDOW.format(t='s')}"
            f" WHERE c.run_id = ? AND c.status = 'ok'{chosen} ORDER BY c.id, s.time_ms",
            (run_id, *names),
        )
        return [
            CaseSample(
                r[0], r[1], int(r[2]), decode.sample(r[3], r[4], int(r[5]), float(r[6]), self.path)
            )
            for r in rows
        ]

    @reads
    def telemetry(self, run_id: int) -> dict[tuple[str, str, int], Telemetry]:
        """The telemetry of a run's ok cases that have it, by (setup, workload, repetition)."""
        cases = self.db.execute(
            "SELECT id, setup, workload, repetition, watched FROM cases"
            " WHERE run_id = ? AND status = 'ok' AND watched IS NOT NULL",
            (run_id,),
        ).fetchall()
        points: dict[int, list[tuple[int, str, str, float]]] = {}
        for row in self.db.execute(
            "SELECT t.case_id, t.time_ms, t.source, t.metric, t.value FROM telemetry t"
            " JOIN cases c ON c.id = t.case_id WHERE c.run_id = ? ORDER BY t.case_id, t.time_ms",
            (run_id,),
        ):
            points.setdefault(int(row[0]), []).append((int(row[1]), row[2], row[3], row[4]))
        return {
            (r["setup"], r["workload"], int(r["repetition"])): telemetry_rows.telemetry(
                r["watched"], points.get(int(r["id"]), []), self.path
            )
            for r in cases
        }

    def case_raw(
        self, run_id: int, workloads: Collection[str] | None = None
    ) -> Iterator[tuple[str, str, int, str | None]]:
        """Each ok case's raw fio JSON (json+): (setup, workload, repetition, raw_json); of
        `workloads` only, if given."""
        chosen, names = _among("workload", workloads)
        for row in self.db.execute(
            "SELECT setup, workload, repetition, raw_json FROM cases"
            f" WHERE run_id = ? AND status = 'ok'{chosen} ORDER BY id",
            (run_id, *names),
        ):
            yield row[0], row[1], int(row[2]), row[3]

    # ------------------------------------------------------------ import and export

    @reads
    def imported(self) -> dict[str, int]:
        """The sha256 of every file imported into this database, and the run it went into."""
        found: dict[str, int] = {}
        for row in self.db.execute("SELECT id, origin FROM runs ORDER BY id"):
            for digest in decode.origin(json.loads(row[1])).digests:
                found.setdefault(digest, int(row[0]))
        return found

    def save_ratios(
        self,
        plan: Plan,
        environment: JSONObject,
        iolab_version: str,
        origin: Origin,
        ratios: Sequence[Ratio],
    ) -> int:
        """A finished run of figures published relative to a baseline's (store.ratio_rows):
        no case, the ratios in their own table, all in one transaction."""
        with self._writing():
            run_id = inserts.insert_run(self.db, plan, environment, iolab_version, {}, {}, origin)
            ratio_rows.insert(self.db, run_id, ratios)
            self.db.execute(
                "UPDATE runs SET status = 'done', ended_at = started_at, case_count = 0"
                " WHERE id = ?",
                (run_id,),
            )
            return run_id

    def ratios(self, run_id: int) -> list[Ratio]:
        """A run's figures relative to a baseline's (none for a measured run)."""
        return ratio_rows.ratios_of(self.db, run_id)

    def save_import(
        self,
        plan: Plan,
        environment: JSONObject,
        iolab_version: str,
        origin: Origin,
        results: Sequence[tuple[Result, int]],
        span: tuple[float, float],
    ) -> int:
        """A finished run of imported results (each with its workload's position), its start
        and end (`span`) taken from the files, all in one transaction."""
        with self._writing():
            run_id = inserts.insert_run(self.db, plan, environment, iolab_version, {}, {}, origin)
            for result, position in results:
                inserts.insert_case(self.db, run_id, result, position)
            self.db.execute(
                "UPDATE runs SET origin = ?, status = 'done', started_at = ?, ended_at = ?,"
                " case_count = ? WHERE id = ?",
                (json.dumps(dataclasses.asdict(origin)), *span, len(results), run_id),
            )
            return run_id


def _statements(script: str) -> Iterator[str]:
    """A migration's statements, one at a time (in one transaction, which executescript
    would end): split at each ';' that ends a whole statement, not one inside a trigger."""
    statement = ""
    for part in script.split(";"):
        statement += part + ";"
        if sqlite3.complete_statement(statement):
            if statement.strip(" \n;"):
                yield statement
            statement = ""


def _among(column: str, names: Collection[str] | None) -> tuple[str, tuple[str, ...]]:
    """A SQL condition keeping rows whose `column` is one of `names` (none: every row)."""
    if names is None:
        return "", ()
    chosen = tuple(names)
    return f" AND {column} IN ({', '.join('?' * len(chosen)) or 'NULL'})", chosen


def _object(text: object) -> JSONObject:
    """A column's JSON object; {} for anything else (not text, not JSON, not an object)."""
    try:
        found = json.loads(text) if isinstance(text, str | bytes) else None
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}
