#!/usr/bin/env python3
"""Does reading the drives slow a case? The same plan (cases on fio's null engine, no device:
where anything iolab adds shows most) through `iolab run`, with a smartctl on PATH (the
tests' stand-in, tests/fake_smartctl.py: it prints a real Intel DC P4510's recorded output,
through a Python start-up, slower than smartctl itself) and without one, alternating round
after round. Prints per round each one's IOPS (the mean over the cases) and wall time, then
the mean IOPS ratio (with over without) with its 95% interval, the wall time added per case
with its interval, and the time one reading takes.

    python3 bench/drive_overhead.py [--rounds 6] [--cases 6] [--runtime 1]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from iolab.analysis.stats import summarize
from iolab.targets import drive_health

TESTS = Path(__file__).resolve().parents[1] / "tests"  # the stand-in smartctl lives there

PLAN = """
name = "drive overhead"
[[setup]]
name = "bench"
path = "{path}"
[[workload]]
rw = "randread"
bs = "4k"
iodepth = {depths}
size = "64m"
runtime = {runtime}
ioengine = "null"
"""


def run_once(workdir: Path, env: dict[str, str]) -> tuple[float, float, int]:
    """(mean IOPS over the cases, wall seconds, cases) of one `iolab run`."""
    db = workdir / f"bench-{time.monotonic_ns()}.db"
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "iolab", "run", "plan.toml", "--db", str(db)],
        cwd=workdir,
        check=True,
        capture_output=True,
        env=env,
    )
    wall = time.monotonic() - started
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT m.iops FROM metrics m").fetchall()
        warned = con.execute("SELECT warnings FROM cases").fetchall()
    db.unlink()
    assert not any("drive-" in (w or "") for (w,) in warned), "the fake drive does not move"
    return sum(r[0] for r in rows) / len(rows), wall, len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--cases", type=int, default=6)
    parser.add_argument("--runtime", type=int, default=1)
    args = parser.parse_args()
    sys.path.insert(0, str(TESTS))
    import fake_smartctl

    workdir = Path(tempfile.mkdtemp(prefix="iolab-drive-bench-", dir="/var/tmp"))
    try:
        depths = json.dumps([2**n for n in range(args.cases)])
        (workdir / "target").mkdir()
        plan = PLAN.format(path=workdir / "target", depths=depths, runtime=args.runtime)
        (workdir / "plan.toml").write_text(plan)
        bare = dict(os.environ)
        bare["PATH"] = ":".join(
            p for p in bare["PATH"].split(":") if not (Path(p) / "smartctl").exists()
        )
        read = {**bare, **fake_smartctl.install(workdir / "bin", workdir / "smart.json")}
        read["PATH"] = f"{workdir / 'bin'}:{bare['PATH']}"
        ratios, added = [], []
        print(f"{'round':>5}  {'IOPS read':>12}  {'IOPS not':>12}  {'wall read':>9}  {'not':>7}")
        for number in range(1, args.rounds + 1):
            iops_r, wall_r, cases = run_once(workdir, read)
            iops_n, wall_n, _ = run_once(workdir, bare)
            ratios.append(iops_r / iops_n)
            added.append((wall_r - wall_n) / cases)
            print(
                f"{number:>5}  {iops_r:>12,.0f}  {iops_n:>12,.0f}  {wall_r:>8.2f}s  {wall_n:>6.2f}s"
            )
        os.environ.update(read)
        started = time.monotonic()
        drive_health.reading(["sda"], 0.0)
        one = time.monotonic() - started
        ratio, extra = summarize(ratios), summarize(added)
        print(
            f"IOPS with the drives read / without: {ratio.mean:.3f} "
            f"(95% CI {ratio.low or 0:.3f}-{ratio.high or 0:.3f}; read between cases)"
        )
        print(
            f"wall time added per case: {extra.mean:+.3f} s "
            f"(95% CI {extra.low or 0:+.3f} to {extra.high or 0:+.3f}); one reading: {one:.3f} s"
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
