#!/usr/bin/env python3
"""The lab's two kernels side by side: how long each takes to boot (no disks, to the point
where it runs commands), and how long `iolab run --lab` takes for one md RAID0 case (two
images, 256k chunks, 4k random writes for 2 s), from the command's start to its end, boot
and teardown included. Each round runs every backend once, in an order that alternates from
round to round, so that drift of the machine hits them alike.

    python3 bench/lab_backends.py [--rounds 2] [--backends uml,qemu]

A backend that cannot run here is said, and left out.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from iolab.errors import TargetError
from iolab.targets import lab

PLAN = """name = "md RAID0 in the lab"
[[setup]]
name = "md RAID0 of 2"
devices = ["/dev/sdb", "/dev/sdc"]
raid = "mdadm"
level = 0
chunk = "256k"
[[workload]]
rw = "randwrite"
bs = "4k"
size = "64m"
runtime = 2
time_based = 1
"""


def boot(backend: str, work: Path) -> float:
    os.environ[lab.SETTING] = backend
    folder = Path(tempfile.mkdtemp(prefix="iolab-bench-lab-", dir=work))
    try:
        began = time.monotonic()
        kernel = lab.Kernel(folder, [], cwd=folder)
        kernel.start()
        took = time.monotonic() - began
        print(f"  {backend}: booted in {took:.1f} s ({kernel.backend_words})", flush=True)
        kernel.stop()
        return took
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def raid0_case(backend: str, work: Path) -> float:
    folder = Path(tempfile.mkdtemp(prefix="iolab-bench-run-", dir=work))
    try:
        (folder / "plan.toml").write_text(PLAN)
        began = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "iolab", "run", "plan.toml", "--lab"],
            cwd=folder,
            env={**os.environ, lab.SETTING: backend},
            capture_output=True,
            text=True,
            check=False,
        )
        took = time.monotonic() - began
        if done.returncode != 0:
            raise TargetError(f"{backend}: run --lab failed: {done.stderr.strip()[-300:]}")
        print(f"  {backend}: md RAID0 case, run --lab in {took:.1f} s", flush=True)
        return took
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--backends", default="uml,qemu")
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp"))
    args = parser.parse_args()
    backends = args.backends.split(",")
    boots: dict[str, list[float]] = {b: [] for b in backends}
    runs: dict[str, list[float]] = {b: [] for b in backends}
    for round_ in range(args.rounds):
        order = backends if round_ % 2 == 0 else backends[::-1]
        print(f"round {round_ + 1}: {', '.join(order)}", flush=True)
        for backend in order:
            try:
                boots[backend].append(boot(backend, args.dir))
                runs[backend].append(raid0_case(backend, args.dir))
            except TargetError as error:
                print(f"  {backend}: cannot run here: {error}", flush=True)
    print(f"\n{'backend':10} {'boot s (median)':>16} {'md RAID0 run --lab s':>22}")
    for backend in backends:
        if boots[backend] and runs[backend]:
            boot_s, run_s = statistics.median(boots[backend]), statistics.median(runs[backend])
            print(f"{backend:10} {boot_s:16.1f} {run_s:22.1f}")
    ok = [b for b in backends if boots[b] and runs[b]]
    if len(ok) == 2:
        first, second = ok
        ratio = statistics.median(boots[second]) / statistics.median(boots[first])
        print(f"\n{second} boots in x{ratio:.1f} the time of {first}", end="; ")
        ratio = statistics.median(runs[second]) / statistics.median(runs[first])
        print(f"its md RAID0 case takes x{ratio:.1f} as long")


if __name__ == "__main__":
    main()
