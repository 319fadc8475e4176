"""A run as plain rows and back: what `iolab export --format json` writes and `iolab import`
of such a file restores (the Store's `dump` and `restore` call these)."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from iolab.model import JSON, JSONObject, Origin


def dump(db: sqlite3.Connection, run_id: int) -> dict[str, list[dict[str, JSON]]]:
    """Every stored row of one run (its JSON columns decoded): runs, setups, cases, metrics,
    samples and telemetry of every window, in stored order."""
    where = "case_id IN (SELECT id FROM cases WHERE run_id = ?)"
    queries = {
        "runs": "SELECT * FROM runs WHERE id = ?",
        "setups": "SELECT * FROM setups WHERE run_id = ? ORDER BY position",
        "cases": "SELECT * FROM cases WHERE run_id = ? ORDER BY id",
        "metrics": f"SELECT * FROM metrics WHERE {where} ORDER BY rowid",
        "samples": f"SELECT * FROM samples WHERE {where} ORDER BY rowid",
        "telemetry": f"SELECT * FROM telemetry WHERE {where} ORDER BY rowid",
    }
    return {
        table: [_decoded(dict(row)) for row in db.execute(query, (run_id,))]
        for table, query in queries.items()
    }


def restore(
    db: sqlite3.Connection, tables: Mapping[str, Sequence[JSONObject]], origin: Origin
) -> int:
    """One run as `dump` gave it (from an export), under a new id and with `origin`; case ids
    are the `id`s of its cases, which its metrics, samples and telemetry name (an export
    from before telemetry has none)."""
    run_id = _insert(db, "runs", tables["runs"][0], {})
    db.execute(
        "UPDATE runs SET origin = ? WHERE id = ?", (json.dumps(dataclasses.asdict(origin)), run_id)
    )
    for setup in tables["setups"]:
        _insert(db, "setups", setup, {"run_id": run_id})
    ids = {case["id"]: _insert(db, "cases", case, {"run_id": run_id}) for case in tables["cases"]}
    for table in ("metrics", "samples", "telemetry"):
        for row in tables.get(table, ()):
            _insert(db, table, row, {"case_id": ids[row["case_id"]]})
    return run_id


def _insert(db: sqlite3.Connection, table: str, row: JSONObject, owner: Mapping[str, int]) -> int:
    """One row of `table`: the RESTORED columns from `row`, and the run or case it is of."""
    columns = (*owner, *RESTORED[table])
    values = (*owner.values(), *(_encoded(c, row.get(c)) for c in RESTORED[table]))
    marks = ", ".join("?" for _ in columns)
    cursor = db.execute(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", values)
    return int(cursor.lastrowid or 0)


# The columns `restore` writes, per table (ids and the run/case they belong to are its own).
RESTORED: dict[str, tuple[str, ...]] = {
    "runs": (
        "plan_name",
        "plan_source",
        "plan_hash",
        "plan_text",
        "overrides",
        "iolab_version",
        "environment",
        "started_at",
        "ended_at",
        "status",
        "case_count",
        "baseline",
        "metric",
        "owner",
    ),
    "setups": ("name", "position", "definition", "environment"),
    "cases": (
        "case_key",
        "setup",
        "workload",
        "workload_position",
        "repetition",
        "options",
        "status",
        "error",
        "started_at",
        "ended_at",
        "usr_cpu",
        "sys_cpu",
        "job_runtime_ms",
        "job_file",
        "raw_json",
        "warnings",
        "target_state",
        "watched",
    ),
    "metrics": (
        "phase",
        "round",
        "host",
        "direction",
        "iops",
        "bw_bytes",
        "io_bytes",
        "runtime_ms",
        "lat_mean_ns",
        "lat_max_ns",
        "percentiles_ns",
    ),
    "samples": ("phase", "round", "host", "metric", "direction", "time_ms", "value"),
    "telemetry": ("time_ms", "source", "metric", "value"),
}
JSON_COLUMNS = (
    "overrides",
    "environment",
    "owner",
    "origin",
    "definition",
    "options",
    "warnings",
    "percentiles_ns",
)


def _decoded(row: dict[str, JSON]) -> dict[str, JSON]:
    return {
        k: json.loads(v) if k in JSON_COLUMNS and isinstance(v, str) else v for k, v in row.items()
    }


def _encoded(column: str, value: Any) -> Any:
    return json.dumps(value) if column in JSON_COLUMNS else value
