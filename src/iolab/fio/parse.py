"""Reading what fio prints: json / json+ results, live status lines, and sample logs."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from iolab.model import (
    DIRECTIONS,
    JSON,
    METRICS,
    CaseMetrics,
    Direction,
    DirectionMetrics,
    JSONObject,
    Metric,
    Sample,
)

PERCENTILES = ("50", "90", "99", "99.9", "99.99")


class ParseError(ValueError):
    """fio's output is not what this parser understands."""


def load_json(text: str, listing: str = "jobs") -> dict[str, JSON]:
    """fio's JSON document; fio may print warning lines before it, which are skipped.
    `listing`: the list it must hold ("client_stats" for fio's client/server output)."""
    start = text.find("{")
    if start < 0:
        raise ParseError("fio printed no JSON result")
    try:
        data = json.loads(text[start:])
    except json.JSONDecodeError as error:
        raise ParseError(f"fio's JSON result is cut short or damaged ({error})") from None
    if not isinstance(data, dict) or not isinstance(data.get(listing), list):
        raise ParseError(f"fio's JSON result has no {listing!r} list")
    loaded: dict[str, JSON] = data
    return loaded


def _object(value: JSON) -> JSONObject:
    """A JSON object of fio's document; an entry of another shape reads as empty."""
    return value if isinstance(value, dict) else {}


def _objects(value: JSON) -> list[JSONObject]:
    """The objects of a JSON list of fio's document (its jobs, its clients' entries)."""
    return [_object(item) for item in value] if isinstance(value, list) else []


def _float(value: JSON) -> float:
    """A figure of fio's document: a number, or a number as text."""
    if isinstance(value, int | float | str):
        return float(value)
    raise ParseError(f"fio's JSON result has {value!r} where a number belongs")


def _int(value: JSON) -> int:
    if isinstance(value, int | float | str):
        return int(value)
    raise ParseError(f"fio's JSON result has {value!r} where a number belongs")


def metrics(data: JSONObject) -> CaseMetrics:
    """One case's metrics, all job entries of the document aggregated."""
    jobs = _objects(data["jobs"])
    if not jobs:
        raise ParseError("fio's JSON result lists no jobs")
    directions = tuple(
        merged
        for name in DIRECTIONS
        if (merged := _direction(name, [_object(job[name]) for job in jobs if name in job]))
        is not None
    )
    return CaseMetrics(
        directions=directions,
        usr_cpu=sum(_float(job.get("usr_cpu", 0.0)) for job in jobs) / len(jobs),
        sys_cpu=sum(_float(job.get("sys_cpu", 0.0)) for job in jobs) / len(jobs),
        runtime_ms=max((d.runtime_ms for d in directions), default=0),
        error=next((_int(job["error"]) for job in jobs if job.get("error")), 0),
    )


def by_host(data: JSONObject) -> dict[str, CaseMetrics]:
    """fio's client/server entries, host by host (their "hostname", or "hostname:port" where
    several servers share an address); {} for one host's run."""
    entries = [job for job in _objects(data["jobs"]) if "hostname" in job]
    addresses = {str(job["hostname"]) for job in entries}
    servers = {(str(job["hostname"]), job.get("port")) for job in entries}
    hosts: dict[str, list[JSON]] = {}
    for job in entries:
        host = str(job["hostname"])
        if len(servers) > len(addresses):
            host = f"{host}:{job.get('port')}"  # several servers on one address
        hosts.setdefault(host, []).append(dict(job))
    return {host: metrics({"jobs": jobs}) for host, jobs in hosts.items()}


def _direction(name: Direction, parts: list[JSONObject]) -> DirectionMetrics | None:
    ios = sum(_int(part.get("total_ios", 0)) for part in parts)
    moved = sum(_int(part.get("io_bytes", 0)) for part in parts)
    if not parts or (ios == 0 and moved == 0):
        return None
    clats = [_object(part.get("clat_ns", {})) for part in parts]
    counts = [_int(c.get("N", 0)) for c in clats]
    weight = sum(counts)
    mean = sum(_float(c.get("mean", 0.0)) * n for c, n in zip(clats, counts, strict=True))
    if len(parts) == 1:  # fio's own mean, to the last digit (x * n / n may round)
        mean = _float(clats[0].get("mean", 0.0))
    return DirectionMetrics(
        direction=name,
        iops=sum(_float(part.get("iops", 0.0)) for part in parts),
        bw_bytes=sum(_float(part.get("bw_bytes", 0.0)) for part in parts),
        io_bytes=moved,
        runtime_ms=max(_int(part.get("runtime", 0)) for part in parts),
        lat_mean_ns=(mean if len(parts) == 1 else mean / weight) if weight else None,
        lat_max_ns=max((_float(c["max"]) for c in clats if "max" in c), default=None),
        percentiles_ns=_percentiles(clats),
    )


def _percentiles(clats: list[JSONObject]) -> dict[str, float]:
    """fio's own percentiles for one job entry; merged from json+ bins across several."""
    if len(clats) == 1:
        table = _object(clats[0].get("percentile", {}))
        return {p: _float(table[key]) for p in PERCENTILES if (key := f"{float(p):.6f}") in table}
    bins = _summed_bins(clats)
    return histogram_percentiles(bins) if bins else {}


def _summed_bins(clats: Iterable[JSONObject]) -> dict[int, int]:
    """json+ completion-latency bins of several job entries, added bucket by bucket."""
    bins: dict[int, int] = defaultdict(int)
    for clat in clats:
        for value, count in _object(clat.get("bins", {})).items():
            bins[int(value)] += _int(count)
    return dict(bins)


