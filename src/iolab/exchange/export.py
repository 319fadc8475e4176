"""`iolab export`: one stored run as a documented, versioned JSON document, or as CSV tables.

JSON (schema "iolab-export", version 1) holds everything the store keeps of the run, so that
`iolab import` of it gives back the same run (and the same reports, byte for byte):

- `run`: the run's row (plan name, source and text, environment, times, status, baseline,
  metric, origin, ...); `setups`: name, position, definition and environment of each;
- `parameters`: the workload parameters that are columns of `cases`: rw, bs, iodepth,
  numjobs, rwmixread, then every key whose value differs between the run's cases (a column
  named like a case column gets the prefix `param_`); a case without the key has null;
- `cases`: one object per case: its id (which the other tables name as `case_id`), set-up,
  workload, repetition, status, error, times, CPU, the parameter columns, all its fio
  `options`, `warnings` (code, message, advice), `job_file` and fio's raw JSON (`raw_json`);
- `metrics`: one row per case, window (phase, round, host) and direction: iops, bw_bytes
  (bytes/s), io_bytes, runtime_ms, lat_mean_ns, lat_max_ns (completion latency);
- `percentiles`: case_id, window, direction, percentile ("99.9"), value_ns;
- `samples`: case_id, window, metric (iops, bw in bytes/s, lat in ns), direction, time_ms, value.

CSV: the main table (one row per case and direction of its main window, the parameter
columns, the metrics and p50..p99.99), and beside a file NAME.csv, NAME.percentiles.csv and
NAME.samples.csv (every window). The same three tables (`flat_tables`) are the Parquet
export's files, with typed columns (`parquet.py`), and `iolab.load`'s DataFrames
(`frame.py`). `fioplot.py` writes fio's own JSON of each case in bench-fio's folders instead.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iolab.model.telemetry import Telemetry, summary_columns
from iolab.names import shown, spreadsheet_cell
from iolab.store import telemetry_rows

SCHEMA = "iolab-export"
VERSION = 1
PARAMETERS = ("rw", "bs", "iodepth", "numjobs", "rwmixread")
CASE_COLUMNS = (
    "id",
    "case_key",
    "setup",
    "workload",
    "workload_position",
    "repetition",
    "status",
    "error",
    "started_at",
    "ended_at",
    "usr_cpu",
    "sys_cpu",
    "job_runtime_ms",
    "target_state",
)
CASE_TAIL = ("options", "warnings", "job_file", "raw_json")
RUN_COLUMNS = (
    "id",
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
    "origin",
)
SETUP_COLUMNS = ("name", "position", "definition", "environment")
WINDOW = ("case_id", "phase", "round", "host")
METRIC_COLUMNS = (
    *WINDOW,
    "direction",
    "iops",
    "bw_bytes",
    "io_bytes",
    "runtime_ms",
    "lat_mean_ns",
    "lat_max_ns",
)
PERCENTILE_COLUMNS = (*WINDOW, "direction", "percentile", "value_ns")
SAMPLE_COLUMNS = (*WINDOW, "metric", "direction", "time_ms", "value")
MAIN_PERCENTILES = ("50", "90", "99", "99.9", "99.99")
MAIN_WINDOW = ("measure", 0, "")  # phase, round, host of the window reports show
Tables = Mapping[str, Sequence[Mapping[str, Any]]]


def parameters(cases: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(option key, column name): the fixed parameters, then every key that varies."""
    keys: dict[str, set[str]] = {}
    for case in cases:
        for key, value in case["options"].items():
            keys.setdefault(key, set()).add(json.dumps(value))
    swept = sorted(
        key
        for key, seen in keys.items()
        if key not in PARAMETERS
        and key != "name"
        and (len(seen) > 1 or any(key not in c["options"] for c in cases))
    )
    taken = set(CASE_COLUMNS) | set(CASE_TAIL)
    return [(key, f"param_{key}" if key in taken else key) for key in (*PARAMETERS, *swept)]


def document(tables: Tables, iolab_version: str) -> dict[str, Any]:
    """The run as export schema version 1 (see the module's description)."""
    cases = tables["cases"]
    params = parameters(cases)
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "exported_by": f"iolab {iolab_version}",
        "parameters": [column for _, column in params],
        "run": {k: tables["runs"][0][k] for k in RUN_COLUMNS},
        "setups": [{k: s[k] for k in SETUP_COLUMNS} for s in tables["setups"]],
        "cases": [_case(case, params) for case in cases],
        "metrics": [{k: m[k] for k in METRIC_COLUMNS} for m in tables["metrics"]],
        "percentiles": [
            {**{k: m[k] for k in (*WINDOW, "direction")}, "percentile": p, "value_ns": v}
            for m in tables["metrics"]
            for p, v in m["percentiles_ns"].items()
        ],
        "samples": [{k: s[k] for k in SAMPLE_COLUMNS} for s in tables["samples"]],
    }


