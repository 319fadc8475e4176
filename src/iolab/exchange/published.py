"""Tables of figures a study published, as CSV (lines starting with # are comments), so that
they sit beside figures measured here in one report. Two shapes, told apart by the header:

- set-ups as columns: `workload,rw,bs,numjobs,metric,SETUP...`: a row per workload and
  metric (iops; MB/s, GB/s, KB/s as powers of 1000, MiB/s and KiB/s of 1024; mean latency in
  ms, us or ns), a column per set-up. Rows of one workload and several metrics are one case.
  The workload is named as iolab names a swept point, "4k rw=read", the row's own name kept as
  its `description`; besides rw and bs, the columns iodepth, numjobs, rwmixread, direct and
  ioengine are its options.
- set-ups as rows: columns that name the set-up (card, raid_level, drives, ...; cache_mb is the
  set-up's cache and drives its device count: facts the checks use, see build.Facts) and
  columns of figures: read_MB/s and write_MB/s
  (sequential: dd's, whose command lines, with bs=, the comments must give: they name the
  workload "dd 100M rw=read" and its options), and bonnie++'s seq_output_char_KB/s,
  seq_output_block_KB/s, rewrite_KB/s, seq_input_char_KB/s, seq_input_block_KB/s (KiB/s, as
  bonnie++ counts) and random_seeks/s, named as `iolab import` names bonnie++'s own tests.

Where one of IOPS and bytes/s is given, the block size gives the other; what a table lacks
(latency, most often) is not stored. An empty cell is no case.

A table of percentages (columns `read_iops_pct`, `write_iops_pct`, `read_bw_pct`,
`write_bw_pct`: one set-up's figures as a share of another's, study E's Write Back over Write
Through) holds no measurement: its rows are read as Ratios (`ratios`), each direction's
share with the workload it was of (bs, rw or random_pct and read_pct, qd or iodepth; the first
column, or access_spec, its description); a direction the workload does not exercise
(read_pct 0 for reads, 100 for writes) is none, whatever the cell says. Which set-up the
shares are of, and of which baseline, the table does not say: `iolab import --setup NAME
--baseline NAME` names them.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import itertools
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from iolab import names
from iolab.exchange import bonnie, dd, rules
from iolab.exchange.found_jobs import UnreadableJob
from iolab.exchange.named_jobs import Placed, case, direction, exact
from iolab.model import (
    CheckWarning,
    Code,
    Direction,
    DirectionMetrics,
    FioValue,
    Ratio,
    RatioMetric,
)
from iolab.units import format_size, parse_size

PUBLISHED = CheckWarning(
    Code.PUBLISHED,
    "published figures: iolab did not measure them, and knows of their making only what the "
    "table says (no repetitions, no environment, latency only where the table gives it).",
    "Run the study's preset here to set figures measured alike beside them.",
)
OPTION_COLUMNS = ("rw", "bs", "iodepth", "numjobs", "rwmixread", "direct", "ioengine")
RATES = {
    "iops": 0,
    "b/s": 1,
    "kb/s": 10**3,
    "mb/s": 10**6,
    "gb/s": 10**9,
    "kib/s": 2**10,
    "mib/s": 2**20,
    "gib/s": 2**30,
}
LATENCIES = {"ns": 1, "us": 1000, "µs": 1000, "ms": 1_000_000}  # to ns
READS, WRITES = ("read", "randread"), ("write", "randwrite")
SEQUENTIAL: dict[str, Direction] = {"read_MB/s": "read", "write_MB/s": "write"}
BONNIE = {
    "seq_output_char_KB/s": bonnie.TESTS[0],
    "seq_output_block_KB/s": bonnie.TESTS[1],
    "rewrite_KB/s": bonnie.TESTS[2],
    "seq_input_char_KB/s": bonnie.TESTS[3],
    "seq_input_block_KB/s": bonnie.TESTS[4],
    "random_seeks/s": bonnie.TESTS[5],
}
CACHE_COLUMNS = {"cache_mb": 2**20, "cache_gb": 2**30}  # a RAID card's cache: MiB, GiB
DEVICE_COLUMNS = ("drives", "devices")  # the set-up's device count
MAX_DEVICES = 4096
MAX_ROWS = 10_000  # rows of figures in one table (a study's table is tens of rows)
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")  # a line of the text, read one at a time


@dataclass(frozen=True)
class PublishedRow:
    number: int  # the file's line
    cells: dict[str, str]


def is_table(text: str) -> bool:
    header = _header(text)
    return header is not None and (
        _wide(header) or any(c in SEQUENTIAL or c in BONNIE or c.endswith("_pct") for c in header)
    )


def is_ratio_table(text: str) -> bool:
    """A table of percentages of another set-up's figures (its `_pct` columns)."""
    header = _header(text)
    return header is not None and any(c.endswith("_pct") and c not in MIX for c in header)


