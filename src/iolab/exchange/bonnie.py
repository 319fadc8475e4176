"""bonnie++'s results: its CSV line (format 1.98, of bonnie++ 1.98 to 2.x), which `-q` prints
alone (after a header line when -x runs it more than once) and plain bonnie++ prints after its
table; and that table, when a file holds no CSV line:

    Version 2.00a       ------Sequential Output------ --Sequential Input- --Random-
                        -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--
    Name:Size etc        /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP
    capture        128M  619k  59 +++++ +++ +++++ +++ 1088k  74 +++++ +++ +++++ +++
    Latency             73639us     483us     382us   18239us    4079us   46656us

Each test bonnie++ timed is a case: sequential output per character, block and rewrite,
sequential input per character and block (KiB/s in the CSV; k, m, g suffixes of KiB in the
table), and random seeks (per second). "+++++" (a test too fast to time: a %CP of "+++" in
bon_csv2txt's table) and blank fields (tests not run, e.g. -f) store nothing. The latency
bonnie++ gives is each test's slowest single operation. The file tests (-n) are not read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from iolab.exchange import rules
from iolab.exchange.found_jobs import UnreadableJob
from iolab.exchange.named_jobs import Placed, case, direction, exact
from iolab.model import Direction, FioValue
from iolab.units import format_size, parse_size

CSV_FORMAT = "1.98"
DEFAULT_CHUNK = 8192  # bonnie++'s chunk size when -s names none
CSV_FIELDS = 50
TABLE_HEADER = re.compile(r"^Name:Size etc\s+/sec %CP")
_LATENCY = re.compile(r"^(?P<number>\d+(?:\.\d+)?)(?P<unit>ns|us|ms|s)$")
_LATENCY_NS = {"ns": 1, "us": 1000, "ms": 1_000_000, "s": 1_000_000_000}
_TABLE_VALUE = re.compile(r"^(?P<number>\d+(?:\.\d+)?)(?P<suffix>[kmg]?)$")
_SUFFIX = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}  # "619k" is 619 KiB/s


@dataclass(frozen=True)
class Test:
    name: str  # the workload
    rw: str  # fio's rw for what the test does
    direction: Direction  # where its figure is stored
    unit: str  # "char", "block" or "seek": what one I/O is


TESTS = (  # bonnie++'s order, in its CSV (value, %CPU) and table
    Test("bonnie++ per-char rw=write", "write", "write", "char"),
    Test("bonnie++ block rw=write", "write", "write", "block"),
    Test("bonnie++ rewrite", "rw", "write", "block"),
    Test("bonnie++ per-char rw=read", "read", "read", "char"),
    Test("bonnie++ block rw=read", "read", "read", "block"),
    Test("bonnie++ seeks", "randrw", "read", "seek"),
)
_FIRST_VALUE, _FIRST_LATENCY = 9, 38  # in the CSV line


@dataclass(frozen=True)
class Line:
    """One bonnie++ run as read: per test its figure as written (None: none) and latency."""

    version: str
    size: str  # the file size as bonnie++ wrote it ("128M")
    chunk: int
    concurrency: int
    seekers: int | None
    values: tuple[str | None, ...]
    latencies: tuple[str | None, ...]
    kib: bool  # values are plain KiB/s (the CSV), not the table's suffixed figures


def is_bonnie(text: str) -> bool:
    lines = text.splitlines()
    return any(line.startswith(f"{CSV_FORMAT},") for line in lines) or any(
        TABLE_HEADER.match(line) for line in lines
    )


def read(path: Path, text: str) -> list[Placed]:
    """The cases of every run in the file: its CSV lines, or its table if it has none."""
    runs = csv_lines(text) or table_lines(text)
    if not runs:
        raise UnreadableJob("a bonnie++ table without a line of results")
    found = [job for run in runs for job in _jobs(path, run)]
    if not found:
        raise UnreadableJob('bonnie++ timed none of its tests ("+++++": use a larger -s)')
    return found


def csv_lines(text: str) -> list[Line]:
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.strip().split(",")
        if len(fields) < 2 or not re.fullmatch(r"1\.\d+", fields[0]):
            continue
        if fields[0] != CSV_FORMAT or len(fields) != CSV_FIELDS:
            raise UnreadableJob(
                f"line {number}: bonnie++ CSV format {fields[0]} with {len(fields)} fields; "
                f"iolab reads format {CSV_FORMAT} ({CSV_FIELDS} fields, bonnie++ 1.98 and later)"
            )
        figures = [_figure(f) for f in fields[_FIRST_VALUE : _FIRST_VALUE + 2 * len(TESTS) : 2]]
        latencies = fields[_FIRST_LATENCY : _FIRST_LATENCY + len(TESTS)]
        concurrency = (
            rules.whole_text(fields[3], f"line {number}, concurrency", rules.ONES, low=1)
            if fields[3]
            else 1
        )
        seekers = (
            rules.whole_text(fields[8], f"line {number}, seekers", rules.ONES, low=1)
            if fields[8].isdigit()
            else None
        )
        out.append(
            Line(
                fields[1],
                fields[5],
                _chunk(fields[6]),
                concurrency,
                seekers,
                tuple(figures),
                tuple(v or None for v in latencies),
                kib=True,
            )
        )
    return out


def table_lines(text: str) -> list[Line]:
    """bonnie++'s table: fields of 10 columns under "/sec %CP", the name and size before."""
    lines = text.splitlines()
    out = []
    version = next((m.group(1) for ln in lines if (m := re.match(r"^Version\s+(\S+)", ln))), "?")
    start = -1
    for index, line in enumerate(lines):
        if TABLE_HEADER.match(line):
            start = line.index("/sec") - 2
            continue
        if start < 0 or not line.strip() or line.startswith(("Latency", " ")):
            continue
        groups = [line[start + 10 * i : start + 10 * (i + 1)].split() for i in range(len(TESTS))]
        name_size = line[:start].split()
        if len(name_size) < 2 or any(len(g) not in (0, 2) for g in groups):
            continue  # not a row of results (the file tests' table, say)
        size, _, chunk = name_size[-1].partition(":")
        after = lines[index + 1] if index + 1 < len(lines) else ""
        latency = (
            [
                after[start + 10 * i : start + 10 * (i + 1)].strip() or None
                for i in range(len(TESTS))
            ]
            if after.startswith("Latency")
            else []
        )
        figures = tuple(g[0] if g and g[1] != "+++" and g[0] != "+++++" else None for g in groups)
        out.append(
            Line(
                version,
                size,
                _chunk(chunk.split(":")[0]),
                1,
                None,
                figures,
                tuple(latency) or (None,) * len(TESTS),
                kib=False,
            )
        )
    return out


