"""An iolab export (schema "iolab-export") read back into the tables the store restores."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from iolab import names
from iolab.exchange import export, fio_json, rules
from iolab.exchange.found_jobs import UnreadableJob, percentile_key
from iolab.exchange.rules import COUNT, RUNTIME, TIME, Limit
from iolab.model import DIRECTIONS, METRICS, PHASES
from iolab.units import parse_size

_NUMBER = (int, float)
_TEXT = (str,)
_OPTIONAL = (type(None),)
# Each table's columns and the JSON types each may hold.
TYPES: dict[str, dict[str, tuple[type, ...]]] = {
    "run": {
        "plan_name": _TEXT,
        "plan_source": _TEXT,
        "plan_hash": _TEXT,
        "plan_text": _TEXT,
        "overrides": (dict,),
        "iolab_version": _TEXT,
        "environment": (dict,),
        "started_at": _NUMBER,
        "ended_at": _NUMBER + _OPTIONAL,
        "status": _TEXT,
        "case_count": (int,),
        "baseline": _TEXT + _OPTIONAL,
        "metric": _TEXT,
    },
    "setups": {"name": _TEXT, "position": (int,), "definition": (dict,), "environment": (dict,)},
    "cases": {
        "id": (int,),
        "case_key": _TEXT,
        "setup": _TEXT,
        "workload": _TEXT,
        "workload_position": (int,),
        "repetition": (int,),
        "options": (dict,),
        "status": _TEXT,
        "error": _TEXT + _OPTIONAL,
        "started_at": _NUMBER,
        "ended_at": _NUMBER,
        "usr_cpu": _NUMBER + _OPTIONAL,
        "sys_cpu": _NUMBER + _OPTIONAL,
        "job_runtime_ms": (int, *_OPTIONAL),
        "job_file": _TEXT,
        "raw_json": _TEXT + _OPTIONAL,
        "warnings": (list,),
        "target_state": _TEXT,
    },
    "metrics": {
        "case_id": (int,),
        "phase": _TEXT,
        "round": (int,),
        "host": _TEXT,
        "direction": _TEXT,
        "iops": _NUMBER,
        "bw_bytes": _NUMBER,
        "io_bytes": (int,),
        "runtime_ms": (int,),
        "lat_mean_ns": _NUMBER + _OPTIONAL,
        "lat_max_ns": _NUMBER + _OPTIONAL,
    },
    "percentiles": {
        "case_id": (int,),
        "phase": _TEXT,
        "round": (int,),
        "host": _TEXT,
        "direction": _TEXT,
        "percentile": _TEXT,
        "value_ns": _NUMBER,
    },
    "samples": {
        "case_id": (int,),
        "phase": _TEXT,
        "round": (int,),
        "host": _TEXT,
        "metric": _TEXT,
        "direction": _TEXT,
        "time_ms": (int,),
        "value": _NUMBER,
    },
}


# Each table's numeric columns: the limit, and the least value (a repetition counts from 1).
LIMITS: dict[str, dict[str, tuple[Limit, int]]] = {
    "run": {"started_at": (TIME, 0), "ended_at": (TIME, 0), "case_count": (COUNT, 0)},
    "setups": {"position": (COUNT, 0)},
    "cases": {
        "id": (COUNT, 0),
        "workload_position": (COUNT, 0),
        "repetition": (COUNT, 1),
        "started_at": (TIME, 0),
        "ended_at": (TIME, 0),
        "usr_cpu": (COUNT, 0),
        "sys_cpu": (COUNT, 0),
        "job_runtime_ms": (RUNTIME, 0),
    },
    "metrics": {
        "case_id": (COUNT, 0),
        "round": (COUNT, 0),
        "iops": (rules.IOPS, 0),
        "bw_bytes": (rules.BW, 0),
        "io_bytes": (COUNT, 0),
        "runtime_ms": (RUNTIME, 0),
        "lat_mean_ns": (COUNT, 0),
        "lat_max_ns": (COUNT, 0),
    },
    "percentiles": {"case_id": (COUNT, 0), "round": (COUNT, 0), "value_ns": (COUNT, 0)},
    "samples": {"case_id": (COUNT, 0), "round": (COUNT, 0), "time_ms": (RUNTIME, 0)},
}
# Columns that hold one of a few words.
WORDS: dict[str, dict[str, tuple[str, ...]]] = {
    "run": {"metric": ("auto", "iops", "bw")},
    "cases": {"status": ("ok", "failed")},
    "metrics": {"phase": PHASES, "direction": DIRECTIONS},
    "percentiles": {"phase": PHASES, "direction": DIRECTIONS},
    "samples": {"phase": PHASES, "direction": DIRECTIONS, "metric": METRICS},
}


# Columns that hold names: checked by the rule of names, as a plan's or an import's are.
NAMED = (
    ("run", "plan_name"),
    ("run", "baseline"),
    ("setups", "name"),
    ("cases", "setup"),
    ("cases", "workload"),
    *((table, "host") for table in ("metrics", "percentiles", "samples")),
)


def is_export(doc: Mapping[str, Any]) -> bool:
    return doc.get("schema") == export.SCHEMA


def tables(doc: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The store's tables from an export document, checked column by column."""
    version = doc.get("version")
    if version != export.VERSION:
        newer = isinstance(version, int) and version > export.VERSION
        said = version if isinstance(version, int) and abs(version) < 10**6 else "unknown"
        raise UnreadableJob(
            f"an iolab export of schema version {said}; this iolab reads version "
            f"{export.VERSION}" + (": upgrade iolab" if newer else "")
        )
    checked = {
        table: _rows(doc, table, [doc.get("run")] if table == "run" else doc.get(table))
        for table in TYPES
    }
    for table, rows in checked.items():
        for number, row in enumerate(rows):
            _values(table, row, "run" if table == "run" else f"{table}[{number}]")
    _named(checked)
    _references(checked)
    _consistent(checked)
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


