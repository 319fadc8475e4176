#!/usr/bin/env python3
"""What `repeat = "auto"` saves: the same 95% interval for less fio time.

Runs one workload (4k randread, QD8) on a test file here, first as the habit has it (3
repetitions of 5 s), then with `repeat = "auto"` and 1 s runs, its target set to the interval
the fixed runs reached. Prints each one's wall time, repetitions and interval, and the ratio
of wall times (auto / fixed) side by side. Rounds alternate the two, so drift hits both.

    python3 bench/repeat_auto.py [--rounds 2] [--dir /var/tmp] [--size 256m]
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from iolab.analysis.stats import relative_half_width

PLAN = """
name = "{name}"
{repeat}
[defaults]
size = "{size}"
runtime = {runtime}
randrepeat = 0
[[setup]]
name = "here"
path = "{path}"
[[workload]]
name = "4k randread QD8"
rw = "randread"
bs = "4k"
iodepth = 8
"""


def measure(
    folder: Path, name: str, repeat: str, runtime: int, size: str
) -> tuple[float, int, float]:
    """(wall seconds, repetitions, relative half-width of the 95% interval)."""
    plan = folder / f"{name}.toml"
    plan.write_text(PLAN.format(name=name, repeat=repeat, size=size, runtime=runtime, path=folder))
    db = folder / f"{name}.db"
    db.unlink(missing_ok=True)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "iolab", "run", str(plan), "--db", str(db)],
        check=True,
        capture_output=True,
    )
    wall = time.perf_counter() - start
    with sqlite3.connect(db) as con:
        iops = [
            r[0]
            for r in con.execute(
                "SELECT sum(m.iops) FROM metrics m JOIN cases c"
                " ON c.id = m.case_id WHERE m.phase = 'measure'"
                " GROUP BY c.id"
            )
        ]
    return wall, len(iops), relative_half_width(iops) or 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--dir", default="/var/tmp")
    parser.add_argument("--size", default="256m")
    args = parser.parse_args()
    rows: list[tuple[str, float, int, float]] = []
    with tempfile.TemporaryDirectory(dir=args.dir) as name:
        folder = Path(name)
        for _ in range(args.rounds):
            fixed = measure(folder, "fixed", "repeat = 3", 5, args.size)
            target = max(fixed[2], 0.005)
            auto_repeat = f'repeat = "auto"\nrepeat_target = "{target * 100:.2f}%"\nrepeat_max = 15'
            auto = measure(folder, "auto", auto_repeat, 1, args.size)
            rows += [("fixed 3 x 5 s", *fixed), ("auto, 1 s runs", *auto)]
    print(f"{'method':<16} {'wall s':>7} {'reps':>5} {'±95% interval':>14}")
    for method, wall, reps, width in rows:
        print(f"{method:<16} {wall:>7.1f} {reps:>5} {width:>13.2%}")
    fixed_wall = statistics.median(r[1] for r in rows if r[0].startswith("fixed"))
    auto_wall = statistics.median(r[1] for r in rows if r[0].startswith("auto"))
    print(f"wall time auto / fixed (medians): {auto_wall / fixed_wall:.2f}")


if __name__ == "__main__":
    main()