def _case(case: Mapping[str, Any], params: list[tuple[str, str]]) -> dict[str, Any]:
    options = case["options"]
    return {
        **{k: case[k] for k in CASE_COLUMNS},
        **{column: options.get(key) for key, column in params},
        **{k: case[k] for k in CASE_TAIL},
    }


def json_text(tables: Tables, iolab_version: str) -> str:
    """The export as JSON; ValueError where a stored value is NaN or an infinity, which JSON
    has no word for (Python's json would write them, and no JSON reader takes the file)."""
    found = document(tables, iolab_version)
    return json.dumps(found, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


@dataclass(frozen=True)
class FlatRow:
    """One flat table of the export: its column names and rows (None where empty)."""

    columns: tuple[str, ...]
    rows: list[list[Any]]


def flat_tables(tables: Tables, iolab_version: str) -> dict[str, FlatRow]:
    """The tables of the CSV and Parquet exports: "main" (a row per case and direction of its
    main window, parameters as columns, p50..p99.99), "percentiles" and "samples"."""
    doc = document(tables, iolab_version)
    cases = {case["id"]: case for case in doc["cases"]}
    lead = ("run", "setup", "workload", "repetition")
    run_id = doc["run"]["id"]

    def who(case_id: int) -> list[Any]:
        case = cases[case_id]
        return [run_id, case["setup"], case["workload"], case["repetition"]]

    seen = _telemetry(tables)
    extra = tuple(summary_columns(None)) if seen else ()
    columns = (
        *lead,
        "status",
        *doc["parameters"],
        "direction",
        *METRIC_COLUMNS[5:],
        *(f"p{p}_ns" for p in MAIN_PERCENTILES),
        *extra,
        "warnings",
        "error",
    )
    main: list[list[Any]] = []
    by_case: dict[int, list[Mapping[str, Any]]] = {}
    for row in tables["metrics"]:
        if (row["phase"], row["round"], row["host"]) == MAIN_WINDOW:
            by_case.setdefault(row["case_id"], []).append(row)
    for case_id, case in cases.items():
        fixed = [*who(case_id), case["status"], *(case[c] for c in doc["parameters"])]
        codes = " ".join(w["code"] for w in case["warnings"])
        for row in by_case.get(case_id) or [{}]:  # a failed case: one row, no direction
            figures = [row.get(k) for k in ("direction", *METRIC_COLUMNS[5:])]
            shares = row.get("percentiles_ns", {})
            tail = [shares.get(p) for p in MAIN_PERCENTILES]
            tail += list(summary_columns(seen.get(case_id)).values()) if extra else []
            main.append([*fixed, *figures, *tail, codes, case["error"]])
    return {
        "main": FlatRow(columns, main),
        "percentiles": FlatRow(
            (*lead, *PERCENTILE_COLUMNS[1:]),
            [
                [*who(p["case_id"]), *(p[k] for k in PERCENTILE_COLUMNS[1:])]
                for p in doc["percentiles"]
            ],
        ),
        "samples": FlatRow(
            (*lead, *SAMPLE_COLUMNS[1:]),
            [[*who(s["case_id"]), *(s[k] for k in SAMPLE_COLUMNS[1:])] for s in doc["samples"]],
        ),
    }


def _telemetry(tables: Tables) -> dict[int, Telemetry]:
    """The cases' telemetry (runner.telemetry), by case id: the main table's columns
    cpu_busy_pct ... dev_iops are its means (the busiest device's); none without it."""
    rows: dict[int, list[tuple[int, str, str, float]]] = {}
    for row in tables.get("telemetry", ()):
        found = (row["time_ms"], row["source"], row["metric"], row["value"])
        rows.setdefault(row["case_id"], []).append(found)
    return {
        case["id"]: telemetry_rows.telemetry(
            case["watched"], rows.get(case["id"], []), "the database"
        )
        for case in tables["cases"]
        if case.get("watched")
    }


def file_names(name: str, suffix: str) -> dict[str, str]:
    """Table -> file: `name` for the main table, NAME.percentiles.SUFFIX and
    NAME.samples.SUFFIX beside it."""
    beside = Path(name).name.removesuffix(suffix)
    return {
        "main": name,
        **{
            table: str(Path(name).with_name(f"{beside}.{table}{suffix}"))
            for table in ("percentiles", "samples")
        },
    }


def csv_texts(tables: Tables, iolab_version: str, name: str) -> dict[str, str]:
    """File name -> CSV text: `name` (the main table), and its percentiles and samples."""
    flat = flat_tables(tables, iolab_version)
    return {
        path: _csv([list(flat[table].columns), *flat[table].rows])
        for table, path in file_names(name, ".csv").items()
    }


def _csv(rows: list[list[Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerows([_cell(v) for v in row] for row in rows)
    return out.getvalue()


def _cell(value: Any) -> Any:
    """None as empty; text shown safely (controls escaped) and never read as a formula."""
    if value is None:
        return ""
    return spreadsheet_cell(shown(value, keep="\n")) if isinstance(value, str) else value
