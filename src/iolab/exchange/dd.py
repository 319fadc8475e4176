"""GNU dd's report (on stderr): "N+P records in", "N+P records out", then

    67108864 bytes (67 MB, 64 MiB) copied, 0.119027 s, 564 MB/s

(rates in B/s, kB/s, MB/s, GB/s...: powers of 1000). With status=progress the same line comes
first once a second, each ended by a carriage return. Each report is a case: a sequential read
or write of dd's block size, its bandwidth the rate as dd printed it, its IOPS the records
copied per second, its runtime dd's seconds; the progress lines become per-second bandwidth
samples (the bytes copied between two lines over the seconds between them). dd says nothing
of latency.

Whether dd read or wrote, and its block size, come from the dd command printed before the
report (a shell transcript, or `bash -x`'s "+ dd if=... of=..."): of=/dev/null or
iflag=direct is a read, if=/dev/zero (or /dev/urandom) or oflag=direct a write; bs= (ibs= for a
read, obs= for a write), and iflag=/oflag= direct and dsync or sync (fio's direct and sync).
Without a command line, the file's name says the direction ("read" or "write" in it), and the
bytes over the whole records the block size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

from iolab.exchange import rules
from iolab.exchange.found_jobs import UnreadableJob
from iolab.exchange.named_jobs import Placed, case, direction, exact
from iolab.model import Direction, FioValue, Sample
from iolab.units import format_size

_NUMBER = r"\d+(?:[.,]\d+)?(?:e[-+]?\d+)?"
REPORT = re.compile(
    rf"^(?P<bytes>\d+) bytes(?: \([^)]*\))? copied, (?P<seconds>{_NUMBER}) s, "
    rf"(?P<rate>{_NUMBER}) (?P<unit>[kMGTPEZY]?B)/s$"
)
RECORDS = re.compile(r"^(?P<full>\d+)\+(?P<partial>\d+) records (?P<way>in|out)$")
COMMAND = re.compile(r"(?:^|[\s;+$#>|&])dd\s+(?P<operands>(?:\S+=\S+\s*)+)$")
RATE_UNITS = {
    "B": 1,
    "kB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "PB": 10**15,
    "EB": 10**18,
    "ZB": 10**21,
    "YB": 10**24,
}
# dd's size suffixes: k, K and KiB are 1024, kB and KB are 1000 (and so on up)
_SIZE = re.compile(r"^(?P<number>\d+)(?P<suffix>[a-zA-Z]*)$")
_POWERS = {"K": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}
WRITE_SOURCES = ("/dev/zero", "/dev/urandom", "/dev/random")


@dataclass
class _DdRun:
    """What was read of one dd run so far."""

    operands: dict[str, str]
    progress: list[tuple[Decimal, int]]  # (seconds, bytes) of each progress line
    records: tuple[int, int] | None = None  # whole and partial records out


def is_dd(text: str) -> bool:
    lines = text.splitlines()
    return any(RECORDS.match(line) for line in lines) and any(REPORT.match(ln) for ln in lines)


def read(path: Path, text: str) -> list[Placed]:
    """Every dd report in the text, a case each."""
    found: list[Placed] = []
    run = _DdRun({}, [])
    for number, raw in enumerate(text.splitlines(), start=1):
        try:
            run = _line(path, raw.strip(), run, found)
        except UnreadableJob as error:
            raise UnreadableJob(f"line {number}: {error}") from None
        except ArithmeticError:  # decimal's overflow: a figure no dd prints
            raise UnreadableJob(f"line {number}: a figure beyond any dd prints") from None
    if not found:
        raise UnreadableJob("dd's records lines without its report of bytes copied")
    return found


def _line(path: Path, line: str, run: _DdRun, found: list[Placed]) -> _DdRun:
    """One line of dd's output read into `run` (or, at dd's report, a case into `found`); the
    run that the next line goes on."""
    if (command := COMMAND.search(line)) is not None:
        return _DdRun(operands(command.group("operands")), [])
    if (records := RECORDS.match(line)) is not None:
        if records.group("way") == "out":
            full = rules.whole_text(records.group("full"), "whole records")
            run.records = full, rules.whole_text(records.group("partial"), "partial records")
    elif (report := REPORT.match(line)) is not None:
        if run.records is None:
            moved = rules.whole_text(report.group("bytes"), "bytes copied")
            run.progress.append((_decimal(report.group("seconds")), moved))
            return run
        found.append(_case(path, report, run))
        return _DdRun(run.operands, [])
    return run


def _case(path: Path, report: re.Match[str], run: _DdRun) -> Placed:
    rw = direction_of(run.operands, path.name)
    moved = rules.whole_text(report.group("bytes"), "bytes copied")
    seconds = _decimal(report.group("seconds"))
    if seconds <= 0:
        raise UnreadableJob("dd copied in 0 s: no rate to read")
    full, partial = run.records or (0, 0)
    bs = block_size(run.operands, rw, moved, full, partial)
    rate = exact(report.group("rate").replace(",", "."), RATE_UNITS[report.group("unit")])
    options: dict[str, FioValue] = {"rw": rw, "size": moved}
    if bs:
        options["bs"] = format_size(bs)
    if run.operands:
        flags = run.operands.get("iflag" if rw == "read" else "oflag", "").split(",")
        options["direct"] = int("direct" in flags)
        if "dsync" in flags or "sync" in flags:
            options["sync"] = "dsync" if "dsync" in flags else 1  # as fio names O_DSYNC, O_SYNC
    runtime = _ms(seconds, "seconds")
    figures = direction(
        rw,
        bw_bytes=rate,
        iops=float((full + partial) / seconds),
        io_bytes=moved,
        runtime_ms=runtime,
    )
    name = f"dd {format_size(bs).upper()} rw={rw}" if bs else f"dd rw={rw}"
    job = Placed(
        path,
        name,
        options,
        [],
        metrics=case(figures, runtime_ms=runtime),
        samples=_samples(rw, run.progress),
        tool="dd",
    )
    rules.check_metrics(case(figures, runtime_ms=runtime), "")
    rules.check_samples(job.samples, "progress: ")
    return job


def _ms(seconds: Decimal, field: str) -> int:
    """dd's seconds in whole ms, refused past values' bound before they become a huge int."""
    rules.number(
        float(seconds),
        f"{field} (s)",
        rules.Limit(rules.RUNTIME.value // 1000, rules.RUNTIME.words),
    )
    return int((seconds * 1000).to_integral_value())


def _decimal(text: str) -> Decimal:
    try:
        return Decimal(text.replace(",", "."))
    except InvalidOperation:
        raise UnreadableJob(f"{text!r} is not a number") from None


def operands(text: str) -> dict[str, str]:
    """dd's operands ("if=/dev/zero of=x bs=1M") as a mapping; quotes and punctuation around
    them (a command quoted in prose) left out."""
    return dict(re.findall(r"(\w+)=([^\s`'\",;]+)", text))


def commands(text: str) -> list[dict[str, str]]:
    """The operands of every dd command written in prose ("`dd if=/dev/zero of=DEV bs=100M`")."""
    return [operands(found) for found in re.findall(r"\bdd((?:\s+\w+=[^\s`'\",;]+)+)", text)]


def direction_of(operands: dict[str, str], name: str) -> Direction:
    if operands.get("of") == "/dev/null" or "direct" in operands.get("iflag", "").split(","):
        return "read"
    if operands.get("if") in WRITE_SOURCES or "direct" in operands.get("oflag", "").split(","):
        return "write"
    said = name.lower()
    if ("read" in said) != ("write" in said):
        return "read" if "read" in said else "write"
    raise UnreadableJob(
        "dd's report does not say whether it read or wrote: keep the dd command line above "
        "it (e.g. bash -x), or put read or write in the file's name"
    )


def block_size(
    operands: dict[str, str], rw: Direction, moved: int = 0, full: int = 0, partial: int = 0
) -> int:
    """dd's bs= (ibs= for a read, obs= for a write), else the bytes over the whole records."""
    given = operands.get("bs") or operands.get("ibs" if rw == "read" else "obs")
    if given:
        size = dd_size(given)
        if size is not None:
            return size
    return moved // full if full and not partial and moved % full == 0 else 0


