"""Figures published relative to a baseline's, as the store keeps them: one row per set-up,
workload, direction and metric in the `ratios` table (schema 4), the value a multiple of the
baseline's figure. Never read as IOPS or bytes/s: the report shows them apart."""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Sequence

from iolab.model import FioValue, Ratio

DIRECTIONS = ("read", "write")
METRICS = ("iops", "bw")


def insert(db: sqlite3.Connection, run_id: int, ratios: Sequence[Ratio]) -> None:
    db.executemany(
        "INSERT INTO ratios (run_id, setup, baseline, workload, position, direction, metric,"
        " value, options) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                run_id,
                r.setup,
                r.baseline,
                r.workload,
                r.position,
                r.direction,
                r.metric,
                r.value,
                json.dumps(dict(r.options)),
            )
            for r in ratios
        ],
    )


def ratios_of(db: sqlite3.Connection, run_id: int) -> list[Ratio]:
    """A run's ratios in their table's order; a row of another shape (a damaged or foreign
    database) is left out rather than shown as a figure it is not."""
    rows = db.execute(
        "SELECT setup, baseline, workload, position, direction, metric, value, options"
        " FROM ratios WHERE run_id = ? ORDER BY position, rowid",
        (run_id,),
    )
    return [ratio for row in rows if (ratio := _ratio(row)) is not None]


def _ratio(row: sqlite3.Row) -> Ratio | None:
    direction, metric, value = row["direction"], row["metric"], row["value"]
    if direction not in DIRECTIONS or metric not in METRICS:
        return None
    if not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        return None
    return Ratio(
        str(row["setup"]),
        str(row["baseline"]),
        str(row["workload"]),
        direction,
        metric,
        float(value),
        int(row["position"]),
        _options(row["options"]),
    )


def _options(text: object) -> dict[str, FioValue]:
    try:
        found = json.loads(str(text))
    except ValueError:
        return {}
    if not isinstance(found, dict):
        return {}
    return {str(k): v for k, v in found.items() if isinstance(v, str | int | float)}
