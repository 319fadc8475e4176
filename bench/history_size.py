#!/usr/bin/env python3
"""How fast `iolab history` and `iolab check` are on a long history: a plan of 50 cases (2
set-ups x 25 workloads) run 1,000 times, built directly with iolab's Store and model types,
with noise on every figure, a step down at run 700 on one set-up and a slow drift on another
workload. Then the real commands, side by side with the same plan run 100 times: `history`
(text), `history --json` and `check` (the latest run against the one before). Targets:
history at most 5 s and check at most 2 s at 1,000 runs (interactive), and the ratio 1,000 to
100 runs printed, so a step that grows faster than the runs shows.

Whole-process wall time (Python's start included), median of --rounds runs; max RSS from
/usr/bin/time when it is there.

    python3 bench/history_size.py [--runs 1000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from report_size import timed

from iolab.model import Case, CaseMetrics, DirectionMetrics, Origin, Plan, Result, Setup, Workload
from iolab.store import Store

TARGETS = {"history": 5.0, "history --json": 5.0, "check": 2.0}
SETUPS, WORKLOADS = 2, 25
STEP_AT, STEP = 0.7, 0.8  # a 20% drop on set-up 0 from 70% of the runs on


def plan() -> Plan:
    setups = tuple(Setup(f"disk-{n}", path=f"/mnt/d{n}") for n in range(SETUPS))
    workloads = tuple(
        Workload(f"4k randread QD{2**n}", {"rw": "randread", "bs": "4k", "iodepth": 2**n}, (), n)
        for n in range(WORKLOADS)
    )
    return Plan("nightly", "a plan run every night", "bench", "nightly.toml", "", setups, workloads,
                repeat=3)  # fmt: skip


def metrics(rng: random.Random, rate: float) -> CaseMetrics:
    iops = rate * rng.gauss(1.0, 0.03)
    lat = 1e9 / iops
    pct = {"50": lat, "99": lat * 3, "99.9": lat * 5}
    read = DirectionMetrics("read", iops, iops * 4096, int(iops * 4096 * 10), 10_000, lat,
                            lat * 2, pct)  # fmt: skip
    return CaseMetrics((read,), 5.0, 10.0, 10_000, 0)


def build(db: Path, runs: int) -> None:
    rng = random.Random(7)
    the_plan = plan()
    with Store(db) as store:
        for number in range(runs):
            start = 1_700_000_000.0 + number * 86_400
            results = []
            for s, setup in enumerate(the_plan.setups):
                for w, workload in enumerate(the_plan.workloads):
                    rate = 20_000 * (1 + w / 10)
                    if s == 0 and number >= runs * STEP_AT:
                        rate *= STEP
                    if w == 1:
                        rate *= 1 - 0.1 * number / runs  # a slow drift
                    for rep in (1, 2, 3):
                        result = Result(Case(setup, workload, rep), "ok", start, start + 10,
                                        metrics(rng, rate))  # fmt: skip
                        results.append((result, workload.table))
            environment = {"hostname": "lab", "fio_version": "fio-3.33",
                           "kernel": "6.1.0" if number < runs * STEP_AT else "6.1.1"}  # fmt: skip
            store.save_import(the_plan, environment, "bench", Origin("import"), results,
                              (start, start + 3600))  # fmt: skip


def measure(db: Path, cwd: Path, rounds: int) -> dict[str, tuple[float, float | None]]:
    commands = {
        "history": ["history", "--db", str(db)],
        "history --json": ["history", "--json", "--db", str(db)],
        "check": ["check", "--db", str(db)],
    }
    out = {}
    for name, args in commands.items():
        runs = [timed(args, cwd, ok=(0, 4)) for _ in range(rounds)]
        rss = max((m for _, m in runs if m is not None), default=None)
        out[name] = (statistics.median(t for t, _ in runs), rss)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    small = max(2, args.runs // 10)
    with tempfile.TemporaryDirectory(prefix="iolab-history-size-") as folder:
        cwd = Path(folder)
        found = {}
        for runs in (small, args.runs):
            db = cwd / f"h{runs}.db"
            began = time.perf_counter()
            build(db, runs)
            cases = runs * SETUPS * WORKLOADS * 3
            print(f"store: {runs:,} runs x {SETUPS * WORKLOADS} cases x 3 repetitions = "
                  f"{cases:,} results, {db.stat().st_size / 1e6:,.0f} MB, built in "
                  f"{time.perf_counter() - began:.1f} s")  # fmt: skip
            found[runs] = measure(db, cwd, args.rounds)
        for name, target in TARGETS.items():
            took, rss = found[args.runs][name]
            base, _ = found[small][name]
            line = (f"{name:<15} {took:6.2f} s at {args.runs:,} runs ({took / target:.2f} of "
                    f"{target:.0f} s); {base:.2f} s at {small:,} runs: x{took / base:.1f} for "
                    f"x{args.runs / small:.0f} the runs")  # fmt: skip
            if rss is not None:
                line += f"; max RSS {rss:,.0f} MB"
            print(line)


if __name__ == "__main__":
    main()
