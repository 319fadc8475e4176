"""md and LVM set-ups for real, in a kernel that has them (see uml.py): studies B and D end to
end, the README's 256k chunk, LVM raid10 and striped, and a failed create that tears down
only what it made. One kernel is booted for the whole module.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import needs_root
from uml import Done, Host, Kernel, Machine, host_has_md, uml_available

pytestmark = [
    needs_root(),
    pytest.mark.skipif(
        not host_has_md() and not uml_available() and not os.environ.get("CI"),
        reason="no md here and no user-mode-linux (apt-get install user-mode-linux)",
    ),
]
DISKS, DISK_MIB = 4, 384
IOLAB = f"{sys.executable} -m iolab"


@pytest.fixture(scope="module")
def machine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Machine]:
    folder = Path(os.environ.get("IOLAB_TEST_DIR", "/var/tmp")) / f"iolab-raid-{os.getpid()}"
    folder.mkdir(parents=True, exist_ok=True)
    lab: Host | Kernel = (
        Host(folder, DISKS, DISK_MIB) if host_has_md() else Kernel(folder, DISKS, DISK_MIB)
    )
    lab.start()
    yield lab
    lab.stop()
    for image in folder.glob("*.img"):
        image.unlink()


@pytest.fixture
def work(machine: Machine) -> Iterator[Path]:
    base = Path(os.environ.get("IOLAB_TEST_DIR", "/var/tmp"))
    folder = base / f"iolab-raid-work-{os.getpid()}-{os.urandom(3).hex()}"
    folder.mkdir()
    yield folder
    machine.run(f"rm -rf {folder}")


def iolab(machine: Machine, work: Path, *args: str, timeout_s: float = 600) -> Done:
    return machine.run(f"cd {work} && {IOLAB} {' '.join(args)}", timeout_s)


def destroy(machine: Machine, count: int) -> list[str]:
    return [word for disk in machine.disks[:count] for word in ("--yes-destroy", disk)]


def clean(machine: Machine) -> None:
    """No array left, no volume group left, and no signature on any disk."""
    mdstat = machine.run("cat /proc/mdstat").output
    assert " active " not in mdstat, mdstat
    assert machine.run("dmsetup ls | grep -c iolab || true").output.strip() in ("", "0")
    for disk in machine.disks:
        left = machine.run(f"wipefs -n {disk}").output.strip()
        assert left == "", f"{disk}: {left}"


def stored(db: Path) -> list[tuple[str, str, str, str | None]]:
    with sqlite3.connect(db) as con:
        return list(con.execute("SELECT setup, workload, status, error FROM cases ORDER BY id"))


def devices(machine: Machine, count: int) -> str:
    return json.dumps(machine.disks[:count])


def test_md_raid0_with_the_readmes_256k_chunk(machine: Machine, work: Path) -> None:
    (work / "plan.toml").write_text(f"""
[defaults]
runtime = 1
size = "64m"
[[setup]]
name = "md raid0"
devices = {devices(machine, 2)}
raid = "mdadm"
level = 0
chunk = "256k"
filesystem = "xfs"
[[workload]]
rw = "randread"
""")
    done = iolab(machine, work, "run", "plan.toml", *destroy(machine, 2))
    assert done.returncode == 0, done.output
    assert [row[2] for row in stored(work / "iolab.db")] == ["ok"]
    with sqlite3.connect(work / "iolab.db") as con:
        env = json.loads(con.execute("SELECT environment FROM setups").fetchone()[0])
    assert env["layout"]["raid"]["chunk_bytes"] == 256 * 1024, env["layout"]["raid"]
    clean(machine)


def test_a_create_that_fails_tears_down_only_what_it_made(machine: Machine, work: Path) -> None:
    (work / "plan.toml").write_text(f"""
[defaults]
runtime = 1
size = "64m"
[[setup]]
name = "bad layout"
devices = {devices(machine, 3)}
raid = "mdadm"
level = 5
md_layout = "no-such-layout"
filesystem = "ext4"
[[workload]]
rw = "randread"
""")
    done = iolab(machine, work, "run", "plan.toml", *destroy(machine, 3))
    assert done.returncode == 3, done.output
    error = stored(work / "iolab.db")[0][3] or ""
    assert "mdadm --create" in error and "teardown" not in error, error
    clean(machine)


def test_study_b_single_vs_raid5_vs_raid10_at_qd1(machine: Machine, work: Path) -> None:
    (work / "plan.toml").write_text(f"""
name = "study B"
[defaults]
runtime = 2
size = "64m"
iodepth = 1
[[setup]]
name = "single"
devices = {devices(machine, 1)}
filesystem = "none"
[[setup]]
name = "md raid5"
devices = {devices(machine, 3)}
raid = "mdadm"
level = 5
[[setup]]
name = "md raid10"
devices = {devices(machine, 4)}
raid = "mdadm"
level = 10
[[workload]]
rw = ["randread", "randwrite"]
bs = "4k"
[report]
baseline = "single"
""")
    done = iolab(machine, work, "run", "plan.toml", *destroy(machine, 4))
    assert done.returncode == 0, done.output
    rows = stored(work / "iolab.db")
    assert len(rows) == 6 and {r[2] for r in rows} == {"ok"}
    assert "md raid5" in done.output and "%" in done.output, "ratios to the single device"
    with sqlite3.connect(work / "iolab.db") as con:
        assert con.execute("SELECT count(*) FROM samples").fetchone()[0] > 0
    clean(machine)


def test_study_d_raid0_over_1_2_and_4_devices_with_a_jobs_sweep(
    machine: Machine, work: Path
) -> None:
    (work / "plan.toml").write_text(f"""
name = "study D"
[defaults]
runtime = 1
size = "64m"
[[setup]]
name = "md raid0"
devices = {devices(machine, 4)}
device_count = [1, 2, 4]
raid = "mdadm"
level = 0
chunk = "256k"
filesystem = "none"
[[workload]]
rw = "randread"
bs = "4k"
numjobs = [1, 2]
[report]
baseline = "md raid0 x1"
""")
    done = iolab(machine, work, "run", "plan.toml", *destroy(machine, 4))
    assert done.returncode == 0, done.output
    rows = stored(work / "iolab.db")
    assert {r[0] for r in rows} == {"md raid0 x1", "md raid0 x2", "md raid0 x4"}
    assert len(rows) == 6 and {r[2] for r in rows} == {"ok"}
    clean(machine)


@pytest.mark.parametrize(("level", "count"), [("10", 4), ("0", 2)])
def test_lvm_raid10_and_striped_with_ext4(
    machine: Machine, work: Path, level: str, count: int
) -> None:
    (work / "plan.toml").write_text(f"""
[defaults]
runtime = 1
size = "64m"
[[setup]]
name = "lvm"
devices = {devices(machine, count)}
raid = "lvm"
level = {level}
chunk = "64k"
filesystem = "ext4"
[[workload]]
rw = "randwrite"
""")
    done = iolab(machine, work, "run", "plan.toml", *destroy(machine, count))
    assert done.returncode == 0, done.output
    with sqlite3.connect(work / "iolab.db") as con:
        env = json.loads(con.execute("SELECT environment FROM setups").fetchone()[0])
    assert env["layout"]["raid"]["kind"] == "lvm"
    clean(machine)
