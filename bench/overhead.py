#!/usr/bin/env python3
"""Does iolab change what fio measures? One case (4k randread, QD32), iolab vs plain fio.

Runs the same fio job through `iolab run` and through plain `fio`, alternating A B, B A so that
drift of the machine hits both alike, and prints the IOPS ratio of each pair and their median.
Target: the median ratio within 1% of 1.00. Also prints whole-process wall time of each.

    python3 bench/overhead.py [--pairs 5] [--runtime 5] [--dir /var/tmp]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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
"""


ROW = "{:>4}  {:>12}  {:>12}  {:>7}  {:>14}"


ROW = "{:>4}  {:>12}  {:>12}  {:>7}  {:>14}"


def iolab_iops(workdir: Path) -> tuple[float, float]:
    db = workdir / "bench.db"
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "iolab", "run", "plan.toml", "--db", str(db), "--new"],
        cwd=workdir,
        check=True,
        capture_output=True,
    )
    wall = time.monotonic() - started
    with sqlite3.connect(db) as con:
        (iops,) = con.execute(
            "SELECT m.iops FROM metrics m JOIN cases c ON c.id = m.case_id ORDER BY c.id DESC"
        ).fetchone()
    return float(iops), wall


def fio_iops(job: Path, workdir: Path) -> tuple[float, float]:
    started = time.monotonic()
    done = subprocess.run(
        ["fio", "--output-format=json", str(job)], cwd=workdir, check=True, capture_output=True
    )
    wall = time.monotonic() - started
    (workdir / "plain.testfile").unlink(missing_ok=True)
    data = json.loads(done.stdout[done.stdout.find(b"{") :])
    return float(data["jobs"][0]["read"]["iops"]), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--runtime", type=int, default=5)
    parser.add_argument("--size", default="512m")
    parser.add_argument("--dir", default="/var/tmp")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="iolab-bench-", dir=args.dir))
    try:
        (workdir / "plan.toml").write_text(
            PLAN.format(path=workdir, size=args.size, runtime=args.runtime)
        )
        shown = subprocess.run(
            [sys.executable, "-m", "iolab", "show", "plan.toml", "--fio"],
            cwd=workdir,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        job = workdir / "plain.fio"
        job.write_text(
            shown.replace(str(workdir / "iolab.testfile"), str(workdir / "plain.testfile"))
        )
        print(f"job: 4k randread QD32, {args.runtime} s, {args.size}, {args.pairs} pairs")
        print(ROW.format("pair", "iolab IOPS", "fio IOPS", "ratio", "wall iolab/fio"))
        ratios, walls = [], []
        for pair in range(1, args.pairs + 1):
            if pair % 2:  # A B, then B A: neither always runs first
                ours, our_wall = iolab_iops(workdir)
                plain, plain_wall = fio_iops(job, workdir)
            else:
                plain, plain_wall = fio_iops(job, workdir)
                ours, our_wall = iolab_iops(workdir)
            ratios.append(ours / plain)
            walls.append(our_wall / plain_wall)
            cells = (f"{ours:,.0f}", f"{plain:,.0f}", f"{ratios[-1]:.4f}", f"{walls[-1]:.3f}")
            print(ROW.format(pair, *cells))
        median = statistics.median(ratios)
        verdict = "within" if abs(median - 1) <= 0.01 else "OUTSIDE"
        print(
            f"median IOPS ratio iolab/fio: {median:.4f} ({verdict} the 1% target); "
            f"min {min(ratios):.4f} max {max(ratios):.4f}"
        )
        print(f"median whole-process wall time ratio iolab/fio: {statistics.median(walls):.3f}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