def read(path: Path, text: str) -> list[Placed]:
    header = _header(text)
    assert header is not None
    rows = list(_rows(text, header))
    jobs = _by_columns(path, header, rows) if _wide(header) else _by_rows(path, text, header, rows)
    if not jobs:
        raise UnreadableJob("a table without a figure")
    return [
        dataclasses.replace(job, fixed=True, notes=(PUBLISHED,), tool="published") for job in jobs
    ]


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """The lines that are not empty or comments, with their numbers, one at a time."""
    for number, found in enumerate(_LINE.finditer(text), 1):
        line = found.group().rstrip("\r\n")
        if line.strip() and not line.lstrip().startswith("#"):
            yield number, line


def _header(text: str) -> list[str] | None:
    first = next(_lines(text), None)
    if first is None:
        return None
    header = _cells(*first)
    return header if len(header) > 1 else None


def _cells(number: int, line: str) -> list[str]:
    try:
        return [c.strip() for c in next(csv.reader(io.StringIO(line)), [])]
    except csv.Error as error:  # a field over csv's limit (131072 characters), a NUL, ...
        raise UnreadableJob(f"line {number}: not a line of CSV iolab reads ({error})") from None


def _rows(text: str, header: list[str]) -> Iterator[PublishedRow]:
    for count, (number, line) in enumerate(itertools.islice(_lines(text), 1, None), 1):
        if count > MAX_ROWS:
            raise UnreadableJob(
                f"a table of more than {MAX_ROWS:,} rows; a study's published table is tens of "
                "rows: split it into files of at most that many (each with the header line)"
            )
        cells = _cells(number, line)
        if len(cells) != len(header):
            raise UnreadableJob(f"line {number}: {len(cells)} cells under {len(header)} columns")
        yield PublishedRow(number, dict(zip(header, cells, strict=True)))


def _wide(header: Sequence[str]) -> bool:
    return "metric" in header and ("rw" in header or "workload" in header)


def _number(row: PublishedRow, column: str, factor: int = 1) -> float | None:
    """A cell's figure times `factor`: a finite number, not negative; None when empty."""
    text = row.cells[column]
    if not text:
        return None
    where = f"line {row.number}, {_column(row, column)}"
    try:
        figure = exact(text, factor)
    except ArithmeticError:
        raise UnreadableJob(f"{where}: not a number") from None
    return rules.number(figure, where, rules.ANY)


def _column(row: PublishedRow, column: str) -> str:
    return rules.field_name(column, f"column {list(row.cells).index(column) + 1}")


# set-ups as columns


def _by_columns(path: Path, header: list[str], rows: list[PublishedRow]) -> list[Placed]:
    setups = [c for c in header if c not in ("workload", "metric", *OPTION_COLUMNS)]
    figures: dict[tuple[str, str], dict[str, float]] = {}  # (setup, workload) -> unit -> value
    first: dict[str, PublishedRow] = {}
    for row in rows:
        label = _label(row)
        first.setdefault(label, row)
        metric = row.cells["metric"].lower().removeprefix("lat_").removeprefix("latency_")
        if metric not in RATES and metric not in LATENCIES:
            raise UnreadableJob(
                f"line {row.number}: metric {row.cells['metric']!r} is none of iops, MB/s, "
                "GB/s, KB/s, MiB/s, KiB/s, ms, us, ns"
            )
        for setup in setups:
            value = _number(row, setup, 1)
            if value is not None:
                figures.setdefault((setup, label), {})[metric] = value
    names = _names(first)
    return [
        _cell(path, first[label], names[label], setup, values)
        for (setup, label), values in figures.items()
    ]


def _label(row: PublishedRow) -> str:
    """What tells a row's workload from others: its name and options."""
    return "\t".join(row.cells.get(c, "") for c in ("workload", *OPTION_COLUMNS))


