"""Reading cases back as typed rows: each case's metrics per direction and per host, its
warnings and windows, with the percentiles asked for."""

from __future__ import annotations

import functools
import json
import sqlite3
from pathlib import Path

from iolab.model import (
    CheckWarning,
    Direction,
    DirectionMetrics,
    metric_for,
)
from iolab.store import rows as decode
from iolab.store.rows import CaseRow
from iolab.store.schema import (
    MEASURED,
)


def read_cases(
    db: sqlite3.Connection,
    path: Path,
    where: str,
    args: list[int | str],
    percentiles: tuple[str, ...] | None = None,
) -> dict[int, list[CaseRow]]:
    metrics: dict[int, dict[Direction, DirectionMetrics]] = {}
    hosts: dict[int, dict[str, dict[Direction, DirectionMetrics]]] = {}
    picked = "m.*" if percentiles is None else _picked(percentiles)
    for row in db.execute(
        f"SELECT {picked} FROM metrics m JOIN cases c ON c.id = m.case_id"
        f" WHERE {where} AND {MEASURED.format(t='m')}",
        args,
    ):
        found = decode.direction_metrics(row, path, percentiles)
        case_id, host = int(row["case_id"]), str(row["host"])
        into = (
            hosts.setdefault(case_id, {}).setdefault(host, {})
            if host
            else metrics.setdefault(case_id, {})
        )
        into[found.direction] = found
    rows = db.execute(  # not raw_json nor job_file: reports of big runs read fast
        "SELECT id, run_id, setup, workload, workload_position, repetition, options, status,"
        f" error, warnings, target_state FROM cases c WHERE {where}"
        " ORDER BY run_id, workload_position, id",
        args,
    )
    # a long history repeats its workloads' options and its empty warning lists: each
    # distinct text decoded once (the values are shared, read-only: Mapping, tuple)
    options, warnings = functools.cache(json.loads), functools.cache(_warnings)
    metric = functools.cache(lambda text: metric_for(options(text)))  # once a workload
    out: dict[int, list[CaseRow]] = {}
    for r in rows:
        out.setdefault(int(r["run_id"]), []).append(
            CaseRow(
                setup=r["setup"],
                workload=r["workload"],
                workload_position=r["workload_position"],
                repetition=r["repetition"],
                options=options(r["options"]),
                status=r["status"],
                error=r["error"],
                metrics=metrics.get(int(r["id"]), {}),
                warnings=warnings(r["warnings"]),
                target_state=r["target_state"],
                hosts=hosts.get(int(r["id"]), {}),
                metric=metric(r["options"]),
            )
        )
    return out


def _picked(percentiles: tuple[str, ...]) -> str:
    """The metrics columns, with the percentiles asked for as columns of their own (SQLite's
    json_extract reads them; keys are iolab's own, "99", "99.9": checked, never user text)."""
    for key in percentiles:
        if not key.replace(".", "", 1).isdigit():
            raise ValueError(f"not a percentile key: {key!r}")
    columns = ", ".join(
        f'json_extract(m.percentiles_ns, \'$."{key}"\') AS "p{key}"' for key in percentiles
    )
    return (
        "m.case_id, m.host, m.direction, m.iops, m.bw_bytes, m.io_bytes, m.runtime_ms,"
        f" m.lat_mean_ns, m.lat_max_ns, {columns}"
    )


def _warnings(text: str) -> tuple[CheckWarning, ...]:
    return tuple(decode.warning(w) for w in json.loads(text))
