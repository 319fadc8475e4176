#!/usr/bin/env python3
"""How fast iolab starts: `iolab --help` and a command's `--help` (history, report) beside
`python -c pass` (Python's own start, the floor), run in alternating order, round after round,
as whole processes by the installed `iolab` script. Target: `iolab --help` under 0.2 s.

Prints each one's median wall time over --rounds, its ratio to Python's start and the time
above it, and the same of its CPU time (the child's own user and system time: the steadier
figure on a host shared with other work); `--before REV` also times the iolab of that git
revision (its `src/` taken with `git archive`, run as `python -m iolab` with it first on the
path, and this one the same way, so that the two start alike) and prints this one's medians
over REV's.

    python3 bench/cli_startup.py [--rounds 40] [--before REV]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

TARGET_S = 0.2
ROOT = Path(__file__).parent.parent
SCRIPT = Path(sys.executable).parent / "iolab"
COMMANDS = {
    "--help": ["--help"],
    "history --help": ["history", "--help"],
    "report --help": ["report", "--help"],
}


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """The wall and CPU time of one whole process, which must succeed."""
    cpu, start = _cpu(), time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - start, _cpu() - cpu


def source_of(rev: str, into: Path) -> Path:
    """The `src/` folder of git revision `rev`, written under `into`."""
    archive = subprocess.run(
        ["git", "archive", rev, "src"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def runs(before: Path | None) -> dict[str, list[str] | tuple[list[str], dict[str, str]]]:
    """Each thing timed: its name, and its command line (with its environment where set)."""
    out: dict[str, list[str] | tuple[list[str], dict[str, str]]] = {
        "python -c pass": [sys.executable, "-c", "pass"]
    }
    out.update({f"iolab {name}": [str(SCRIPT), *args] for name, args in COMMANDS.items()})
    if before is not None:
        for label, src in (("this", ROOT / "src"), ("before", before)):
            env = {**os.environ, "PYTHONPATH": str(src)}
            for name, args in COMMANDS.items():
                out[f"{label}: -m iolab {name}"] = ([sys.executable, "-m", "iolab", *args], env)
    return out


def measure(
    todo: dict[str, list[str] | tuple[list[str], dict[str, str]]], rounds: int
) -> dict[str, list[tuple[float, float]]]:
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in todo}
    for round_ in range(rounds):
        names = list(todo) if round_ % 2 == 0 else list(reversed(todo))
        for name in names:
            how = todo[name]
            argv, env = how if isinstance(how, tuple) else (how, None)
            times[name].append(timed(argv, env))
    return times


def medians(times: dict[str, list[tuple[float, float]]], which: int) -> dict[str, float]:
    """Each one's median wall (`which` 0) or CPU (1) time."""
    return {name: statistics.median(t[which] for t in seen) for name, seen in times.items()}


def report(times: dict[str, list[tuple[float, float]]], before: bool) -> None:
    for which, kind in enumerate(("wall", "CPU")):
        median = medians(times, which)
        floor = median["python -c pass"]
        print(f"{kind + ' time, s':<34} {'median':>9} {'x python':>9} {'above':>9}")
        for name, value in median.items():
            print(f"{name:<34} {value:9.3f} {value / floor:9.2f} {value - floor:9.3f}")
        helped = median["iolab --help"]
        verdict = "met" if helped < TARGET_S else "NOT met"
        print(f"iolab --help: {helped:.3f} s of {kind} time, target under {TARGET_S} s: {verdict}")
        for name in COMMANDS if before else ():
            this, then = median[f"this: -m iolab {name}"], median[f"before: -m iolab {name}"]
            print(f"{name}: this over before {this / then:.2f} ({this:.3f} s / {then:.3f} s)")
        print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--before", metavar="REV", help="Also time this git revision's iolab.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        before = source_of(args.before, Path(folder)) if args.before else None
        todo = runs(before)
        for how in todo.values():  # each once, untimed: a broken one stops here, caches warm
            argv, env = how if isinstance(how, tuple) else (how, None)
            timed(argv, env)
        report(measure(todo, args.rounds), before is not None)
    print("load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
