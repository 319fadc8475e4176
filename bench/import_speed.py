#!/usr/bin/env python3
"""How fast `iolab import` reads fio's output: 1,000 fio json+ files (copies of a real fixture,
tests/fixtures/fio/randread-jsonplus, each with its own job name, in 4 folders = 4 set-ups)
imported into a new database as one run, by the real command. Target: at most 10 s.

Whole-process wall time (Python's start included), median of --rounds runs, each into a fresh
database; prints the time, files per second and the target's figure over its limit.

    python3 bench/import_speed.py [--files 1000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 10.0
FIXTURE = (
    Path(__file__).parent.parent / "tests/fixtures/fio/randread-jsonplus/randread-jsonplus.json"
)


def make_files(folder: Path, count: int) -> list[Path]:
    """`count` copies of the fixture, job names randread-0000, randread-0001, ..."""
    text = FIXTURE.read_text()
    assert text.count('"jobname" : "randread"') == 1
    paths = []
    for number in range(count):
        where = folder / f"setup-{number % 4}"
        where.mkdir(parents=True, exist_ok=True)
        path = where / f"job-{number:04d}.json"
        path.write_text(
            text.replace('"jobname" : "randread"', f'"jobname" : "randread-{number:04d}"')
        )
        paths.append(path)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    times = []
    with tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder)
        make_files(cwd / "results", args.files)
        for round_ in range(args.rounds):
            db = cwd / f"import-{round_}.db"
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "iolab", "import", "results", "--db", str(db)],
                cwd=cwd,
                capture_output=True,
                text=True,
                check=False,
            )
            times.append(time.perf_counter() - start)
            if (
                done.returncode != 0
                or f"{args.files} cases from {args.files} files" not in done.stdout
            ):
                sys.exit(f"iolab import failed ({done.returncode}): {done.stdout}{done.stderr}")
    took = statistics.median(times)
    verdict = "within" if took <= TARGET_S else "OVER"
    print(f"iolab import of {args.files:,} fio json+ files (4 set-ups, one run)")
    print(
        f"  wall time: {took:.2f} s (median of {args.rounds}: "
        f"{', '.join(f'{t:.2f}' for t in times)})"
    )
    print(f"  rate:      {args.files / took:,.0f} files/s")
    share = took / TARGET_S * 1000 / args.files
    print(f"  target:    {TARGET_S:.0f} s for 1,000 files: {share:.2f} of it, {verdict} the target")


if __name__ == "__main__":
    main()
