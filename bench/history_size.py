#!/usr/bin/env python3
"""How fast `iolab history` and `iolab check` are on a long history: a plan of 50 cases (2
set-ups x 25 workloads) run 1,000 times, built directly with iolab's Store and model types,
with noise on every figure, a step down at run 700 on one set-up and a slow drift on another
workload. Then the real commands, side by side with the same plan run 100 times: `history`
by its default output (each series' latest runs and every change), `history --all` (every
run), `history --json` and `check` (the latest run against the one before). Nothing is kept
in the store: each command derives what it shows from the runs. Targets at 1,000 runs:
history at most 1 s (interactive), --all at most 5 s, --json and check at most 2 s; and the
ratio 1,000 to 100 runs printed, so a step that grows faster than the runs shows.

Whole-process wall and CPU time (Python's start included), median of --rounds runs; max RSS
from /usr/bin/time when it is there. Side by side in one run, as ratios: `history` by its
default output against `--all`, and against a process that only reads what it reads (Python
started, iolab's store imported, `Store.point_figures` of the plan's runs: the floor of any
history that reads each figure); in this process, where a history's CPU goes (the read, the
points, the change points, the standings, the steps and the text; each a share of the whole);
and with `--before REV`, the same commands by the iolab of that git revision (its src/ taken
with `git archive`, its store built by it; an iolab that kept its plan's history in the store,
as `iolab run` left it, is timed so and, as "history, derived", on a copy with nothing kept),
alternating with this one's, and their ratio.

    python3 bench/history_size.py [--runs 1000] [--rounds 3] [--before REV]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
if "PYTHONPATH" not in os.environ:  # else: an older iolab's, building its own store
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from report_size import Timing, source_of, timed

from iolab.model import Case, CaseMetrics, DirectionMetrics, Origin, Plan, Result, Setup, Workload
from iolab.store import Store

DERIVED = "history, derived"  # an iolab that kept histories, on a store with none kept
TARGETS = {"history": 1.0, "history --all": 5.0, "history --json": 2.0, "check": 2.0}
SETUPS, WORKLOADS = 2, 25
STEP_AT, STEP = 0.7, 0.8  # a 20% drop on set-up 0 from 70% of the runs on


def plan() -> Plan:
    setups = tuple(Setup(f"disk-{n}", path=f"/mnt/d{n}") for n in range(SETUPS))
    workloads = tuple(
        Workload(f"4k randread QD{2**n}", {"rw": "randread", "bs": "4k", "iodepth": 2**n}, (), n)
        for n in range(WORKLOADS)
    )
    return Plan(
        "nightly",
        "a plan run every night",
        "bench",
        "nightly.toml",
        "",
        setups,
        workloads,
        repeat=3,
    )


def metrics(rng: random.Random, rate: float) -> CaseMetrics:
    iops = rate * rng.gauss(1.0, 0.03)
    lat = 1e9 / iops
    pct = {"50": lat, "99": lat * 3, "99.9": lat * 5}
    read = DirectionMetrics(
        "read", iops, iops * 4096, int(iops * 4096 * 10), 10_000, lat, lat * 2, pct
    )
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
                        result = Result(
                            Case(setup, workload, rep), "ok", start, start + 10, metrics(rng, rate)
                        )
                        results.append((result, workload.table))
            environment = {
                "hostname": "lab",
                "fio_version": "fio-3.33",
                "kernel": "6.1.0" if number < runs * STEP_AT else "6.1.1",
            }
            store.save_import(
                the_plan, environment, "bench", Origin("import"), results, (start, start + 3600)
            )


Timings = dict[str, tuple[float, float, float | None]]  # wall s, CPU s, max RSS MB
READ = "read alone"  # a process that only reads the points a history reads
READING = """
import sys
from iolab.store import Store
with Store(sys.argv[1]) as store:
    store.point_figures([r.id for r in store.runs()])
