"""Every number an import brings, checked before it becomes a result: one rule book for fio's
JSON and terse output, its logs, dd's, bonnie++'s and published figures, and iolab's exports.
A value that breaks a rule is refused as `UnreadableJob`, in a line naming the field (a JSON path
such as jobs[0].read.iops, or a line and a column) and what is wrong with it; the value is
shown only when it is a number iolab has read, never as the file's text.

The rules:
- JSON: NaN, Infinity and -Infinity (which Python's json reads by default), numbers of more than
  20 digits or beyond 2^64 (fio's counters are 64 bits), and nesting deeper than 64 levels are
  refused wherever they are in the document.
- Figures are numbers (not text, not null) and not negative where they are physical: IOPS,
  bandwidth, bytes, I/Os, runtime, latencies and their percentiles, CPU, counts. Counters fio
  writes as whole numbers (bytes, I/Os, runtime, latency counts and histogram bins) are whole.
- Bounds: 2^63 - 1 for anything SQLite stores as an integer; IOPS at most 10^10 and bandwidth
  at most 10^15 bytes/s (1 PB/s), far beyond any storage; a runtime at most 10^11 ms (three
  years); a timestamp between 1970 and the year 9999.
- Percentiles do not decrease with their share (fio's 0 for one it did not compute aside).
- fio's options: iodepth and numjobs from 1, rwmixread and rwmixwrite 0 to 100, sizes and times
  not negative, a block size not 0.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from iolab.exchange.found_jobs import UnreadableJob, percentile_key
from iolab.model import CaseMetrics, Sample
from iolab.units import parse_size

MAX_DEPTH = 64
MAX_DIGITS = 20


class Limit(NamedTuple):
    value: int
    words: str


ANY = Limit(2**64, "2^64, more than any figure fio writes")
COUNT = Limit(2**63 - 1, "2^63 - 1, the largest whole number the database stores")
IOPS = Limit(10**10, "10^10 IOPS, more than any storage does")
BW = Limit(10**15, "10^15 bytes/s (1 PB/s), more than any storage moves")
BW_KIB = Limit(10**15 // 1024, "10^15 bytes/s (1 PB/s) in KiB/s, more than any storage moves")
RUNTIME = Limit(10**11, "10^11 ms (three years)")
TIME = Limit(253_402_300_799, "the year 9999")
TIME_MS = Limit(TIME.value * 1000, "the year 9999")
SHARE = Limit(100, "100%")
ONES = Limit(2**31 - 1, "2^31 - 1")
BIN = Limit(10**11, "10^11 ns (100 s), past the end of fio's histogram (about 17 s)")


class Odd:
    """A JSON number iolab does not take: NaN, Infinity, or one too long to be fio's; `said`
    is what is wrong with it."""

    def __init__(self, said: str) -> None:
        self.said = said


def _constant(name: str) -> Odd:
    return Odd(f"{name}, not a finite number")  # NaN, Infinity, -Infinity


def _int(text: str) -> int | Odd:
    digits = len(text.lstrip("-"))
    if digits > MAX_DIGITS:
        return Odd(f"a number of {digits} digits, beyond {ANY.words}")
    return int(text)


def _float(text: str) -> float | Odd:
    value = float(text)
    return value if math.isfinite(value) else Odd("a number beyond the range of a double")


# fio's JSON as Python reads it, but NaN, Infinity and overlong numbers kept as Odd, so that
# the check names the field that holds them.
DECODER = json.JSONDecoder(parse_constant=_constant, parse_int=_int, parse_float=_float)

# ---------------------------------------------------------------- fields and numbers

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}")
_QUOTED_KEY = re.compile(r"[A-Za-z0-9 _.%<>=+/()-]{1,40}")


def step(path: str, key: object, position: int = 0) -> str:
    """The JSON path one step further: path.key, path["a key"], path[3]; a key that is not
    plain text is named by its position (path[key 2]), never quoted."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    text = str(key)
    if _PLAIN_KEY.fullmatch(text):
        return f"{path}{text}" if not path or path.endswith(" ") else f"{path}.{text}"
    if _QUOTED_KEY.fullmatch(text):
        return f'{path}["{text}"]'
    return f"{path}[key {position + 1}]"


def field_name(text: str, otherwise: str) -> str:
    """A name from the file (a column's) as a message may say it: plain text, else
    `otherwise` ("column 3")."""
    return text if _QUOTED_KEY.fullmatch(text) else otherwise


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "text"
    return "a list" if isinstance(value, list) else "an object"


