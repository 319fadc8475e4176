"""Hostile imports, table-driven: every row is one file that `iolab import FILE --db x.db` must
refuse: a real fixture (fio's JSON, json+, terse, logs, a --status-interval stream,
client/server JSON, dd's and bonnie++'s reports, a published table, an iolab export) with one
value changed, or a file made to be hostile (a 200,000-character line, JSON nested 3,000 deep,
a file over the size bound, a folder 1,800 levels deep).

Each row asserts, into a database that does not exist and into one that holds a run: exit code
1; exactly one line on stderr, "iolab: error: " then the file's name, the field and what is
wrong with it; no traceback; the new database not created and the old one byte for byte the
same (sha256), no journal left beside either, and nothing written where the file lies. The
fixtures are read, never changed: each row writes its own copy.

The real output itself passes the same checks (the last tests): every fixture of
tests/fixtures imports but the files that are no fio output, and every golden store's export
imports back.

Then the bounds (issue 29, finding 10): a --status-interval stream of more than 100,000
documents, a JSON document over 128 MiB, a published table of more than 10,000 rows (in both
of its shapes), /dev/zero and a folder whose only result is a FIFO (once passed over in
silence, exit 0) are refused in one line naming the bound, through the same checks (the real
entry point, memory-capped, for the big ones). Each file is generated here (the big document
is sparse).
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import (
    Outcome,
    Word,
    invoke,
    iolab_here,
    listing,
    problems_with_output,
    run_iolab,
    spawn,
)
from fakes import QuietUi
from iolab.app.transfer import import_files
from iolab.exchange import importer, published
from iolab.exchange.export import csv_texts, document, json_text
from iolab.exchange.fio_json import MAX_DOCUMENT_CHARS, MAX_DOCUMENTS, documents
from iolab.store import Store

FIXTURES = Path(__file__).parent / "fixtures"
FIO = FIXTURES / "fio"
IMPORT = FIXTURES / "import"
GOLDEN = Path(__file__).parent / "golden"
Make = Callable[[Path], Path]  # writes the hostile file (or folder) in a folder; its path


@dataclass(frozen=True)
class Hostile:
    id: str
    make: Make
    words: tuple[Word, ...]  # besides the file's name, what its line must say
    spawn: bool = False  # through the real entry point, in a subprocess
    listed: bool = True  # the input's own folder is compared before and after


def fixture(name: str, root: Path = FIO, suffix: str = ".json") -> Path:
    return root / name / f"{name}{suffix}"


# ---------------------------------------------------------------- how rows change a file


def put(*where: Any) -> Callable[[Any], None]:
    """Set the value at a JSON path (the last argument is the value)."""

    def change(doc: Any) -> None:
        *keys, last, value = where
        for key in keys:
            doc = doc[key]
        doc[last] = value

    return change


def drop(*where: Any) -> Callable[[Any], None]:
    def change(doc: Any) -> None:
        *keys, last = where
        for key in keys:
            doc = doc[key]
        del doc[last]

    return change


def fio_json(id: str, base: Path, change: Callable[[Any], None], *words: Word) -> Hostile:
    """fio's JSON of `base` with one change, written as Python's json writes it (NaN and
    Infinity as those bare words)."""

    def make(folder: Path) -> Path:
        text = base.read_text()
        doc = json.loads(text[text.index("{") :])
        change(doc)
        out = folder / f"{id}.json"
        out.write_text(json.dumps(doc, indent=1))
        return out

    return Hostile(id, make, words)


def text_file(
    id: str, base: Path | None, change: Callable[[str], str], *words: Word, name: str = ""
) -> Hostile:
    """The text of `base` (or "") changed; named `name` (default: the id and base's suffix)."""

    def make(folder: Path) -> Path:
        text = base.read_text() if base else ""
        own = folder / id
        own.mkdir()
        out = own / (name or f"{id}{base.suffix if base else '.txt'}")
        out.write_text(change(text))
        return out

    return Hostile(id, make, words)


def swap(old: str, new: str, count: int = 1) -> Callable[[str], str]:
    def change(text: str) -> str:
        assert old in text, f"{old!r} is not in the fixture"
        return text.replace(old, new, count)

    return change


def field(line_number: int, index: int, value: str, sep: str = ";") -> Callable[[str], str]:
    """Field `index` of line `line_number` (from 1) replaced."""

    def change(text: str) -> str:
        lines = text.split("\n")
        fields = lines[line_number - 1].split(sep)
        fields[index] = value
        lines[line_number - 1] = sep.join(fields)
        return "\n".join(lines)

    return change


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


# ---------------------------------------------------------------- fio's JSON

RANDREAD = fixture("randread-json")
JSONPLUS = fixture("randread-jsonplus")
READ = ("jobs", 0, "read")
CLAT = (*READ, "clat_ns")
OPTIONS = ("jobs", 0, "job options")

FIO_ROWS = [
    fio_json(
        "iops-negative",
        RANDREAD,
        put(*READ, "iops", -5000),
        "jobs[0].read.iops = -5000 is negative",
    ),
    fio_json(
        "bw-infinity",
        RANDREAD,
        put(*READ, "bw_bytes", float("inf")),
        "jobs[0].read.bw_bytes is Infinity, not a finite number",
    ),
    fio_json(
        "bw-minus-infinity",
        RANDREAD,
        put(*READ, "bw", float("-inf")),
        "jobs[0].read.bw is -Infinity, not a finite number",
    ),
    fio_json(
        "bw-1e308",
        RANDREAD,
        put(*READ, "bw_bytes", 1e308),
        "jobs[0].read.bw_bytes = 1e+308 is beyond 2^64",
    ),
    fio_json(
        "bw-past-1pb",
        RANDREAD,
        put(*READ, "bw_bytes", 2 * 10**15),
        "jobs[0].read.bw_bytes = 2000000000000000 is beyond 10^15 bytes/s",
    ),
    fio_json(
        "iops-1e308",
        RANDREAD,
        put(*READ, "iops", 1e308),
        "jobs[0].read.iops = 1e+308 is beyond 2^64",
    ),
    fio_json(
        "runtime-negative",
        RANDREAD,
        put(*READ, "runtime", -1),
        "jobs[0].read.runtime = -1 is negative",
    ),
    fio_json(
        "runtime-past-bound",
        RANDREAD,
        put(*READ, "runtime", 10**12),
        "jobs[0].read.runtime = 1000000000000 is beyond 10^11 ms",
    ),
    fio_json(
        "percentile-negative",
        RANDREAD,
        put(*CLAT, "percentile", "99.000000", -5),
        'jobs[0].read.clat_ns.percentile["99.000000"] = -5 is negative',
    ),
    fio_json(
        "percentile-falling",
        RANDREAD,
        put(*CLAT, "percentile", "99.990000", 1),
        'jobs[0].read.clat_ns.percentile["99.990000"] = 1 is below',
        "a higher percentile cannot be smaller",
    ),
    fio_json(
        "iops-nan",
        RANDREAD,
        put(*READ, "iops", float("nan")),
        "jobs[0].read.iops is NaN, not a finite number",
    ),
    fio_json(
        "iops-nan-text",
        RANDREAD,
        put(*READ, "iops", "NaN"),
        "jobs[0].read.iops is text, not a number",
    ),
    fio_json(
        "iops-text", RANDREAD, put(*READ, "iops", "fast"), "jobs[0].read.iops is text, not a number"
    ),
    fio_json(
        "iops-true", RANDREAD, put(*READ, "iops", True), "jobs[0].read.iops is true, not a number"
    ),
    fio_json(
        "iops-null", RANDREAD, put(*READ, "iops", None), "jobs[0].read.iops is null, not a number"
    ),
    fio_json(
        "iops-list",
        RANDREAD,
        put(*READ, "iops", [1, 2]),
        "jobs[0].read.iops is a list, not a number",
    ),
    fio_json(
        "io-bytes-1e30",
        RANDREAD,
        put(*READ, "io_bytes", 10**30),
        "jobs[0].read.io_bytes is a number of 31 digits, beyond 2^64",
    ),
    fio_json(
        "io-bytes-2-63",
        RANDREAD,
        put(*READ, "io_bytes", 2**63),
        "jobs[0].read.io_bytes = 9223372036854775808 is beyond 2^63 - 1",
    ),
    fio_json(
        "io-bytes-fraction",
        RANDREAD,
        put(*READ, "io_bytes", 4096.5),
        "jobs[0].read.io_bytes = 4096.5 is not a whole number",
    ),
    fio_json(
        "total-ios-negative",
        RANDREAD,
        put(*READ, "total_ios", -1),
        "jobs[0].read.total_ios = -1 is negative",
    ),
    fio_json(
        "clat-mean-negative",
        RANDREAD,
        put(*CLAT, "mean", -1.5),
        "jobs[0].read.clat_ns.mean = -1.5 is negative",
    ),
    fio_json(
        "clat-max-infinity",
        RANDREAD,
        put(*CLAT, "max", float("inf")),
        "jobs[0].read.clat_ns.max is Infinity",
    ),
    fio_json(
        "clat-n-negative", RANDREAD, put(*CLAT, "N", -3), "jobs[0].read.clat_ns.N = -3 is negative"
    ),
    fio_json(
        "lat-min-negative",
        RANDREAD,
        put(*READ, "lat_ns", "min", -1),
        "jobs[0].read.lat_ns.min = -1 is negative",
    ),
    fio_json(
        "clat-not-an-object",
        RANDREAD,
        put(*READ, "clat_ns", [1]),
        "jobs[0].read.clat_ns is a list, not an object",
    ),
    fio_json("read-is-text", RANDREAD, put(*READ, "fast"), "jobs[0].read is text, not an object"),
    fio_json(
        "usr-cpu-negative",
        RANDREAD,
        put("jobs", 0, "usr_cpu", -1),
        "jobs[0].usr_cpu = -1 is negative",
    ),
    fio_json(
        "sys-cpu-nan", RANDREAD, put("jobs", 0, "sys_cpu", float("nan")), "jobs[0].sys_cpu is NaN"
    ),
    fio_json("timestamp-negative", RANDREAD, put("timestamp", -5), "timestamp = -5 is negative"),
    fio_json(
        "timestamp-year-30000",
        RANDREAD,
        put("timestamp", 10**12),
        "timestamp = 1000000000000 is beyond the year 9999",
    ),
    fio_json(
        "timestamp-ms-negative", RANDREAD, put("timestamp_ms", -1), "timestamp_ms = -1 is negative"
    ),
    fio_json(
        "iodepth-negative",
        RANDREAD,
        put(*OPTIONS, "iodepth", "-4"),
        'jobs[0]["job options"].iodepth is negative',
    ),
    fio_json(
        "iodepth-zero",
        RANDREAD,
        put(*OPTIONS, "iodepth", "0"),
        'jobs[0]["job options"].iodepth = 0 is below 1',
    ),
    fio_json(
        "numjobs-negative",
        RANDREAD,
        put(*OPTIONS, "numjobs", "-1"),
        'jobs[0]["job options"].numjobs is negative',
    ),
    fio_json(
        "bs-zero",
        RANDREAD,
        put(*OPTIONS, "bs", "0"),
        'jobs[0]["job options"].bs: a block size of 0 bytes',
    ),
    fio_json(
        "bs-negative",
        RANDREAD,
        put(*OPTIONS, "bs", "4k,-64k"),
        'jobs[0]["job options"].bs is negative',
    ),
    fio_json(
        "rwmixread-150",
        RANDREAD,
        put(*OPTIONS, "rwmixread", "150"),
        'jobs[0]["job options"].rwmixread = 150 is beyond 100%',
    ),
    fio_json(
        "global-runtime-negative",
        RANDREAD,
        put("global options", "runtime", "-1"),
        '["global options"].runtime is negative',
    ),
    fio_json("no-jobs", RANDREAD, drop("jobs"), "JSON without fio's 'jobs' list"),
    fio_json("jobs-not-a-list", RANDREAD, put("jobs", {"a": 1}), "JSON without fio's 'jobs' list"),
    fio_json("jobs-empty", RANDREAD, put("jobs", []), "fio's 'jobs' list is empty"),
    fio_json("job-is-text", RANDREAD, put("jobs", 0, "x"), "a job entry without 'jobname'"),
    fio_json(
        "deep-value",
        RANDREAD,
        put("jobs", 0, "extra", json.loads(nested(100))),
        "jobs[0].extra[0][0]",
        "is nested more than 64 levels deep",
    ),
    fio_json(
        "bins-key-not-ns",
        JSONPLUS,
        put(*CLAT, "bins", {"fast": 3}),
        "jobs[0].read.clat_ns.bins.fast: a histogram bin not named by its latency in ns",
    ),
    fio_json(
        "bins-count-negative",
        JSONPLUS,
        put(*CLAT, "bins", {"1000": -3}),
        'jobs[0].read.clat_ns.bins["1000"] = -3 is negative',
    ),
    fio_json(
        "bins-count-fraction",
        JSONPLUS,
        put(*CLAT, "bins", {"1000": 1.5}),
        'jobs[0].read.clat_ns.bins["1000"] = 1.5 is not a whole number',
    ),
    fio_json(
        "iodepth-level-negative",
        RANDREAD,
        put("jobs", 0, "iodepth_level", "8", -1),
        'jobs[0].iodepth_level["8"] = -1 is negative',
    ),
    fio_json(
        "old-fio-clat-negative",
        fixture("old-2.21-json", IMPORT),
        put(*READ, "clat", "mean", -1),
        "jobs[0].read.clat.mean = -1 is negative",
    ),
    fio_json(
        "old-fio-percentile-nan",
        fixture("old-3.1-jsonplus", IMPORT),
        put(*CLAT, "percentile", "50.000000", float("nan")),
        'jobs[0].read.clat_ns.percentile["50.000000"] is NaN',
    ),
    fio_json(
        "client-iops-negative",
        fixture("client-server", IMPORT),
        put("client_stats", 0, "read", "iops", -5),
        "client_stats[0].read.iops = -5 is negative",
    ),
    fio_json(
        "client-iodepth-negative",
        fixture("client-server", IMPORT),
        put("client_stats", 0, "job options", "iodepth", "-4"),
        'client_stats[0]["job options"].iodepth is negative',
    ),
    text_file(
        "nan-token",
        RANDREAD,
        swap('"iops" : ', '"iops" : NaN, "was" : '),
        "jobs[0].read.iops is NaN, not a finite number",
    ),
    text_file(
        "infinity-token",
        RANDREAD,
        swap('"bw_bytes" : ', '"bw_bytes" : Infinity, "w" : '),
        "jobs[0].read.bw_bytes is Infinity, not a finite number",
    ),
    text_file(
        "float-past-double",
        RANDREAD,
        swap('"iops" : ', '"iops" : 1e400, "was" : '),
        "jobs[0].read.iops is a number beyond the range of a double",
    ),
    text_file(
        "io-bytes-200000-digits",
        RANDREAD,
        swap('"io_bytes" : ', '"io_bytes" : ' + "9" * 200_000 + ', "was" : '),
        "jobs[0].read.io_bytes is a number of 200000 digits",
    ),
    text_file(
        "nested-3000",
        RANDREAD,
        swap('"jobs" : [', f'"deep" : {nested(3000)}, "jobs" : ['),
        "its JSON is nested deeper than Python reads",
    ),
    text_file(
        "stream-second-document-negative",
        fixture("status-interval", IMPORT),
        swap('"iops" : ', '"iops" : -7, "was" : ', 1),
        "document 1: jobs[0].read.iops = -7 is negative",
    ),
]


def _stream_going_back(text: str) -> str:
    """A --status-interval stream whose second document counts more I/Os than the third."""
    docs = [doc for doc, _ in documents(text)]
    docs[1]["jobs"][0]["read"]["total_ios"] *= 10
    return "\n".join(json.dumps(doc) for doc in docs)


STREAM = fixture("status-interval", IMPORT)
FIO_ROWS.append(
    text_file("stream-counts-going-back", STREAM, _stream_going_back, "sample at", "is negative")
)

# ---------------------------------------------------------------- terse, logs

TERSE = fixture("terse-v3", IMPORT, ".txt")
R = 5  # the first field of the read direction in a terse line
TERSE_ROWS = [
    text_file(
        "terse-iops-negative",
        TERSE,
        field(1, R + 2, "-5000"),
        "line 1: read.iops = -5000 is negative",
    ),
    text_file(
        "terse-io-1e30",
        TERSE,
        field(1, R, str(10**30)),
        "line 1: read.io_bytes (a number of 34 digits) is beyond 2^63 - 1",
    ),
    text_file(
        "terse-runtime-negative",
        TERSE,
        field(1, R + 3, "-1"),
        "line 1: read.runtime = -1 is negative",
    ),
    text_file(
        "terse-percentile-negative",
        TERSE,
        field(1, R + 12, "1.000000%=-25"),
        'line 1: read.clat_ns.percentile["1.000000"] = -25000 is negative',
    ),
    text_file(
        "terse-iops-infinity",
        TERSE,
        field(1, R + 2, "inf"),
        "line 1: read.iops is Infinity, not a finite number",
    ),
    text_file(
        "terse-cpu-nan",
        TERSE,
        field(1, R + 82, "nan%"),
        "line 1: usr_cpu is NaN, not a finite number",
    ),
    text_file(
        "terse-clat-mean-negative",
        TERSE,
        field(1, R + 10, "-3.5"),
        "line 1: read.clat_ns.mean = -3500 is negative",
    ),
    text_file(
        "terse-text-for-number",
        TERSE,
        field(1, R + 1, "fast"),
        "line 1: not a terse v3 line (a figure that is not a number)",
    ),
    text_file(
        "terse-cut-short",
        fixture("terse-v5", IMPORT, ".txt"),
        lambda t: ";".join(t.split(";")[:146]),
        "line 1: fewer fields than terse v5 has",
    ),
]

BW_LOG = IMPORT / "logs" / "randrw_bw.1.log"
LOG_ROWS = [
    text_file(
        "log-value-negative",
        BW_LOG,
        field(3, 1, " -5", ","),
        "line 3, value = -5 is negative",
        name=BW_LOG.name,
    ),
    text_file(
        "log-value-nan", BW_LOG, field(3, 1, " nan", ","), "line 3, value is NaN", name=BW_LOG.name
    ),
    text_file(
        "log-value-infinity",
        BW_LOG,
        field(3, 1, " inf", ","),
        "line 3, value is Infinity",
        name=BW_LOG.name,
    ),
    text_file(
        "log-value-1e300",
        BW_LOG,
        field(3, 1, " 1e300", ","),
        "line 3, value = 1e+300 is beyond 10^15 bytes/s (1 PB/s) in KiB/s",
        name=BW_LOG.name,
    ),
    text_file(
        "log-value-text",
        BW_LOG,
        field(7, 1, " fast", ","),
        "line 7, value: not a number",
        name=BW_LOG.name,
    ),
    text_file(
        "log-time-1e30",
        BW_LOG,
        field(3, 0, str(10**30), ","),
        "line 3, time (ms) is a number of 31 digits",
        name=BW_LOG.name,
    ),
    text_file(
        "log-time-fraction",
        BW_LOG,
        field(7, 0, "1500.5", ","),
        "line 7, time (ms) is not a whole number",
        name=BW_LOG.name,
    ),
    text_file(
        "log-direction-odd-digit",
        BW_LOG,
        field(7, 2, " \u00b2", ","),
        "line 7, direction: not 0, 1 or 2",
        name=BW_LOG.name,
    ),
    text_file(
        "log-iops-1e12",
        IMPORT / "logs" / "randrw_iops.1.log",
        field(2, 1, " 1e12", ","),
        "line 2, value = 1e+12 is beyond 10^10 IOPS",
        name="randrw_iops.1.log",
    ),
]

# ---------------------------------------------------------------- dd, bonnie++

DD = IMPORT / "dd" / "dd-write-direct.txt"
DD_REPORT = "67108864 bytes (67 MB, 64 MiB) copied, 0.0584385 s, 1.1 GB/s"
DD_ROWS = [
    text_file(
        "dd-bytes-1e30",
        DD,
        swap("67108864 bytes", f"{10**30} bytes"),
        "line 3: bytes copied is a number of 31 digits, beyond 2^63 - 1",
        name="dd-write.txt",
    ),
    text_file(
        "dd-rate-1e308",
        DD,
        swap("1.1 GB/s", "1e308 GB/s"),
        "line 3: write bandwidth (bytes/s) is Infinity",
        name="dd-write.txt",
    ),
    text_file(
        "dd-rate-past-1pb",
        DD,
        swap("1.1 GB/s", "2 PB/s"),
        "line 3: write bandwidth (bytes/s) = 2e+15 is beyond 10^15 bytes/s",
        name="dd-write.txt",
    ),
    text_file(
        "dd-seconds-tiny",
        DD,
        swap("0.0584385 s", "1e-300 s"),
        "line 3: write IOPS = 6.4e+301 is beyond 10^10 IOPS",
        name="dd-write.txt",
    ),
    text_file(
        "dd-seconds-huge",
        DD,
        swap("0.0584385 s", "1e300 s"),
        "line 3: seconds (s) = 1e+300 is beyond 10^11 ms",
        name="dd-write.txt",
    ),
    text_file(
        "dd-exponent-overflow",
        DD,
        swap("1.1 GB/s", "1e999999999 GB/s"),
        "line 3: a figure beyond any dd prints",
        name="dd-write.txt",
    ),
    text_file(
        "dd-records-200000-digits",
        DD,
        swap("64+0 records out", "9" * 200_000 + "+0 records out"),
        "line 2: whole records is a number of 200000 digits",
        name="dd-write.txt",
    ),
]

BONNIE = IMPORT / "bonnie" / "bonnie-quiet.csv"
BONNIE_ROWS = [
    text_file(
        "bonnie-block-negative",
        BONNIE,
        field(2, 11, "-5000", ","),
        "bonnie++ block rw=write = -5.12e+06 is negative",
    ),
    text_file(
        "bonnie-rewrite-nan",
        BONNIE,
        field(2, 13, "nan", ","),
        "bonnie++ rewrite is NaN, not a finite number",
    ),
    text_file(
        "bonnie-per-char-infinity",
        BONNIE,
        field(2, 15, "Infinity", ","),
        "bonnie++ per-char rw=read is Infinity, not a finite number",
    ),
    text_file(
        "bonnie-block-1e308",
        BONNIE,
        field(2, 11, "1e308", ","),
        "bonnie++ block rw=write is Infinity, not a finite number",
    ),
    text_file(
        "bonnie-block-1e12",
        BONNIE,
        field(2, 11, "1e12", ","),
        "bonnie++ block rw=write = 1.024e+15 is beyond 10^15 bytes/s",
    ),
    text_file(
        "bonnie-concurrency-text",
        BONNIE,
        field(2, 3, "many", ","),
        "line 2, concurrency is not a whole number",
    ),
    text_file(
        "bonnie-concurrency-zero",
        BONNIE,
        field(2, 3, "0", ","),
        "line 2, concurrency = 0 is below 1",
    ),
    text_file("bonnie-chunk-zero", BONNIE, field(2, 6, "0", ","), "its chunk size = 0 is below 1"),
    text_file(
        "bonnie-latency-huge",
        BONNIE,
        field(2, 40, "99999999999999999999999s", ","),
        "bonnie++ rewrite: write maximum latency (ns) = 1e+32 is beyond 2^63 - 1",
    ),
]

# ---------------------------------------------------------------- published tables

VERTEX = IMPORT / "published" / "A_vertex3_raid_card_vs_none.csv"
CARDS_DD = IMPORT / "published" / "C_x25e_raid_cards_dd.csv"
CELL = "4k sequential read,read,4k,64,iops,94863,"
PUBLISHED_ROWS = [
    text_file(
        "table-cell-negative",
        VERTEX,
        swap(CELL, CELL.replace("94863", "-5000")),
        "line 4, PERC H710P ARA+WB = -5000 is negative",
    ),
    text_file(
        "table-cell-nan",
        VERTEX,
        swap(CELL, CELL.replace("94863", "NaN")),
        "line 4, PERC H710P ARA+WB is NaN",
    ),
    text_file(
        "table-cell-infinity",
        VERTEX,
        swap(CELL, CELL.replace("94863", "Infinity")),
        "line 4, PERC H710P ARA+WB is Infinity",
    ),
    text_file(
        "table-cell-1e12-iops",
        VERTEX,
        swap(CELL, CELL.replace("94863", "1e12")),
        "line 4, PERC H710P ARA+WB: read IOPS = 1e+12 is beyond 10^10 IOPS",
    ),
    text_file(
        "table-cell-text",
        VERTEX,
        swap(CELL, CELL.replace("94863", "fast")),
        "line 4, PERC H710P ARA+WB: not a number",
    ),
    text_file(
        "table-numjobs-negative",
        VERTEX,
        swap(CELL, CELL.replace(",64,", ",-4,")),
        "options.numjobs is negative",
    ),
    text_file(
        "table-200000-char-line",
        VERTEX,
        lambda t: t + "4k,read,4k,64,iops," + "9" * 200_000 + ",1,1\n",
        "not a line of CSV iolab reads",
        "field larger than field limit",
    ),
    text_file(
        "table-header-200000-chars",
        None,
        lambda _: "x" * 200_000 + ",y\n1,2\n",
        "line 1: not a line of CSV iolab reads",
        name="table.csv",
    ),
    text_file(
        "table-rows-mb-negative",
        CARDS_DD,
        swap(",481,227", ",-481,227"),
        "line 5, read_MB/s = -4.81e+08 is negative",
    ),
    text_file(
        "table-rows-mb-nan",
        CARDS_DD,
        swap(",481,227", ",nan,227"),
        "line 5, read_MB/s is NaN, not a finite number",
    ),
    text_file(
        "table-rows-cache-negative",
        CARDS_DD,
        swap("5805,512,1", "5805,-512,1"),
        "line 5, cache_mb = -5.36871e+08 is negative",
    ),
    text_file(
        "table-rows-cache-infinity",
        CARDS_DD,
        swap("5805,512,1", "5805,inf,1"),
        "line 5, cache_mb is Infinity, not a finite number",
    ),
]

# ---------------------------------------------------------------- iolab's exports


@functools.cache
def golden_export() -> str:
    """The JSON export of the golden store's run 1 (made from a copy of it)."""
    with tempfile.TemporaryDirectory() as scratch:
        db = Path(scratch, "golden.db")
        shutil.copy(GOLDEN / "store.db", db)
        with Store(db) as store:
            return json.dumps(document(store.dump(1), "test"))


def export(id: str, change: Callable[[Any], None], *words: Word) -> Hostile:
    def make(folder: Path) -> Path:
        doc = json.loads(golden_export())
        change(doc)
        out = folder / f"{id}.json"
        out.write_text(json.dumps(doc))
        return out

    return Hostile(id, make, words)


def raw_json(change: Callable[[Any], None]) -> Callable[[Any], None]:
    """A change to the fio JSON an export keeps with its first case."""

    def apply(doc: Any) -> None:
        raw = doc["cases"][0]["raw_json"]
        fio = json.loads(raw[raw.index("{") :])
        change(fio)
        doc["cases"][0]["raw_json"] = json.dumps(fio)

    return apply


def deep_export(depth: int) -> str:
    doc = json.loads(golden_export())
    doc["run"]["overrides"] = {"deep": "@DEEP@"}
    return json.dumps(doc).replace('"@DEEP@"', nested(depth))


def cases_share_id(doc: Any) -> None:
    doc["cases"][1]["id"] = doc["cases"][0]["id"]


def case_ends_first(doc: Any) -> None:
    doc["cases"][0]["ended_at"] = doc["cases"][0]["started_at"] - 10


def setups_twice(doc: Any) -> None:
    doc["setups"].append(dict(doc["setups"][0]))


def percentiles_fall(doc: Any) -> None:
    rows = doc["percentiles"]
    high = next(i for i, r in enumerate(rows) if r["percentile"] == "99.99")
    rows[high]["value_ns"] = 1


EXPORT_ROWS = [
    export(
        "export-iops-negative",
        put("metrics", 0, "iops", -5000),
        "metrics[0].iops = -5000 is negative",
    ),
    export(
        "export-bw-infinity",
        put("metrics", 0, "bw_bytes", float("inf")),
        "metrics[0].bw_bytes is Infinity",
    ),
    export(
        "export-bw-1e308",
        put("metrics", 0, "bw_bytes", 1e308),
        "metrics[0].bw_bytes = 1e+308 is beyond 2^64",
    ),
    export(
        "export-io-bytes-1e30",
        put("metrics", 0, "io_bytes", 10**30),
        "metrics[0].io_bytes is a number of 31 digits",
    ),
    export(
        "export-io-bytes-2-63",
        put("metrics", 0, "io_bytes", 2**63),
        "metrics[0].io_bytes = 9223372036854775808 is beyond 2^63 - 1",
    ),
    export(
        "export-runtime-negative",
        put("metrics", 0, "runtime_ms", -1),
        "metrics[0].runtime_ms = -1 is negative",
    ),
    export(
        "export-latency-nan",
        put("metrics", 0, "lat_mean_ns", float("nan")),
        "metrics[0].lat_mean_ns is NaN",
    ),
    export(
        "export-direction-unknown",
        put("metrics", 0, "direction", "sideways"),
        "metrics[0].direction is none of read, write, trim",
    ),
    export(
        "export-iops-text",
        put("metrics", 0, "iops", "NaN"),
        "metrics[0].iops = 'NaN' is not int or float",
    ),
    export(
        "export-percentile-negative",
        put("percentiles", 0, "value_ns", -1),
        "percentiles[0].value_ns = -1 is negative",
    ),
    export(
        "export-percentile-not-a-share",
        put("percentiles", 0, "percentile", "most"),
        "percentiles[0].percentile is not a share from 0 to 100",
    ),
    export(
        "export-percentiles-falling",
        percentiles_fall,
        "value_ns is below that of percentiles[",
        "a lower percentile of the same window",
    ),
    export(
        "export-sample-negative",
        put("samples", 0, "value", -1),
        "samples[0].value = -1 is negative",
    ),
    export(
        "export-sample-time-negative",
        put("samples", 0, "time_ms", -1),
        "samples[0].time_ms = -1 is negative",
    ),
    export(
        "export-sample-metric-unknown",
        put("samples", 0, "metric", "speed"),
        "samples[0].metric is none of iops, bw, lat",
    ),
    export(
        "export-iodepth-negative",
        put("cases", 0, "options", "iodepth", -4),
        "cases[0].options.iodepth = -4 is negative",
    ),
    export(
        "export-numjobs-zero",
        put("cases", 0, "options", "numjobs", 0),
        "cases[0].options.numjobs = 0 is below 1",
    ),
    export(
        "export-case-without-setup",
        put("cases", 0, "setup", "ghost"),
        "cases[0].setup names a set-up its setups do not hold",
    ),
    export("export-no-setups", put("setups", []), "its setups is empty"),
    export("export-setups-twice", setups_twice, "setups[2] repeats the name of setups[0]"),
    export("export-case-ids-twice", cases_share_id, "cases[1] repeats the id of cases[0]"),
    export("export-case-ends-first", case_ends_first, "cases[0].ended_at is before its started_at"),
    export(
        "export-case-in-year-30000",
        put("cases", 0, "started_at", 1e12),
        "cases[0].started_at = 1e+12 is beyond the year 9999",
    ),
    export(
        "export-repetition-zero",
        put("cases", 0, "repetition", 0),
        "cases[0].repetition = 0 is below 1",
    ),
    export(
        "export-usr-cpu-negative",
        put("cases", 0, "usr_cpu", -1.5),
        "cases[0].usr_cpu = -1.5 is negative",
    ),
    export(
        "export-status-unknown",
        put("cases", 0, "status", "maybe"),
        "cases[0].status is none of ok, failed",
    ),
    export(
        "export-case-count-negative",
        put("run", "case_count", -1),
        "run.case_count = -1 is negative",
    ),
    export(
        "export-run-started-nan", put("run", "started_at", float("nan")), "run.started_at is NaN"
    ),
    export(
        "export-baseline-unknown",
        put("run", "baseline", "ghost"),
        "run.baseline names a set-up its setups do not hold",
    ),
    export(
        "export-metric-for-no-case",
        put("metrics", 0, "case_id", 999_999),
        "metrics[0].case_id names a case its cases do not hold",
    ),
    export(
        "export-metrics-not-a-list",
        put("metrics", {"a": 1}),
        "its 'metrics' is not a list of objects",
    ),
    export(
        "export-version-text",
        put("version", "x" * 1000),
        "an iolab export of schema version unknown",
    ),
    export(
        "export-raw-json-iops-nan",
        raw_json(put(*READ, "iops", float("nan"))),
        "cases[0].raw_json: jobs[0].read.iops is NaN",
    ),
    export(
        "export-raw-json-bins-text",
        raw_json(put(*CLAT, "bins", {"1000": "many"})),
        'cases[0].raw_json: jobs[0].read.clat_ns.bins["1000"] is text, not a number',
    ),
    export(
        "export-environment-deep",
        put("run", "environment", "x", json.loads(nested(80))),
        "run.environment.x[0]",
        "is nested more than 64 levels deep",
    ),
    text_file(
        "export-nested-3000",
        None,
        lambda _: deep_export(3000),
        "its JSON is nested deeper than Python reads",
        name="export.json",
    ),
]

# ---------------------------------------------------------------- files and folders


def csv_export_with_a_long_cell(folder: Path) -> Path:
    """iolab's CSV export (which import does not read back) with a 200,000-character cell."""
    (folder / "csv").mkdir()
    with tempfile.TemporaryDirectory() as scratch:
        db = Path(scratch, "golden.db")
        shutil.copy(GOLDEN / "store.db", db)
        with Store(db) as store:
            texts = csv_texts(store.dump(1), "test", str(folder / "csv" / "run.csv"))
    main = folder / "csv" / "run.csv"
    lines = texts[str(main)].splitlines()
    lines[1] = lines[1] + "," + "x" * 200_000
    main.write_text("\n".join(lines) + "\n")
    return main


def larger_than_the_bound(folder: Path) -> Path:
    """A sparse file one byte over the size iolab reads."""
    out = folder / "huge.json"
    with open(out, "wb") as handle:
        handle.truncate(importer.MAX_BYTES + 1)
    return out


def deep_folder(folder: Path, depth: int = 1800) -> Path:
    """A folder 1,800 levels deep (made through directory handles: the whole path is
    over what the kernel takes at once), a real fio JSON at its bottom."""
    top = folder / "deep"
    top.mkdir()
    handle = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=handle)
            inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=handle)
            os.close(handle)
            handle = inner
        made = os.open("r.json", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=handle)
        os.write(made, RANDREAD.read_bytes())
        os.close(made)
    finally:
        os.close(handle)
    return top


