"""A fleet: one plan on 32 real `fio --server` processes (127.0.1.1 to .32, each with a folder
of its own on one loop-mounted ext4), every host its own subject (hosts_report = "each").

Each host reads its own 1 MiB file with O_DIRECT at a fixed 500 I/Os a second (fio's
rate_iops), so that equal hosts deliver equal figures on this busy 2-CPU machine whatever
their start order; a throttled host (the block cgroup on its server's process: 50 reads a
second from the loop device) cannot keep up, and is named as the outlier. The inventory test
reads each host's `iolab env --json` through a real sshd the test starts on loopback.
"""

from __future__ import annotations

import csv
import json
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import run_iolab, start_iolab
from fleet_servers import Fleet, Sshd
from iolab.targets.path import TEST_FILE
from loopdevs import LoopDevs, loops_fixture, sh
from test_hosts import host_rows

__all__ = ["loops_fixture"]

RATE, THROTTLED = 500, 50  # reads a second: every host's, the throttled host's ceiling


def plan_text(hosts: list[str], dirs: dict[str, Path], runtime: int = 1, extra: str = "") -> str:
    listed = ", ".join(f'"{h}"' for h in hosts)
    moved = "".join(f'"{h}" = "{dirs[h]}"\n' for h in hosts[1:])
    return f"""name = "fleet"
hosts = [{listed}]
hosts_report = "each"
{extra}
[defaults]
runtime = {runtime}
time_based = 1
size = "1m"
[[setup]]
name = "rack"
path = "{dirs[hosts[0]]}"
[setup.hosts]
{moved}
[[workload]]
name = "4k randread"
rw = "randread"
bs = "4k"
ioengine = "psync"
direct = 1
rate_iops = {RATE}
"""


def filesystem(loops: LoopDevs, where: Path, *options: str) -> str:
    """A fresh ext4 on a loop device, mounted at `where`: its device."""
    dev = loops.make(128)
    sh("mkfs.ext4", "-q", "-F", dev)
    where.mkdir(parents=True, exist_ok=True)
    loops.mount(dev, where, *options)
    return dev


@pytest.fixture
def rack(workdir: Path, loops: LoopDevs) -> Iterator[tuple[Fleet, str]]:
    """A fleet whose folders are on one loop device (given, to throttle a host's reads)."""
    dev = filesystem(loops, workdir / "rack")
    made = Fleet(workdir / "rack")
    try:
        yield made, dev
    finally:
        made.stop_all()


@pytest.mark.fio
@pytest.mark.root
@pytest.mark.hosts
def test_32_equal_hosts_on_a_busy_cpu_name_no_outlier(
    rack: tuple[Fleet, str], workdir: Path
) -> None:
    fleet, _ = rack
    hosts = fleet.start(32)
    (workdir / "plan.toml").write_text(plan_text(hosts, fleet.dirs))
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        done = run_iolab("run", "plan.toml", cwd=workdir, check=True)
    finally:
        hog.kill()
        hog.wait()
    assert "Traceback" not in done.stderr
    rows = host_rows(workdir / "iolab.db")
    figures = {host: iops for status, host, iops, _ in rows if host}
    assert set(figures) == set(hosts)
    page = run_iolab("report", "--format", "markdown", cwd=workdir, check=True).stdout
    assert "### Fleet: rack" in page and "### Each host: rack" in page
    assert "host-outlier:" not in page
    fleet_table = page.split("### Fleet: rack", 1)[1].split("###", 1)[0]
    assert "| 4k randread | IOPS |" in fleet_table and "| 32 | none |" in fleet_table
    assert "127.0.1.1:" not in fleet_table, "no column or row per host"
    results = page.split("## Results", 1)[1].split("\n## ", 1)[0]
    (row,) = [line for line in results.splitlines() if line.startswith("| 4k randread |")]
    shown = float(row.split("|")[3].split()[0].replace(",", ""))
    assert shown == pytest.approx(statistics.median(figures.values()), abs=1), "not the sum"
    assert 'rack: hosts_report = "each": each figure is the fleet\'s median host, of 32' in results
    run_iolab("report", "--export", "tables", cwd=workdir, check=True)
    each = list(csv.DictReader((workdir / "tables" / "each-host-rack.csv").open()))
    assert {r["host"] for r in each} == set(hosts)
    assert {r["host"]: float(r["value"]) for r in each} == {
        h: pytest.approx(v, rel=1e-5) for h, v in figures.items()
    }


