"""Builds the golden store with real fio, and renders the snapshots the golden tests compare.

    python tests/golden/make_store.py            # new store.db (about 2 minutes), snapshots
    python tests/golden/make_store.py --render   # snapshots only, from the committed stores
    python tests/golden/make_store.py --devices  # new devices.db (root: loop devices), snapshots
    python tests/golden/make_store.py --cdm      # new cdm.db (the crystaldiskmark preset)

store.db holds two runs of one plan (two set-ups, a numjobs sweep and a 128k read,
3 repetitions, samples every 500 ms, baseline "one"), so that every table, chart and
statistic has real data. devices.db holds two runs of a plan on loop devices (xfs on one,
btrfs raid1 over two; warm-up by ramp_time, 2 repetitions, samples), so that the recorded
environment (xfs_info, the device stack, the command log, UUIDs that differ between runs)
is real. cdm.db holds one run of the crystaldiskmark preset, shortened (3 passes of 1 s over
16 MiB). Re-render only on purpose: the tests compare byte for byte.
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
# What tests read: copies, since opening a store of an older schema upgrades it in place.
COPIES = Path(tempfile.mkdtemp(prefix="iolab-golden-"))
STORE = COPIES / "store.db"
DEVICES = COPIES / "devices.db"
CDM = COPIES / "cdm.db"
for _name in ("store.db", "devices.db", "cdm.db"):
    if (HERE / _name).exists():
        shutil.copy(HERE / _name, COPIES / _name)
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
DEVICES_PLAN = """
name = "devices"
description = "xfs on one device, btrfs raid1 over two; warm-up, 2 repetitions, samples"
repeat = 2

[defaults]
runtime = 2
ramp_time = 1
size = "32m"
log_avg_msec = 500

[[setup]]
name = "xfs"
devices = ["{dev0}"]
filesystem = "xfs"
mount_options = "noatime"

[[setup]]
name = "btrfs raid1"
devices = ["{dev0}", "{dev1}"]
raid = "btrfs"
level = "raid1"

[[workload]]
name = "mixed"
rw = "randrw"
rwmixread = 70
bs = "4k"
iodepth = 4