def _named(checked: Mapping[str, list[dict[str, Any]]]) -> None:
    """The names it holds, by the rule of names (iolab.names), kept normalised; a window's
    host may be "" (no one host's) and the run's baseline null."""
    for table, column in NAMED:
        for number, row in enumerate(checked[table]):
            if row[column] in ("", None) and column in ("host", "baseline"):
                continue
            where = "run" if table == "run" else f"{table}[{number}]"
            try:
                row[column] = names.check(row[column])
            except names.BadName as error:
                raise UnreadableJob(f"{where}.{column} {error}") from None


def _rows(doc: Mapping[str, Any], table: str, rows: object) -> list[dict[str, Any]]:
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise UnreadableJob(f"its {table!r} is not a list of objects")
    for number, row in enumerate(rows):
        for column, types in TYPES[table].items():
            value = row.get(column)
            if not isinstance(value, types) or isinstance(value, bool):
                raise UnreadableJob(
                    f"{table}[{number}].{column} = {str(value)[:40]!r} is not "
                    f"{' or '.join('null' if t is type(None) else t.__name__ for t in types)}"
                )
    if table == "run" and not rows:
        raise UnreadableJob("it holds no run")
    return rows


def _values(table: str, row: Mapping[str, Any], where: str) -> None:
    """One row's numbers in range (exchange.rules), its words known ones, its fio options and
    fio's own JSON checked as an import of them would be."""
    for column, (limit, low) in LIMITS[table].items():
        if row.get(column) is not None:
            rules.number(row[column], f"{where}.{column}", limit, low=low)
    for column, words in WORDS.get(table, {}).items():
        if row[column] not in words:
            raise UnreadableJob(f"{where}.{column} is none of {', '.join(words)}")
    if table == "samples":
        limit = rules.SAMPLE_LIMITS[row["metric"]]
        rules.number(row["value"], f"{where}.value", limit)
    if table == "percentiles":
        share = percentile_key(row["percentile"])
        if share is None or len(row["percentile"]) > 20:
            raise UnreadableJob(f"{where}.percentile is not a share from 0 to 100")
    for start, end in (("started_at", "ended_at"),):
        if row.get(start) is not None and row.get(end) is not None and row[end] < row[start]:
            raise UnreadableJob(f"{where}.{end} is before its {start}")
    if table == "cases":
        rules.check_options(row["options"], f"{where}.options")
        _raw(row["raw_json"], f"{where}.raw_json: ")


def _raw(raw: str | None, where: str) -> None:
    """fio's JSON kept with a case: its numbers as an import of it would check them; text that
    is not JSON (a failed run's) is left as a live run would have stored it."""
    if raw is None or "{" not in raw:
        return
    try:
        docs = fio_json.documents(raw, where)
    except fio_json.Damaged:
        return
    for number, (doc, _) in enumerate(docs, start=1):
        rules.check_fio(doc, f"{where}document {number}: " if len(docs) > 1 else where)


