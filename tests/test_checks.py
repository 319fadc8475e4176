"""Every methodology check, provoked for real with fio, and silent on a clean run.

One plan per scene keeps fio's time short: each workload of it provokes one check (1 s runs,
small files); a clean plan beside it must raise none of them.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import needs_root, run_iolab
from loopdevs import LoopDevs, loops_fixture

PROVOKED = """
name = "provoked"
repeat = 2

[defaults]
runtime = 1
size = "16m"

[[setup]]
name = "here"
path = "{path}"

[[workload]]
name = "buffered"
rw = "read"
direct = 0

[[workload]]
name = "one core"
rw = "randread"
ioengine = "null"
numjobs = 2
cpus_allowed = "0"

[[workload]]
name = "short"
rw = "read"
bs = "1m"
time_based = 0

[[workload]]
name = "zeros"
rw = "write"
zero_buffers = 1

[[workload]]
name = "same offsets"
rw = "randread"

[[workload]]
name = "odd offset"
rw = "randread"
offset = "512"
size = "8m"
"""

CLEAN = """
name = "clean"
repeat = 2

[defaults]
runtime = 1
size = "16m"
randrepeat = 0

[[setup]]
name = "here"
path = "{path}"

[[workload]]
rw = ["randread", "read", "randwrite"]
"""

__all__ = ["loops_fixture"]

FOREIGN = "foreign-load"
# what other work on a shared host (the suite's own neighbours) adds to any run: other load,
# and a note that the disk was busy; neither is a trap of the plan's
SHARED_HOST = {FOREIGN, "device-busy", "cpu-steal"}
EXPECTED = {
    "buffered": "page-cache",
    "one core": "cpu-bound",
    "short": "too-short",
    "zeros": "compressible",
    "same offsets": "randrepeat",
    "odd offset": "misaligned",
}


def warnings_of(db: Path) -> dict[str, set[str]]:
    """workload -> the warning codes stored on its cases."""
    found: dict[str, set[str]] = {}
    with sqlite3.connect(db) as con:
        for workload, stored in con.execute("SELECT workload, warnings FROM cases"):
            codes = {w["code"] for w in json.loads(stored)}
            found.setdefault(workload, set()).update(codes)
    return found


@pytest.mark.fio
def test_each_check_fires_on_the_case_that_provokes_it(workdir: Path) -> None:
    (workdir / "plan.toml").write_text(PROVOKED.format(path=workdir))
    done = run_iolab("run", "plan.toml", cwd=workdir, check=True)
    found = warnings_of(workdir / "iolab.db")
    for workload, code in EXPECTED.items():
        shared = code == "cpu-bound" and FOREIGN in found[workload]  # the CPU was not fio's
        assert code in found[workload] or shared, (workload, found[workload])
    assert "page-cache" not in found["one core"], "a check speaks only about its own trap"
    assert "  ! " in done.stderr, "warnings are shown as the run goes (on stderr)"
    report = run_iolab("report", "--format", "markdown", cwd=workdir, check=True).stdout
    assert "randrepeat" in report or "offsets" in report


@pytest.mark.fio
def test_a_clean_run_raises_none(workdir: Path) -> None:
    (workdir / "plan.toml").write_text(CLEAN.format(path=workdir))
    run_iolab("run", "plan.toml", cwd=workdir, check=True)
    found = warnings_of(workdir / "iolab.db")
    assert set().union(*found.values()) - SHARED_HOST == set(), found


def _read_plan(path: Path) -> str:
    return (
        f'[defaults]\nruntime = 1\nsize = "16m"\n[[setup]]\nname = "it"\npath = "{path}"\n'
        '[[workload]]\nrw = "randread"\n'
    )


@pytest.mark.fio
def test_reads_over_a_fallocated_file_are_flagged(workdir: Path) -> None:
    mine = workdir / "mine.img"
    subprocess.run(["fallocate", "-l", "16M", str(mine)], check=True)
    (workdir / "plan.toml").write_text(_read_plan(mine))
    run_iolab("run", "plan.toml", cwd=workdir, check=True)
    assert "unwritten-read" in warnings_of(workdir / "iolab.db")["4k randread"]
    written = workdir / "written.img"
    written.write_bytes(bytes(range(256)) * 65536)
    (workdir / "plan.toml").write_text(_read_plan(written))
    run_iolab("run", "plan.toml", "--db", "written.db", cwd=workdir, check=True)
    assert "unwritten-read" not in warnings_of(workdir / "written.db")["4k randread"]


@pytest.fixture
def loop_mount(workdir: Path) -> Iterator[Path]:
    image, mount = workdir / "disk.img", workdir / "mnt"
    subprocess.run(["truncate", "-s", "96M", str(image)], check=True)
    dev = subprocess.run(
        ["losetup", "-f", "--show", str(image)], capture_output=True, text=True, check=True
    ).stdout.strip()
    subprocess.run(["mkfs.ext4", "-q", dev], check=True)
    mount.mkdir()
    subprocess.run(["mount", dev, str(mount)], check=True)
    yield mount
    subprocess.run(["umount", str(mount)], check=False)
    subprocess.run(["losetup", "-d", dev], check=False)


@pytest.mark.fio
@pytest.mark.root
@needs_root()
def test_a_target_on_a_buffered_loop_device_is_flagged(workdir: Path, loop_mount: Path) -> None:
    (workdir / "plan.toml").write_text(_read_plan(loop_mount))
    run_iolab("run", "plan.toml", cwd=workdir, check=True)
    assert "loop-cache" in warnings_of(workdir / "iolab.db")["4k randread"]


STEADY = """
[defaults]
size = "16m"
steadystate_duration = 2
time_based = 1

