"""How far into its file each of a job's processes does I/O, computed as fio computes it.

This is the one model of the bytes a job may touch or grow (issue 29): the room check, the
refusal to grow or rewrite a user's own file, and the size "auto" gives all read it.

fio (3.33, filesetup.c) gives job number n of `numjobs` the region [start, start + length):

- start = offset + n x offset_increment, where offset and offset_increment are bytes (decimal,
  with k/m/g/t/p/e suffixes, or hexadecimal) or percentages of the file's size; a start that
  came from a percentage is rounded up to offset_align (default: the smallest block size);
- length = size when given in bytes; a percentage of the file's size (fio then keeps it inside
  the file; over 100% it truncates the file to nothing); without it, what is left of the file
  after start.

`filesize` (parse.c, a value with two slots) sets the file's size instead: "A" is A; "A-B" or
"A:B" (also "A,B") is the range [A, B], fio storing the number before the first separator as
the low end and the one after the last as the high end, never ordering them: written high to
low, fio draws a size from a range that wraps past 2^64 and lays out a file of exabytes (it
filled the filesystem). A percentage is a number near 2^64 to fio (it truncates the file). A
file already inside [low, high] is used as it is; any other is laid out to a size in it, so at
most high.

A regular file shorter than a region's end is laid out (written) to that end before the first
I/O, even by a job that only reads. Sizes are read as fio reads them: k, m, g, t, p are powers
of kb_base (1024 unless the job says 1000) and "KiB", "MiB"... powers of the other base; fio
has no "e". The model is an upper bound where fio draws at random (a range's high end) and
where an alignment rounds up (by the largest block size the job names). A value the model
cannot read (an fio `$keyword`, a fraction, spaces or hexadecimal inside a range) raises
`Unreadable`: iolab refuses what it cannot bound.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from iolab.model import FioValue

_BYTES = re.compile(r"^(\d+)(?:([kmgtp])(ib|i|b)?|b)?$", re.IGNORECASE)
_HEX = re.compile(r"^0x([0-9a-f]+)$", re.IGNORECASE)
_PERCENT = re.compile(r"^(\d+(?:\.\d+)?)%$")
_POWERS = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
_OTHER_BASE = {1000: 1024, 1024: 1000}
_RANGE = re.compile(r"^([^-:,]*)[-:,]([^-:,]*)$")
_BLOCK_SIZE_KEYS = ("bs", "bsrange", "bssplit")
MIN_ALIGN = 4096
MAX_JOBS = 1 << 16  # more processes than any host runs; a bound on the model's loop
MAX_BYTES = 1 << 64  # fio's own limit: an unsigned 64-bit offset
MAX_INT = 1 << 32  # offset_align is a 32-bit number to fio: it keeps the low bits of more


class Unreadable(ValueError):
    """A value of a region option that this model cannot bound (and so iolab refuses)."""

    def __init__(self, key: str, value: FioValue, why: str) -> None:
        super().__init__(f"{key} = {str(value)!r} {why}")
        self.key, self.value, self.why = key, value, why


@dataclass(frozen=True)
class Amount:
    """A region option's value: bytes, or a percentage of the file's size."""

    bytes: int = 0
    percent: float | None = None

    def of(self, file_size: int) -> int:
        if self.percent is None:
            return self.bytes
        return int(file_size * self.percent / 100)


@dataclass(frozen=True)
class ReachRegion:
    """The bytes one of a job's processes may touch: [start, end)."""

    job: int
    start: int
    end: int


def amount(key: str, value: FioValue, kb_base: int = 1024) -> Amount:
    """A region option's value as fio reads it (under `kb_base`), or Unreadable."""
    if isinstance(value, (bool, float)):
        raise Unreadable(key, value, "is not a whole number of bytes")
    if isinstance(value, int):
        if value < 0:
            raise Unreadable(key, value, "is negative")
        return Amount(value)
    text = value.strip()
    if text.startswith("$") or "${" in text:
        raise Unreadable(key, value, "is an fio expansion, whose bytes iolab cannot bound")
    if match := _PERCENT.match(text):
        return Amount(percent=float(match.group(1)))
    if match := _HEX.match(text):
        return _bounded(key, value, int(match.group(1), 16))
    if match := _BYTES.match(text):
        return _bounded(key, value, _bytes(match, kb_base))
    raise Unreadable(key, value, "is not bytes (4m, 0x400000) or a percentage (25%)")


def _bytes(match: re.Match[str], kb_base: int) -> int:
    """A number with fio's suffix: "k" is kb_base bytes, "kib" the other base (parse.c)."""
    number, unit, tail = int(match.group(1)), (match.group(2) or "").lower(), match.group(3)
    if not unit:
        return number
    base = _OTHER_BASE[kb_base] if (tail or "").lower() == "ib" else kb_base
    multiplier: int = base ** _POWERS[unit]
    return number * multiplier


def _bounded(key: str, value: FioValue, number: int) -> Amount:
    if number >= MAX_BYTES:
        raise Unreadable(key, value, "is past the end of any file (2^64 bytes)")
    return Amount(number)


def kb_base(options: Mapping[str, FioValue]) -> int:
    """The base of fio's suffixes for this job. It holds for the options fio reads after it,
    so iolab's job files give it first (`jobfile.render`)."""
    value = str(options.get("kb_base", 1024)).strip()
    if value not in ("1000", "1024"):
        raise Unreadable("kb_base", options["kb_base"], "is neither 1000 nor 1024")
    return int(value)