"""


def built_by(source: Path, db: Path, runs: int) -> None:
    """The store, built by the iolab whose src/ is `source` (this script, run with it)."""
    subprocess.run(
        [sys.executable, __file__, "--build", str(db), "--runs", str(runs)],
        env={**os.environ, "PYTHONPATH": str(source)},
        check=True,
    )


def kept_by(source: Path, db: Path) -> None:
    """The history kept as an older iolab's `iolab run` kept it, if that iolab keeps one."""
    subprocess.run(
        [sys.executable, __file__, "--keep", str(db)],
        env={**os.environ, "PYTHONPATH": str(source)},
        check=False,  # an iolab that keeps nothing has no keep_history
        capture_output=True,
    )


def measure(db: Path, cwd: Path, rounds: int, before: Path | None) -> tuple[Timings, Timings]:
    """Each command's median wall time and max RSS, by this iolab and (alternating with it)
    by the one whose src/ is `before`, on the store it built (`.before.db`, its history kept
    when it keeps one; `.before.fresh.db`, nothing kept)."""
    mine = {name: name.split() for name in TARGETS}
    theirs = {name: name.split() for name in (*TARGETS, DERIVED) if name != "history --all"}
    theirs[DERIVED] = ["history"]  # an older iolab's history shows every run
    then = {**os.environ, "PYTHONPATH": str(before)} if before is not None else None
    mine[READ] = ["-c", READING, str(db)]  # run by Python, not iolab: see timed_python
    now: Timings = {}
    old: Timings = {}
    for name in {**mine, **theirs}:
        runs, earlier = [], []
        for _ in range(rounds):
            if name == READ:
                runs.append(timed_python(mine[name], cwd))
            elif name in mine:
                runs.append(timed([*mine[name], "--db", str(db)], cwd, ok=(0, 4, 5)))
            if then is not None and name in theirs:
                store = db.with_suffix(".before.fresh.db" if name == DERIVED else ".before.db")
                args = [*theirs[name], "--db", str(store)]
                earlier.append(timed(args, cwd, ok=(0, 4, 5), env=then))
        for into, found in ((now, runs), (old, earlier)):
            if found:
                rss = max((t.rss for t in found if t.rss is not None), default=None)
                wall, cpu = (
                    statistics.median(t.wall for t in found),
                    statistics.median(t.cpu for t in found),
                )
                into[name] = (wall, cpu, rss)
    return now, old


