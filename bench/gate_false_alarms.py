#!/usr/bin/env python3
"""How often `iolab check` cries wolf on this machine, whether it catches a real slowdown, and
how large a change its history lets it see: a small plan (4k random reads, QD4, 1 s, the
default of one repetition) on a folder of this machine's disk run N times untouched (default
20), `iolab check` after each run; then the same plan with the disk's reads throttled to 80%,
50% and 10% of the untouched runs' median IOPS (the kernel's block cgroup:
blkio.throttle.read_iops_device on cgroup v1, io.max on v2, as tests/test_history.py
throttles), each checked against the untouched runs (`--baseline` the last of them). Prints
each run (its IOPS, p99, whether other load shared the host, check's exit code and the
detectable drop its history reports), the false alarms over the untouched runs (exit 4;
target: at most 1 in 20) and how many were not judged (exit 5), whether each throttle was
caught, and how long it all took. `--load busy` keeps a busy loop on one CPU through every
run, `--load fio` another fio reading the same disk (unthrottled), as on a shared CI runner.
Needs root (the cgroup) and fio.

    python3 bench/gate_false_alarms.py [--runs 20] [--load none|busy|fio] [--folder DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from iolab.analysis import history
from iolab.store import Store

IOLAB = [sys.executable, "-m", "iolab"]
BLKIO = Path("/sys/fs/cgroup/blkio")
UNIFIED = (Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup"))
THROTTLES = (0.8, 0.5, 0.1)  # the share of the untouched median IOPS the disk is held to
SEEN = re.compile(r"iops: .*detects? (?:only )?drops beyond ([0-9.]+)%|iops: .*(detect no drop)")
NEIGHBOUR = """[neighbour]
rw=randread
bs=4k
iodepth=4
ioengine=libaio
direct=1
size=256m
time_based=1
runtime=100000
filename={folder}/neighbour.data
"""
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
    seen: float | None  # the least drop its history detects, in %; None: not said


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


def night(group: Group, folder: Path, run: int, baseline: int | None = None) -> Night:
    done = group.run([*IOLAB, "run", "plan.toml", "--new"], folder)
    if done.returncode != 0:
        raise SystemExit(f"iolab run failed: {done.stderr.strip()}")
    with Store(folder / "iolab.db") as store:
        latest = store.runs()[-1]
        cases = store.case_figures([latest.id])[latest.id]
    found = {s.metric: s.points[-1] for s in history.series([(latest, cases)])}
    against = [] if baseline is None else ["--baseline", str(baseline)]
    checked = subprocess.run(
        [*IOLAB, "check", *against], cwd=folder, capture_output=True, text=True, check=False
    )
    said = (checked.stdout or checked.stderr).splitlines() or ["(nothing)"]
    seen = SEEN.search(checked.stdout)
    return Night(
        run,
        found["iops"].mean,
        found["p99"].mean,
        found["iops"].foreign,
        checked.returncode,
        said[-1],
        None if seen is None else 100.0 if seen.group(2) else float(seen.group(1)),
    )


def neighbours(load: str, folder: Path) -> list[subprocess.Popen[bytes]]:
    """What shares the host through every run: a busy loop on one CPU, or another fio
    reading the same disk."""
    if load == "busy":
        return [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL)]
    if load == "fio":
        (folder / "neighbour.fio").write_text(NEIGHBOUR.format(folder=folder))
        quiet = subprocess.DEVNULL
        # in a session of its own: fio's job runs in a child process, which must end with it
        neighbour = ["fio", str(folder / "neighbour.fio")]
        return [subprocess.Popen(neighbour, stdout=quiet, start_new_session=True)]
    return []


def show(one: Night, label: str) -> None:
    load = "other load" if one.foreign else ""
    seen = f"sees {one.seen:>5.1f}%" if one.seen is not None else "sees   -  "
    print(
        f"{label:<10} run {one.run:>3}  {one.iops:>9,.0f} IOPS  p99 {one.p99_us:>8,.0f} µs  "
        f"{load:<10}  check {one.code}, {seen}: {one.said}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="untouched runs (at least 6)")
    parser.add_argument("--load", choices=("none", "busy", "fio"), default="none")
    parser.add_argument("--folder", type=Path, default=Path("/var/tmp/iolab-gate-bench"))
    given = parser.parse_args()
    if given.runs < 6:
        parser.error("--runs must be at least 6")
    folder = given.folder.resolve()
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "plan.toml").write_text(PLAN.format(folder=folder))
    group = Group(disk_of(folder))
    beside = neighbours(given.load, folder)
    started = time.monotonic()
    try:
        untouched = [night(group, folder, run) for run in range(1, given.runs + 1)]
        for one in untouched:
            show(one, "untouched")
        median = statistics.median(n.iops for n in untouched)
        throttled: list[Night] = []
        for share in THROTTLES:
            group.limit(int(median * share))
            run = len(untouched) + len(throttled) + 1
            throttled.append(night(group, folder, run, baseline=len(untouched)))
            show(throttled[-1], f"{1 - share:.0%} less")
    finally:
        for neighbour in beside:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(neighbour.pid, signal.SIGKILL)  # fio and its job's process
            neighbour.wait()
        group.close()
    took = time.monotonic() - started
    report(given.load, untouched, throttled, median, took)
    shutil.rmtree(folder, ignore_errors=True)


def report(
    load: str, untouched: list[Night], throttled: list[Night], median: float, took: float
) -> None:
    checked = untouched[1:]
    alarms = sum(n.code == 4 for n in checked)
    unjudged = sum(n.code == 5 for n in checked)
    loaded = sum(n.foreign for n in checked)
    seen = [n.seen for n in untouched[5:] if n.seen is not None]
    print(
        f"\nload: {load}; false alarms: {alarms} of {len(checked)} untouched runs checked "
        f"({alarms / len(checked):.1%}; target at most 1 in 20); not judged: {unjudged} "
        f"(4 of them too little history); {loaded} had other load on the host (judged beside it)"
    )
    if seen:
        print(
            f"detectable drop from run 6 on: {min(seen):.1f}% to {max(seen):.1f}% "
            f"(median {statistics.median(seen):.1f}%)"
        )
    for share, one in zip(THROTTLES, throttled, strict=True):
        verdict = "caught (exit 4)" if one.code == 4 else f"not caught (exit {one.code})"
        print(
            f"throttled to {share:.0%} of the untouched median ({median * share:,.0f} IOPS): "
            f"{verdict}{', other load on the host' if one.foreign else ''}"
        )
    print(
        f"{len(untouched) + len(throttled)} runs and checks in {took:.0f} s "
        f"({took / (len(untouched) + len(throttled)):.1f} s each)"
    )


if __name__ == "__main__":
    main()