def _names(first: dict[str, PublishedRow]) -> dict[str, str]:
    """Each workload as iolab names a point of a sweep ("4k rw=read"); where two would share a
    name, their other options are added to it."""
    base = {label: _base_name(row) for label, row in first.items()}
    taken = Counter(base.values())  # counted once: a count per workload made it quadratic
    return {
        label: name
        if taken[name] == 1
        else " ".join(
            [
                name,
                *(
                    f"{c}={first[label].cells[c]}"
                    for c in OPTION_COLUMNS[2:]
                    if first[label].cells.get(c)
                ),
            ]
        )
        for label, name in base.items()
    }


def _base_name(row: PublishedRow) -> str:
    bs, rw = row.cells.get("bs", ""), row.cells.get("rw", "")
    return " ".join(p for p in (bs, f"rw={rw}" if rw else "") if p) or row.cells["workload"]


def _cell(path: Path, row: PublishedRow, name: str, setup: str, given: dict[str, float]) -> Placed:
    rw = row.cells.get("rw", "")
    way = _way(rw, row)
    bs = _size(row)
    options: dict[str, FioValue] = {
        c: _option(row.cells[c]) for c in OPTION_COLUMNS if row.cells.get(c)
    }
    if row.cells.get("workload"):
        options["description"] = _description(row, row.cells["workload"])
    iops = given.get("iops")
    bw = next((v * RATES[unit] for unit, v in given.items() if RATES.get(unit)), None)
    if iops is None and bw is None:
        raise UnreadableJob(f"line {row.number}: {setup}: a latency without IOPS or bytes/s")
    if (iops is None or bw is None) and not bs:
        raise UnreadableJob(f"line {row.number}: no block size to tell IOPS from bytes/s")
    latency = next((v * LATENCIES[unit] for unit, v in given.items() if unit in LATENCIES), None)
    if bw is None:
        assert iops is not None
        bw = iops * bs
    elif iops is None:
        iops = bw / bs
    figures = DirectionMetrics(way, iops, bw, 0, 0, latency, None)
    rules.check_metrics(case(figures), f"line {row.number}, {_column(row, setup)}: ")
    return Placed(path, name, options, [], metrics=case(figures), setup=setup)


def _way(rw: str, row: PublishedRow) -> Direction:
    if rw in READS:
        return "read"
    if rw in WRITES:
        return "write"
    raise UnreadableJob(
        f"line {row.number}: rw {rw!r}: a figure of one direction needs read, write, randread "
        "or randwrite"
    )


def _size(row: PublishedRow) -> int:
    try:
        return parse_size(row.cells.get("bs", "")) if row.cells.get("bs") else 0
    except ValueError:
        raise UnreadableJob(f"line {row.number}: bs {row.cells['bs']!r} is not a size") from None


def _option(text: str) -> FioValue:
    return int(text) if text.isascii() and text.isdigit() and len(text) < 19 else text


# set-ups as rows


def _by_rows(path: Path, text: str, header: list[str], rows: list[PublishedRow]) -> list[Placed]:
    described = [c for c in header if c not in SEQUENTIAL and c not in BONNIE]
    commands = _dd_commands(text)
    out = []
    for row in rows:
        setup = _setup_name(row, described)
        cache = next(
            (
                int(rules.number(_number(row, c, f), f"line {row.number}, {c}"))
                for c, f in CACHE_COLUMNS.items()
                if row.cells.get(c)
            ),
            0,
        )
        devices = _devices(row)
        writers = write_devices(row.cells.get("raid_level", ""), devices)
        for column in header:
            found = None
            if column in SEQUENTIAL and (value := _number(row, column, 10**6)) is not None:
                found = _sequential(path, SEQUENTIAL[column], value, commands)
            elif (
                column in BONNIE
                and (value := _number(row, column, _bonnie_unit(column))) is not None
            ):
                found = bonnie.figure_job(path, BONNIE[column], value, bonnie.DEFAULT_CHUNK)
            if found is not None:
                assert found.metrics is not None
                rules.check_metrics(found.metrics, f"line {row.number}, {_column(row, column)}: ")
                out.append(
                    dataclasses.replace(
                        found,
                        setup=setup,
                        cache_bytes=cache,
                        devices=devices,
                        write_devices=writers,
                    )
                )
    return out