[[workload]]
name = "sync writes"
rw = "write"
bs = "4k"
fsync = 1
"""

# name of the snapshot file -> the iolab command that renders it ({out}: a scratch folder;
# --db is the store the name starts with: devices-*, cdm-*, else store.db)
SNAPSHOTS: dict[str, tuple[str, ...]] = {
    "report.md": ("report", "1", "--format", "markdown", "-o", "{out}/report.md"),
    "results.csv": ("report", "1", "--format", "csv", "-o", "{out}/results.csv"),
    "latency.csv": ("report", "1", "--charts", "none", "--export", "{out}/tables"),
    "environment.csv": ("report", "1", "--charts", "none", "--export", "{out}/tables"),
    "compare.md": ("compare", "1", "2", "--format", "markdown", "-o", "{out}/compare.md"),
    "comparison.csv": ("compare", "1", "2", "--format", "csv", "-o", "{out}/comparison.csv"),
    "report.txt": ("report", "1", "--baseline", "one", "-o", "{out}/report.txt"),
    "compare.txt": ("compare", "1", "2", "-o", "{out}/compare.txt"),
    "devices-report.md": ("report", "1", "--format", "markdown", "-o", "{out}/devices-report.md"),
    "devices-compare.md": ("compare", "1", "2", "--format", "markdown", "-o", "{out}/dc.md"),
    "devices-compare.txt": ("compare", "1", "2", "-o", "{out}/devices-compare.txt"),
    "cdm-report.md": ("report", "1", "--format", "markdown", "-o", "{out}/cdm-report.md"),
    "cdm-report.txt": ("report", "1", "-o", "{out}/cdm-report.txt"),
    "cdm-results.csv": ("report", "1", "--format", "csv", "-o", "{out}/cdm-results.csv"),
}
WRITTEN = {
    "latency.csv": "tables/latency.csv",
    "environment.csv": "tables/environment.csv",
    "devices-compare.md": "dc.md",
}


def store_of(name: str) -> str:
    """The store a snapshot is rendered from."""
    for prefix in ("devices", "cdm"):
        if name.startswith(f"{prefix}-"):
            return f"{prefix}.db"
    return "store.db"


def iolab(*args: str, cwd: Path, env: dict[str, str] | None = None) -> None:
    subprocess.run([sys.executable, "-m", "iolab", *args], cwd=cwd, check=True, env=env)


def render(store: Path, out: Path) -> dict[str, str]:
    """Every snapshot, rendered from `store` (store.db; the others beside it) into `out` (in a
    far-off time zone, to show that nothing depends on it): snapshot name -> text."""
    env = {**os.environ, "TZ": "Pacific/Kiritimati"}
    done: set[tuple[str, ...]] = set()
    for name, command in SNAPSHOTS.items():
        args = (*(a.format(out=out) for a in command), "--db", str(store.parent / store_of(name)))
        if args not in done:
            iolab(*args, cwd=out, env=env)
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


def loop_device(image: Path, mib: int) -> str:
    with image.open("wb") as handle:
        handle.truncate(mib * 1024 * 1024)
    done = subprocess.run(
        ["losetup", "--find", "--show", str(image)], check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def build_devices() -> None:
    """Two runs of DEVICES_PLAN on two fresh loop devices (root), which are then removed."""
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    devs = [loop_device(WORK / f"disk{n}.img", 320) for n in range(2)]
    db = HERE / "devices.db"
    db.unlink(missing_ok=True)
    try:
        (WORK / "plan.toml").write_text(DEVICES_PLAN.format(dev0=devs[0], dev1=devs[1]))
        consent = [arg for d in devs for arg in ("--yes-destroy", d)]
        iolab("run", "plan.toml", "--db", str(db), *consent, cwd=WORK)
        iolab("run", "plan.toml", "--db", str(db), "--new", *consent, cwd=WORK)
    finally:
        for dev in devs:
            subprocess.run(["btrfs", "device", "scan", "--forget", dev], check=False)
            subprocess.run(["losetup", "--detach", dev], check=False)
    with sqlite3.connect(db) as con:
        con.execute("VACUUM")
    shutil.rmtree(WORK, ignore_errors=True)


def build_cdm() -> None:
    """The crystaldiskmark preset on a folder here, 3 passes of 1 s over 16 MiB."""
    shutil.rmtree(WORK, ignore_errors=True)
    (WORK / "disk").mkdir(parents=True)
    db = HERE / "cdm.db"
    db.unlink(missing_ok=True)
    iolab(
        "run",
        "--preset",
        "crystaldiskmark",
        "--target",
        str(WORK / "disk"),
        "--size",
        "16m",
        "--runtime",
        "1",
        "--repeat",
        "3",
        "--db",
        str(db),
        cwd=WORK,
    )
    with sqlite3.connect(db) as con:
        con.execute("VACUUM")
    shutil.rmtree(WORK, ignore_errors=True)


def main() -> None:
    given = sys.argv[1:]
    if "--devices" in given:
        build_devices()
    if "--cdm" in given:
        build_cdm()
    if not {"--render", "--devices", "--cdm"} & set(given):
        build()
    out = WORK / "render"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    for name in ("store.db", "devices.db", "cdm.db"):
        shutil.copy(HERE / name, COPIES / name)
    for name, text in render(STORE, out).items():
        (HERE / name).write_text(text)
    shutil.rmtree(WORK, ignore_errors=True)
    size = COMMITTED.stat().st_size // 1024
    print(f"{COMMITTED} ({size} KiB) and {len(SNAPSHOTS)} snapshots written")


if __name__ == "__main__":
    main()
