"""How far into its file each of a job's processes does I/O, computed as fio computes it.

This is the one model of the bytes a job may touch or grow (issue 29): the room check, the
refusal to grow or rewrite a user's own file, and the size "auto" gives all read it.

fio (3.33, filesetup.c) gives job number n of `numjobs` the region [start, start + length):

- start = offset + n x offset_increment, where offset and offset_increment are bytes (decimal,
  with k/m/g/t/p/e suffixes, or hexadecimal) or percentages of the file's size; a start that
  came from a percentage is rounded up to offset_align (default: the smallest block size);
- length = size when given in bytes; a percentage of the file's size (fio then keeps it inside
  the file; over 100% it truncates the file to nothing); the file's top of `filesize`; without
  either, what is left of the file after start.

A regular file shorter than a region's end is laid out (written) to that end before the first
I/O, even by a job that only reads. The model is an upper bound: suffixes count as powers of
1024 (fio reads "KiB" as 1000 under its default kb_base) and an alignment rounds up by the
largest block size the job names. A value the model cannot read (an fio `$keyword`, a fraction)
raises `Unreadable`: iolab refuses what it cannot bound.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from iolab.model import FioValue

_BYTES = re.compile(r"^(\d+)([kmgtpe]?)(i?b?)$", re.IGNORECASE)
_HEX = re.compile(r"^0x([0-9a-f]+)$", re.IGNORECASE)
_PERCENT = re.compile(r"^(\d+(?:\.\d+)?)%$")
_POWERS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5, "e": 6}
_SIZES_IN = re.compile(r"(\d+)([kmgtpe]?)", re.IGNORECASE)
MIN_ALIGN = 4096
MAX_JOBS = 1 << 16  # more processes than any host runs; a bound on the model's loop
MAX_BYTES = 1 << 64  # fio's own limit: an unsigned 64-bit offset


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


def amount(key: str, value: FioValue) -> Amount:
    """A region option's value as fio reads it, or Unreadable."""
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
        number, unit = int(match.group(1)), match.group(2).lower()
        return _bounded(key, value, number * 1024 ** _POWERS[unit])
    raise Unreadable(key, value, "is not bytes (4m, 0x400000) or a percentage (25%)")


def _bounded(key: str, value: FioValue, number: int) -> Amount:
    if number >= MAX_BYTES:
        raise Unreadable(key, value, "is past the end of any file (2^64 bytes)")
    return Amount(number)


def _top(key: str, value: FioValue) -> Amount:
    """A range's top ("1m-40m", "1m:40m"), or the value itself."""
    if isinstance(value, str):
        value = re.split(r"[-:]", value)[-1]
    return amount(key, value)


def _jobs(options: Mapping[str, FioValue]) -> int:
    value = options.get("numjobs", 1)
    try:
        jobs = int(str(value).strip())
    except ValueError:
        raise Unreadable("numjobs", value, "is not a whole number") from None
    if not 1 <= jobs <= MAX_JOBS:
        raise Unreadable("numjobs", value, f"is not between 1 and {MAX_JOBS:,}")
    return jobs


def _align(options: Mapping[str, FioValue]) -> int:
    """What a start taken from a percentage is rounded up to: at most this many bytes."""
    if "offset_align" in options:
        return max(1, amount("offset_align", options["offset_align"]).bytes)
    sizes: list[int] = [
        int(n) * 1024 ** _POWERS[u.lower()]
        for key in ("bs", "bsrange", "bssplit")
        for n, u in _SIZES_IN.findall(str(options.get(key, "")))
    ]
    return max([MIN_ALIGN, *sizes])


def regions(options: Mapping[str, FioValue], file_size: int) -> list[ReachRegion]:
    """Each process's region on a file of `file_size` bytes (0: a file not made yet)."""
    offset = amount("offset", options.get("offset", 0))
    step = amount("offset_increment", options.get("offset_increment", 0))
    align = _align(options) if offset.percent is not None or step.percent is not None else 1
    out = []
    for job in range(_jobs(options)):
        start = offset.of(file_size) + job * step.of(file_size)
        start = -(-start // align) * align
        out.append(ReachRegion(job, start, start + _length(options, file_size, start)))
    return out


def _length(options: Mapping[str, FioValue], file_size: int, start: int) -> int:
    left = max(file_size - start, 0)
    length = left
    if "size" in options:
        size = amount("size", options["size"])
        if size.percent is not None and size.percent > 100:
            raise Unreadable("size", options["size"], "is over 100%: fio truncates the file")
        length = min(size.of(file_size), left) if size.percent is not None else size.bytes
    if "filesize" in options:
        length = max(length, _top("filesize", options["filesize"]).of(file_size))
    return length


def reach(options: Mapping[str, FioValue], file_size: int) -> int:
    """The size a file of `file_size` bytes has once fio has laid it out for this job."""
    return max([file_size, *(r.end for r in regions(options, file_size))])


def grows(options: Mapping[str, FioValue], file_size: int) -> bool:
    """Whether fio would lay the file out again (grow it, and write every byte) for this job."""
    return reach(options, file_size) > file_size