def factors(text: str) -> dict[str, tuple[tuple[str, str], ...]]:
    """A table of set-ups as rows: each set-up's factors, the columns that name it (card,
    raid_level, drives; not a cache's size, a fact of the card): what a report pivots by.
    A table of set-ups as columns names no factor ({})."""
    header = _header(text)
    if header is None or _wide(header) or any(c.endswith("_pct") for c in header):
        return {}
    described = [c for c in header if c not in SEQUENTIAL and c not in BONNIE]
    found: dict[str, tuple[tuple[str, str], ...]] = {}
    for row in _rows(text, header):
        given = [(c, row.cells[c]) for c in described if row.cells[c] and c not in CACHE_COLUMNS]
        found[_setup_name(row, described)] = tuple(_factor(row, c, v) for c, v in given)
    return found


def _factor(row: PublishedRow, column: str, value: str) -> tuple[str, str]:
    """A column's name and a row's value as a factor, by the rule of names (names.factor)."""
    try:
        return names.factor(column), names.factor(value)
    except names.BadName as error:
        raise UnreadableJob(
            f"line {row.number}, {_column(row, column)}: as a factor, {error}"
        ) from None


# a table of percentages


RATIO_COLUMN = re.compile(r"^(read|write)_(iops|bw|mb/s)_pct$", re.IGNORECASE)
MIX = ("random_pct", "read_pct")  # the workload's shares, not figures
MOST_PERCENT = 1_000_000.0  # a share beyond 10,000x its baseline is no figure a study printed


def ratios(text: str) -> list[Ratio]:
    """Each row's shares of the baseline's figures, as Ratios of set-ups the import names
    (setup and baseline left empty here)."""
    header = _header(text)
    assert header is not None
    shares = {c: RATIO_COLUMN.match(c) for c in header if c.endswith("_pct") and c not in MIX}
    wrong = [c for c, found in shares.items() if found is None]
    if wrong:
        raise UnreadableJob(
            f"column {rules.field_name(wrong[0], 'of percentages')}: a share of what? iolab "
            "reads read_iops_pct, write_iops_pct, read_bw_pct and write_bw_pct"
        )
    found = []
    for position, row in enumerate(_rows(text, header)):
        options = _ratio_options(row)
        name = _ratio_name(options)
        for column, match in shares.items():
            assert match is not None
            way: Direction = "read" if match.group(1).lower() == "read" else "write"
            value = _number(row, column)
            if value is None or not _exercised(options, way):
                continue
            if value > MOST_PERCENT:
                where = f"line {row.number}, {_column(row, column)}"
                raise UnreadableJob(f"{where}: over {MOST_PERCENT:,.0f}%")
            metric: RatioMetric = "iops" if match.group(2).lower() == "iops" else "bw"
            found.append(Ratio("", "", name, way, metric, value / 100, position, options))
    if not found:
        raise UnreadableJob("a table of percentages without a figure")
    return found


def _ratio_options(row: PublishedRow) -> dict[str, FioValue]:
    """The workload a row's shares are of: its rw (or random_pct with read_pct), bs, mix and
    depth, as fio names them; its first column (access_spec) is its description."""
    cells = row.cells
    read_pct = _share(row, "read_pct", "rwmixread")
    rw = cells.get("rw") or _rw(row, _share(row, "random_pct"), read_pct)
    options: dict[str, FioValue] = {"rw": rw}
    if cells.get("bs"):
        _size(row)
        options["bs"] = cells["bs"]
    if rw in ("rw", "randrw") and read_pct is not None:
        options["rwmixread"] = int(read_pct)
    depth = cells.get("qd") or cells.get("iodepth")
    if depth:
        options["iodepth"] = _option(depth)
    first, value = next(iter(cells.items()))
    if value and first not in OPTION_COLUMNS:
        options["description"] = _description(row, value)
    return options


def _description(row: PublishedRow, text: str) -> str:
    """A row's words, kept as its workload's description: printable text, as names are."""
    found = names.refused(text)
    if found is not None:
        raise UnreadableJob(
            f"line {row.number}: its workload holds {names.spelled(found)}; use printable text"
        )
    return text


def _share(row: PublishedRow, *columns: str) -> float | None:
    """A percentage column's value (0 to 100), None when the row has none."""
    column = next((c for c in columns if row.cells.get(c)), None)
    value = _number(row, column) if column else None
    if column and value is not None and value > 100:
        raise UnreadableJob(f"line {row.number}, {_column(row, column)}: over 100%")
    return value


