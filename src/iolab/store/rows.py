"""Rows as the store hands them out: typed values decoded from SQLite rows and JSON."""

from __future__ import annotations

import json
import sqlite3
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TypeVar

from iolab.errors import StoreError
from iolab.model import (
    DIRECTIONS,
    JSON,
    METRICS,
    CheckWarning,
    Direction,
    DirectionMetrics,
    FioValue,
    JSONObject,
    Origin,
    Sample,
    metric_for,
)

PLAN_ORIGIN = Origin()
Word = TypeVar("Word", bound=str)  # a stored word that takes one of a few values


@dataclass(frozen=True)
class RunRow:
    id: int
    plan_name: str
    plan_source: str
    plan_hash: str
    plan_text: str
    overrides: JSONObject
    started_at: float
    ended_at: float | None
    status: str
    case_count: int
    done: int
    failed: int
    baseline: str | None
    metric: str
    environment: JSONObject
    origin: Origin = PLAN_ORIGIN
    iolab_version: str = ""  # the iolab that measured (or imported) it
    # iolab's own time outside fio (s), over the cases it ran, as the process that ran it said
    own_s: tuple[float, int] | None = None
    # beside it: its laying out of its test files (s), the writes fio makes itself alone
    laid_s: float | None = None

    @property
    def ok(self) -> int:
        return self.done - self.failed

    @property
    def unfinished(self) -> bool:
        """Not done, or done with cases failed (not a count of cases: a search and
        repeat = "auto" add cases to those planned)."""
        return self.status != "done" or self.failed > 0

    def tally(self, cases: int) -> str:
        return tally(cases, self.case_count)


