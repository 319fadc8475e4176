"""An iolab export (schema "iolab-export") read back into the tables the store restores."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iolab.exchange import export
from iolab.exchange.found import Unreadable

_NUMBER = (int, float)
_TEXT = (str,)
_OPTIONAL = (type(None),)
# Each table's columns and the JSON types each may hold.
TYPES: dict[str, dict[str, tuple[type, ...]]] = {
    "run": {
        "plan_name": _TEXT, "plan_source": _TEXT, "plan_hash": _TEXT, "plan_text": _TEXT,
        "overrides": (dict,), "iolab_version": _TEXT, "environment": (dict,),
        "started_at": _NUMBER, "ended_at": _NUMBER + _OPTIONAL, "status": _TEXT,
        "case_count": (int,), "baseline": _TEXT + _OPTIONAL, "metric": _TEXT,
    },
    "setups": {"name": _TEXT, "position": (int,), "definition": (dict,), "environment": (dict,)},
    "cases": {
        "id": (int,), "case_key": _TEXT, "setup": _TEXT, "workload": _TEXT,
        "workload_position": (int,), "repetition": (int,), "options": (dict,),
        "status": _TEXT, "error": _TEXT + _OPTIONAL, "started_at": _NUMBER,
        "ended_at": _NUMBER, "usr_cpu": _NUMBER + _OPTIONAL, "sys_cpu": _NUMBER + _OPTIONAL,
        "job_runtime_ms": (int, *_OPTIONAL), "job_file": _TEXT,
        "raw_json": _TEXT + _OPTIONAL, "warnings": (list,), "target_state": _TEXT,
    },
    "metrics": {
        "case_id": (int,), "phase": _TEXT, "round": (int,), "host": _TEXT, "direction": _TEXT,
        "iops": _NUMBER, "bw_bytes": _NUMBER, "io_bytes": (int,), "runtime_ms": (int,),
        "lat_mean_ns": _NUMBER + _OPTIONAL, "lat_max_ns": _NUMBER + _OPTIONAL,
    },
    "percentiles": {
        "case_id": (int,), "phase": _TEXT, "round": (int,), "host": _TEXT, "direction": _TEXT,
        "percentile": _TEXT, "value_ns": _NUMBER,
    },
    "samples": {
        "case_id": (int,), "phase": _TEXT, "round": (int,), "host": _TEXT, "metric": _TEXT,
        "direction": _TEXT, "time_ms": (int,), "value": _NUMBER,
    },
}  # fmt: skip


def is_export(doc: Mapping[str, Any]) -> bool:
    return doc.get("schema") == export.SCHEMA


def tables(doc: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The store's tables from an export document, checked column by column."""
    version = doc.get("version")
    if version != export.VERSION:
        newer = isinstance(version, int) and version > export.VERSION
        raise Unreadable(
            f"an iolab export of schema version {version!r}; this iolab reads version "
            f"{export.VERSION}" + (": upgrade iolab" if newer else "")
        )
    checked = {
        table: _rows(doc, table, [doc.get("run")] if table == "run" else doc.get(table))
        for table in TYPES
    }
    cases = {case["id"] for case in checked["cases"]}
    for table in ("metrics", "percentiles", "samples"):
        stray = next(
            (row["case_id"] for row in checked[table] if row["case_id"] not in cases), None
        )
        if stray is not None:
            raise Unreadable(f"its {table} name case {stray}, which it does not hold")
    percentiles: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in checked["percentiles"]:
        key = tuple(row[k] for k in (*export.WINDOW, "direction"))
        percentiles.setdefault(key, {})[row["percentile"]] = row["value_ns"]
    metrics = [
        {
            **m,
            "percentiles_ns": percentiles.get(
                tuple(m[k] for k in (*export.WINDOW, "direction")), {}
            ),
        }
        for m in checked["metrics"]
    ]
    return {
        "runs": [{**checked["run"][0], "owner": {}}],
        "setups": checked["setups"],
        "cases": checked["cases"],
        "metrics": metrics,
        "samples": checked["samples"],
    }


def _rows(doc: Mapping[str, Any], table: str, rows: object) -> list[dict[str, Any]]:
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise Unreadable(f"its {table!r} is not a list of objects")
    for number, row in enumerate(rows):
        for column, types in TYPES[table].items():
            value = row.get(column)
            if not isinstance(value, types) or isinstance(value, bool):
                raise Unreadable(
                    f"{table}[{number}].{column} = {str(value)[:40]!r} is not "
                    f"{' or '.join('null' if t is type(None) else t.__name__ for t in types)}"
                )
    if table == "run" and not rows:
        raise Unreadable("it holds no run")
    return rows