def dd_size(text: str) -> int | None:
    """A size as dd reads it ("100M" = 100 MiB, "1MB" = 10^6, "512", "2x512"), None when it
    is not one."""
    total = 1
    for part in text.split("x"):
        found = _SIZE.match(part)
        if not found or len(found.group("number")) > rules.MAX_DIGITS:
            return None
        suffix = found.group("suffix")
        if suffix in ("", "c"):
            factor = 1
        elif suffix == "w":
            factor = 2
        elif suffix == "b":
            factor = 512
        elif suffix[0].upper() in _POWERS and suffix[1:] in ("", "iB", "B"):
            base = 1000 if suffix[1:] == "B" else 1024
            factor = base ** _POWERS[suffix[0].upper()]
        else:
            return None
        total *= int(found.group("number")) * factor
    return total


def _samples(rw: Direction, progress: list[tuple[Decimal, int]]) -> list[Sample]:
    """Bytes/s between consecutive progress lines, stamped at the later one (ms)."""
    out = []
    before = (Decimal(0), 0)
    for seconds, moved in progress:
        span = seconds - before[0]
        if span > 0:
            value = float((moved - before[1]) / span)
            out.append(Sample("bw", rw, _ms(seconds, "progress seconds"), value))
            before = (seconds, moved)
    return out
