"""Writing a run and its cases: the run's row and its set-ups, and each finished case with
its metrics, windows, samples and telemetry (a retried case replaces its failed attempt)."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import time

from iolab.model import (
    JSONObject,
    Origin,
    Plan,
    Result,
)
from iolab.store import telemetry_rows


def insert_run(
    db: sqlite3.Connection,
    plan: Plan,
    environment: JSONObject,
    iolab_version: str,
    overrides: JSONObject,
    owner: JSONObject,
    origin: Origin,
) -> int:
    cursor = db.execute(
        "INSERT INTO runs (plan_name, plan_source, plan_hash, plan_text, overrides,"
        " iolab_version, environment, started_at, case_count, baseline, metric, owner,"
        " origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            plan.name,
            plan.source,
            plan.hash,
            plan.text,
            json.dumps(overrides),
            iolab_version,
            json.dumps(environment),
            time.time(),
            len(plan.cases()),
            plan.baseline,
            plan.metric,
            json.dumps(owner),
            json.dumps(dataclasses.asdict(origin)),
        ),
    )
    run_id = int(cursor.lastrowid or 0)
    db.executemany(
        "INSERT INTO setups (run_id, name, position, definition) VALUES (?, ?, ?, ?)",
        [
            (run_id, setup.name, position, json.dumps(setup.definition()))
            for position, setup in enumerate(plan.setups)
        ],
    )
    return run_id


def insert_case(
    db: sqlite3.Connection, run_id: int, result: Result, workload_position: int
) -> None:
    case, m = result.case, result.metrics
    failed = "SELECT id FROM cases WHERE run_id = ? AND case_key = ? AND status = 'failed'"
    for table in ("metrics", "samples", "telemetry"):  # what a failed attempt kept (hosts)
        db.execute(f"DELETE FROM {table} WHERE case_id IN ({failed})", (run_id, case.key))
    db.execute(  # a retried case replaces its failed attempt
        "DELETE FROM cases WHERE run_id = ? AND case_key = ? AND status = 'failed'",
        (run_id, case.key),
    )
    cursor = db.execute(
        "INSERT INTO cases (run_id, case_key, setup, workload, workload_position,"
        " repetition, options, status, error, started_at, ended_at, usr_cpu, sys_cpu,"
        " job_runtime_ms, job_file, raw_json, warnings, target_state, watched)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            run_id,
            case.key,
            case.setup.name,
            case.workload.name,
            workload_position,
            case.repetition,
            json.dumps(case.workload.recorded),
            result.status,
            result.error,
            result.started_at,
            result.ended_at,
            m.usr_cpu if m else None,
            m.sys_cpu if m else None,
            m.runtime_ms if m else None,
            result.job_file,
            result.raw_json,
            json.dumps([w.stored() for w in result.warnings]),
            result.target_state,
            telemetry_rows.watched(result.telemetry),
        ),
    )
    case_id = cursor.lastrowid
    if result.telemetry is not None:
        db.executemany(
            "INSERT INTO telemetry (case_id, time_ms, source, metric, value)"
            " VALUES (?, ?, ?, ?, ?)",
            [(case_id, *point) for point in telemetry_rows.points(result.telemetry)],
        )
    for window in result.all_windows():
        where = (case_id, window.phase, window.round, window.host)
        db.executemany(
            "INSERT INTO metrics (case_id, phase, round, host, direction, iops, bw_bytes,"
            " io_bytes, runtime_ms, lat_mean_ns, lat_max_ns, percentiles_ns)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    *where,
                    d.direction,
                    d.iops,
                    d.bw_bytes,
                    d.io_bytes,
                    d.runtime_ms,
                    d.lat_mean_ns,
                    d.lat_max_ns,
                    json.dumps(dict(d.percentiles_ns)),
                )
                for d in window.metrics.directions
            ],
        )
        db.executemany(
            "INSERT INTO samples (case_id, phase, round, host, metric, direction, time_ms,"
            " value) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(*where, x.metric, x.direction, x.time_ms, x.value) for x in window.samples],
        )
