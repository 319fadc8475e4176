#!/usr/bin/env python3
"""How iolab copes with huge sweeps: `iolab show` of 1,000 to 100,000 cases, and the refusal
of a 1,000,000-case plan. Targets: show of 100,000 cases under 2 s; the refusal under 2 s;
expansion linear (time per case flat as the plan grows 100-fold).

Whole-process wall times, median of --rounds runs, the sizes interleaved round by round so
drift of the machine hits them alike. Prints each size's time, its time per case as a ratio
to the smallest plan's (1.00 is linear), and each target's figure over its limit.

    python3 bench/plan_size.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 2.0


def plan_text(cases: int) -> str:
    """One set-up, one workload swept over iodepth x numjobs x bs to `cases` points."""
    depths = min(cases // 100, 100)
    blocks = max(1, cases // (depths * 100))

    def listed(values: range) -> str:
        return ", ".join(str(v) for v in values)

    return (
        '[[setup]]\nname = "here"\npath = "."\n\n[[workload]]\nrw = "randread"\n'
        f"iodepth = [{listed(range(1, depths + 1))}]\nnumjobs = [{listed(range(1, 101))}]\n"
        f"bs = [{listed(range(512, 512 * blocks + 1, 512))}]\n"
    )


def wall(args: list[str], cwd: Path, expect: int) -> float:
    start = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, capture_output=True, check=False)
    took = time.perf_counter() - start
    if done.returncode != expect:
        sys.exit(f"{' '.join(args)}: exit {done.returncode}: {done.stderr.decode()[-300:]}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    iolab = [sys.executable, "-m", "iolab"]
    sizes = (1_000, 10_000, 100_000)
    with tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder)
        for n in (*sizes, 1_000_000):
            (cwd / f"p{n}.toml").write_text(plan_text(n))
        times: dict[str, list[float]] = {}
        for _ in range(rounds):
            times.setdefault("start (--version)", []).append(wall([*iolab, "--version"], cwd, 0))
            for n in sizes:
                took = wall([*iolab, "show", f"p{n}.toml"], cwd, 0)
                times.setdefault(f"show {n:,}", []).append(took)
            took = wall([*iolab, "show", "p1000000.toml"], cwd, 1)
            times.setdefault("refuse 1,000,000", []).append(took)
    median = {name: statistics.median(values) for name, values in times.items()}
    start = median.pop("start (--version)")
    base = (median[f"show {sizes[0]:,}"] - start) / sizes[0]
    print(f"python and iolab start in {start:.2f} s (iolab --version); not counted per case")
    print(f"{'command':<18} {'median s':>9} {'µs per case':>12} {'vs 1,000':>9} {'vs 2 s':>7}")
    for name, seconds in median.items():
        count = int(name.split()[-1].replace(",", ""))
        per_case = (seconds - start) / count
        shown = name.startswith("show")
        ratio = f"{per_case / base:.2f}" if shown else "-"
        target = f"{seconds / TARGET_S:.2f}" if count >= 100_000 else "-"
        micros = f"{per_case * 1e6:.1f}" if shown else "-"
        print(f"{name:<18} {seconds:>9.2f} {micros:>12} {ratio:>9} {target:>7}")
    verdict = all(median[k] < TARGET_S for k in ("show 100,000", "refuse 1,000,000"))
    print(
        f"targets (show 100,000 and refuse 1,000,000 under {TARGET_S:.0f} s): "
        f"{'met' if verdict else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