def histogram_bins(data: JSONObject) -> dict[Direction, dict[int, int]]:
    """json+ completion-latency histograms (bucket value in ns -> count) per direction, all
    jobs of the document added; a direction without I/O or without bins is left out."""
    out: dict[Direction, dict[int, int]] = {}
    for name in DIRECTIONS:
        parts = [_object(job[name]) for job in _objects(data.get("jobs", [])) if name in job]
        done = [part for part in parts if _int(part.get("total_ios", 0)) > 0]
        if bins := _summed_bins(_object(part.get("clat_ns", {})) for part in done):
            out[name] = bins
    return out


def histogram_percentiles(bins: Mapping[int, int]) -> dict[str, float]:
    """Percentiles from a json+ latency histogram (bucket value in ns -> count)."""
    ordered = sorted(bins.items())
    total = sum(count for _, count in ordered)
    out: dict[str, float] = {}
    for p in PERCENTILES:
        rank, seen = float(p) / 100 * total, 0
        for value, count in ordered:
            seen += count
            if seen >= rank:
                out[p] = float(value)
                break
    return out


# ---------------------------------------------------------------- live status lines

_STATUS_BW = re.compile(r"\[((?:[rwt]=[\d.]+[kKMGTP]?i?B/s,?)+)\]")
_STATUS_IOPS = re.compile(r"\[((?:[rwt]=[\d.]+[kMGT]?,?)+) IOPS\]")
_SCALE = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_BINARY = {"": 1, "k": 1024, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4, "P": 1024**5}


@dataclass(frozen=True)
class SteadyState:
    """fio's steady-state detection for a job (its `steadystate` option): the criterion, whether
    it was attained, and the IOPS and bandwidth over the last window it judged."""

    criterion: str
    attained: bool
    window_s: int
    iops_mean: float
    bw_mean: float  # bytes/s


def steady_state(data: JSONObject) -> SteadyState | None:
    """The steady-state result of a case (all its jobs: attained only if every job attained,
    means added up); None when the case did not ask for it."""
    jobs = _objects(data.get("jobs", []))
    found = [_object(job["steadystate"]) for job in jobs if "steadystate" in job]
    if not found:
        return None
    return SteadyState(
        criterion=str(found[0].get("ss", "")),
        attained=all(_int(ss.get("attained", 0)) for ss in found),
        window_s=_int(found[0].get("duration", 0)),
        iops_mean=sum(_float(_object(ss.get("data", {})).get("iops_mean", 0)) for ss in found),
        bw_mean=sum(_float(_object(ss.get("data", {})).get("bw_mean", 0)) for ss in found),
    )


@dataclass(frozen=True)
class Status:
    """fio's latest live figures for the running job, all directions added up."""

    iops: float
    bw_bytes: float
    hosts: tuple[tuple[str, str], ...] = ()  # several hosts: (host, its state) each


def status_line(line: str) -> Status | None:
    """Parse fio's status line: 'Jobs: 1 (f=1): [r(1)][-.-%][r=200MiB/s][r=51.2k IOPS][eta ..]'."""
    bw = _STATUS_BW.search(line)
    iops = _STATUS_IOPS.search(line)
    if not bw and not iops:
        return None
    return Status(
        iops=sum(_number(part, _SCALE) for part in iops.group(1).split(",")) if iops else 0.0,
        bw_bytes=sum(_bandwidth(part) for part in bw.group(1).split(",")) if bw else 0.0,
    )


def _number(part: str, scale: Mapping[str, float]) -> float:
    match = re.match(r"[rwt]=([\d.]+)([kMGT]?)", part)
    return float(match.group(1)) * scale[match.group(2)] if match else 0.0


def _bandwidth(part: str) -> float:
    match = re.match(r"[rwt]=([\d.]+)([kKMGTP]?)(i?)B/s", part)
    if not match:
        return 0.0
    unit = match.group(2)
    base = _BINARY[unit] if match.group(3) else 1000 ** " kmgtp".index(unit.lower() or " ")
    return float(match.group(1)) * base


# ---------------------------------------------------------------- sample logs

_LOG_METRIC: dict[str, Metric] = {metric: metric for metric in METRICS}


def samples(files: Iterable[Path], interval_ms: int, latency: str = "clat") -> list[Sample]:
    """Per-interval samples from fio's *_bw/_iops/_clat logs, jobs added (latency averaged).

    Latency is completion latency (the _clat log), as in the tables; fio's _lat log (total
    latency, submission included) and _slat log are not read, unless `latency` is "lat".
    """
    sums: dict[tuple[str, Direction, int], list[float]] = defaultdict(list)
    for file in files:
        found = re.search(rf"_(bw|iops|{latency})\.(?:\d+\.)?log$", file.name)
        if not found:
            continue
        for line in file.read_text().splitlines():
            fields = [f.strip() for f in line.split(",")]
            if len(fields) < 3 or not fields[2].isdigit() or int(fields[2]) > 2:
                continue
            slot = round(int(fields[0]) / interval_ms) * interval_ms
            kind = "lat" if found.group(1) == latency else found.group(1)
            sums[(kind, DIRECTIONS[int(fields[2])], slot)].append(float(fields[1]))
    jobs: dict[tuple[str, Direction], int] = defaultdict(int)
    for (kind, direction, _), values in sums.items():
        jobs[(kind, direction)] = max(jobs[(kind, direction)], len(values))
    out = []
    for (kind, direction, slot), values in sorted(sums.items()):
        if len(values) < jobs[(kind, direction)]:
            continue  # an interval that not every job logged (the very start or end) is partial
        value = sum(values) / len(values) if kind == "lat" else sum(values)
        if kind == "bw":
            value *= 1024  # fio logs bandwidth in KiB/s
        out.append(Sample(_LOG_METRIC[kind], direction, slot, value))
    return out
