"""`iolab run --lab`: study B's set-ups (one device, md RAID5 of 3, md RAID10 of 4) measured
in the lab kernel on image files, stored as a run in the user's database, every figure marked
as a lab figure in every format, and the RAID model's penalties shown against them."""

from __future__ import annotations

import csv
import json
import os
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from conftest import LAB_COMMAND_S, results_of, run_iolab, start_iolab
from iolab.targets import scratch
from uml import lab_marks

pytestmark = lab_marks()
STUDY_B = """
name = "study B in the lab"

[report]
baseline = "single"

[[setup]]
name = "single"
devices = ["/dev/nvme0n1"]

[[setup]]
name = "md RAID5 of 3"
devices = ["/dev/nvme1n1", "/dev/nvme2n1", "/dev/nvme3n1"]
raid = "mdadm"
level = 5

[[setup]]
name = "md RAID10 of 4"
devices = ["/dev/nvme1n1", "/dev/nvme2n1", "/dev/nvme3n1", "/dev/nvme4n1"]
raid = "mdadm"
level = 10

[[setup]]
name = "here"
path = "{path}"

[[workload]]
name = "4k randwrite QD1"
rw = "randwrite"
bs = "4k"
iodepth = 1
size = "32m"
runtime = 1
time_based = 1
randrepeat = 0
"""
MARK = "virtual-lab"


def leftovers() -> set[str]:
    return {p.name for p in Path("/var/tmp").glob("iolab-rehearse-*")}


def test_study_b_in_the_lab(workdir: Path) -> None:
    before = leftovers()
    (workdir / "b.toml").write_text(STUDY_B.format(path=workdir))
    done = run_iolab("run", "b.toml", "--lab", cwd=workdir, timeout_s=LAB_COMMAND_S)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "not run in the lab (paths, nothing to build): here" in done.stderr
    assert "/dev/nvme1n1 -> /dev/" in done.stderr and ", in " in done.stderr, "mapped, kernel named"
    with sqlite3.connect(workdir / "iolab.db") as con:
        rows = con.execute("SELECT setup, status, warnings FROM cases").fetchall()
    assert sorted(r[0] for r in rows) == ["md RAID10 of 4", "md RAID5 of 3", "single"]
    assert all(r[1] == "ok" and MARK in {w["code"] for w in json.loads(r[2])} for r in rows)
    assert leftovers() == before, "images and the work folder removed"
    _marked_everywhere(workdir)


def _marked_everywhere(workdir: Path) -> None:
    md = run_iolab("report", "--format", "markdown", cwd=workdir, check=True).stdout
    results = [
        line for line in results_of(md).splitlines() if line.startswith("| 4k randwrite QD1")
    ]
    assert results and all(line.count(MARK) >= 3 for line in results[:1]), results
    assert "## RAID model" in md and "RAID5 of 3, QD1" in md
    model = next(line for line in md.splitlines() if "RAID5 of 3, QD1" in line)
    assert MARK in model, "the model's table is marked too"
    table = list(
        csv.DictReader(
            run_iolab("report", "--format", "csv", cwd=workdir, check=True).stdout.splitlines()
        )
    )
    assert table and all(MARK in row["flags"] for row in table if row["value"])
    page = workdir / "r.html"
    run_iolab("report", "--format", "html", "-o", str(page), cwd=workdir, check=True)
    assert page.read_text().count("virtual-lab: measured in iolab&#x27;s virtual lab") >= 3


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--preset", "quick", "--lab"], "the plan builds no set-up on devices"),
        (["--resume", "1", "--lab"], "--lab runs a plan afresh; it cannot --resume a run"),
    ],
)
def test_bad_lab_requests_are_one_line(workdir: Path, args: list[str], said: str) -> None:
    done = run_iolab("run", *args, cwd=workdir)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and said in done.stderr, done.stderr
    assert not (workdir / "iolab.db").exists()


def _descendants(pid: int) -> list[int]:
    tasks = Path(f"/proc/{pid}/task")
    try:
        words = " ".join((t / "children").read_text() for t in tasks.iterdir()).split()
    except OSError:  # gone
        return []
    return [p for word in words for p in (int(word), *_descendants(int(word)))]


def _lab_processes(pid: int) -> set[tuple[int, bytes]]:
    """The lab kernel's processes below `pid`: (pid, command line)."""
    found = set()
    for child in _descendants(pid):
        try:
            command = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        name = command.split(b"\0")[0]
        if name.endswith((b"linux.uml", b"/linux")) or b"qemu-system" in name:
            found.add((child, command))
    return found


def _alive(processes: set[tuple[int, bytes]]) -> set[int]:
    alive = set()
    for pid, command in processes:
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes() == command:
                alive.add(pid)
        except OSError:
            continue
    return alive


def test_a_killed_run_takes_its_lab_kernel_with_it(workdir: Path) -> None:
    """SIGKILL on `iolab run --lab` (a test's timeout, the OOM killer) leaves no lab kernel
    running: it runs in a session of its own, away from Ctrl-C, and dies with iolab."""
    before = leftovers()
    (workdir / "b.toml").write_text(STUDY_B.format(path=workdir))
    child = start_iolab("run", "b.toml", "--lab", cwd=workdir)
    deadline = time.monotonic() + 600
    lab: set[tuple[int, bytes]] = set()
    while not lab and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.5)
        lab = _lab_processes(child.pid)
    assert lab, "the lab kernel never started"
    time.sleep(3)  # user-mode Linux starts its helper processes
    lab |= _lab_processes(child.pid)
    child.kill()
    child.communicate(timeout=60)
    deadline = time.monotonic() + 30
    while _alive(lab) and time.monotonic() < deadline:
        time.sleep(0.5)
    left = _alive(lab)
    for pid in left:  # not to leave them to the next test
        os.kill(pid, signal.SIGKILL)
    killed = leftovers() - before
    removed = {p.name for p in scratch.left_behind(Path("/var/tmp"))}  # as the next run does
    assert not left, f"the lab kernel outlived iolab: {sorted(left)} of {len(lab)}"
    assert killed, "the killed run left no folder: was it killed while it had one?"
    assert killed <= removed, f"the killed run's folder was not removed: {killed - removed}"
