"""Set-ups built on loop devices, end to end through the command line: build, run, tear down."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import ctrl_c_when, run_iolab, stored_cases
from loopdevs import LoopDevs, device_sha256, loops_fixture

__all__ = ["loops_fixture"]

XFS_A = """
mkfs_options = "-f -b size=4096 -i size=512 -l size=64m"
mount_options = "noatime,logbufs=8"
"""


def plan_text(devs: list[str]) -> str:
    quoted = [f'"{d}"' for d in devs]
    return f"""
name = "raid matrix"
[defaults]
runtime = 1
size = "32m"
iodepth = 4

[[setup]]
name = "1 device"
devices = [{quoted[0]}]
filesystem = "xfs"
{XFS_A}
[[setup]]
name = "btrfs raid0 of 2"
devices = [{", ".join(quoted[:2])}]
raid = "btrfs"
level = "raid0"

[[setup]]
name = "btrfs raid0 of 4"
devices = [{", ".join(quoted)}]
raid = "btrfs"
level = "raid0"

[[setup]]
name = "btrfs raid10 of 4"
devices = [{", ".join(quoted)}]
raid = "btrfs"
level = "raid10"

[[setup]]
name = "btrfs raid5 of 3"
devices = [{", ".join(quoted[:3])}]
raid = "btrfs"
level = "raid5"

[[setup]]
name = "ext4"
devices = [{quoted[1]}]
filesystem = "ext4"
mount_options = "noatime"

[[workload]]
rw = ["randread", "randwrite"]
bs = "4k"
"""


def mounts_left() -> str:
    done = subprocess.run(
        ["findmnt", "-rn", "-o", "TARGET"], check=False, capture_output=True, text=True
    )
    return "\n".join(line for line in done.stdout.splitlines() if "/run/iolab" in line)


def confirm(devs: list[str]) -> list[str]:
    return [arg for d in devs for arg in ("--yes-destroy", d)]


@pytest.mark.fio
@pytest.mark.root
def test_raid_matrix_runs_end_to_end(loops: LoopDevs, workdir: Path) -> None:
    devs = [loops.make(320) for _ in range(4)]
    (workdir / "plan.toml").write_text(plan_text(devs))
    done = run_iolab("run", "plan.toml", *confirm(devs), cwd=workdir, check=True)
    with sqlite3.connect(workdir / "iolab.db") as con:
        statuses = [r[0] for r in con.execute("SELECT status FROM cases")]
        envs = dict(con.execute("SELECT name, environment FROM setups"))
    assert statuses == ["ok"] * 12
    assert "btrfs raid5 of 3" in done.stdout
    table = run_iolab("report", "--format", "markdown", cwd=workdir, check=True).stdout
    for name in (
        "1 device",
        "btrfs raid0 of 2",
        "btrfs raid0 of 4",
        "btrfs raid10 of 4",
        "btrfs raid5 of 3",
        "ext4",
    ):
        assert name in table
    xfs = json.loads(envs["1 device"])
    text = json.dumps(xfs["layout"])
    assert "4096" in text and "512" in text, "xfs_info figures are recorded"
    assert any("mkfs.xfs" in entry["command"] for entry in xfs["log"])
    assert any("umount" in entry["command"] for entry in xfs["log"]), "teardown is logged"
    raid10 = json.dumps(json.loads(envs["btrfs raid10 of 4"])["layout"]).lower()
    assert "raid10" in raid10
    ext4 = json.dumps(json.loads(envs["ext4"])["layout"]).lower()
    assert "block size" in ext4 or "block_size" in ext4, "tune2fs figures are recorded"
    assert not mounts_left()


@pytest.mark.fio
@pytest.mark.root
def test_devices_need_consent_and_are_left_untouched(loops: LoopDevs, workdir: Path) -> None:
    dev = loops.make(64)
    before = device_sha256(dev)
    plan = f'[[setup]]\ndevices = ["{dev}"]\nfilesystem = "ext4"\n[[workload]]\nrw = "read"\n'
    (workdir / "plan.toml").write_text(plan)
    done = run_iolab("run", "plan.toml", "--runtime", "1", cwd=workdir)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"--yes-destroy {dev}" in done.stderr and len(done.stderr.splitlines()) == 1
    other = run_iolab("run", "plan.toml", "--yes-destroy", "/dev/loop99", cwd=workdir)
    assert "the plan does not use it" in other.stderr
    assert device_sha256(dev) == before
    shown = run_iolab("show", "plan.toml", cwd=workdir, check=True).stdout
    assert f"mkfs.ext4 -F {dev}" in shown or ("mkfs.ext4" in shown and dev in shown)
    assert device_sha256(dev) == before, "show runs nothing"


@pytest.mark.fio
@pytest.mark.root
def test_ctrl_c_during_a_setup_leaves_nothing_behind(loops: LoopDevs, workdir: Path) -> None:
    devs = [loops.make(320) for _ in range(2)]
    plan = plan_text(devs * 2).replace("runtime = 1", "runtime = 3")
    two_setups = plan.split('[[setup]]\nname = "btrfs raid0 of 4"')[0]
    (workdir / "plan.toml").write_text(
        two_setups + '[[workload]]\nrw = ["randread", "randwrite"]\n'
    )
    db = workdir / "iolab.db"
    code, err = ctrl_c_when(
        ["run", "plan.toml", *confirm(devs)],
        workdir,
        lambda: bool(mounts_left()) and len(stored_cases(db)) >= 3,
    )
    assert code == 130, err
    assert "resume with" in err
    assert not mounts_left()
    signatures = subprocess.run(["blkid", *devs], check=False, capture_output=True, text=True)
    assert "btrfs" not in signatures.stdout
