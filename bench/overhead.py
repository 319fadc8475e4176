#!/usr/bin/env python3
"""Does iolab change what fio measures, and what does it add to each case's time?

Default (one case, 4k randread QD32): the same fio job as plain `fio`, then through `iolab
run`, then plain `fio` again, round after round, so that drift of the machine hits both
alike. Per round it prints iolab's IOPS over the mean of the two fio runs around it, and
fio's second run over its first: the noise floor of this machine. Target: iolab/fio within 1%
of 1.00, judged on the 95% interval of the mean ratio. `--engine null` runs fio's null engine
(no device: the lowest-noise target, where a disk's own +-30% cannot hide 1%).

`--matrix`: the 12 cases of issue 47 (read, write, randread, randwrite x iodepth 1, 8, 32;
4k, 64 MiB, 1 s), in one go, round after round, in alternating order: a plain loop of fio
over the same job files (what `iolab show --fio` prints), one `iolab run`, bench-fio (pip
package fio-plot: `--bench-fio PATH`, else the one on PATH or beside this Python; said when
there is none) on the same matrix, and with `--before REV` the `iolab run` of that git
revision (its src/ taken with `git archive`). Per round and as medians it prints each one's
wall time, iolab's extra wall time per case over the fio loop (target at most 0.03 s, laying
out its file included) and each iolab's own figure (`iolab runs`: its wall time less fio's
processes'), with the load average when each round began. Each iolab timed has its bytecode
compiled first, as `pip install` compiles it (where PYTHONDONTWRITEBYTECODE is set, an
editable install would otherwise compile its every module at every start: about 1.5 s a
run here).

    python3 bench/overhead.py [--rounds 8] [--runtime 5] [--size 512m] [--dir /var/tmp]
                              [--engine null] [--matrix [--before REV] [--bench-fio PATH]]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from report_size import source_of  # the src/ of a git revision, unpacked

import iolab
from iolab.analysis.stats import Summary, summarize

PLAN = """
name = "overhead"
[[setup]]
name = "bench"
path = "{path}"
[[workload]]
name = "4k randread QD32"
rw = "randread"
bs = "4k"
iodepth = 32
size = "{size}"
runtime = {runtime}
ioengine = "{engine}"
"""


MATRIX = """
name = "overhead matrix"
[[setup]]
name = "bench"
path = "{path}"
[[workload]]
name = "4k"
rw = ["read", "write", "randread", "randwrite"]
bs = "4k"
iodepth = [1, 8, 32]
size = "{size}"
runtime = {runtime}
"""
MODES = ("read", "write", "randread", "randwrite")
DEPTHS = ("1", "8", "32")
GOAL_S = 0.03
AGREE_S = 0.01  # iolab's own figure and the outside one, a case
ROW = "{:>5}  {:>10}  {:>10}  {:>10}  {:>9}  {:>7}"


def iolab_iops(
    workdir: Path, plan: str = "plan.toml", env: dict[str, str] | None = None
) -> tuple[float, float]:
    db = store_of(workdir, env)
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "iolab", "run", plan, "--db", str(db), "--new"],
        cwd=workdir,
        check=True,
        capture_output=True,
        env=env,
    )
    wall = time.monotonic() - started
    with sqlite3.connect(db) as con:
        (iops,) = con.execute(
            "SELECT m.iops FROM metrics m JOIN cases c ON c.id = m.case_id ORDER BY c.id DESC"
        ).fetchone()
    return float(iops), wall


def own_figure(db: Path) -> float | None:
    """The latest run's own figure a case, as its process stored it (None: not stored)."""
    with sqlite3.connect(db) as con:
        (owner,) = con.execute("SELECT owner FROM runs ORDER BY id DESC").fetchone()
    said = json.loads(owner)
    return said["own_s"] / said["cases"] if "own_s" in said else None


def fio_iops(job: Path, workdir: Path) -> tuple[float, float]:
    started = time.monotonic()
    done = subprocess.run(
        ["fio", "--output-format=json", str(job)], cwd=workdir, check=True, capture_output=True
    )
    wall = time.monotonic() - started
    (workdir / "plain.testfile").unlink(missing_ok=True)
    data = json.loads(done.stdout[done.stdout.find(b"{") :])
    return float(data["jobs"][0]["read"]["iops"]), wall


def verdict(summary: Summary, noise: Summary) -> str:
    """Within 1%, outside it, or too noisy to tell, from the 95% interval of the mean ratio."""
    half = summary.half_width or 0.0
    low, high = summary.mean - half, summary.mean + half
    if low >= 0.99 and high <= 1.01:
        return "within the 1% target (the whole 95% interval is)"
    if high < 0.99 or low > 1.01:
        return "OUTSIDE the 1% target (the whole 95% interval is)"
    floor = noise.half_width or 0.0
    return (
        f"not outside the 1% target; this machine's run-to-run noise (fio vs fio: +-{floor:.2%}) "
        "is too large to confirm it: run more --rounds, or on a quieter device"
    )


