#!/usr/bin/env python3
"""How fast reports are on a big store: 10,000 results (4 set-ups x 2,500 workload points of
a six-field sweep: ioengine, rw, rwmixread, bs, iodepth, numjobs; each case with fio's json+
output and ten 1 s samples of IOPS, MB/s and latency), built directly with iolab's Store and
model types (a few seconds), then `iolab report` as HTML, Markdown (written to a file, with its
images) and CSV by the real command. Targets (issue 47): HTML at most 1.5 s, Markdown at most
3 s, memory under 300 MB (max RSS of the whole process).

Whole-process wall time (Python's start included) and CPU time (the child's own rusage: what
other load on a shared host does not inflate), medians of --rounds runs; max RSS from
/usr/bin/time when it is there (else from the children's rusage). With `--before REV`, the
same commands by the iolab of that git revision (its src/ taken with `git archive`), on
the store that iolab built (this one reads a copy, brought to its own schema), alternating
with this one's, side by side with the ratio of their medians. Each iolab's sources are
compiled to bytecode first and its processes may read it (PYTHONDONTWRITEBYTECODE
is dropped from their environment), as an installed iolab's are: what is timed is the
report, not Python compiling iolab's 400 modules again (about 1 s of CPU a run). The host's
load average is printed beside each format's figures.

    python3 bench/report_size.py [--setups 4] [--workloads 2500] [--rounds 1] [--db FILE]
                                 [--before REV]
"""

from __future__ import annotations

import argparse
import compileall
import itertools
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if "PYTHONPATH" not in os.environ:  # else: the iolab it names (history_size.py --before)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from iolab.model import (
    Case,
    CaseMetrics,
    DirectionMetrics,
    Origin,
    Plan,
    Result,
    Sample,
    Setup,
    Workload,
)
from iolab.store import Store

TARGETS = {"html": (1.5, "report.html"), "markdown": (3.0, "report.md"), "csv": (None, "r.csv")}
MEMORY_MB = 300.0
FIXTURE = (
    Path(__file__).parent.parent / "tests/fixtures/fio/randread-jsonplus/randread-jsonplus.json"
)
AXES: dict[str, list[Any]] = {
    "ioengine": ["libaio", "io_uring"],
    "rw": ["randrw", "rw"],
    "rwmixread": [0, 30, 50, 70, 100],
    "bs": ["4k", "16k", "64k", "256k", "1m"],
    "iodepth": [1, 4, 16, 64, 256],
    "numjobs": [1, 2, 4, 8, 16],
}
PERCENTILES = ("1", "5", "10", "50", "90", "95", "99", "99.5", "99.9", "99.99")


def workloads(count: int) -> list[Workload]:
    points = itertools.islice(itertools.product(*AXES.values()), count)
    out = []
    for number, values in enumerate(points):
        options = dict(zip(AXES, values, strict=True))
        name = "mix " + " ".join(f"{k}={v}" for k, v in options.items())
        out.append(
            Workload(name, {**options, "runtime": 10, "log_avg_msec": 1000}, tuple(AXES), number)
        )
    return out


def directions(options: dict[str, object], rate: float) -> tuple[DirectionMetrics, ...]:
    share = int(str(options["rwmixread"])) / 100
    size = {"4k": 4096, "16k": 16384, "64k": 65536, "256k": 262144, "1m": 1 << 20}
    block = size[str(options["bs"])]
    out = []
    for direction, part in (("read", share), ("write", 1 - share)):
        if part <= 0:
            continue
        iops = rate * part
        lat = 1e9 / max(rate, 1.0) * int(str(options["iodepth"]))
        pct = {p: lat * (0.5 + float(p) / 60) for p in PERCENTILES}
        out.append(
            DirectionMetrics(
                direction,  # type: ignore[arg-type]
                iops,
                iops * block,
                int(iops * block * 10),
                10_000,
                lat,
                lat * 3,
                pct,
            )
        )
    return tuple(out)


def build(db: Path, setups: int, count: int) -> None:
    rng = random.Random(13)
    raw = FIXTURE.read_text()
    the_setups = tuple(Setup(f"setup-{n}", path=f"/mnt/s{n}") for n in range(setups))
    points = workloads(count)
    plan = Plan("size", "a big sweep", "bench", "bench.toml", "", the_setups, tuple(points))
    results = []
    start = 1_700_000_000.0
    for setup in the_setups:
        speed = rng.uniform(0.5, 2.0)
        for workload in points:
            rate = 20_000 * speed * rng.uniform(0.7, 1.3)
            dirs = directions(dict(workload.options), rate)
            samples = tuple(
                Sample(metric, d.direction, second * 1000, value * rng.uniform(0.9, 1.1))  # type: ignore[arg-type]
                for d in dirs
                for second in range(1, 11)
                for metric, value in (
                    ("iops", d.iops),
                    ("bw", d.bw_bytes),
                    ("lat", d.lat_mean_ns or 0.0),
                )
            )
            metrics = CaseMetrics(dirs, 5.0, 10.0, 10_000, 0)
            result = Result(
                Case(setup, workload, 1),
                "ok",
                start,
                start + 10,
                metrics,
                raw_json=raw,
                samples=samples,
            )
            results.append((result, workload.table))
    environment = {"hostname": "bench", "fio_version": "fio-3.33", "kernel": "6.1.0"}
    with Store(db) as store:
        store.save_import(
            plan, environment, "bench", Origin("import"), results, (start, start + 100_000)
        )


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float  # the child's user + system seconds
    rss: float | None  # MB


