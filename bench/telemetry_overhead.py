#!/usr/bin/env python3
"""Does sampling the telemetry cost IOPS? One case, with and without the sampler, alternating.

The case is fio's null engine (no device: the lowest-noise target there is, and the one
where a sampler stealing CPU would show most), pinned to one CPU, run through iolab's own
runner (`run_step`) once with the telemetry sampler beside it and once without, round after
round, so that drift hits both alike. Prints each round's IOPS and ratio, then the mean ratio
(with / without) and its 95% interval. Target: the cost under 1% (the interval's low end
above 0.99). On a busy machine the interval is wide; the sampler's own CPU time per second
of sampling (one snapshot and its figures, timed over 200 samples) is printed too: the
upper bound of what it can take from fio.

    python3 bench/telemetry_overhead.py [--rounds 8] [--runtime 5] [--cpu 0]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from iolab.analysis.stats import summarize
from iolab.fio import jobfile
from iolab.fio.executor import Local
from iolab.fio.parse import Status
from iolab.model import Case, Result, Setup, Workload
from iolab.runner.campaign import CampaignStep
from iolab.runner.executing import run_step
from iolab.runner.telemetry import Sampler, allowed_cpus, devices_of

COST_SAMPLES = 200


class Quiet:
    def note(self, line: str) -> None: ...
    def case_started(self, index: int, total: int, case: Case, eta_s: float) -> None: ...
    def status(self, status: Status) -> None: ...
    def case_finished(self, result: Result) -> None: ...


def one(step: CampaignStep, job: jobfile.Job, watched: tuple[str, ...] | None) -> float:
    result = run_step(step, job, Local("fio"), Quiet(), None, watched=watched)
    if result.metrics is None:
        raise SystemExit(f"fio failed: {result.error}")
    if watched is not None and result.telemetry is None:
        raise SystemExit("the sampler did not run")
    return result.metrics.total_iops


def sampler_cost(options: dict[str, object], watched: tuple[str, ...]) -> float:
    """The sampler's CPU seconds per sample (each second of a case takes one)."""
    sampler = Sampler(allowed_cpus(options), watched)
    last = sampler._snapshot()
    began = time.process_time()
    for _ in range(COST_SAMPLES):
        now = sampler._snapshot()
        sampler._add(last, now)
        last = now
    return (time.process_time() - began) / COST_SAMPLES


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--runtime", type=int, default=5)
    parser.add_argument("--cpu", default="0")
    args = parser.parse_args()
    options = {
        "ioengine": "null",
        "rw": "randread",
        "bs": "4k",
        "size": "1g",
        "runtime": args.runtime,
        "time_based": 1,
        "cpus_allowed": args.cpu,
        "randrepeat": 0,
    }
    with tempfile.TemporaryDirectory(prefix="iolab-bench-") as where:
        setup, workload = Setup("bench", where), Workload("null", options)
        step = CampaignStep(Case(setup, workload, 1), 0)
        job = jobfile.Job("null", {**options, "filename": str(Path(where) / "f")}, "")
        watched = devices_of([Path(where)])
        cost = sampler_cost(options, watched)
        ratios = []
        for number in range(1, args.rounds + 1):
            first_with = number % 2 == 1  # alternate which goes first
            a = one(step, job, watched if first_with else None)
            b = one(step, job, None if first_with else watched)
            with_, without = (a, b) if first_with else (b, a)
            ratios.append(with_ / without)
            print(
                f"round {number}: with {with_:,.0f} IOPS, without {without:,.0f} IOPS, "
                f"ratio {ratios[-1]:.4f}"
            )
    found = summarize(ratios)
    half = found.half_width or 0.0
    print(
        f"with/without: {found.mean:.4f} ± {half:.4f} (95% interval, {found.n} rounds); "
        f"cost {1 - found.mean:+.2%}; target under 1%: "
        f"{'met' if found.mean - half > 0.99 else 'not shown'}"
    )
    print(f"the sampler's own CPU time: {cost * 1000:.2f} ms per 1 s sample, {cost:.3%} of one CPU")


if __name__ == "__main__":
    main()
