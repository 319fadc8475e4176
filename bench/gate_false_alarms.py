#!/usr/bin/env python3
"""How often `iolab check` cries wolf on this machine, and whether it catches a real slowdown:
a small plan (4k random reads, QD4, 1 s, the default of one repetition) on a folder of this
machine's disk run N times untouched (default 20), `iolab check` after each run; then the
same plan with the disk's reads throttled to 80% and to 50% of the untouched runs' median
IOPS (the kernel's block cgroup: blkio.throttle.read_iops_device on cgroup v1, io.max on v2,
as tests/test_history.py throttles), `iolab check` after each. Prints each run (its IOPS,
p99, whether other load shared the host, check's exit code and first line), the false-alarm
rate over the untouched runs (target: at most 1 in 20), whether each throttle was caught, and
how long it all took. On a shared host most runs may carry foreign-load, which `check` does
not judge: the same figures are then also judged as if every run had been quiet (iolab's gate
on the stored series, load marks dropped), so that the bound's own rates on this machine's
noise show as well. Needs root (the cgroup) and fio.

    python3 bench/gate_false_alarms.py [--runs 20] [--folder /var/tmp/iolab-gate-bench]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from iolab.analysis import gate_verdicts

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from iolab.analysis import history
from iolab.store import Store

IOLAB = [sys.executable, "-m", "iolab"]
BLKIO = Path("/sys/fs/cgroup/blkio")
UNIFIED = (Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup"))
THROTTLES = (0.8, 0.5)  # the share of the untouched median IOPS the disk is held to
PLAN = """name = "gate bench"
description = "4k random reads at QD4 for 1 s, one repetition, checked after every run"
[[setup]]
name = "disk"
path = "{folder}"
[[workload]]
name = "4k randread QD4"
rw = "randread"
bs = "4k"
iodepth = 4
size = "256m"
runtime = 1
time_based = 1
randrepeat = 0
"""


@dataclass(frozen=True)
class Night:
    run: int
    iops: float
    p99_us: float
    foreign: bool
    code: int
    said: str


class Group:
    """A cgroup the runs go in, whose reads from one device can be held to an IOPS limit."""

    def __init__(self, device: str) -> None:
        rdev = os.stat(device).st_rdev
        self.where = f"{os.major(rdev)}:{os.minor(rdev)}"
        if BLKIO.is_dir():
            self.path, self.v1 = BLKIO / f"iolab-bench-{os.getpid()}", True
        else:
            root = next(p for p in UNIFIED if (p / "cgroup.controllers").exists())
            (root / "cgroup.subtree_control").write_text("+io")
            self.path, self.v1 = root / f"iolab-bench-{os.getpid()}", False
        self.path.mkdir()

    def limit(self, iops: int | None) -> None:
        if self.v1:
            limits = self.path / "blkio.throttle.read_iops_device"
            limits.write_text(f"{self.where} {iops or 0}\n")
        else:
            (self.path / "io.max").write_text(f"{self.where} riops={iops or 'max'}\n")

    def run(self, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
        command = f'echo $$ > {self.path / "cgroup.procs"} && exec "$@"'
        return subprocess.run(
            ["sh", "-c", command, "sh", *args], cwd=cwd, capture_output=True, text=True, check=False
        )

    def close(self) -> None:
        self.limit(None)
        self.path.rmdir()


def disk_of(folder: Path) -> str:
    """The block device the folder's filesystem is on (its whole disk where it is a partition)."""
    source = subprocess.run(
        ["findmnt", "-no", "SOURCE", "-T", str(folder)], capture_output=True, text=True, check=True
    ).stdout.strip()
    parent = subprocess.run(
        ["lsblk", "-no", "PKNAME", source], capture_output=True, text=True, check=False
    ).stdout.strip()
    return f"/dev/{parent}" if parent else source