def shown(value: float) -> str:
    """A number iolab read, as a message shows it."""
    if isinstance(value, int):
        text = str(value)
        return text if len(text) <= 24 else f"a number of {len(text.lstrip('-'))} digits"
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return f"{value:.6g}"


def number(
    value: object, path: str, limit: Limit = COUNT, *, whole: bool = False, low: int = 0
) -> float:
    """`value` as the figure at `path`: a finite number from `low` to the limit."""
    if isinstance(value, Odd):
        raise UnreadableJob(f"{path} is {value.said}")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UnreadableJob(f"{path} is {_kind(value)}, not a number")
    if not math.isfinite(value):
        raise UnreadableJob(f"{path} is {shown(value)}, not a finite number")
    if whole and not isinstance(value, int):
        raise UnreadableJob(f"{_is(path, value)} is not a whole number")
    if value < low:
        said = "negative" if value < 0 else f"below {low}"
        raise UnreadableJob(f"{_is(path, value)} is {said}")
    if value > limit.value:
        raise UnreadableJob(f"{_is(path, value)} is beyond {limit.words}")
    return value


def _is(path: str, value: float) -> str:
    text = shown(value)
    return f"{path} ({text})" if text.startswith("a number") else f"{path} = {text}"


def whole_text(text: str, path: str, limit: Limit = COUNT, low: int = 0) -> int:
    """A whole number written in a file ("67108864"), without reading an overlong one."""
    if not text.isascii() or not text.isdigit():
        raise UnreadableJob(f"{path} is not a whole number")
    if len(text) > MAX_DIGITS:
        raise UnreadableJob(f"{path} is a number of {len(text)} digits, beyond {limit.words}")
    return int(number(int(text), path, limit, whole=True, low=low))


# ---------------------------------------------------------------- any JSON document


def check_tree(value: object, path: str = "") -> None:
    """Every number in a decoded JSON document finite and within 2^64, and no nesting deeper
    than MAX_DEPTH."""
    _walk(value, path, 0)