FILE_ROWS = [
    Hostile("csv-export-long-cell", csv_export_with_a_long_cell, ("not fio output iolab knows",)),
    Hostile("larger-than-1-gib", larger_than_the_bound, ("larger than 1 GiB",), listed=False),
    Hostile(
        "folder-1800-deep",
        deep_folder,
        ("folders nested more than 64 levels deep in it",),
        listed=False,
    ),
    Hostile(
        "folder-1800-deep-real-entry",
        deep_folder,
        ("folders nested more than 64 levels deep in it",),
        spawn=True,
        listed=False,
    ),
    text_file(
        "nan-token-real-entry",
        RANDREAD,
        swap('"iops" : ', '"iops" : NaN, "was" : '),
        "jobs[0].read.iops is NaN, not a finite number",
    ),
    text_file(
        "nested-3000-real-entry",
        RANDREAD,
        swap('"jobs" : [', f'"deep" : {nested(3000)}, "jobs" : ['),
        "its JSON is nested deeper than Python reads",
    ),
    text_file(
        "table-200000-char-line-real-entry",
        None,
        lambda _: "x" * 200_000 + ",y\n1,2\n",
        "line 1: not a line of CSV iolab reads",
        name="notes.txt",
    ),
]
for number in (4, 5, 6):  # the real entry point too, in a subprocess
    FILE_ROWS[number] = Hostile(
        FILE_ROWS[number].id, FILE_ROWS[number].make, FILE_ROWS[number].words, spawn=True
    )