def night(group: Group, folder: Path, run: int) -> Night:
    done = group.run([*IOLAB, "run", "plan.toml", "--new"], folder)
    if done.returncode != 0:
        raise SystemExit(f"iolab run failed: {done.stderr.strip()}")
    with Store(folder / "iolab.db") as store:
        latest = store.runs()[-1]
        cases = store.case_figures([latest.id])[latest.id]
    found = {s.metric: s.points[-1] for s in history.series([(latest, cases)])}
    checked = subprocess.run(
        [*IOLAB, "check"], cwd=folder, capture_output=True, text=True, check=False
    )
    said = (checked.stdout or checked.stderr).splitlines() or ["(nothing)"]
    first = said[0] if run > 1 else "(first run)"
    return Night(
        run, found["iops"].mean, found["p99"].mean, found["iops"].foreign, checked.returncode, first
    )


def as_if_quiet(db: Path, runs: int) -> list[int]:
    """The runs (2 to `runs`) iolab's gate fails when no run's load is held against it: the
    stored series, each point's load marks dropped, judged as `check` judges."""
    with Store(db) as store:
        stored = store.runs()
        read = store.case_figures([r.id for r in stored])
        found = history.series([(r, read[r.id]) for r in stored])
    quiet = [
        history.RunSeries(
            s.setup,
            s.workload,
            s.metric,
            tuple(history.RunPoint(p.run_id, p.started_at, p.values) for p in s.points),
            (),
        )
        for s in found
    ]
    rules = gate_verdicts.Gate(history.DEFAULT_RULES)
    return [
        r
        for r in range(2, runs + 1)
        if any(v.regression for v in gate_verdicts.gate(quiet, r, None, rules))
    ]


def show(one: Night, label: str) -> None:
    load = "other load" if one.foreign else ""
    print(
        f"{label:<10} run {one.run:>3}  {one.iops:>9,.0f} IOPS  p99 {one.p99_us:>8,.0f} µs  "
        f"{load:<10}  check {one.code}: {one.said}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="untouched runs (at least 20)")
    parser.add_argument("--folder", type=Path, default=Path("/var/tmp/iolab-gate-bench"))
    given = parser.parse_args()
    if given.runs < 20:
        parser.error("--runs must be at least 20")
    folder = given.folder.resolve()
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "plan.toml").write_text(PLAN.format(folder=folder))
    group = Group(disk_of(folder))
    started = time.monotonic()
    try:
        untouched = [night(group, folder, run) for run in range(1, given.runs + 1)]
        for one in untouched:
            show(one, "untouched")
        median = statistics.median(n.iops for n in untouched)
        throttled: list[Night] = []
        for share in THROTTLES:
            group.limit(int(median * share))
            throttled.append(night(group, folder, len(untouched) + len(throttled) + 1))
            show(throttled[-1], f"{1 - share:.0%} less")
    finally:
        group.close()
    took = time.monotonic() - started
    checked = untouched[1:]
    alarms = sum(n.code == 4 for n in checked)
    loaded = sum(n.foreign for n in checked)
    print(
        f"\nfalse alarms: {alarms} of {len(checked)} untouched runs checked "
        f"({alarms / len(checked):.1%}; target at most 1 in 20); {loaded} of them had other "
        "load on the host (not judged)"
    )
    for share, one in zip(THROTTLES, throttled, strict=True):
        verdict = "caught (exit 4)" if one.code == 4 else f"not caught (exit {one.code})"
        print(
            f"throttled to {share:.0%} of the untouched median ({median * share:,.0f} IOPS): "
            f"{verdict}{', other load on the host' if one.foreign else ''}"
        )
    failed = as_if_quiet(folder / "iolab.db", len(untouched) + len(throttled))
    false = [r for r in failed if r <= len(untouched)]
    print(
        f"as if every run had been quiet: {len(false)} false alarms in {len(checked)} "
        f"untouched runs ({len(false) / len(checked):.1%}: runs {false or 'none'}); throttles "
        + ", ".join(
            f"{1 - share:.0%} {'caught' if n.run in failed else 'not caught'}"
            for share, n in zip(THROTTLES, throttled, strict=True)
        )
    )
    print(
        f"{len(untouched) + len(throttled)} runs and checks in {took:.0f} s "
        f"({took / (len(untouched) + len(throttled)):.1f} s each)"
    )
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
