"""fio's averaged logs (`write_bw_log`, `write_iops_log`, `write_lat_log` with
`log_avg_msec`): NAME_bw.N.log, NAME_iops.N.log, NAME_clat.N.log (and _lat, _slat), one per
job N. Each line: time (ms), value, direction (0 read, 1 write, 2 trim), block size, ...

The logs of one NAME are one job's samples: they join the job of that name found beside them
(or the only job found beside them), else they make a job of their own whose figures are the
samples' means.
"""

from __future__ import annotations

import itertools
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from iolab.exchange import rules
from iolab.exchange.found_jobs import FoundJob, UnreadableJob
from iolab.fio import parse
from iolab.model import DIRECTIONS, CaseMetrics, CheckWarning, Code, DirectionMetrics, Sample

NAME = re.compile(r"^(?P<prefix>.+)_(?P<kind>bw|iops|lat|clat|slat)(?:\.\d+)?\.log$")
# client/server's logs: fio's log name, then "." and the host
HOST_KIND = re.compile(r"^.+_(?P<kind>bw|iops|lat|clat|slat)(?:\.\d+)?\.log\.[^/]+$")
MIN_INTERVAL_MS = 10  # finer than this, the log is one line per I/O: not averaged
LOGS_ONLY = CheckWarning(
    Code.LOGS_ONLY,
    "no fio result was found beside these logs: the figures are the means of their samples.",
    "Import the fio JSON or terse output of the same run with them.",
)


def is_log(path: Path, text: str) -> bool:
    if not NAME.match(path.name):
        return False
    lines = [line for line in text.splitlines()[:5] if line.strip()]
    return bool(lines) and all(_fields(line) is not None for line in lines)


def check_log(path: Path, text: str) -> None:
    """Every line fio's log reader takes as a sample (three fields or more, the third a
    direction 0-2) holds a whole time in ms and a finite value in range (exchange.rules)."""
    found = NAME.match(path.name) or HOST_KIND.match(path.name)
    kind = found.group("kind") if found else "lat"
    for number, line in enumerate(text.splitlines(), start=1):
        fields = [f.strip() for f in line.split(",")]
        if len(fields) < 3 or not fields[2].isdigit():
            continue  # not a sample line; fio's log reader leaves it too
        if not fields[2].isascii() or len(fields[2]) > 3:
            raise UnreadableJob(f"line {number}, direction: not 0, 1 or 2")
        if int(fields[2]) <= 2:
            rules.check_log_line(fields, f"line {number}", kind)


def _fields(line: str) -> tuple[int, float, int] | None:
    parts = [p.strip() for p in line.split(",")]
    if len(parts) < 3 or not parts[0].isdigit() or not parts[2].isdigit():
        return None
    try:
        return int(parts[0]), float(parts[1]), int(parts[2])
    except ValueError:
        return None


def interval_of(files: Sequence[Path]) -> int:
    """The averaging interval of fio's logs (log_avg_msec), from the times they stamp."""
    times = sorted({f[0] for line in files[0].read_text().splitlines() if (f := _fields(line))})
    steps = [b - a for a, b in itertools.pairwise(times)]
    if not steps:
        raise UnreadableJob("a log of one line: no interval to read")
    step = statistics.median(steps)
    if step < MIN_INTERVAL_MS:
        raise UnreadableJob(
            "a log of every single I/O (fio ran without log_avg_msec); iolab imports averaged logs"
        )
    return int(round(step, -1))


def attach(jobs: list[FoundJob], logs: dict[tuple[Path, str], list[Path]]) -> list[FoundJob]:
    """Join each NAME's logs to its job (same folder, same name, or the folder's only job);
    logs with no job become a job of their own."""
    out = list(jobs)
    for (folder, prefix), files in logs.items():
        beside = [j for j in jobs if j.file.parent == folder]
        named = [j for j in beside if j.name == prefix] or claimants(beside, prefix)
        target = named[0] if len(named) == 1 else beside[0] if len(beside) == 1 else None
        asked = target.options.get("log_avg_msec") if target else None
        interval = asked if isinstance(asked, int) and asked > 0 else interval_of(files)
        found = _samples(files, interval)
        if target is not None:
            target.samples = found
            continue
        metrics = _means(found, interval)
        out.append(
            FoundJob(
                files[0], prefix, {"log_avg_msec": interval}, [], metrics=metrics, samples=found
            )
        )
    return out


LOG_OPTIONS = ("write_bw_log", "write_iops_log", "write_lat_log")


def claimants(jobs: Iterable[FoundJob], prefix: str) -> list[FoundJob]:
    """The jobs whose own options named logs PREFIX (write_bw_log=PREFIX, ...)."""
    return [j for j in jobs if any(j.options.get(o) == prefix for o in LOG_OPTIONS)]


def _samples(files: Sequence[Path], interval: int) -> list[Sample]:
    """Completion latency from _clat logs; from _lat (total latency) only if no _clat."""
    kinds = {NAME.match(f.name).group("kind") for f in files}  # type: ignore[union-attr]
    return parse.samples(
        files, interval, "clat" if "clat" in kinds or "lat" not in kinds else "lat"
    )


def _means(samples: Iterable[Sample], interval: int) -> CaseMetrics:
    """Each direction's mean IOPS, bytes/s and latency over the samples; the bytes moved are
    the bandwidth samples times their interval."""
    values: dict[tuple[str, str], list[float]] = {}
    last: Counter[str] = Counter()
    for s in samples:
        values.setdefault((s.direction, s.metric), []).append(s.value)
        last[s.direction] = max(last[s.direction], s.time_ms)
    directions = []
    for name in DIRECTIONS:
        if (name, "iops") not in values and (name, "bw") not in values:
            continue
        lat = values.get((name, "lat"))
        directions.append(
            DirectionMetrics(
                direction=name,
                iops=statistics.fmean(values.get((name, "iops"), [0.0])),
                bw_bytes=statistics.fmean(values.get((name, "bw"), [0.0])),
                io_bytes=round(sum(values.get((name, "bw"), [])) * interval / 1000),
                runtime_ms=last[name],
                lat_mean_ns=statistics.fmean(lat) if lat else None,
                lat_max_ns=max(lat) if lat else None,
            )
        )
    if not directions:
        raise UnreadableJob("its logs hold no bandwidth or IOPS samples")
    runtime = max(d.runtime_ms for d in directions)
    return CaseMetrics(tuple(directions), usr_cpu=0.0, sys_cpu=0.0, runtime_ms=runtime, error=0)