ROWS = [
    *FIO_ROWS,
    *TERSE_ROWS,
    *LOG_ROWS,
    *DD_ROWS,
    *BONNIE_ROWS,
    *PUBLISHED_ROWS,
    *EXPORT_ROWS,
    *FILE_ROWS,
]


# ---------------------------------------------------------------- the test


@pytest.fixture(scope="module")
def stored_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database holding one imported run (real fio output)."""
    where = tmp_path_factory.mktemp("stored")
    iolab_here("import", str(RANDREAD), "--db", "stored.db", cwd=where, check=True)
    return where / "stored.db"


def run(row: Hostile, path: Path, db: Path, cwd: Path) -> Outcome:
    args = ["import", str(path), "--db", str(db)]
    if row.spawn:
        tmp = cwd / "tmp"
        tmp.mkdir(exist_ok=True)
        return spawn(args, cwd, tmp, limit_s=120)
    return invoke(args, limit_s=60)


def remove(folder: Path) -> None:
    """rm -rf: it takes a tree deeper than Python's own recursion goes."""
    subprocess.run(["rm", "-rf", "--", str(folder)], check=True)


@pytest.mark.slow
@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_a_hostile_import_is_one_line_and_stores_nothing(
    row: Hostile, tmp_path: Path, stored_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    given = tmp_path / "in"
    dbs = tmp_path / "db"
    given.mkdir()
    dbs.mkdir()
    monkeypatch.chdir(dbs)
    try:
        path = row.make(given)
        inputs = listing(given) if row.listed else {}
        problems: list[str] = []
        words = (str(path), *row.words)

        fresh = run(row, path, dbs / "new.db", dbs)
        problems += [f"new database: {p}" for p in problems_with_output(fresh, words)]
        left = sorted(p.name for p in dbs.iterdir() if p.name != "tmp")
        if left:
            problems.append(f"left in the database's folder: {left}")

        shutil.copy(stored_db, dbs / "x.db")
        before = listing(dbs)
        again = run(row, path, dbs / "x.db", dbs)
        problems += [f"stored database: {p}" for p in problems_with_output(again, words)]
        if listing(dbs) != before:
            problems.append("the stored database (or its folder) changed")
        if row.listed and listing(given) != inputs:
            problems.append("something was written where the input lies")
        assert not problems, "\n".join([row.id, fresh.stderr[:600], *problems])
    finally:
        remove(given)


# ---------------------------------------------------------------- real output passes


def fixture_files() -> Iterator[Path]:
    for root in (FIO, IMPORT):
        yield from sorted(root.iterdir())


NOT_FIO_OUTPUT = ("not fio output iolab knows", "a table of percentages")


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
def test_every_real_fixture_passes_the_checks(tmp_path: Path) -> None:
    """All of fio's, dd's, bonnie++'s and the studies' real output imports: the only files
    refused are those that are no results (fio's stdout, the capture notes, a table of
    percentages), and for being what they are, not for a value."""
    done = import_files([str(FIO), str(IMPORT)], None, str(tmp_path / "all.db"), QuietUi())
    assert done.runs, done.problems
    odd = [line for line in done.problems if not any(w in line for w in NOT_FIO_OUTPUT)]
    assert not odd, odd
    refused = {Path(line.split(": ", 1)[0]).name for line in done.problems}
    notes = {"capture-env.txt", "capture-tools-env.txt", "E_megaraid_wb_vs_wt_percent.csv"}
    stdout = {name for name in refused if name.startswith("eta-stdout")}  # fio's progress
    assert refused - notes - stdout == set(), refused
    with Store(tmp_path / "all.db", create=False) as store:
        assert len(store.cases(done.runs[0][0])) > 200


@pytest.mark.parametrize("name", ["store", "cdm", "devices"])
def test_every_golden_export_imports_back(name: str, tmp_path: Path) -> None:
    db = tmp_path / f"{name}.db"
    shutil.copy(GOLDEN / f"{name}.db", db)
    with Store(db) as store:
        runs = [run.id for run in store.runs()]
        texts = [json_text(store.dump(run_id), "test") for run_id in runs]
    paths: list[str] = []
    for number, text in enumerate(texts):
        path = tmp_path / f"run{number}.json"
        path.write_text(text)
        paths.append(str(path))
    done = import_files(paths, None, str(tmp_path / "back.db"), QuietUi())
    assert not done.problems and len(done.runs) == len(runs), done.problems


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
def test_one_bad_file_among_good_ones_leaves_the_good_ones_imported(tmp_path: Path) -> None:
    """The rule for several files stays: the readable ones import, the bad one is a line,
    and the exit code is 3; the bad file's jobs are not among what is stored."""
    bad = tmp_path / "bad.json"
    doc = json.loads(RANDREAD.read_text())
    doc["jobs"][0]["read"]["iops"] = -5000
    bad.write_text(json.dumps(doc))
    done = run_iolab("import", str(JSONPLUS), str(bad), "--db", "x.db", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    assert f"iolab: error: {bad}: jobs[0].read.iops = -5000 is negative" in done.stderr
    with Store(tmp_path / "x.db", create=False) as store:
        (case,) = store.cases(store.run().id)
        assert case.metrics["read"].iops > 0


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
def test_two_bad_files_and_nothing_imported_is_exit_1(tmp_path: Path) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text(RANDREAD.read_text().replace('"iops" : ', '"iops" : NaN, "was" : ', 1))
    second.write_text("{}")
    done = run_iolab("import", str(first), str(second), "--db", "x.db", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"iolab: error: {first}: ") and f"; {second}: " in line
    assert line.endswith(" (2 of the files could not be imported)"), line
    assert "Traceback" not in done.stderr and not (tmp_path / "x.db").exists()


# ---------------------------------------------------------------- imports: the rows


def stream_over_the_bound(folder: Path) -> Path:
    """A --status-interval stream one document longer than the bound: fio's real header (from
    the fixture) on documents that hold no job yet, as fio prints before its jobs start."""
    real = (FIXTURES / "import/status-interval/status-interval.json").read_text()
    version = re.search(r'"fio version" : "([^"]+)"', real)
    assert version is not None
    one = f'{{\n  "fio version" : "{version.group(1)}",\n  "jobs" : []\n}}\n'
    out = folder / "stream.json"
    with out.open("w") as handle:
        for _ in range(MAX_DOCUMENTS + 1):
            handle.write(one)
    return out


def document_over_the_bound(folder: Path) -> Path:
    """A real fio JSON document with a sparse run of NULs inside it, past the bound."""
    real = RANDREAD.read_bytes()
    out = folder / "big.json"
    with out.open("wb") as handle:
        handle.write(real[: real.index(b"{") + 1])
        handle.seek(MAX_DOCUMENT_CHARS + 1, os.SEEK_CUR)
        handle.write(real[real.index(b"{") + 1 :])
    return out


def table_over_the_bound(header: str, row: str) -> Make:
    def make(folder: Path) -> Path:
        out = folder / "table.csv"
        lines = [f"# {published.MAX_ROWS + 1} rows", header]
        lines += [row.format(n=n) for n in range(published.MAX_ROWS + 1)]
        out.write_text("\n".join(lines) + "\n")
        return out

    return make


def not_a_file(path: str) -> Make:
    return lambda folder: Path(path)


def folder_of_a_fifo(folder: Path) -> Path:
    """A folder whose only result-named entry is a FIFO (no writer: opening it would block)."""
    inside = folder / "results"
    inside.mkdir()
    os.mkfifo(inside / "randread.json")
    return inside


IMPORT_ROWS = [
    Hostile(
        "stream-over-100000-documents",
        stream_over_the_bound,
        ("more than 100,000 JSON documents", "split it"),
        spawn=True,
    ),
    Hostile(
        "json-document-over-128-mib",
        document_over_the_bound,
        ("a JSON document of more than 128 MiB",),
        spawn=True,
    ),
    Hostile(
        "table-setups-as-columns-over-10000-rows",
        table_over_the_bound("workload,rw,bs,metric,SSD A,SSD B", "w{n},randread,4k,iops,{n},1000"),
        ("more than 10,000 rows", "split it"),
        spawn=True,
    ),
    Hostile(
        "table-setups-as-rows-over-10000-rows",
        table_over_the_bound("card,seq_output_block_KB/s", "card {n},1000"),
        ("more than 10,000 rows", "split it"),
        spawn=True,
    ),
    Hostile("dev-zero", not_a_file("/dev/zero"), ("not a regular file",), listed=False),
    Hostile(
        "folder-of-a-fifo", folder_of_a_fifo, ("no regular file of a kind iolab imports in it",)
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("row", IMPORT_ROWS, ids=[row.id for row in IMPORT_ROWS])
def test_an_import_beyond_its_bound_is_one_line_and_stores_nothing(
    row: Hostile, tmp_path: Path, stored_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    test_a_hostile_import_is_one_line_and_stores_nothing(row, tmp_path, stored_db, monkeypatch)
