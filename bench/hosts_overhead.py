#!/usr/bin/env python3
"""What running on several hosts costs: wall time per case beyond fio's runtime, with 1, 2, 4
and 8 fio servers on loopback addresses (127.0.0.2 ...), beside the same case run locally.

Each round runs one plan per host count (and one local plan), in an order that alternates
from round to round, so that drift of the machine hits them alike. Per host count it prints
the mean wall time per case (iolab's own start and end of each case), what is beyond the
runtime, and that overhead over the local run's. Whole-process wall times are printed too.

    python3 bench/hosts_overhead.py [--rounds 3] [--runtime 2] [--cases 3] [--dir /var/tmp]
"""

from __future__ import annotations

import argparse
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COUNTS = (1, 2, 4, 8)


def plan(hosts: list[str], dirs: list[Path], runtime: int, cases: int) -> str:
    where = "".join(f'"{h}" = "{d}"\n' for h, d in zip(hosts[1:], dirs[1:], strict=True))
    listed = ", ".join(f'"{h}"' for h in hosts)
    on = f"hosts = [{listed}]\n" if hosts else ""
    table = f"[setup.hosts]\n{where}" if where else ""
    return (
        f'name = "hosts overhead"\n{on}repeat = {cases}\n[[setup]]\nname = "bench"\n'
        f'path = "{dirs[0]}"\n{table}[[workload]]\nrw = "randread"\nsize = "16m"\n'
        f"runtime = {runtime}\n"
    )


def free_port(ip: str) -> int:
    with socket.socket() as probe:
        probe.bind((ip, 0))
        return int(probe.getsockname()[1])


def start_servers(
    root: Path, count: int
) -> tuple[list[str], list[Path], list[subprocess.Popen[bytes]]]:
    hosts, dirs, procs = [], [], []
    for n in range(count):
        ip = f"127.0.0.{2 + n}"
        port = free_port(ip)
        folder = root / f"host{n}"
        folder.mkdir()
        procs.append(
            subprocess.Popen(
                ["fio", f"--server=ip:{ip},{port}"],
                cwd=folder,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        hosts.append(f"{ip}:{port}")
        dirs.append(folder)
    time.sleep(1)
    return hosts, dirs, procs


def one_run(work: Path, text: str) -> tuple[float, list[float]]:
    """Whole-process wall time and each case's wall time (iolab's started/ended)."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    (work / "plan.toml").write_text(text)
    began = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "iolab", "run", "plan.toml"],
        cwd=work,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - began
    with sqlite3.connect(work / "iolab.db") as con:
        spans = [e - s for s, e in con.execute("SELECT started_at, ended_at FROM cases")]
    return wall, spans


def plain_fio(folder: Path, host: str | None, runtime: int) -> float:
    """fio alone, on this machine or as a client of one server: its whole wall time."""
    job = folder / "plain.fio"
    job.write_text(
        f"[plain]\nfilename={folder}/plain.dat\nrw=randread\nsize=16m\n"
        f"direct=1\ntime_based=1\nruntime={runtime}\n"
    )
    client = [f"--client=ip:{host.replace(':', ',')}"] if host else []
    began = time.perf_counter()
    subprocess.run(
        ["fio", "--output-format=json", *client, str(job)],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runtime", type=int, default=2)
    parser.add_argument("--cases", type=int, default=3)
    parser.add_argument("--dir", default="/var/tmp")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="iolab-bench-hosts-", dir=args.dir))
    hosts, dirs, procs = start_servers(root, max(COUNTS))
    local = root / "local"
    local.mkdir()
    spans: dict[int, list[float]] = {n: [] for n in (0, *COUNTS)}
    walls: dict[int, list[float]] = {n: [] for n in (0, *COUNTS)}
    fio_alone: dict[str, list[float]] = {"fio": [], "fio --client": []}
    try:
        for round_no in range(args.rounds):
            order = (0, *COUNTS) if round_no % 2 == 0 else (*reversed(COUNTS), 0)
            for n in order:
                text = plan(hosts[:n], dirs[:n] or [local], args.runtime, args.cases)
                wall, cases = one_run(root / f"run-{n}", text)
                walls[n].append(wall)
                spans[n] += cases
            fio_alone["fio"].append(plain_fio(local, None, args.runtime))
            fio_alone["fio --client"].append(plain_fio(dirs[0], hosts[0], args.runtime))
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait()
        shutil.rmtree(root, ignore_errors=True)
    report(spans, walls, args.runtime)
    print("\nfio alone, the same job, whole process (what client/server costs fio itself):")
    for name, times in fio_alone.items():
        mean = statistics.mean(times)
        print(f"{name:>13}: {mean:.2f} s, {mean - args.runtime:.2f} s beyond the runtime")


def report(spans: dict[int, list[float]], walls: dict[int, list[float]], runtime: int) -> None:
    base = statistics.mean(spans[0]) - runtime
    print(
        f"{'hosts':>6} {'cases':>6} {'s/case':>8} {'beyond runtime':>15} {'vs local':>9}"
        f" {'whole run s':>12}"
    )
    for n in (0, *COUNTS):
        per_case = statistics.mean(spans[n])
        beyond = per_case - runtime
        label = "local" if n == 0 else str(n)
        print(
            f"{label:>6} {len(spans[n]):>6} {per_case:>8.2f} {beyond:>15.2f} "
            f"{beyond / base if base > 0 else float('nan'):>9.2f} "
            f"{statistics.mean(walls[n]):>12.2f}"
        )


if __name__ == "__main__":
    main()
