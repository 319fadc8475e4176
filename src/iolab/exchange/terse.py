"""fio's terse output (`--output-format=terse`, `--minimal`), versions 3, 4 and 5, one line per
job, turned into fio 3.x's JSON shape (see fio's HOWTO, "Terse output").

Per direction (read, write; trim too from version 4): total I/O (KiB), bandwidth (KiB/s),
IOPS, runtime (ms), submission latency min/max/mean/stdev (µs), completion latency the same,
20 completion-latency percentiles ("99.900000%=1679", µs; unused ones "0%=0"), total latency,
bandwidth min/max/aggregate %/mean/stdev, and from version 5 the bandwidth's sample count and
IOPS min/max/mean/stdev/samples. Then CPU user %, system %, context switches, major and minor
faults; I/O depths, latency buckets, disk utilisation, and an optional description.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from iolab.exchange import rules
from iolab.exchange.found_jobs import FoundJob, UnreadableJob, percentile_key, scaled

VERSIONS = {
    "3": (("read", "write"), 41),
    "4": (("read", "write", "trim"), 41),
    "5": (("read", "write", "trim"), 47),
}
_FIRST_DIRECTION = 5  # terse version, fio version, job name, group id, error


def is_terse(text: str) -> bool:
    first = text.lstrip().split("\n", 1)[0]
    fields = first.split(";")
    return len(fields) > 100 and fields[0] in ("2", *VERSIONS)


def read(path: Path, text: str) -> list[FoundJob]:
    """One FoundJob per job name (lines of one name, e.g. numjobs without group_reporting, are
    that job's entries)."""
    jobs: dict[str, FoundJob] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.rstrip("\n").split(";")
        if len(fields) < 100:
            continue  # client/server prints disk utilisation on lines of its own
        if fields[0] == "2":
            raise UnreadableJob("terse version 2 (fio 2.0's default) is not read; use 3, 4 or 5")
        if fields[0] not in VERSIONS:
            raise UnreadableJob(f"line {number}: terse version {fields[0]!r} is not 3, 4 or 5")
        try:
            entry = _entry(fields)
        except IndexError:
            raise UnreadableJob(
                f"line {number}: fewer fields than terse v{fields[0]} has"
            ) from None
        except (ValueError, UnreadableJob):
            raise UnreadableJob(
                f"line {number}: not a terse v{fields[0]} line (a figure that is not a number)"
            ) from None
        rules.check_entry(entry, f"line {number}: ")
        name = entry["jobname"]
        header = {"fio version": fields[1]}
        jobs.setdefault(name, FoundJob(path, name, {}, [], header)).entries.append(entry)
    if not jobs:
        raise UnreadableJob("no terse line in it")
    return list(jobs.values())


def _entry(fields: list[str]) -> dict[str, Any]:
    directions, width = VERSIONS[fields[0]]
    entry: dict[str, Any] = {
        "jobname": fields[2],
        "groupid": int(fields[3]),
        "error": int(fields[4]),
        "terse_version": int(fields[0]),
    }
    at = _FIRST_DIRECTION
    for direction in directions:
        entry[direction] = _direction(fields[at : at + width])
        at += width
    entry["usr_cpu"] = float(fields[at].rstrip("%"))
    entry["sys_cpu"] = float(fields[at + 1].rstrip("%"))
    return entry


def _direction(f: list[str]) -> dict[str, Any]:
    io_kib, bw_kib, iops, runtime = int(f[0]), int(f[1]), scaled(f[2], 1), int(f[3])
    percentiles = {}
    for item in f[12:32]:
        share, _, value = item.partition("=")
        if (key := percentile_key(share)) is not None:
            percentiles[key] = scaled(value, 1000)
    weight = float(iops) * runtime / 1000  # terse gives no count: a weight for merging
    ios = round(weight) if math.isfinite(weight) else 0  # not finite: refused by the check
    return {
        "io_bytes": io_kib * 1024,
        "io_kbytes": io_kib,
        "bw_bytes": bw_kib * 1024,
        "bw": bw_kib,
        "iops": float(iops),
        "runtime": runtime,
        "total_ios": ios,
        "slat_ns": _latency(f[4:8]),
        "clat_ns": {**_latency(f[8:12]), "N": ios if io_kib else 0, "percentile": percentiles},
        "lat_ns": _latency(f[32:36]),
    }


def _latency(f: list[str]) -> dict[str, int | float]:
    """min, max, mean, stdev in µs, as ns."""
    return {k: scaled(v, 1000) for k, v in zip(("min", "max", "mean", "stddev"), f, strict=True)}