def _references(checked: Mapping[str, list[dict[str, Any]]]) -> None:
    """What the tables name, they hold: a set-up (at least one) for each case and the run's
    baseline, a case for each row of figures, a window of metrics for each percentile; and no
    row twice."""
    if not checked["setups"]:
        raise UnreadableJob("its setups is empty: an export holds the set-ups of its cases")
    _unique(checked["setups"], "setups", ("name",))
    _unique(checked["cases"], "cases", ("id",))
    _unique(checked["cases"], "cases", ("case_key",))
    window = (*export.WINDOW, "direction")
    _unique(checked["metrics"], "metrics", window)
    _unique(checked["percentiles"], "percentiles", (*window, "percentile"))
    setups = {row["name"] for row in checked["setups"]}
    _known(checked["cases"], "cases", "setup", setups, "a set-up its setups do not hold")
    baseline = checked["run"][0]["baseline"]
    if baseline is not None and baseline not in setups:
        raise UnreadableJob("run.baseline names a set-up its setups do not hold")
    cases = {row["id"] for row in checked["cases"]}
    for table in ("metrics", "percentiles", "samples"):
        _known(checked[table], table, "case_id", cases, "a case its cases do not hold")
    windows = {tuple(row[k] for k in window) for row in checked["metrics"]}
    for number, row in enumerate(checked["percentiles"]):
        if tuple(row[k] for k in window) not in windows:
            raise UnreadableJob(f"percentiles[{number}] is of a window its metrics do not hold")
    _rising(checked["percentiles"], window)


CONSISTENT = 2.0  # a factor: how far a window's figures may stray from what its others give
_SIZED = ("bsrange", "blocksize_range", "bssplit", "bs_unaligned", "blocksize_unaligned")


def _consistent(checked: Mapping[str, list[dict[str, Any]]]) -> None:
    """Each window's figures agree within a factor of CONSISTENT: its IOPS times its case's
    block size with its bytes/s, and its bytes/s with the bytes it moved over its runtime.
    fio's own agree to the digit (a dd's or a log's nearly); a figure edited alone does not."""
    sizes = {row["id"]: _block_size(row["options"]) for row in checked["cases"]}
    for number, row in enumerate(checked["metrics"]):
        where = f"metrics[{number}]"
        bs = sizes.get(row["case_id"])
        if bs:
            _agree(row["iops"] * bs, row["bw_bytes"], f"{where}: iops x its case's bs ({bs} bytes)")
        if row["runtime_ms"] > 0:
            moved = row["io_bytes"] * 1000 / row["runtime_ms"]
            _agree(moved, row["bw_bytes"], f"{where}: io_bytes over runtime_ms")


def _block_size(options: Mapping[str, Any]) -> int | None:
    """A case's one block size in bytes; None for sizes that vary (bsrange, bssplit, a
    READ,WRITE pair) or none given."""
    if any(key in options for key in _SIZED):
        return None
    try:
        return parse_size(options.get("bs")) or None
    except ValueError:
        return None


def _agree(rate: float, bw_bytes: float, what: str) -> None:
    """`rate` (bytes/s, from a window's other figures) and its bw_bytes, within CONSISTENT."""
    if rate > 0 and bw_bytes > 0 and max(rate, bw_bytes) > CONSISTENT * min(rate, bw_bytes):
        raise UnreadableJob(
            f"{what} gives {rate:,.0f} bytes/s, its bw_bytes {bw_bytes:,.0f}: more than "
            f"{CONSISTENT:g} times apart, which no measurement gives"
        )


def _unique(rows: list[dict[str, Any]], table: str, key: tuple[str, ...]) -> None:
    seen: dict[tuple[Any, ...], int] = {}
    for number, row in enumerate(rows):
        first = seen.setdefault(tuple(row[k] for k in key), number)
        if first != number:
            said = ", ".join(key) if len(key) < 3 else "case, window and direction"
            raise UnreadableJob(f"{table}[{number}] repeats the {said} of {table}[{first}]")


def _known(rows: list[dict[str, Any]], table: str, column: str, known: set[Any], what: str) -> None:
    for number, row in enumerate(rows):
        if row[column] not in known:
            raise UnreadableJob(f"{table}[{number}].{column} names {what}")


def _rising(rows: list[dict[str, Any]], window: tuple[str, ...]) -> None:
    """Each window's percentiles do not decrease as their share grows."""
    shares: dict[tuple[Any, ...], list[tuple[float, float, int]]] = {}
    for number, row in enumerate(rows):
        if row["value_ns"]:
            key = tuple(row[k] for k in window)
            share = float(percentile_key(row["percentile"]) or 0)
            shares.setdefault(key, []).append((share, row["value_ns"], number))
    for found in shares.values():
        for low, high in itertools.pairwise(sorted(found)):
            if high[1] < low[1]:
                raise UnreadableJob(
                    f"percentiles[{high[2]}].value_ns is below that of percentiles[{low[2]}], "
                    "a lower percentile of the same window"
                )