def _walk(value: object, path: str, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise UnreadableJob(
            f"{path} is nested more than {MAX_DEPTH} levels deep; fio's output and iolab's "
            "exports are not"
        )
    if isinstance(value, dict):
        for position, (key, item) in enumerate(value.items()):
            _walk(item, step(path, key, position), depth + 1)
    elif isinstance(value, list):
        for position, item in enumerate(value):
            _walk(item, step(path, position), depth + 1)
    elif isinstance(value, Odd) or (isinstance(value, int | float) and not isinstance(value, bool)):
        number(value, path or "its JSON", ANY, low=-ANY.value)


# ---------------------------------------------------------------- fio's JSON

_WHOLE = ("io_bytes", "io_kbytes", "total_ios", "short_ios", "drop_ios", "runtime")
_DIRECTION: dict[str, Limit] = {  # fio's own figures first, then those made from them
    "iops": IOPS,
    "bw_bytes": BW,
    "bw": BW_KIB,
    "runtime": RUNTIME,
    "io_bytes": COUNT,
    "io_kbytes": COUNT,
    "total_ios": COUNT,
    "short_ios": COUNT,
    "drop_ios": COUNT,
    "bw_min": BW_KIB,
    "bw_max": BW_KIB,
    "bw_mean": BW_KIB,
    "bw_dev": BW_KIB,
    "bw_samples": COUNT,
    "iops_min": IOPS,
    "iops_max": IOPS,
    "iops_mean": IOPS,
    "iops_stddev": IOPS,
    "iops_samples": COUNT,
}
_ENTRY: dict[str, Limit] = {
    "usr_cpu": COUNT,
    "sys_cpu": COUNT,
    "ctx": COUNT,
    "majf": COUNT,
    "minf": COUNT,
    "error": COUNT,
    "groupid": COUNT,
    "elapsed": COUNT,
    "job_runtime": COUNT,
}
_SHARES = (
    "iodepth_level",
    "iodepth_submit",
    "iodepth_complete",
    "latency_ns",
    "latency_us",
    "latency_ms",
)
_LATENCIES = ("slat_ns", "clat_ns", "lat_ns", "slat", "clat", "lat")  # old fio: µs, no _ns
DIRECTION_KEYS = ("read", "write", "trim", "sync")


def check_fio(doc: Mapping[str, Any], path: str = "") -> None:
    """A fio JSON document's header, options and every job entry (jobs or client_stats)."""
    if "timestamp" in doc:
        number(doc["timestamp"], step(path, "timestamp"), TIME)
    if "timestamp_ms" in doc:
        number(doc["timestamp_ms"], step(path, "timestamp_ms"), TIME_MS)
    if "global options" in doc:
        check_options(doc["global options"], step(path, "global options"))
    for key in ("jobs", "client_stats"):
        entries = doc.get(key)
        if isinstance(entries, list):
            for position, entry in enumerate(entries):
                if isinstance(entry, dict):
                    check_entry(entry, step(step(path, key), position))


def check_entry(entry: Mapping[str, Any], path: str) -> None:
    """One job entry as fio 3.x (or older fio) writes it; `path` names it in messages."""
    for key, limit in _ENTRY.items():
        if key in entry:
            number(entry[key], step(path, key), limit)
    for key in _SHARES:
        if key in entry:
            _table(entry[key], step(path, key))
    if "job options" in entry:
        check_options(entry["job options"], step(path, "job options"))
    for key in DIRECTION_KEYS:
        if key in entry:
            _direction(entry[key], step(path, key))
    if isinstance(entry.get("steadystate"), dict):
        data = entry["steadystate"].get("data")
        if isinstance(data, dict):
            where = step(step(path, "steadystate"), "data")
            for key, limit in (("iops_mean", IOPS), ("bw_mean", BW)):
                if key in data:
                    number(data[key], step(where, key), limit)


def _object(value: object, path: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise UnreadableJob(f"{path} is {_kind(value)}, not an object")
    return value


def _table(value: object, path: str) -> None:
    """A table of figures (fio's I/O depth and latency distributions, in %)."""
    for position, (key, item) in enumerate(_object(value, path).items()):
        number(item, step(path, key, position))


def _direction(value: object, path: str) -> None:
    part = _object(value, path)
    for key, limit in _DIRECTION.items():
        if key in part:
            number(part[key], step(path, key), limit, whole=key in _WHOLE)
    for key in _LATENCIES:
        if key in part:
            _latency(part[key], step(path, key), nanoseconds=key.endswith("_ns"))


def _latency(value: object, path: str, *, nanoseconds: bool) -> None:
    table = _object(value, path)
    for key in ("min", "max", "mean", "stddev"):
        if key in table:
            number(table[key], step(path, key))
    if "N" in table:
        number(table["N"], step(path, "N"), whole=True)
    if "percentile" in table:
        _percentiles(table["percentile"], step(path, "percentile"))
    if "bins" in table:
        _bins(table["bins"], step(path, "bins"), nanoseconds)


def _percentiles(value: object, path: str) -> None:
    ordered: list[tuple[float, float, str]] = []
    for position, (key, item) in enumerate(_object(value, path).items()):
        where = step(path, key, position)
        figure = number(item, where)
        share = percentile_key(str(key))
        if share is not None and figure:
            ordered.append((float(share), figure, where))
    _rising(ordered)


def _rising(ordered: list[tuple[float, float, str]]) -> None:
    """Percentiles (share, value, field) do not decrease as their share grows."""
    for low, high in itertools.pairwise(sorted(ordered)):
        if high[1] < low[1]:
            raise UnreadableJob(
                f"{_is(high[2], high[1])} is below {_is(low[2], low[1])}: a higher percentile "
                "cannot be smaller"
            )


def _bins(value: object, path: str, nanoseconds: bool) -> None:
    """json+ histogram bins: latency (ns) -> I/Os; old fio (µs) also wrote a few named keys."""
    for position, (key, item) in enumerate(_object(value, path).items()):
        where = step(path, key, position)
        text = str(key)
        if text.isascii() and text.isdigit():
            whole_text(text, f"{where} (its latency)", BIN)
        elif nanoseconds:
            raise UnreadableJob(f"{where}: a histogram bin not named by its latency in ns")
        number(item, where, whole=True)


# ---------------------------------------------------------------- fio's options

_AT_LEAST_ONE = ("iodepth", "numjobs")
_PERCENT = ("rwmixread", "rwmixwrite")
_BLOCK_SIZES = ("bs", "blocksize", "ba", "blockalign")
_SIZES = (
    *_BLOCK_SIZES,
    "size",
    "filesize",
    "io_size",
    "io_limit",
    "offset",
    "bsrange",
    "blocksize_range",
)
_TIMES = ("runtime", "ramp_time", "startdelay", "log_avg_msec")


def check_options(value: object, path: str) -> None:
    """fio's options (a mapping, or client/server's list of them): the numeric ones in range.
    fio writes them as text; options fio's JSON writes in other forms are left to fio."""
    tables = value if isinstance(value, list) else [value]
    for position, table in enumerate(tables):
        where = step(path, position) if isinstance(value, list) else path
        if not isinstance(table, Mapping):
            raise UnreadableJob(f"{where} is {_kind(table)}, not an object")
        for key in (*_AT_LEAST_ONE, *_PERCENT, *_SIZES, *_TIMES):
            if key in table:
                _option(key, table[key], step(where, key))


def _option(key: str, value: object, path: str) -> None:
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int | float | Odd):
        low = 1 if key in _AT_LEAST_ONE or key in _BLOCK_SIZES else 0
        limit = SHARE if key in _PERCENT else ONES if key in _AT_LEAST_ONE else COUNT
        number(value, path, limit, low=low)
        return
    text = str(value).strip()
    parts = [p.strip() for p in re.split(r"[,:]", text)]
    if any(p.startswith("-") for p in parts):
        raise UnreadableJob(f"{path} is negative")
    if key in _AT_LEAST_ONE or key in _PERCENT:
        if text.isascii() and text.isdigit():
            limit = SHARE if key in _PERCENT else ONES
            whole_text(text, path, limit, low=1 if key in _AT_LEAST_ONE else 0)
        return
    if any(p.isdigit() and len(p) > MAX_DIGITS for p in parts):
        raise UnreadableJob(f"{path} is beyond {COUNT.words}")
    if key in _BLOCK_SIZES and any(_zero(p) for p in parts):
        raise UnreadableJob(f"{path}: a block size of 0 bytes")


def _zero(part: str) -> bool:
    try:
        return part != "" and parse_size(part) == 0
    except ValueError:
        return False


# ---------------------------------------------------------------- figures iolab made


def check_metrics(metrics: CaseMetrics, where: str) -> None:
    """A case's figures read from another tool's report, a table or logs."""
    for d in metrics.directions:
        said = f"{where}{d.direction}"
        number(d.iops, f"{said} IOPS", IOPS)
        number(d.bw_bytes, f"{said} bandwidth (bytes/s)", BW)
        number(d.io_bytes, f"{said} bytes moved", whole=True)
        number(d.runtime_ms, f"{said} runtime (ms)", RUNTIME, whole=True)
        for figure, name in ((d.lat_mean_ns, "mean"), (d.lat_max_ns, "maximum")):
            if figure is not None:
                number(figure, f"{said} {name} latency (ns)")
        ordered = [
            (float(p), number(v, f"{said} p{p} latency (ns)"), f"{said} p{p} latency")
            for p, v in d.percentiles_ns.items()
        ]
        _rising([o for o in ordered if o[1]])
    number(metrics.usr_cpu, f"{where}user CPU")
    number(metrics.sys_cpu, f"{where}system CPU")
    number(metrics.runtime_ms, f"{where}runtime (ms)", RUNTIME, whole=True)


SAMPLE_LIMITS = {"iops": IOPS, "bw": BW, "lat": COUNT}


def check_samples(samples: Iterable[Sample], where: str) -> None:
    for s in samples:
        number(
            s.time_ms, f"{where}{s.direction} {s.metric} sample's time (ms)", RUNTIME, whole=True
        )
        said = f"{where}{s.direction} {s.metric} sample at {s.time_ms} ms"
        number(s.value, said, SAMPLE_LIMITS[s.metric])


LOG_LIMITS = {"bw": BW_KIB, "iops": IOPS, "lat": COUNT, "clat": COUNT, "slat": COUNT}


def check_log_line(fields: list[str], where: str, kind: str) -> None:
    """One sample line of fio's log (time in ms, value, direction, ...), as fio's log reader
    reads it: the time a whole number, the value a finite figure in range."""
    whole_text(fields[0], f"{where}, time (ms)", RUNTIME)
    try:
        value = float(fields[1])
    except ValueError:
        raise UnreadableJob(f"{where}, value: not a number") from None
    number(value, f"{where}, value", LOG_LIMITS[kind])