def timed_python(args: list[str], cwd: Path) -> Timing:
    """Wall and CPU seconds of `python args` (RSS not measured)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    subprocess.run([sys.executable, *args], cwd=cwd, check=True, capture_output=True)
    took = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return Timing(took, cpu, None)


STAGES = ("read", "points", "change points", "standings", "steps", "text")


def in_process(db: Path, rounds: int) -> dict[str, float]:
    """Where `iolab history`'s CPU goes, in this process (median CPU seconds of `rounds`):
    the store read, the points made of it, each series' change points, its standings, its
    steps, and the default text. The same functions the command calls, one stage at a time
    (Python's cyclic collector paused, as the command pauses it)."""
    from iolab.analysis import history  # this iolab's (not needed to build a store)
    from iolab.app.base import collector_paused
    from iolab.report.text import history_text

    took: dict[str, list[float]] = {stage: [] for stage in STAGES}
    with collector_paused():  # as `iolab history` derives
        for _ in range(rounds):
            clock = time.process_time()

            def lap(stage: str) -> None:
                nonlocal clock
                now = time.process_time()
                took[stage].append(now - clock)
                clock = now

            with Store(db) as store:
                runs = store.runs()
                read = store.point_figures([r.id for r in runs])
            lap("read")
            found = history.series_of_points(runs, read, marks=False)  # the points alone
            lap("points")
            facts = {r.id: r.environment for r in runs}
            changes = [history.run_changes(s.points, facts) for s in found]
            lap("change points")
            judged = [history.standings(s.points, c) for s, c in zip(found, changes, strict=True)]
            lap("standings")
            steps = [
                history.steps_of(j, s.metric, facts) for s, j in zip(found, judged, strict=True)
            ]
            lap("steps")
            series = [
                dataclasses.replace(s, steps=t, changes=c)
                for s, t, c in zip(found, steps, changes, strict=True)
            ]
            history_text.history("nightly", runs, series)
            lap("text")
    return {stage: statistics.median(took[stage]) for stage in STAGES}


def keep_history(db: Path) -> None:
    """The store as an iolab that kept histories left it after `iolab run` (run by it)."""
    from iolab.app import gate  # an older iolab's, which has it

    with Store(db) as store:
        gate.keep_history(store, str(db), "nightly")  # type: ignore[attr-defined]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", metavar="REV", help="time this git revision's iolab too")
    parser.add_argument("--build", metavar="DB", help=argparse.SUPPRESS)  # by REV's iolab
    parser.add_argument("--keep", metavar="DB", help=argparse.SUPPRESS)  # by REV's iolab
    args = parser.parse_args()
    if args.build:
        build(Path(args.build), args.runs)
        return
    if args.keep:
        keep_history(Path(args.keep))
        return
    small = max(2, args.runs // 10)
    with tempfile.TemporaryDirectory(prefix="iolab-history-size-") as folder:
        cwd = Path(folder)
        before = source_of(args.before, cwd) if args.before else None
        found, old, stages = {}, {}, {}
        for runs in (small, args.runs):
            db = cwd / f"h{runs}.db"
            began = time.perf_counter()
            if before is None:
                build(db, runs)
            else:  # by the older iolab, whose schema this one upgrades (a copy of its own)
                built_by(before, db.with_suffix(".before.db"), runs)
                shutil.copy(db.with_suffix(".before.db"), db)
                shutil.copy(db.with_suffix(".before.db"), db.with_suffix(".before.fresh.db"))
                kept_by(before, db.with_suffix(".before.db"))
            cases = runs * SETUPS * WORKLOADS * 3
            print(
                f"store: {runs:,} runs x {SETUPS * WORKLOADS} cases x 3 repetitions = "
                f"{cases:,} results, {db.stat().st_size / 1e6:,.0f} MB, built in "
                f"{time.perf_counter() - began:.1f} s"
            )
            Store(db).close()  # the schema as this iolab has it, before anything is timed
            found[runs], old[runs] = measure(db, cwd, args.rounds, before)
            stages[runs] = in_process(db, args.rounds)
        report(args.runs, small, found, old, stages, args.before)


def report(
    runs: int,
    small: int,
    found: dict[int, Timings],
    old: dict[int, Timings],
    stages: dict[int, dict[str, float]],
    before: str | None,
) -> None:
    for name, target in TARGETS.items():
        took, cpu, rss = found[runs][name]
        base = found[small][name][0]
        line = (
            f"{name:<16} {took:6.2f} s wall, {cpu:5.2f} s CPU at {runs:,} runs ({took / target:.2f}"
            f" of {target:.0f} s); {base:.2f} s at {small:,} runs: x{took / base:.1f} for "
            f"x{runs / small:.0f} the runs"
        )
        if rss is not None:
            line += f"; max RSS {rss:,.0f} MB"
        for theirs in ("history", DERIVED) if name in ("history", "history --all") else (name,):
            if theirs in old.get(runs, {}):
                then, then_cpu, then_rss = old[runs][theirs]
                line += f"\n{'':16} {before} {theirs}: {then:6.2f} s wall, {then_cpu:5.2f} s CPU"
                line += f", max RSS {then_rss:,.0f} MB" if then_rss is not None else ""
                line += f"; now over then: {took / then:.2f} wall, {cpu / then_cpu:.2f} CPU"
        print(line)
    for count in (small, runs):
        mine = found[count]
        (wall, cpu, _), (every, every_cpu, _) = mine["history"], mine["history --all"]
        read, read_cpu, _ = mine[READ]
        print(
            f"at {count:,} runs, side by side: history over --all {wall / every:.2f} wall, "
            f"{cpu / every_cpu:.2f} CPU; over a process that only reads its points "
            f"({read:.2f} s wall, {read_cpu:.2f} s CPU) {wall / read:.2f} wall, "
            f"{cpu / read_cpu:.2f} CPU"
        )
        spent = stages[count]
        whole = sum(spent.values())
        shares = ", ".join(
            f"{stage} {spent[stage]:.2f} ({spent[stage] / whole:.0%})" for stage in STAGES
        )
        print(f"{'':16} in this process, CPU s of {whole:.2f}: {shares}")


if __name__ == "__main__":
    main()
