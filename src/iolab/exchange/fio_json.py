"""fio's JSON output in the forms fio writes it: json and json+ of fio 3.x; the older layout
(fio 2.x: latencies in µs under "clat", percentile maps padded with repeated "0.00" keys;
early 3.x: no "bw_bytes", no "N"); streams of `--status-interval` documents; and client/server
output ("client_stats", with fio's "All clients" entry, which iolab leaves out)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from iolab.exchange import values
from iolab.exchange.found import Job, Unreadable, options_of, percentile_key, scaled
from iolab.model import DIRECTIONS, Sample

ALL_CLIENTS = "All clients"
_LATENCIES = (("clat", "clat_ns"), ("lat", "lat_ns"), ("slat", "slat_ns"))


class Damaged(Unreadable):
    """Text that is not JSON, or JSON cut short."""


def documents(text: str, where: str = "") -> list[tuple[dict[str, Any], str]]:
    """Every JSON document in the text, with its own text; fio may print lines before the
    first (a set-up error, or client/server's job descriptions). Each document's numbers are
    checked (values.check_tree); `where` leads the field's name in a message."""
    start = text.find("{")
    if start < 0:
        raise Damaged("no JSON document in it")
    found = []
    while start >= 0:
        value, end = _decoded(text, start)
        if not isinstance(value, dict):
            raise Damaged("its JSON is not an object")
        found.append((value, text[start:end]))
        rest = text[end:]
        start = end + len(rest) - len(rest.lstrip()) if rest.lstrip().startswith("{") else -1
    for number, (value, _) in enumerate(found, start=1):
        values.check_tree(value, f"{where}document {number}: " if len(found) > 1 else where)
    return found


def _decoded(text: str, start: int) -> tuple[Any, int]:
    try:
        value, end = values.DECODER.raw_decode(text, start)
    except json.JSONDecodeError as error:
        raise Damaged(f"its JSON is cut short or damaged ({error})") from None
    except RecursionError:
        raise Damaged(
            f"its JSON is nested deeper than Python reads; fio's output is at most "
            f"{values.MAX_DEPTH} levels deep"
        ) from None
    return value, end


def read(path: Path, text: str) -> list[Job]:
    """The jobs of one fio JSON file: a single document, a --status-interval stream, or
    client/server output."""
    docs = documents(text)
    for number, (doc, _) in enumerate(docs, start=1):
        values.check_fio(doc, f"document {number}: " if len(docs) > 1 else "")
    first = docs[0][0]
    if "client_stats" in first:
        return client_server(path, first)
    if not isinstance(first.get("jobs"), list):
        raise Unreadable("JSON without fio's 'jobs' list")
    if len(docs) > 1:
        return status_stream(path, [doc for doc, _ in docs])
    return standalone(path, first, text)


def _header(doc: dict[str, Any]) -> dict[str, Any]:
    keep = ("fio version", "timestamp", "timestamp_ms", "time", "global options")
    return {k: doc[k] for k in keep if k in doc}


def _by_name(entries: list[Any]) -> dict[str, list[dict[str, Any]]]:
    jobs: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        if not isinstance(entry, dict) or "jobname" not in entry:
            raise Unreadable("a job entry without 'jobname'")
        if entry["jobname"] != ALL_CLIENTS:
            jobs.setdefault(str(entry["jobname"]), []).append(normalised(entry))
    return jobs


def standalone(path: Path, doc: dict[str, Any], text: str) -> list[Job]:
    jobs = _by_name(doc["jobs"])
    if not jobs:
        raise Unreadable("fio's 'jobs' list is empty")
    header = _header(doc)
    return [
        Job(path, name, options_of(header.get("global options"), entries[0].get("job options")),
            entries, header, raw=text if len(jobs) == 1 else None)
        for name, entries in jobs.items()
    ]  # fmt: skip


def client_server(path: Path, doc: dict[str, Any]) -> list[Job]:
    """Per job, every host's entries; iolab aggregates over hosts itself (fio's "All clients"
    entry adds up every group, whatever the jobs)."""
    stats = doc["client_stats"]
    if not isinstance(stats, list):
        raise Unreadable("'client_stats' is not a list")
    jobs = _by_name(stats)
    if not jobs:
        raise Unreadable("'client_stats' holds no job")
    header = _header(doc)
    return [
        Job(path, name, options_of(header.get("global options"), entries[0].get("job options")),
            entries, header, hosts=True)
        for name, entries in jobs.items()
    ]  # fmt: skip


def status_stream(path: Path, docs: list[dict[str, Any]]) -> list[Job]:
    """`--status-interval`: cumulative documents; the last is fio's final result, and the
    differences between consecutive ones are per-interval samples."""
    jobs = standalone(path, docs[-1], "")
    for job in jobs:
        job.raw = json.dumps({**job.header, "jobs": job.entries}, indent=2)
        snapshots = [_by_name(doc.get("jobs", [])).get(job.name, []) for doc in docs]
        job.samples = list(interval_samples([s for s in snapshots if s]))
    return jobs


def interval_samples(snapshots: list[list[dict[str, Any]]]) -> Iterator[Sample]:
    """IOPS, bytes/s and mean completion latency over each interval between cumulative
    snapshots of one job, stamped with the job's runtime at the interval's end (ms)."""
    for direction in DIRECTIONS:
        before = _Totals(0, 0, 0, 0.0, 0)
        for entries in snapshots:
            now = _totals([e[direction] for e in entries if isinstance(e.get(direction), dict)])
            span = now.runtime - before.runtime
            if span > 0 and now.ios > 0:
                yield Sample("iops", direction, now.runtime, (now.ios - before.ios) * 1000 / span)
                moved = now.moved - before.moved
                yield Sample("bw", direction, now.runtime, moved * 1000 / span)
                if now.completed > before.completed:
                    mean = (now.latency - before.latency) / (now.completed - before.completed)
                    yield Sample("lat", direction, now.runtime, mean)
            before = now


class _Totals(NamedTuple):
    runtime: int  # ms
    ios: int
    moved: int  # bytes
    latency: float  # completion latencies added up, ns
    completed: int  # completion latencies


def _totals(parts: list[dict[str, Any]]) -> _Totals:
    clats = [p["clat_ns"] for p in parts if isinstance(p.get("clat_ns"), dict)]
    return _Totals(
        max((int(p.get("runtime", 0)) for p in parts), default=0),
        sum(int(p.get("total_ios", 0)) for p in parts),
        sum(int(p.get("io_bytes", 0)) for p in parts),
        sum(float(c.get("mean", 0)) * int(c.get("N", 0)) for c in clats),
        sum(int(c.get("N", 0)) for c in clats),
    )


def normalised(entry: dict[str, Any]) -> dict[str, Any]:
    """One job entry in fio 3.x's shape: latencies in ns under clat_ns/lat_ns/slat_ns (old fio
    wrote µs under clat/lat/slat), bw_bytes, N, and percentile keys as "99.900000" (old fio
    padded its map with repeated "0.00" keys)."""
    out = dict(entry)
    for direction in DIRECTIONS:
        part = entry.get(direction)
        if isinstance(part, dict):
            out[direction] = _direction(part)
    return out


def _direction(part: dict[str, Any]) -> dict[str, Any]:
    out = dict(part)
    for old, new in _LATENCIES:
        if new not in out and isinstance(out.get(old), dict):
            out[new] = _in_ns(out.pop(old))
    if "bw_bytes" not in out and "bw" in out:
        out["bw_bytes"] = scaled(out["bw"], 1024)  # fio's KiB/s
    clat = out.get("clat_ns")
    if isinstance(clat, dict):
        clat = dict(clat)
        if isinstance(clat.get("percentile"), dict):
            clat["percentile"] = {
                key: value for k, value in clat["percentile"].items()
                if (key := percentile_key(str(k))) is not None
            }  # fmt: skip
        if "N" not in clat:
            bins = clat.get("bins")
            counted = sum(int(v) for v in bins.values()) if isinstance(bins, dict) else 0
            clat["N"] = counted or int(out.get("total_ios", 0))
        out["clat_ns"] = clat
    return out


def _in_ns(table: dict[str, Any]) -> dict[str, Any]:
    """An old fio latency table (µs) in ns: values, percentiles and json+ bin values."""
    out: dict[str, Any] = {
        k: scaled(v, 1000) for k, v in table.items() if k in ("min", "max", "mean", "stddev")
    }
    if isinstance(table.get("percentile"), dict):
        out["percentile"] = {k: scaled(v, 1000) for k, v in table["percentile"].items()}
    if isinstance(table.get("bins"), dict):
        out["bins"] = {
            str(scaled(k, 1000)): v for k, v in table["bins"].items() if str(k).isdigit()
        }
    if "N" in table:
        out["N"] = table["N"]
    return out