@dataclass(frozen=True)
class FileSize:
    """`filesize` as fio reads it: the file is laid out to a size in [low, high]."""

    low: int
    high: int


def filesize(options: Mapping[str, FioValue], kb_base: int = 1024) -> FileSize | None:
    """The job's `filesize`, or None; Unreadable where fio's reading is not bounded."""
    if "filesize" not in options:
        return None
    value = options["filesize"]
    text = value.strip() if isinstance(value, str) else value
    if isinstance(text, str) and (match := _RANGE.match(text)):
        low, high = (_range_end(value, part, kb_base) for part in match.groups())
    else:
        low = high = _file_bytes(value, value, kb_base)
    if low > high:
        raise Unreadable(
            "filesize",
            value,
            "is a range written high to low: fio then draws the size from a range that wraps "
            "past 2^64 and lays out a file of exabytes; write it low-high (1m-40m)",
        )
    return FileSize(low, high)


def _range_end(value: FioValue, part: str, kb_base: int) -> int:
    if not _BYTES.match(part):
        raise Unreadable(
            "filesize",
            value,
            "is not a range fio reads as written (two sizes such as 1m-40m, without spaces, "
            "hexadecimal or percentages)",
        )
    return _file_bytes(value, part, kb_base)


def _file_bytes(value: FioValue, part: FioValue, kb_base: int) -> int:
    size = amount("filesize", part, kb_base)
    if size.percent is not None:
        raise Unreadable(
            "filesize",
            value,
            "is a percentage, which fio reads as a size near 2^64 (it truncates the file); "
            "give bytes (40m)",
        )
    if size.bytes < 1:
        raise Unreadable("filesize", value, "is 0 bytes")
    return size.bytes


def _jobs(options: Mapping[str, FioValue]) -> int:
    value = options.get("numjobs", 1)
    try:
        jobs = int(str(value).strip())
    except ValueError:
        raise Unreadable("numjobs", value, "is not a whole number") from None
    if not 1 <= jobs <= MAX_JOBS:
        raise Unreadable("numjobs", value, f"is not between 1 and {MAX_JOBS:,}")
    return jobs


def _align(options: Mapping[str, FioValue], kb_base: int) -> int:
    """What a start taken from a percentage is rounded up to: at most this many bytes."""
    if "offset_align" in options:
        return offset_align(options, kb_base)
    return max([MIN_ALIGN, *_block_sizes(options, kb_base)])


def offset_align(options: Mapping[str, FioValue], kb_base: int = 1024) -> int:
    """`offset_align` as fio aligns a percentage's start by it (filesetup.c divides by it)."""
    value = options["offset_align"]
    align = amount("offset_align", value, kb_base)
    if align.percent is not None:
        raise Unreadable("offset_align", value, "is a percentage, which fio reads as bytes")
    if align.bytes >= MAX_INT:
        raise Unreadable("offset_align", value, "is past 4 GiB, where fio keeps its low 32 bits")
    if align.bytes == 0:
        raise Unreadable(
            "offset_align",
            value,
            "is 0, and fio divides a percentage's offset by it (it dies of SIGFPE); give bytes "
            "(4k) or drop it",
        )
    return align.bytes


def _block_sizes(options: Mapping[str, FioValue], kb_base: int) -> list[int]:
    """Every block size the job names (bs, bsrange, bssplit), as fio reads them."""
    sizes = []
    for key in _BLOCK_SIZE_KEYS:
        if key not in options:
            continue
        parts = re.split(r"[-:,]", str(options[key]))
        if len(parts) > 1 and "0x" in str(options[key]).lower():
            raise Unreadable(key, options[key], "mixes hexadecimal into a list of sizes")
        for part in parts:
            size = part.split("/")[0].strip()
            if size:
                sizes.append(amount(key, size, kb_base).bytes)
    return sizes


def regions(
    options: Mapping[str, FioValue], file_size: int, kb_base: int = 1024
) -> list[ReachRegion]:
    """Each process's region on a file of `file_size` bytes (0: a file not made yet), with
    suffixes read under `kb_base`."""
    offset = amount("offset", options.get("offset", 0), kb_base)
    step = amount("offset_increment", options.get("offset_increment", 0), kb_base)
    align = (
        _align(options, kb_base) if offset.percent is not None or step.percent is not None else 1
    )
    out = []
    for job in range(_jobs(options)):
        start = offset.of(file_size) + job * step.of(file_size)
        start = -(-start // align) * align
        out.append(ReachRegion(job, start, start + _length(options, file_size, start, kb_base)))
    return out


def _length(options: Mapping[str, FioValue], file_size: int, start: int, kb_base: int) -> int:
    left = max(file_size - start, 0)
    length = left
    if "size" in options:
        size = amount("size", options["size"], kb_base)
        if size.percent is not None and size.percent > 100:
            raise Unreadable("size", options["size"], "is over 100%: fio truncates the file")
        length = min(size.of(file_size), left) if size.percent is not None else size.bytes
    sized = filesize(options, kb_base)
    if sized is not None:  # fio sizes the file by filesize, not size (filesetup.c)
        inside = sized.low <= file_size <= sized.high
        return max((file_size if inside else sized.high) - start, 0)
    return length


def reach(options: Mapping[str, FioValue], file_size: int) -> int:
    """The size a file of `file_size` bytes has once fio has laid it out for this job."""
    return max([file_size, *(r.end for r in regions(options, file_size, kb_base(options)))])


def grows(options: Mapping[str, FioValue], file_size: int) -> bool:
    """Whether fio would lay the file out again (grow it, and write every byte) for this job."""
    return reach(options, file_size) > file_size