def show(label: str, summary: Summary) -> None:
    half = summary.half_width or 0.0
    print(f"{label}: median {summary.median:.4f}, mean {summary.mean:.4f} +- {half:.4f} (95% t)")


def job_files(workdir: Path, plan: str) -> list[Path]:
    """The plan's fio job files as `iolab show --fio` prints them, one per case, on a file of
    their own (so that plain fio and iolab never share one)."""
    shown = subprocess.run(
        [sys.executable, "-m", "iolab", "show", plan, "--fio"],
        cwd=workdir,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    shown = shown.replace(str(workdir / "iolab.testfile"), str(workdir / "plain.testfile"))
    files = []
    for number, section in enumerate(shown.split("# iolab case ")[1:], start=1):
        path = workdir / f"case-{number}.fio"
        path.write_text(section.split("\n", 1)[1])
        files.append(path)
    return files


def fio_loop(jobs: list[Path], workdir: Path) -> float:
    """Plain fio over every job file, one after another, as a shell loop would: wall time.
    Its file is removed after the last, as iolab removes its own: each round lays it out."""
    started = time.monotonic()
    for job in jobs:
        subprocess.run(
            ["fio", "--output-format=json+", f"--output={workdir / 'out.json'}", str(job)],
            cwd=workdir,
            check=True,
            capture_output=True,
        )
    (workdir / "plain.testfile").unlink(missing_ok=True)
    return time.monotonic() - started


def bench_fio_loop(tool: str, workdir: Path, args: argparse.Namespace) -> float:
    """bench-fio over the same matrix (its own job file per case): wall time."""
    out = workdir / "bench-fio"
    started = time.monotonic()
    subprocess.run(
        [
            tool,
            *("--target", str(workdir / "bench-fio.testfile"), "--type", "file"),
            *("--size", args.size.upper(), "--output", str(out), "--block-size", "4k"),
            *("--mode", *MODES, "--iodepth", *DEPTHS, "--numjobs", "1"),
            *("--runtime", str(args.runtime), "--engine", "io_uring", "--direct", "1"),
            *("--time-based", "--create", "--destructive"),
        ],
        cwd=workdir,
        check=True,
        capture_output=True,
    )
    wall = time.monotonic() - started
    shutil.rmtree(out, ignore_errors=True)
    (workdir / "bench-fio.testfile").unlink(missing_ok=True)
    return wall


def store_of(workdir: Path, env: dict[str, str] | None) -> Path:
    """Each iolab's own store: an older one refuses a store a newer schema wrote."""
    return workdir / ("bench.db" if env is None else "bench.before.db")


def contenders(workdir: Path, args: argparse.Namespace) -> dict[str, Callable[[], float]]:
    """Who runs the matrix, by name: each a function of no argument returning its wall time."""
    jobs = job_files(workdir, "matrix.toml")
    found: dict[str, Callable[[], float]] = {
        "fio loop": lambda: fio_loop(jobs, workdir),
        "iolab": lambda: iolab_iops(workdir, "matrix.toml")[1],
    }
    beside = Path(sys.executable).parent / "bench-fio"  # a venv's, not on PATH
    tool = args.bench_fio or shutil.which("bench-fio") or shutil.which(beside)
    if tool:
        found["bench-fio"] = lambda: bench_fio_loop(tool, workdir, args)
    else:
        print("bench-fio: not found (pip install fio-plot, then --bench-fio PATH); left out")
    if args.before:
        before = source_of(args.before, workdir)
        compiled(before)
        env = {**os.environ, "PYTHONPATH": str(before)}
        found[args.before] = lambda: iolab_iops(workdir, "matrix.toml", env)[1]
    return found


def compiled(source: Path) -> None:
    """An iolab's source with its bytecode written, as `pip install` leaves it."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(source)], check=True)


def matrix(workdir: Path, args: argparse.Namespace) -> None:
    (workdir / "matrix.toml").write_text(
        MATRIX.format(path=workdir, size=args.size, runtime=args.runtime)
    )
    compiled(Path(iolab.__file__).parent)
    runners = contenders(workdir, args)
    cases = len(job_files(workdir, "matrix.toml"))
    print(f"{cases} cases, {args.runtime} s each, {args.size}; alternating {', '.join(runners)}")
    walls: dict[str, list[float]] = {name: [] for name in runners}
    owns: dict[str, list[float]] = {n: [] for n in runners if n in ("iolab", args.before)}
    for number in range(1, args.rounds + 1):
        load = os.getloadavg()[0]
        order = list(runners) if number % 2 else list(reversed(runners))
        for name in order:
            walls[name].append(runners[name]())
            if name in owns:
                store = workdir / ("bench.db" if name == "iolab" else "bench.before.db")
                owns[name].append(own_figure(store) or float("nan"))
        plain = walls["fio loop"][-1]
        cells = ", ".join(
            f"{n} {w[-1]:.2f} s ({(w[-1] - plain) / cases:+.3f} s a case)"
            for n, w in walls.items()
            if n != "fio loop"
        )
        print(
            f"round {number} (load {load:.1f}): fio loop {plain:.2f} s, {cells}; "
            f"own figures {', '.join(f'{n} {o[-1]:.3f}' for n, o in owns.items())} s a case"
        )
    summary(walls, owns, cases)
    agreement(walls, owns["iolab"], cases)


def agreement(walls: dict[str, list[float]], owns: list[float], cases: int) -> None:
    """iolab's cost a case seen from outside (its wall over the fio loop's) against its own
    figure (its wall less its fio processes'), round by round: they must agree within
    AGREE_S a case."""
    seen = [(w - p) / cases for w, p in zip(walls["iolab"], walls["fio loop"], strict=True)]
    gaps = [o - s for o, s in zip(owns, seen, strict=True)]
    verdict = "agree" if abs(statistics.median(gaps)) <= AGREE_S else "DO NOT agree"
    print(
        f"iolab's own figure less the outside one: median {statistics.median(gaps):+.3f} s a "
        f"case (rounds: {', '.join(f'{g:+.3f}' for g in gaps)}); {verdict} within {AGREE_S} s"
    )


def summary(walls: dict[str, list[float]], owns: dict[str, list[float]], cases: int) -> None:
    plain = walls["fio loop"]
    print(
        f"median wall: {', '.join(f'{n} {statistics.median(w):.2f} s' for n, w in walls.items())}"
    )
    for name, wall in walls.items():
        if name == "fio loop":
            continue
        extra = summarize([(w - p) / cases for w, p in zip(wall, plain, strict=True)])
        half = extra.half_width or 0.0
        print(
            f"{name} over the fio loop: {extra.median:+.3f} s a case (median; mean "
            f"{extra.mean:+.3f} +- {half:.3f}, 95% t); goal at most {GOAL_S:.3f} s"
        )
    for name, own in owns.items():
        print(f"{name}'s own figure (iolab runs): median {statistics.median(own):.3f} s a case")


def single(workdir: Path, args: argparse.Namespace) -> None:
    (workdir / "plan.toml").write_text(
        PLAN.format(path=workdir, size=args.size, runtime=args.runtime, engine=args.engine)
    )
    job = job_files(workdir, "plan.toml")[0]
    print(
        f"job: 4k randread QD32 ({args.engine}), {args.runtime} s, {args.size}; "
        "rounds of fio, iolab, fio"
    )
    print(ROW.format("round", "fio IOPS", "iolab IOPS", "fio IOPS", "iolab/fio", "fio/fio"))
    ratios, noise, walls = [], [], []
    for number in range(1, args.rounds + 1):
        before, wall_before = fio_iops(job, workdir)
        ours, our_wall = iolab_iops(workdir)
        after, wall_after = fio_iops(job, workdir)
        ratios.append(ours / statistics.fmean([before, after]))
        noise.append(after / before)
        walls.append(our_wall / statistics.fmean([wall_before, wall_after]))
        cells = (f"{x:,.0f}" for x in (before, ours, after))
        print(ROW.format(number, *cells, f"{ratios[-1]:.4f}", f"{noise[-1]:.4f}"))
    show("IOPS iolab / fio (mean of the fio runs around it)", summarize(ratios))
    show("IOPS fio / fio (the noise floor: the same job twice)", summarize(noise))
    print(f"verdict: {verdict(summarize(ratios), summarize(noise))}")
    print(f"whole-process wall time iolab / fio: median {statistics.median(walls):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--runtime", type=int, default=5)
    parser.add_argument("--size", default="512m")
    parser.add_argument("--dir", default="/var/tmp")
    parser.add_argument("--engine", default="auto", help="fio's ioengine (null: no device)")
    parser.add_argument("--matrix", action="store_true", help="per-case overhead, 12 cases")
    parser.add_argument("--before", metavar="REV", help="--matrix: this git revision's iolab too")
    parser.add_argument("--bench-fio", metavar="PATH", help="--matrix: fio-plot's bench-fio")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="iolab-bench-", dir=args.dir))
    try:
        (matrix if args.matrix else single)(workdir, args)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