[[setup]]
name = "here"
path = "{path}"

[[workload]]
name = "settles"
rw = "randread"
runtime = 6
steadystate = "iops_slope:30%"

[[workload]]
name = "never"
rw = "randread"
runtime = 3
steadystate = "iops:0.0001%"
"""


@pytest.mark.fio
def test_steady_state_uses_the_window_or_says_it_was_not_reached(workdir: Path) -> None:
    (workdir / "plan.toml").write_text(STEADY.format(path=workdir))
    run_iolab("run", "plan.toml", cwd=workdir, check=True)
    found = warnings_of(workdir / "iolab.db")
    assert "steady-state" not in found["settles"] and "ended-early" not in found["settles"]
    assert "steady-state" in found["never"]
    with sqlite3.connect(workdir / "iolab.db") as con:
        rows = con.execute(
            "SELECT c.workload, m.phase, m.iops, c.raw_json FROM metrics m"
            " JOIN cases c ON c.id = m.case_id WHERE c.workload = 'settles'"
        ).fetchall()
    phases = {phase: iops for _, phase, iops, _ in rows}
    assert set(phases) == {"measure", "job"}, "the steady window, and the whole job beside it"
    window = json.loads(rows[0][3])["jobs"][0]["steadystate"]["data"]["iops_mean"]
    assert phases["measure"] == pytest.approx(window), "reports show the steady window's mean"


DEVICE = """
[defaults]
runtime = 1
size = "16m"
[[setup]]
name = "disk"
devices = ["{dev}"]
filesystem = "none"
{extra}
[[workload]]
rw = "randwrite"
[[workload]]
rw = "randread"
"""


@pytest.mark.fio
@pytest.mark.root
@needs_root()
def test_a_fresh_device_is_flagged_until_it_is_preconditioned(
    workdir: Path, loops: LoopDevs
) -> None:
    dev = loops.make(64)
    (workdir / "plan.toml").write_text(DEVICE.format(dev=dev, extra=""))
    run_iolab("run", "plan.toml", "--yes-destroy", dev, cwd=workdir, check=True)
    found = warnings_of(workdir / "iolab.db")
    assert "fresh-device" in found["4k randwrite"]
    with sqlite3.connect(workdir / "iolab.db") as con:
        states = [r[0] for r in con.execute("SELECT target_state FROM cases ORDER BY id")]
    assert states == ["fresh", "written"], "the state before each case"
    (workdir / "plan.toml").write_text(DEVICE.format(dev=dev, extra='precondition = "sequential"'))
    run_iolab(
        "run", "plan.toml", "--yes-destroy", dev, "--db", "filled.db", cwd=workdir, check=True
    )
    found = warnings_of(workdir / "filled.db")
    assert "fresh-device" not in found["4k randwrite"]
    assert "unwritten-read" not in found["4k randread"]
    with sqlite3.connect(workdir / "filled.db") as con:
        env = json.loads(con.execute("SELECT environment FROM setups").fetchone()[0])
        filled_states = {r[0] for r in con.execute("SELECT target_state FROM cases")}
    assert filled_states == {"sequential"}
    filled = env["precondition"][0]
    assert filled["job"] == "precondition-sequential"
    assert filled["written_bytes"] == 2 * 16 * 1024**2, "the test area, twice"


@pytest.mark.fio
@pytest.mark.root
def test_a_device_of_yours_used_as_it_is_is_not_called_fresh(
    workdir: Path, loops: LoopDevs
) -> None:
    """A raw device iolab did not build holds whatever it held: iolab cannot know it was never
    written (a disk filled before), so no fresh-device or unwritten-read; a loop device over
    an image that holds no data yet is the one it can tell."""
    dev = loops.make(64)
    with open(dev, "wb") as handle:  # filled by its owner before iolab saw it
        handle.write(os.urandom(64 * 1024**2))
    (workdir / "plan.toml").write_text(DEVICE.format(dev=dev, extra=""))
    run_iolab("run", "plan.toml", "--yes-destroy", dev, cwd=workdir, check=True)
    found = warnings_of(workdir / "iolab.db")
    assert "fresh-device" not in found["4k randwrite"]
    assert "unwritten-read" not in found["4k randread"]
    with sqlite3.connect(workdir / "iolab.db") as con:
        states = [r[0] for r in con.execute("SELECT target_state FROM cases ORDER BY id")]
    assert states == ["", ""]


CACHED = """
[defaults]
runtime = 1
size = "16m"
[[setup]]
name = "behind a big cache"
path = "{path}"
cache = "8m"
[[setup]]
name = "behind a small cache"
path = "{path}"
cache = "4m"
[[workload]]
rw = "randread"
"""


@pytest.mark.fio
def test_a_working_set_that_fits_a_declared_cache_is_flagged(workdir: Path) -> None:
    (workdir / "plan.toml").write_text(CACHED.format(path=workdir))
    run_iolab("run", "plan.toml", cwd=workdir, check=True)
    with sqlite3.connect(workdir / "iolab.db") as con:
        found = {
            s: {w["code"] for w in json.loads(ws)}
            for s, ws in con.execute("SELECT setup, warnings FROM cases")
        }
    assert "cache-size" in found["behind a big cache"]
    assert "cache-size" not in found["behind a small cache"], "16 MiB is 4x a 4 MiB cache"


ROUNDS = """
name = "pts rounds"
[defaults]
runtime = 1
size = "32m"
direct = 0
ioengine = "psync"
[[setup]]
name = "ram"
path = "{path}"
[[workload]]
rw = "randread"
bs = "4k"
[[workload]]
rw = "read"
bs = "128k"
[steady]
window = 3
rounds = 10
data_excursion = "50%"   # a busy 2-core test machine: wide limits, still a real judgement
slope_excursion = "40%"
"""


@pytest.fixture
def ram(workdir: Path) -> Iterator[Path]:
    mount = workdir / "ram"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mount)], check=True)
    yield mount
    subprocess.run(["umount", str(mount)], check=False)


@pytest.mark.fio
@pytest.mark.root
@needs_root()
def test_steady_rounds_converge_on_a_ram_target_with_table_and_chart(
    workdir: Path, ram: Path
) -> None:
    (workdir / "plan.toml").write_text(ROUNDS.format(path=ram))
    done = run_iolab("run", "plan.toml", cwd=workdir, check=True)
    assert "· ram: steady state reached after" in done.stderr, done.stderr
    report = run_iolab("report", "--format", "markdown", cwd=workdir, check=True).stdout
    assert "Steady state by rounds: ram, tracking 4k randread" in report
    assert "steady state reached; measurement window rounds" in report
    page = workdir / "report.html"
    run_iolab("report", "--format", "html", "-o", str(page), cwd=workdir, check=True)
    assert "Convergence to steady state: ram" in page.read_text()