def recorded_plan(plan_text: str) -> dict[str, object]:
    """The TOML table of a run's recorded plan text; {} for a job file, an import, or text
    that is no TOML iolab can read (an imported export's may nest values hundreds deep)."""
    try:
        found = tomllib.loads(plan_text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return {}
    return dict(found)


def tally(cases: int, planned: int) -> str:
    """`cases` of a run's `planned` ones: "3 of 4", or "36 (4 planned, more added as it ran)"
    (a search and repeat = "auto" add cases)."""
    if cases <= planned:
        return f"{cases} of {planned}"
    return f"{cases} ({planned} planned, more added as it ran)"


@dataclass(frozen=True)
class CaseRow:
    """A stored case with its per-direction metrics, as reports read it."""

    setup: str
    workload: str
    workload_position: int
    repetition: int
    options: Mapping[str, FioValue]
    status: str
    error: str | None
    metrics: Mapping[Direction, DirectionMetrics]
    warnings: tuple[CheckWarning, ...]
    target_state: str = ""
    # a case run on several hosts: each host's own metrics (`metrics` holds their sum)
    hosts: Mapping[str, Mapping[Direction, DirectionMetrics]] = field(default_factory=dict)
    # "iops" or "bw": what its workload is shown in unless the user forces one, chosen once
    # where the case is read (model.metric_for), never again by a report's view
    metric: str = ""

    def __post_init__(self) -> None:
        if not self.metric:
            object.__setattr__(self, "metric", metric_for(self.options))

    def total(self, metric: str) -> float:
        """IOPS ("iops"), else bytes/s, read + write + trim added: the one sum every reader
        of a case's figure uses."""
        iops, bw = self._totals
        return iops if metric == "iops" else bw

    @cached_property
    def _totals(self) -> tuple[float, float]:
        """Both sums, added once a case (a big report's views ask each case several times);
        not a field: `dataclasses.fields` and equality leave it out."""
        found = self.metrics.values()
        return sum(m.iops for m in found), sum(m.bw_bytes for m in found)


@dataclass(frozen=True)
class CaseSample:
    """One per-interval sample of a stored case, with the case it belongs to."""

    setup: str
    workload: str
    repetition: int
    sample: Sample


def warning(data: JSONObject) -> CheckWarning:
    return CheckWarning(
        code=str(data.get("code", "")),
        message=str(data.get("message", "")),
        advice=str(data.get("advice", "")),
        hosts=_texts(data.get("hosts")),
    )


def _texts(value: JSON) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def origin(data: JSONObject) -> Origin:
    kind = data.get("kind")
    return Origin(
        kind="import" if kind == "import" else "lab" if kind == "lab" else "plan",
        files=_texts(data.get("files")),
        fio_version=str(data.get("fio_version", "")),
        hostname=str(data.get("hostname", "")),
        digests=_texts(data.get("digests")),
        lab=str(data.get("lab", "")),
    )


def run_row(row: sqlite3.Row) -> RunRow:
    return RunRow(
        id=row["id"],
        plan_name=row["plan_name"],
        plan_source=row["plan_source"],
        plan_hash=row["plan_hash"],
        plan_text=row["plan_text"],
        overrides=json.loads(row["overrides"]),
        started_at=row["started_at"],
        ended_at=row["ended_at"],
        status=row["status"],
        case_count=row["case_count"],
        done=row["done"],
        failed=row["failed"],
        baseline=row["baseline"],
        metric=row["metric"],
        environment=json.loads(row["environment"]),
        origin=origin(json.loads(row["origin"])),
        iolab_version=str(row["iolab_version"] or ""),
        own_s=own_time(row["owner"]),
        laid_s=laid_time(row["owner"]),
    )


def _owner_said(owner: object) -> dict[str, object]:
    """The owner column as its process wrote it ({} where it is not a JSON object: the
    database is data from anywhere)."""
    try:
        said = json.loads(owner) if isinstance(owner, str) else None
    except (ValueError, RecursionError):
        return {}
    return said if isinstance(said, dict) else {}


def _seconds(value: object) -> float | None:
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value < 1e9:
        return None
    return float(value)


def own_time(owner: object) -> tuple[float, int] | None:
    """What the process that ran a run said of its own time: seconds outside fio, over how
    many cases it ran; None where the owner column does not say so as it should."""
    said = _owner_said(owner)
    own, cases = _seconds(said.get("own_s")), said.get("cases")
    if own is None or not isinstance(cases, int) or isinstance(cases, bool):
        return None
    return (own, cases) if 0 < cases < 10**9 else None


def laid_time(owner: object) -> float | None:
    """The seconds the run's process spent laying out its test files, which its own time
    leaves out (fio's own work when fio runs alone); None where unsaid."""
    return _seconds(_owner_said(owner).get("laid_s"))


def direction_metrics(
    row: sqlite3.Row, where: object, percentiles: tuple[str, ...] | None = None
) -> DirectionMetrics:
    """One stored direction's metrics; `where` names the database in an error. With
    `percentiles`, the row holds those alone, as columns ("p99": Store._picked)."""
    lat_mean, lat_max = row["lat_mean_ns"], row["lat_max_ns"]
    if percentiles is None:
        shown = {str(p): float(v) for p, v in json.loads(row["percentiles_ns"]).items()}
    else:
        shown = {p: float(v) for p in percentiles if (v := row[f"p{p}"]) is not None}
    return DirectionMetrics(
        direction=known(DIRECTIONS, row["direction"], "direction", where),
        iops=float(row["iops"]),
        bw_bytes=float(row["bw_bytes"]),
        io_bytes=int(row["io_bytes"]),
        runtime_ms=int(row["runtime_ms"]),
        lat_mean_ns=None if lat_mean is None else float(lat_mean),
        lat_max_ns=None if lat_max is None else float(lat_max),
        percentiles_ns=shown,
    )


def known(values: tuple[Word, ...], text: str, what: str, where: object) -> Word:
    """A stored word as one of the values it can take; anything else is a damaged store."""
    for value in values:
        if value == text:
            return value
    raise StoreError(f"{where}: not a usable iolab database (unknown {what} {text!r})")


def sample(metric: str, direction: str, time_ms: int, value: float, where: object) -> Sample:
    return Sample(
        known(METRICS, metric, "metric", where),
        known(DIRECTIONS, direction, "direction", where),
        time_ms,
        value,
    )