def _figure(text: str) -> str | None:
    return None if text in ("", "+++++") else text


def _chunk(text: str) -> int:
    try:
        chunk = parse_size(text) if text else DEFAULT_CHUNK
    except ValueError:
        raise UnreadableJob("its chunk size is not a size") from None
    return int(rules.number(chunk, "its chunk size", low=1))


def _jobs(path: Path, run: Line) -> list[Placed]:
    try:
        size = parse_size(run.size)
    except ValueError:
        raise UnreadableJob(f"file size {run.size!r} is not a size") from None
    if not size:
        raise UnreadableJob(f"file size {run.size!r} is 0 bytes, no file bonnie++ measured")
    return [
        figure_job(
            path,
            test,
            _per_second(value, run.kib, test),
            run.chunk,
            _ns(latency),
            size=size,
            jobs=run.concurrency,
            seekers=run.seekers,
            tool=f"bonnie++ {run.version}",
        )
        for test, value, latency in zip(TESTS, run.values, run.latencies, strict=True)
        if value is not None
    ]


def figure_job(
    path: Path,
    test: Test,
    per_second: float,
    chunk: int,
    lat_max_ns: float | None = None,
    *,
    size: int | None = None,
    jobs: int | None = None,
    seekers: int | None = None,
    tool: str = "bonnie++",
) -> Placed:
    """One test's case: bytes/s (seeks/s for the seeks) and IOPS, one I/O being a character
    (per-char tests) or a chunk; the options of what the test does."""
    per_io = 1 if test.unit == "char" else chunk
    iops, bw = (
        (per_second, per_second * per_io)
        if test.unit == "seek"
        else (per_second / per_io, per_second)
    )
    figures = direction(test.direction, bw_bytes=bw, iops=iops, lat_max_ns=lat_max_ns)
    options: dict[str, FioValue] = {"rw": test.rw, "bs": format_size(per_io)}
    if size is not None:
        options["size"] = size
    if test.rw == "rw":
        options["rwmixread"] = 50  # each block read, dirtied and written back
    if test.unit == "seek":
        options["rwmixread"] = 90  # one seek in ten writes its block back
    numjobs = seekers if test.unit == "seek" else jobs
    if numjobs:
        options["numjobs"] = numjobs
    return Placed(path, test.name, options, [], metrics=case(figures), tool=tool)


def _per_second(value: str, kib: bool, test: Test) -> float:
    """Bytes/s of a throughput figure, seeks/s of the seeks figure."""
    try:
        if kib:
            figure = exact(value, 1 if test.unit == "seek" else 1024)
        else:
            found = _TABLE_VALUE.match(value)
            if not found or (test.unit == "seek" and found.group("suffix")):
                raise ValueError(value)
            figure = exact(found.group("number"), _SUFFIX[found.group("suffix")])
    except (ArithmeticError, ValueError):
        raise UnreadableJob(f"{test.name}: not a figure") from None
    return rules.number(figure, test.name, rules.IOPS if test.unit == "seek" else rules.BW)


def _ns(latency: str | None) -> float | None:
    if latency is None:
        return None
    found = _LATENCY.match(latency)
    if not found:
        raise UnreadableJob(f"latency {latency!r} is not a time (like 12211us or 102ms)")
    return exact(found.group("number"), _LATENCY_NS[found.group("unit")])