def _rw(row: PublishedRow, random_pct: float | None, read_pct: float | None) -> str:
    """fio's rw of a random share (0 or 100) and a read share."""
    if random_pct not in (None, 0, 100) or read_pct is None:
        raise UnreadableJob(
            f"line {row.number}: a row's pattern needs rw, or read_pct with random_pct 0 or 100"
        )
    prefix = "rand" if random_pct == 100 else ""
    if read_pct == 100:
        return f"{prefix}read"
    if read_pct == 0:
        return f"{prefix}write"
    return "randrw" if prefix else "rw"


def _ratio_name(options: dict[str, FioValue]) -> str:
    """As iolab names a sweep's point: "512 rw=rw rwmixread=50 iodepth=1"."""
    parts = [str(options["bs"])] if "bs" in options else []
    parts += [f"{k}={options[k]}" for k in ("rw", "rwmixread", "iodepth") if k in options]
    return " ".join(parts)


def _exercised(options: dict[str, FioValue], way: Direction) -> bool:
    """Whether the workload does I/O of that direction (0.0% in a column it does not is the
    table's way of saying "not exercised")."""
    rw = str(options.get("rw", ""))
    if rw in READS:
        return way == "read"
    if rw in WRITES:
        return way == "write"
    return True


def write_devices(level: str, devices: int) -> int:
    """How many devices' worth of writes a RAID level leaves of `devices`: a mirror writes
    every copy, parity costs one device (RAID5) or two (RAID6); 0 when the level is not one
    of these (then every device counts)."""
    kept = {"0": devices, "1": 1, "10": devices // 2, "5": devices - 1, "6": devices - 2}
    count = kept.get(level.strip().upper().removeprefix("RAID"), 0) if devices else 0
    return max(count, 0)


def _devices(row: PublishedRow) -> int:
    """The set-up's device count, from its drives (or devices) column; 0 when not given."""
    column = next((c for c in DEVICE_COLUMNS if row.cells.get(c)), None)
    if column is None:
        return 0
    count = _number(row, column)
    if count is None or count != int(count) or not 1 <= count <= MAX_DEVICES:
        raise UnreadableJob(
            f"line {row.number}, {_column(row, column)}: not a device count (1 to {MAX_DEVICES})"
        )
    return int(count)


def _bonnie_unit(column: str) -> int:
    return 1 if column == "random_seeks/s" else 1024  # bonnie++'s K is 1024


def _setup_name(row: PublishedRow, columns: list[str]) -> str:
    """The columns that name the set-up, in order: "Adaptec 5805 RAID1 of 2"."""
    parts = []
    for column in columns:
        value = row.cells[column]
        if not value or column in CACHE_COLUMNS:
            continue
        if column == "raid_level":
            parts.append(f"RAID{value}")
        elif column == "drives":
            parts.append(f"of {value}" if "raid_level" in columns else f"{value} drives")
        else:
            parts.append(value)
    if not parts:
        raise UnreadableJob(f"line {row.number}: no column names its set-up")
    return " ".join(parts)


def _dd_commands(text: str) -> dict[Direction, dict[str, str]]:
    """The dd command of each direction that the comments give."""
    found: dict[Direction, dict[str, str]] = {}
    for match in _LINE.finditer(text):
        line = match.group().rstrip("\r\n")
        if line.lstrip().startswith("#"):
            for operands in dd.commands(line):
                try:
                    found.setdefault(dd.direction_of(operands, ""), operands)
                except UnreadableJob:
                    continue
    return found


def _sequential(
    path: Path, rw: Direction, bw: float, commands: dict[Direction, dict[str, str]]
) -> Placed:
    operands = commands.get(rw, {})
    bs = dd.block_size(operands, rw) if operands else 0
    if not bs:
        raise UnreadableJob(
            f"{rw}_MB/s: no block size to tell its IOPS (give the dd command, with bs=, in a "
            "comment)"
        )
    options: dict[str, FioValue] = {"rw": rw, "bs": format_size(bs)}
    if operands.get("count", "").isdigit():
        options["size"] = bs * int(operands["count"])
    options["direct"] = int("direct" in operands.get("iflag" if rw == "read" else "oflag", ""))
    figures = direction(rw, bw_bytes=bw, iops=bw / bs)
    return Placed(path, f"dd {format_size(bs).upper()} rw={rw}", options, [], metrics=case(figures))
