"""fio's JSON output in the forms fio writes it: json and json+ of fio 3.x; the older layout
(fio 2.x: latencies in µs under "clat", percentile maps padded with repeated "0.00" keys;
early 3.x: no "bw_bytes", no "N"); streams of `--status-interval` documents; and client/server
output ("client_stats", with fio's "All clients" entry, which iolab leaves out)."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple, TextIO

from iolab.exchange import rules
from iolab.exchange.found_jobs import FoundJob, UnreadableJob, options_of, percentile_key, scaled
from iolab.model import DIRECTIONS, Direction, Sample

ALL_CLIENTS = "All clients"
_LATENCIES = (("clat", "clat_ns"), ("lat", "lat_ns"), ("slat", "slat_ns"))


class Damaged(UnreadableJob):
    """Text that is not JSON, or JSON cut short."""


# Bounds on what one file may hold, above what fio writes for a run: json+ takes about 12 KB a
# job (a document is read whole: its memory is about 8 times its size); a stream of 100,000
# documents is more than a day at --status-interval=1. A stream's documents are read, checked
# and folded in one at a time: its memory is one document's and the samples, not every one's.
MAX_DOCUMENT_CHARS = 128 * 1024**2
MAX_DOCUMENTS = 100_000
# A file larger than this is read a chunk at a time (`stream`): its memory is one document's
# and the samples, not the file's, however long the stream.
STREAM_FROM = 32 * 1024**2
CHUNK_CHARS = 1024**2
_SPACE = re.compile(r"\s*")


class JsonDocument(NamedTuple):
    """One JSON document of a file: its value, its place in the text, and whether the file
    holds others (then messages name it: "document 3: ...")."""

    value: dict[str, Any]
    number: int
    several: bool
    start: int
    end: int

    @property
    def label(self) -> str:
        return f"document {self.number}: " if self.several else ""


def each(text: str, where: str = "") -> Iterator[JsonDocument]:
    """Every JSON document in the text, one at a time (fio may print lines before the first:
    a set-up error, or client/server's job descriptions); each one's numbers are checked
    (rules.check_tree) before it is yielded; `where` leads the field's name in a message.
    Linear in the text: nothing before a document is looked at again."""
    start = text.find("{")
    if start < 0:
        raise Damaged("no JSON document in it")
    number, bound = 0, _Bound(text)
    while start >= 0:
        number += 1
        if number > MAX_DOCUMENTS:
            raise _too_many()
        bound.check(start, start)
        value, end = _decoded(text, start)
        bound.check(start, end)  # a document that reached past a '{' at a line's start
        if not isinstance(value, dict):
            raise Damaged("its JSON is not an object")
        after = _SPACE.match(text, end).end()  # type: ignore[union-attr]
        following = text.startswith("{", after)
        doc = JsonDocument(value, number, number > 1 or following, start, end)
        rules.check_tree(value, f"{where}{doc.label}")
        yield doc
        start = after if following else -1


class _Bound:
    """A document's size, told before it is read: from its '{' to the next '{' at a line's
    start (where fio starts its next document), or the text's end; each search reaches past
    the one before, so the text is searched once in all."""

    def __init__(self, text: str) -> None:
        self.text, self.next = text, -1

    def check(self, start: int, end: int) -> None:
        if self.next <= start:
            found = self.text.find("\n{", start + 1)
            self.next = found if found >= 0 else len(self.text)
        if max(self.next, end) - start > MAX_DOCUMENT_CHARS:
            raise _too_large()


def _too_many() -> UnreadableJob:
    return UnreadableJob(
        f"a stream of more than {MAX_DOCUMENTS:,} JSON documents (more than a day of "
        "--status-interval=1); split it where a document starts ('{' at a line's "
        "start) and import the parts"
    )


def _too_large() -> UnreadableJob:
    return UnreadableJob(
        f"a JSON document of more than {MAX_DOCUMENT_CHARS // 1024**2} MiB, more than "
        "iolab reads whole (fio's json+ is about 12 KB a job: 10,000 jobs); fio's "
        "json output (not json+) or group_reporting makes a run's document smaller"
    )


def _too_deep() -> Damaged:
    return Damaged(
        f"its JSON is nested deeper than Python reads; fio's output is at most "
        f"{rules.MAX_DEPTH} levels deep"
    )


class _Buffer:
    """A text stream's next characters: what was read and not yet consumed, topped up a chunk
    at a time (each top-up copies what is left, not what was consumed: linear in the file)."""

    def __init__(self, handle: TextIO) -> None:
        self.handle = handle
        self.text, self.at, self.base = "", 0, 0

    def more(self) -> bool:
        """Read another chunk; False at the end of the file."""
        chunk = self.handle.read(CHUNK_CHARS)
        if not chunk:
            return False
        self.text = self.text[self.at :] + chunk
        self.base += self.at
        self.at = 0
        return True

    def find(self, what: str, start: int) -> int:
        """The index of `what` at or after `start` (an index into `text`, which a top-up
        shifts), reading on until it is there (-1: the file ended first); MAX_DOCUMENT_CHARS
        past the document at `at` without it is refused."""
        while True:
            found = self.text.find(what, start)
            if found >= 0:
                return found
            if len(self.text) - self.at > MAX_DOCUMENT_CHARS:
                raise _too_large()
            start = max(len(self.text) - len(what) + 1, start) - self.at
            if not self.more():
                return -1

    def next_char(self, start: int) -> int:
        """The index of the first character at or after `start` that is not white space
        (-1: none before the file ends)."""
        while True:
            found = _SPACE.match(self.text, start).end()  # type: ignore[union-attr]
            if found < len(self.text):
                return found
            start = found - self.at
            if not self.more():
                return -1


def stream(handle: TextIO) -> Iterator[JsonDocument]:
    """Every JSON document of a text stream, as `each` finds them in a text, read a chunk at
    a time: one document and a chunk are held at once (how far it has read: read_progress)."""
    buffer = _Buffer(handle)
    start = buffer.find("{", 0)
    if start < 0:
        raise Damaged("no JSON document in it")
    number = 0
    while start >= 0:
        number += 1
        if number > MAX_DOCUMENTS:
            raise _too_many()
        buffer.at = start
        value, end = _streamed(buffer)
        begun, ended = buffer.base + buffer.at, buffer.base + end  # a top-up moves the text
        after = buffer.next_char(end)
        following = after >= 0 and buffer.text.startswith("{", after)
        doc = JsonDocument(value, number, number > 1 or following, begun, ended)
        rules.check_tree(value, doc.label)
        yield doc
        start = after if following else -1


def _streamed(buffer: _Buffer) -> tuple[dict[str, Any], int]:
    """The document at buffer.at: read on to where fio starts its next one ('{' at a line's
    start) or the file's end, then decoded; one that reaches past that '{' reads on again."""
    search = buffer.at + 1
    while True:
        found = buffer.find("\n{", search)
        try:
            value, end = rules.DECODER.raw_decode(buffer.text, buffer.at)
        except json.JSONDecodeError as error:
            if found < 0:
                raise Damaged(f"its JSON is cut short or damaged ({error})") from None
            search = found + 1
            continue
        except RecursionError:
            raise _too_deep() from None
        if not isinstance(value, dict):
            raise Damaged("its JSON is not an object")
        return value, end


def documents(text: str, where: str = "") -> list[tuple[dict[str, Any], str]]:
    """Every JSON document in the text, with its own text (see `each`)."""
    return [(doc.value, text[doc.start : doc.end]) for doc in each(text, where)]


def _decoded(text: str, start: int) -> tuple[Any, int]:
    try:
        value, end = rules.DECODER.raw_decode(text, start)
    except json.JSONDecodeError as error:
        raise Damaged(f"its JSON is cut short or damaged ({error})") from None
    except RecursionError:
        raise _too_deep() from None
    return value, end


def read(path: Path, text: str) -> list[FoundJob]:
    """The jobs of one fio JSON file: a single document, a --status-interval stream, or
    client/server output."""
    docs = each(text)
    return jobs_of(path, text, next(docs), docs)


def jobs_of(
    path: Path, text: str, first: JsonDocument, rest: Iterator[JsonDocument]
) -> list[FoundJob]:
    """The jobs of a file whose first document is `first` and whose others `rest` yields (each
    read once, in turn)."""
    rules.check_fio(first.value, first.label)
    if "client_stats" in first.value:
        for doc in rest:
            rules.check_fio(doc.value, doc.label)
        return client_server(path, first.value)
    if not isinstance(first.value.get("jobs"), list):
        raise UnreadableJob("JSON without fio's 'jobs' list")
    if not first.several:
        return standalone(path, first.value, text)
    return status_stream(path, itertools.chain([first], rest))


def _header(doc: dict[str, Any]) -> dict[str, Any]:
    keep = ("fio version", "timestamp", "timestamp_ms", "time", "global options")
    return {k: doc[k] for k in keep if k in doc}


def _by_name(entries: list[Any]) -> dict[str, list[dict[str, Any]]]:
    jobs: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        if not isinstance(entry, dict) or "jobname" not in entry:
            raise UnreadableJob("a job entry without 'jobname'")
        if entry["jobname"] != ALL_CLIENTS:
            jobs.setdefault(str(entry["jobname"]), []).append(normalised(entry))
    return jobs


def standalone(path: Path, doc: dict[str, Any], text: str) -> list[FoundJob]:
    jobs = _by_name(doc["jobs"])
    if not jobs:
        raise UnreadableJob("fio's 'jobs' list is empty")
    header = _header(doc)
    return [
        FoundJob(
            path,
            name,
            options_of(header.get("global options"), entries[0].get("job options")),
            entries,
            header,
            raw=text if len(jobs) == 1 else None,
        )
        for name, entries in jobs.items()
    ]


def client_server(path: Path, doc: dict[str, Any]) -> list[FoundJob]:
    """Per job, every host's entries; iolab aggregates over hosts itself (fio's "All clients"
    entry adds up every group, whatever the jobs)."""
    stats = doc["client_stats"]
    if not isinstance(stats, list):
        raise UnreadableJob("'client_stats' is not a list")
    jobs = _by_name(stats)
    if not jobs:
        raise UnreadableJob("'client_stats' holds no job")
    header = _header(doc)
    return [
        FoundJob(
            path,
            name,
            options_of(header.get("global options"), entries[0].get("job options")),
            entries,
            header,
            hosts=True,
        )
        for name, entries in jobs.items()
    ]


def status_stream(path: Path, docs: Iterable[JsonDocument]) -> list[FoundJob]:
    """`--status-interval`: cumulative documents; the last is fio's final result, and the
    differences between consecutive ones are per-interval samples. The documents are folded
    in one at a time: only the last is kept."""
    intervals = _Intervals()
    last: dict[str, Any] = {}
    for doc in docs:
        if doc.number > 1:
            rules.check_fio(doc.value, doc.label)
        entries = doc.value.get("jobs", [])
        if not isinstance(entries, list):
            raise UnreadableJob(f"{doc.label}fio's 'jobs' is not a list")
        intervals.add(_by_name(entries))
        last = doc.value
    jobs = standalone(path, last, "")
    for job in jobs:
        job.raw = json.dumps({**job.header, "jobs": job.entries}, indent=2)
        job.samples = intervals.samples(job.name)
    return jobs


class _Intervals:
    """Per job and direction, the samples so far and the totals of the snapshot before."""

    def __init__(self) -> None:
        self.before: dict[tuple[str, str], _Totals] = {}
        self.found: dict[tuple[str, str], list[Sample]] = {}

    def add(self, snapshot: dict[str, list[dict[str, Any]]]) -> None:
        for name, entries in snapshot.items():
            for direction in DIRECTIONS:
                key = (name, direction)
                before = self.before.get(key, _NOTHING)
                now = _totals([e[direction] for e in entries if isinstance(e.get(direction), dict)])
                self.found.setdefault(key, []).extend(_between(direction, before, now))
                self.before[key] = now

    def samples(self, name: str) -> list[Sample]:
        return [s for direction in DIRECTIONS for s in self.found.get((name, direction), [])]


def _between(direction: Direction, before: _Totals, now: _Totals) -> Iterator[Sample]:
    span = now.runtime - before.runtime
    if span > 0 and now.ios > 0:
        yield Sample("iops", direction, now.runtime, (now.ios - before.ios) * 1000 / span)
        moved = now.moved - before.moved
        yield Sample("bw", direction, now.runtime, moved * 1000 / span)
        if now.completed > before.completed:
            mean = (now.latency - before.latency) / (now.completed - before.completed)
            yield Sample("lat", direction, now.runtime, mean)


class _Totals(NamedTuple):
    runtime: int  # ms
    ios: int
    moved: int  # bytes
    latency: float  # completion latencies added up, ns
    completed: int  # completion latencies


_NOTHING = _Totals(0, 0, 0, 0.0, 0)


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
                key: value
                for k, value in clat["percentile"].items()
                if (key := percentile_key(str(k))) is not None
            }
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