@pytest.mark.fio
@pytest.mark.root
@pytest.mark.hosts
def test_a_throttled_host_is_the_outlier_and_a_killed_one_costs_its_share(
    rack: tuple[Fleet, str], workdir: Path
) -> None:
    fleet, dev = rack
    hosts = fleet.start(32)
    slow, victim = hosts[6], hosts[20]
    fleet.throttle(slow, dev, THROTTLED)
    (workdir / "plan.toml").write_text(plan_text(hosts, fleet.dirs, runtime=4))
    child = start_iolab("run", "plan.toml", cwd=workdir)
    deadline = time.monotonic() + 120
    while not any(fleet.dirs[victim].glob(f"{TEST_FILE}*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1)
    fleet.kill(victim)
    out, err = child.communicate(timeout=240)
    assert child.returncode == 3, out + err
    assert f"host {victim} was lost mid-case" in out, out
    rows = host_rows(workdir / "iolab.db")
    kept = {host: iops for status, host, iops, _ in rows if host and status == "failed"}
    assert set(kept) == set(hosts) - {victim}, "the others' figures kept"
    assert kept[slow] < 0.5 * RATE < min(v for h, v in kept.items() if h != slow)

    page = run_iolab("report", "--format", "markdown", cwd=workdir, check=True).stdout
    lines = [line for line in page.splitlines() if "host-outlier:" in line]
    assert len(lines) == 1 and f"host {slow}: 4k randread {kept[slow]:,.0f} IOPS" in lines[0], lines
    assert "below the fleet's median" in lines[0] and "over 31 hosts)" in lines[0]
    assert "; its inventory is not known (host_env" in lines[0]
    fleet_table = page.split("### Fleet: rack", 1)[1]
    fleet_row = next(line for line in fleet_table.splitlines() if line.startswith("| 4k randread"))
    assert f"{slow} (-" in fleet_row and "| 31 |" in fleet_row, fleet_row
    each = page.split("### Each host: rack", 1)[1]
    assert f"| {victim} | lost |" in each and "▼" in each


@pytest.fixture
def inventoried(workdir: Path, loops: LoopDevs) -> Iterator[tuple[Fleet, Sshd, str, str]]:
    """Six hosts on 127.0.3.x, five folders on one ext4 (relatime, mq-deadline) and one on
    another (noatime, scheduler none); an sshd on the first five addresses only."""
    common = filesystem(loops, workdir / "common")
    odd = filesystem(loops, workdir / "odd", "-o", "noatime")
    Path(f"/sys/block/{Path(common).name}/queue/scheduler").write_text("mq-deadline\n")
    Path(f"/sys/block/{Path(odd).name}/queue/scheduler").write_text("none\n")
    made = Fleet(workdir / "common", net=3)
    sshd = Sshd(workdir / "ssh")
    try:
        yield made, sshd, common, odd
    finally:
        sshd.stop()
        made.stop_all()


@pytest.mark.fio
@pytest.mark.root
@pytest.mark.hosts
def test_host_env_over_ssh_says_what_differs_beside_the_outlier(
    inventoried: tuple[Fleet, Sshd, str, str], workdir: Path
) -> None:
    fleet, sshd, _, odd = inventoried
    hosts = fleet.start(6)
    slow, unread = hosts[1], hosts[5]
    fleet.dirs[slow] = workdir / "odd" / "host"
    fleet.dirs[slow].mkdir()
    fleet.throttle(slow, odd, THROTTLED)
    sshd.start([h.split(":")[0] for h in hosts[:5]])
    (workdir / "plan.toml").write_text(plan_text(hosts, fleet.dirs, extra='host_env = "ssh"'))
    done = sshd.iolab("run", "plan.toml", cwd=workdir)
    assert done.returncode == 0, done.stdout + done.stderr
    (missing,) = [line for line in done.stderr.splitlines() if "could not be read" in line]
    assert missing.startswith("warning: the inventory of 1 of 6 hosts could not be read")
    assert f"{unread}: ssh: connect to host" in missing and "measured all the same" in missing

    with sqlite3.connect(workdir / "iolab.db") as con:
        env = json.loads(con.execute("SELECT environment FROM runs").fetchone()[0])
    read = {h["host"]: h for h in env["hosts"]}
    assert all(read[h]["environment_from"] == "iolab env --json over SSH" for h in hosts[:5])
    assert read[slow]["environment"]["target"]["path"] == str(fleet.dirs[slow])
    assert "environment" not in read[unread] and set(read) == set(hosts)
    assert len(host_rows(workdir / "iolab.db")) == 7, "all six measured, and their sum"

    page = run_iolab("report", "--format", "markdown", cwd=workdir, check=True).stdout
    (line,) = [line for line in page.splitlines() if "host-outlier:" in line]
    assert f"host {slow}: 4k randread" in line
    assert "; its mount options are rw,noatime where 4 of 5 run rw,relatime" in line, line
    assert "its scheduler is none where 4 of 5 run mq-deadline" in line, line


@pytest.mark.fio
@pytest.mark.root
@pytest.mark.hosts
def test_twelve_hosts_one_held_back_is_named_under_each_and_under_sum(
    rack: tuple[Fleet, str], workdir: Path
) -> None:
    fleet, dev = rack
    hosts = fleet.start(12)
    slow = hosts[6]
    fleet.throttle(slow, dev, THROTTLED)
    for report in ("each", "sum"):
        (workdir / report).mkdir()
        text = plan_text(hosts, fleet.dirs).replace('"each"', f'"{report}"')
        (workdir / report / "plan.toml").write_text(text)
        run_iolab("run", "plan.toml", cwd=workdir / report, check=True)
        page = run_iolab("report", "--format", "markdown", cwd=workdir / report, check=True)
        findings = page.stdout.split("## Findings", 1)[1].split("\n## ", 1)[0]
        others = [h for h in hosts if h != slow]
        assert f"host {slow}" in findings and not any(f"host {h}" in findings for h in others)
        if report == "sum":
            assert "of the set-up's total: the total is held back by one host" in findings
            assert "No methodology check fired on the 1 figures." not in findings
