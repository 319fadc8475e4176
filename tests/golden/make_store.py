"""Builds the golden store with real fio, and renders the snapshots the golden tests compare.

    python tests/golden/make_store.py            # new store.db (about 2 minutes), snapshots
    python tests/golden/make_store.py --render   # snapshots only, from the committed store.db

The store holds two runs of one plan (two set-ups, a numjobs sweep and a 128k read,
3 repetitions, samples every 500 ms, baseline "one"), so that every table, chart and
statistic has real data. Re-render only on purpose: the tests compare byte for byte.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
COMMITTED = HERE / "store.db"
# What tests read: a copy, since opening a store of an older schema upgrades it in place.
STORE = Path(tempfile.mkdtemp(prefix="iolab-golden-")) / "store.db"
shutil.copy(COMMITTED, STORE)
WORK = Path("/var/tmp/iolab-golden")
PLAN = """
name = "golden"
description = "two set-ups, a jobs sweep and a 128k read, 3 repetitions, samples"
repeat = 3

[defaults]
runtime = 2
size = "8m"
log_avg_msec = 500

[[setup]]
name = "one"
path = "{work}/one"

[[setup]]
name = "two"
path = "{work}/two"

[[workload]]
name = "rand"
rw = "randread"
bs = "4k"
numjobs = [1, 2]

[[workload]]
name = "seq"
rw = "read"
bs = "128k"

[report]
baseline = "one"
"""

# name of the snapshot file -> the iolab command that renders it ({out}: a scratch folder)
SNAPSHOTS: dict[str, tuple[str, ...]] = {
    "report.md": ("report", "1", "--format", "markdown", "-o", "{out}/report.md"),
    "results.csv": ("report", "1", "--format", "csv", "-o", "{out}/results.csv"),
    "latency.csv": ("report", "1", "--charts", "none", "--export", "{out}/tables"),
    "environment.csv": ("report", "1", "--charts", "none", "--export", "{out}/tables"),
    "compare.md": ("compare", "1", "2", "--format", "markdown", "-o", "{out}/compare.md"),
    "comparison.csv": ("compare", "1", "2", "--format", "csv", "-o", "{out}/comparison.csv"),
}
WRITTEN = {"latency.csv": "tables/latency.csv", "environment.csv": "tables/environment.csv"}


def iolab(*args: str, cwd: Path, env: dict[str, str] | None = None) -> None:
    subprocess.run([sys.executable, "-m", "iolab", *args], cwd=cwd, check=True, env=env)


def render(store: Path, out: Path) -> dict[str, str]:
    """Every snapshot, rendered from `store` into `out` (in a far-off time zone, to show that
    nothing depends on it): snapshot name -> text."""
    env = {**os.environ, "TZ": "Pacific/Kiritimati"}
    done: set[tuple[str, ...]] = set()
    for command in SNAPSHOTS.values():
        args = tuple(a.format(out=out) for a in command)
        if args not in done:
            iolab(*args, "--db", str(store), cwd=out, env=env)
            done.add(args)
    return {name: (out / WRITTEN.get(name, name)).read_text() for name in SNAPSHOTS}


def build() -> None:
    shutil.rmtree(WORK, ignore_errors=True)
    for name in ("one", "two"):
        (WORK / name).mkdir(parents=True)
    (WORK / "plan.toml").write_text(PLAN.format(work=WORK))
    COMMITTED.unlink(missing_ok=True)
    iolab("run", "plan.toml", "--db", str(COMMITTED), cwd=WORK)
    iolab("run", "plan.toml", "--db", str(COMMITTED), "--new", cwd=WORK)
    with sqlite3.connect(COMMITTED) as db:
        db.execute("VACUUM")
    shutil.rmtree(WORK, ignore_errors=True)


def main() -> None:
    if "--render" not in sys.argv[1:]:
        build()
    out = WORK / "render"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    shutil.copy(COMMITTED, STORE)
    for name, text in render(STORE, out).items():
        (HERE / name).write_text(text)
    shutil.rmtree(WORK, ignore_errors=True)
    size = COMMITTED.stat().st_size // 1024
    print(f"{COMMITTED} ({size} KiB) and {len(SNAPSHOTS)} snapshots written")


if __name__ == "__main__":
    main()
