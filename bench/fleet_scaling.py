#!/usr/bin/env python3
"""A fleet's cost: iolab's wall time per case and its processes' peak memory on 1, 8, 32 and
128 fio servers (127.0.1.1 ...), beside one plain `fio --client` process for the same servers
(fio's own way; iolab runs one such client per case, under its keeper).

The job is fio's null engine (no storage: what is left is the client/server machinery), 4k
random reads for --runtime seconds. Each round runs every host count, iolab and plain fio one
after the other, in an order that alternates from round to round (and which of the two goes
first), so that drift of the machine hits both alike. Per host count it prints the mean wall
time per case (iolab's own start and end of each case; plain fio's whole process), iolab's
ratio to plain fio, and the peak memory (the sum of the resident sets of the process tree:
iolab, its keeper and fio's client; plain fio's one process) sampled every 50 ms. Goal:
iolab within 10% of plain fio at 32 and 128 hosts, memory flat in the host count.

    python3 bench/fleet_scaling.py [--rounds 2] [--runtime 3] [--cases 2] [--dir /var/tmp]
        [--counts 1,8,32,128]
"""

from __future__ import annotations

import argparse
import os
import shlex
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

COUNTS = (1, 8, 32, 128)
SAMPLE_S = 0.05
KINDS = ("iolab", "fio --client")
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


def tree_rss(pid: int) -> int:
    """The resident bytes of `pid` and every process below it, from /proc."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        parents[int(entry.name)] = int(fields[1])
        rss[int(entry.name)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    total, todo = 0, [pid]
    while todo:
        one = todo.pop()
        total += rss.get(one, 0)
        todo += [child for child, parent in parents.items() if parent == one]
    return total


def watched(command: list[str], cwd: Path) -> int:
    """Run `command` to its end (it must succeed); its process tree's peak resident bytes."""
    proc = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, tree_rss(proc.pid))
        time.sleep(SAMPLE_S)
    if proc.returncode:
        raise SystemExit(f"{shlex.join(command)} exited with {proc.returncode}")
    return peak


def iolab(work: Path, text: str) -> tuple[list[float], int]:
    """Each case's wall time, as iolab stored its start and end; its peak memory."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    (work / "plan.toml").write_text(text)
    peak = watched([sys.executable, "-m", "iolab", "run", "plan.toml"], work)
    with sqlite3.connect(work / "iolab.db") as con:
        spans = [e - s for s, e in con.execute("SELECT started_at, ended_at FROM cases")]
    return spans, peak


def plain(work: Path, hosts: list[str], runtime: int) -> tuple[float, int]:
    """fio alone, one client process for all the servers: its wall time and peak memory."""
    job = work / "plain.fio"
    job.write_text(f"[plain]\n{JOB}runtime={runtime}\n")
    command = ["fio", "--output-format=json+", f"--output={work / 'plain.json'}"]
    for host in hosts:
        command += [f"--client=ip:{host.replace(':', ',')}", str(job)]
    began = time.perf_counter()
    peak = watched(command, work)
    return time.perf_counter() - began, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--runtime", type=int, default=3)
    parser.add_argument("--cases", type=int, default=2)
    parser.add_argument("--dir", default="/var/tmp")
    parser.add_argument("--counts", default=",".join(map(str, COUNTS)))
    args = parser.parse_args()
    counts = tuple(int(n) for n in args.counts.split(","))
    root = Path(tempfile.mkdtemp(prefix="iolab-bench-fleet-", dir=args.dir))
    hosts, dirs, pids = start_servers(root, max(counts))
    times: dict[tuple[str, int], list[float]] = {(k, n): [] for k in KINDS for n in counts}
    peaks: dict[tuple[str, int], int] = dict.fromkeys(times, 0)
    try:
        for round_no in range(args.rounds):
            for n in counts if round_no % 2 == 0 else tuple(reversed(counts)):
                text = plan(hosts[:n], dirs[:n], args.runtime, args.cases)
                for kind in KINDS if round_no % 2 == 0 else tuple(reversed(KINDS)):
                    if kind == "iolab":
                        spans, peak = iolab(root / f"run-{n}", text)
                        times[kind, n] += spans
                    else:
                        took, peak = plain(root, hosts[:n], args.runtime)
                        times[kind, n].append(took)
                    peaks[kind, n] = max(peaks[kind, n], peak)
    finally:
        for pid in pids:
            os.killpg(pid, signal.SIGKILL)
        shutil.rmtree(root, ignore_errors=True)
    report(times, peaks, counts, args.runtime)


def report(
    times: dict[tuple[str, int], list[float]],
    peaks: dict[tuple[str, int], int],
    counts: tuple[int, ...],
    runtime: int,
) -> None:
    print(f"wall time per case, s (runtime {runtime} s; mean), peak memory MiB; iolab / fio")
    print(f"{'hosts':>6} {'iolab s':>9} {'fio s':>9} {'ratio':>7} {'iolab MiB':>10} {'fio MiB':>9}")
    for n in counts:
        mine, theirs = (statistics.mean(times[k, n]) for k in KINDS)
        print(
            f"{n:>6} {mine:>9.2f} {theirs:>9.2f} {mine / theirs:>7.2f}"
            f" {peaks['iolab', n] / 2**20:>10.0f} {peaks[KINDS[1], n] / 2**20:>9.0f}"
        )


if __name__ == "__main__":
    main()
