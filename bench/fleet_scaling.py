#!/usr/bin/env python3
"""A fleet's cost: iolab's wall time per case on 1, 8 and 32 fio servers (127.0.1.1 ...),
beside plain fio on the same servers: one `fio --client` process for all of them (fio's own
way), and one `fio --client` process per server started at once (iolab's way, without iolab).

The job is fio's null engine (no storage: what is left is the client/server machinery), 4k
random reads for --runtime seconds. Each round runs every host count in an order that
alternates from round to round, so that drift of the machine hits all alike. Per host count
it prints the mean wall time per case (iolab's own start and end of each case; plain fio's
whole process), and iolab's ratio to each plain fio. Goal: iolab within 10% of plain fio at 32
hosts.

    python3 bench/fleet_scaling.py [--rounds 2] [--runtime 2] [--cases 2] [--dir /var/tmp]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COUNTS = (1, 8, 32)
JOB = "rw=randread\nbs=4k\nioengine=null\nsize=16m\ntime_based=1\n"


def free_port(ip: str) -> int:
    with socket.socket() as probe:
        probe.bind((ip, 0))
        return int(probe.getsockname()[1])


def start_servers(root: Path, count: int) -> tuple[list[str], list[Path], list[int]]:
    hosts, dirs, pids = [], [], []
    for n in range(1, count + 1):
        ip = f"127.0.1.{n}"
        port = free_port(ip)
        folder = root / f"host{n}"
        folder.mkdir()
        proc = subprocess.Popen(
            ["fio", f"--server=ip:{ip},{port}"],
            cwd=folder,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        hosts.append(f"{ip}:{port}")
        dirs.append(folder)
        pids.append(proc.pid)
    for host in hosts:
        address, number = host.split(":")
        while socket.socket().connect_ex((address, int(number))) != 0:
            time.sleep(0.05)
    return hosts, dirs, pids


def plan(hosts: list[str], dirs: list[Path], runtime: int, cases: int) -> str:
    listed = ", ".join(f'"{h}"' for h in hosts)
    where = "".join(f'"{h}" = "{d}"\n' for h, d in zip(hosts[1:], dirs[1:], strict=True))
    options = 'rw = "randread"\nbs = "4k"\nioengine = "null"\nsize = "16m"\ntime_based = 1\n'
    return (
        f'name = "fleet scaling"\nhosts = [{listed}]\nhosts_report = "each"\nrepeat = {cases}\n'
        f'[[setup]]\nname = "bench"\npath = "{dirs[0]}"\n[setup.hosts]\n{where}'
        f"[[workload]]\n{options}runtime = {runtime}\n"
    )


def iolab(work: Path, text: str) -> list[float]:
    """Each case's wall time, as iolab stored its start and end."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    (work / "plan.toml").write_text(text)
    subprocess.run(
        [sys.executable, "-m", "iolab", "run", "plan.toml"],
        cwd=work,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    with sqlite3.connect(work / "iolab.db") as con:
        return [e - s for s, e in con.execute("SELECT started_at, ended_at FROM cases")]


def plain(work: Path, hosts: list[str], runtime: int, each: bool) -> float:
    """fio alone: one client process for all the servers, or one per server at once."""
    job = work / "plain.fio"
    job.write_text(f"[plain]\n{JOB}runtime={runtime}\n")
    clients = [f"--client=ip:{h.replace(':', ',')}" for h in hosts]
    began = time.perf_counter()
    if each:
        procs = [
            subprocess.Popen(
                ["fio", "--output-format=json", c, str(job)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for c in clients
        ]
        for proc in procs:
            proc.wait()
    else:
        command = ["fio", "--output-format=json"]
        for client in clients:
            command += [client, str(job)]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--runtime", type=int, default=2)
    parser.add_argument("--cases", type=int, default=2)
    parser.add_argument("--dir", default="/var/tmp")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="iolab-bench-fleet-", dir=args.dir))
    hosts, dirs, pids = start_servers(root, max(COUNTS))
    kinds = ("iolab", "fio --client, 1 process", "fio --client, 1 per host")
    times: dict[tuple[str, int], list[float]] = {(k, n): [] for k in kinds for n in COUNTS}
    try:
        for round_no in range(args.rounds):
            for n in COUNTS if round_no % 2 == 0 else tuple(reversed(COUNTS)):
                text = plan(hosts[:n], dirs[:n], args.runtime, args.cases)
                times["iolab", n] += iolab(root / f"run-{n}", text)
                times[kinds[1], n].append(plain(root, hosts[:n], args.runtime, each=False))
                times[kinds[2], n].append(plain(root, hosts[:n], args.runtime, each=True))
    finally:
        for pid in pids:
            os.killpg(pid, signal.SIGKILL)
        shutil.rmtree(root, ignore_errors=True)
    report(times, kinds, args.runtime)


def report(times: dict[tuple[str, int], list[float]], kinds: tuple[str, ...], runtime: int) -> None:
    print(f"wall time per case, s (runtime {runtime} s; mean of each), and iolab's ratio")
    print(
        f"{'hosts':>6} " + " ".join(f"{k:>26}" for k in kinds) + f" {'iolab/1 process':>16}"
        f" {'iolab/1 per host':>17}"
    )
    for n in COUNTS:
        means = [statistics.mean(times[k, n]) for k in kinds]
        print(
            f"{n:>6} "
            + " ".join(f"{m:>26.2f}" for m in means)
            + f" {means[0] / means[1]:>16.2f} {means[0] / means[2]:>17.2f}"
        )


if __name__ == "__main__":
    main()