def timed(
    args: list[str], cwd: Path, ok: tuple[int, ...] = (0,), env: dict[str, str] | None = None
) -> Timing:
    """Wall and CPU seconds and max RSS in MB of one whole process (`ok`: the exit codes it
    may end with; `env`: its environment, if not this one's)."""
    timer = shutil.which("time") and Path("/usr/bin/time")
    report = cwd / "time.txt"
    prefix = [str(timer), "-f", "%M", "-o", str(report)] if timer else []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(
        [*prefix, sys.executable, "-m", "iolab", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    took = time.perf_counter() - began
    if done.returncode not in ok:
        sys.exit(f"iolab {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if timer:
        return Timing(took, cpu, float(report.read_text().split()[-1]) / 1024)
    return Timing(took, cpu, after.ru_maxrss / 1024 if after.ru_maxrss > before.ru_maxrss else None)


def compiled(env: dict[str, str] | None = None) -> dict[str, str]:
    """An environment in which Python reads (and writes) iolab's bytecode, as an installed
    iolab's processes do."""
    return {k: v for k, v in (env or os.environ).items() if k != "PYTHONDONTWRITEBYTECODE"}


def source_of(revision: str, into: Path) -> Path:
    """The src/ folder of a git revision of this repository, unpacked into `into`."""
    root = Path(__file__).resolve().parent.parent
    packed = subprocess.run(
        ["git", "archive", revision, "src"], cwd=root, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=packed, check=True)
    compileall.compile_dir(into / "src", quiet=1)
    return into / "src"


def before_db(db: Path) -> Path:
    """The store the older iolab reads: its own build where there is one (a newer schema is
    refused by an older iolab), else the same store."""
    own = db.with_suffix(".before.db")
    return own if own.exists() else db


def built(db: Path, setups: int, count: int, before: Path | None) -> None:
    """The store; with `before`, built by that iolab (this script run with its src/) and
    copied, the copy brought to this iolab's schema before anything is timed."""
    if before is None:
        build(db, setups, count)
        return
    own = db.with_suffix(".before.db")
    sizes = ["--setups", str(setups), "--workloads", str(count)]
    subprocess.run(
        [sys.executable, __file__, "--build", str(own), *sizes],
        env={**os.environ, "PYTHONPATH": str(before)},
        check=True,
    )
    shutil.copy(own, db)
    Store(db).close()


def measure(fmt: str, db: Path, cwd: Path, rounds: int, before: Path | None) -> None:
    """One format by this iolab (and, alternating, by `before`'s src/ on the store it built,
    `before_db`): one line each."""
    target, name = TARGETS[fmt]
    args = ["report", "--db", str(db), "--format", fmt, "-o", name]
    old_args = ["report", "--db", str(before_db(db)), "--format", fmt, "-o", name]
    now = compiled()
    then = compiled({**os.environ, "PYTHONPATH": str(before)}) if before is not None else None
    ours: list[Timing] = []
    theirs: list[Timing] = []
    loads = [os.getloadavg()[0]]
    for _ in range(rounds):
        ours.append(timed(args, cwd, env=now))
        if then is not None:
            theirs.append(timed(old_args, cwd, env=then))
    loads.append(os.getloadavg()[0])
    took, cpu = statistics.median(t.wall for t in ours), statistics.median(t.cpu for t in ours)
    rss = max((t.rss for t in ours if t.rss is not None), default=None)
    size = (cwd / name).stat().st_size / 1e6
    line = f"{fmt:<9} {took:6.2f} s wall, {cpu:6.2f} s CPU"
    if target:
        line += f" ({took / target:.2f}, CPU {cpu / target:.2f} of {target:.1f} s)"
    if rss is not None:
        line += f", max RSS {rss:,.0f} MB ({rss / MEMORY_MB:.2f} of {MEMORY_MB:.0f} MB)"
    images = cwd / "report_files"
    extra = f", {len(list(images.iterdir()))} images" if fmt == "markdown" else ""
    print(f"{line}; {size:,.1f} MB written{extra}; load average {min(loads):.1f}-{max(loads):.1f}")
    if theirs:
        old_wall = statistics.median(t.wall for t in theirs)
        old_cpu = statistics.median(t.cpu for t in theirs)
        print(
            f"{'':9} before: {old_wall:6.2f} s wall, {old_cpu:6.2f} s CPU; this over before: "
            f"wall {took / old_wall:.2f}, CPU {cpu / old_cpu:.2f}"
        )
    if fmt == "markdown":
        shutil.rmtree(images, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--setups", type=int, default=4)
    parser.add_argument("--workloads", type=int, default=2500)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--db", help="keep the store here (built if missing)")
    parser.add_argument("--formats", default="html,markdown,csv")
    parser.add_argument("--before", metavar="REV", help="time this git revision's iolab too")
    parser.add_argument("--build", metavar="DB", help=argparse.SUPPRESS)  # by REV's iolab
    args = parser.parse_args()
    if args.build:
        build(Path(args.build), args.setups, args.workloads)
        return
    with tempfile.TemporaryDirectory(prefix="iolab-report-size-") as folder:
        cwd = Path(folder)
        db = Path(args.db).resolve() if args.db else cwd / "size.db"
        before = source_of(args.before, cwd) if args.before else None
        if not db.exists():
            began = time.perf_counter()
            built(db, args.setups, args.workloads, before)
            size = db.stat().st_size / 1e6
            print(
                f"store: {args.setups * args.workloads:,} results, {size:,.0f} MB, built in "
                f"{time.perf_counter() - began:.1f} s"
            )
        print(f"{args.setups * args.workloads:,} results")
        compileall.compile_dir(Path(__file__).resolve().parent.parent / "src", quiet=1)
        for fmt in args.formats.split(","):
            measure(fmt, db, cwd, args.rounds, before)


if __name__ == "__main__":
    main()
