#!/usr/bin/env python3
"""Whether `iolab import` is linear in what it reads: the three kinds of input that once grew
faster than their size (a --status-interval stream of fio JSON documents, a published CSV
table, one big fio JSON document), each at 1x, 10x and 100x, imported by the real command into
a new database.

Prints, per kind and size: the wall time; the CPU time (user and system, the child's own
rusage from wait4: on a shared host it is what the import costs, not what others take);
documents (rows, MB) per CPU second beyond a start-up (the same command on one unit of that
kind); the child's peak RSS; the CPU time each further unit cost from the size before (so the
start-up drops out) with its ratio to the first step's, and the peak RSS's ratio to 1x's,
side by side (1.00 is linear). The inputs are generated from real fio output
(tests/fixtures), in a temporary folder:

- stream: the fixture's last --status-interval document, its counters grown each second;
- table: rows of a set-ups-as-columns table (two set-ups), as tests/fixtures/import/published;
- big JSON: one json+ document of one job run as N jobs without group_reporting (fio's JSON of
  numjobs=N), from tests/fixtures/fio/randread-jsonplus.

    python3 bench/import_scaling.py [--base-docs 200] [--base-rows 100] [--base-jobs 40]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).parent.parent
STREAM = ROOT / "tests/fixtures/import/status-interval/status-interval.json"
JSONPLUS = ROOT / "tests/fixtures/fio/randread-jsonplus/randread-jsonplus.json"
SCALES = (1, 10, 100)


@dataclass(frozen=True)
class Kind:
    name: str
    unit: str  # what is counted: documents, rows, MB
    make: Callable[[Path, int], float]  # writes the input of `count`; returns its units


def _documents(text: str) -> list[dict[str, object]]:
    decoder, found, at = json.JSONDecoder(), [], text.find("{")
    while at >= 0:
        doc, end = decoder.raw_decode(text, at)
        found.append(doc)
        at = text.find("{", end)
    return found


def make_stream(path: Path, count: int) -> float:
    """`count` cumulative documents of one job: the fixture's last one, its I/O counters and
    runtime grown by one interval's worth each document."""
    last = _documents(STREAM.read_text())[-1]
    with path.open("w") as out:
        for second in range(1, count + 1):
            doc = copy.deepcopy(last)
            job = doc["jobs"][0]  # type: ignore[index]
            for direction in ("read", "write", "trim"):
                part = job[direction]
                if part["runtime"]:
                    part["runtime"] = second * 1000
                    part["total_ios"] *= second
                    part["io_bytes"] *= second
            out.write(json.dumps(doc, indent=2) + "\n")
    return float(count)


def make_table(path: Path, count: int) -> float:
    """A published table of `count` workloads (rows), two set-ups as columns."""
    lines = ["# generated", "workload,rw,bs,numjobs,metric,SSD A,SSD B"]
    lines += [f"w{n},randread,4k,{1 + n % 64},iops,{1000 + n},{2000 + n}" for n in range(count)]
    path.write_text("\n".join(lines) + "\n")
    return float(count)


def make_big_json(path: Path, count: int) -> float:
    """One fio json+ document holding `count` entries of one job (numjobs without
    group_reporting); its size in MB."""
    text = JSONPLUS.read_text()
    doc = json.loads(text[text.index("{") :])
    doc["jobs"] = [doc["jobs"][0]] * count
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return path.stat().st_size / 1e6


KINDS = {
    "stream": Kind("--status-interval stream", "documents", make_stream),
    "table": Kind("published CSV table", "rows", make_table),
    "big": Kind("one big fio JSON", "MB", make_big_json),
}


@dataclass(frozen=True)
class Measured:
    units: float
    wall_s: float
    cpu_s: float
    peak_mib: float


def imported(path: Path, db: Path) -> Measured:
    """`iolab import PATH` into a new database; its wall time and its own peak RSS."""
    with tempfile.TemporaryFile() as said:
        start = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, "-m", "iolab", "import", str(path), "--db", str(db)],
            stdout=said,
            stderr=subprocess.STDOUT,
        )
        _, status, usage = os.wait4(child.pid, 0)
        took = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            said.seek(0)
            sys.exit(f"iolab import {path} failed: {said.read().decode(errors='replace')}")
    return Measured(0.0, took, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def measure(kind: Kind, base: int, folder: Path) -> tuple[float, list[Measured]]:
    """The start-up (median of 3 imports of 1 unit) and each scale's figures."""
    tiny = folder / "tiny.input"
    kind.make(tiny, 1)
    start = statistics.median(imported(tiny, folder / f"tiny-{n}.db").cpu_s for n in range(3))
    found = []
    for scale in SCALES:
        path = folder / f"{scale}x.input"
        units = kind.make(path, base * scale)
        one = imported(path, folder / f"{scale}x.db")
        found.append(Measured(units, one.wall_s, one.cpu_s, one.peak_mib))
        path.unlink()
    return start, found


def report(kind: Kind, start: float, found: list[Measured]) -> None:
    """A row per scale; "step" is the CPU time per unit between a scale and the one before
    (what each further unit costs, whatever the start-up), its ratio to the first step's
    beside it (1.00: linear), and the peak RSS's ratio to 1x's."""
    unit = kind.unit if kind.unit == "MB" else kind.unit[:-1]
    shown = 1 if kind.unit == "MB" else 0
    print(f"{kind.name} (start-up {start:.2f} CPU s: the same import of one {unit})")
    print(
        f"  {'scale':>5} {kind.unit:>10} {'wall s':>7} {'CPU s':>7} {kind.unit + '/CPU s':>13} "
        f"{'peak RSS':>10} {'step us/' + unit:>16} {'ratio':>6} {'RSS':>6}"
    )
    first_step = 0.0
    for number, (scale, one) in enumerate(zip(SCALES, found, strict=True)):
        rate = one.units / max(one.cpu_s - start, 1e-9)
        step, ratio = "", ""
        if number:
            before = found[number - 1]
            cost = (one.cpu_s - before.cpu_s) / (one.units - before.units) * 1e6
            first_step = first_step or cost
            step, ratio = f"{cost:,.0f}", f"{cost / first_step:.2f}"
        print(
            f"  {scale:>4}x {one.units:>10,.{shown}f} {one.wall_s:>7.2f} {one.cpu_s:>7.2f} "
            f"{rate:>13,.{shown}f} {one.peak_mib:>6.0f} MiB {step:>16} {ratio:>6} "
            f"{one.peak_mib / found[0].peak_mib:>6.2f}"
        )
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-docs", type=int, default=200)
    parser.add_argument("--base-rows", type=int, default=100)
    parser.add_argument("--base-jobs", type=int, default=40)
    parser.add_argument("--only", choices=sorted(KINDS), action="append")
    args = parser.parse_args()
    bases = {"stream": args.base_docs, "table": args.base_rows, "big": args.base_jobs}
    print(
        "iolab import at 1x, 10x and 100x: CPU time per further unit and peak RSS, as ratios "
        "(1.00 is linear)\n"
    )
    for key in args.only or list(KINDS):
        with tempfile.TemporaryDirectory(dir="/var/tmp") as folder:
            start, found = measure(KINDS[key], bases[key], Path(folder))
        report(KINDS[key], start, found)


if __name__ == "__main__":
    main()
