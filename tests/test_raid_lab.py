"""md and LVM set-ups for real, in a kernel that has them (see uml.py): studies B and D end to
end, the README's 256k chunk, LVM raid10 and striped, a failed create that tears down only
what it made, and faults: a member that fails mid-case (dm-flakey), a degraded array as a
set-up (`degraded = 1`), a slow member (dm-delay). They build on the session's lab kernel
(conftest.lab_kernel), booted once for every lab test.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import LAB_DISK_MIB, LAB_DISKS, needs_root
from iolab.targets.lab import Kernel
from uml import Done, Host, Machine, host_has_md

pytestmark = [
    pytest.mark.kernel,
    pytest.mark.root,
    *([] if host_has_md() else [pytest.mark.usefixtures("lab_host")]),
    needs_root(),
]
IOLAB = f"{sys.executable} -m iolab"


@pytest.fixture(scope="module")
def machine(request: pytest.FixtureRequest) -> Iterator[Machine]:
    """This host where its kernel has md and device-mapper (loop devices), else the
    session's lab kernel (conftest.lab_kernel), booted once for every lab test."""
    if not host_has_md():
        kernel: Kernel = request.getfixturevalue("lab_kernel")
        yield kernel
        return
    folder = Path(os.environ.get("IOLAB_TEST_DIR", "/var/tmp")) / f"iolab-raid-{os.getpid()}"
    folder.mkdir(parents=True, exist_ok=True)
    host = Host(folder, LAB_DISKS, LAB_DISK_MIB)
    host.start()
    yield host
    host.stop()
    shutil.rmtree(folder, ignore_errors=True)


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


@pytest.mark.kernel
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


# -- faults ---------------------------------------------------------------------------------

FAULT_WAIT = """
i=0
until [ -e /sys/block/md127/md ] && pgrep -x fio >/dev/null; do
    i=$((i + 1)); [ $i -gt 2400 ] && exit 1; sleep 0.05
done
sleep 0.4
"""


def _table(name: str, table: str) -> str:
    """A shell step that switches device-mapper device `name` to `table` (lines)."""
    return (
        f'dmsetup suspend {name} && printf "{table}" | dmsetup load {name} '
        f"&& dmsetup resume {name}\n"
    )


def flaky(machine: Machine, disk: str) -> tuple[str, str, str]:
    """A dm-flakey device over `disk`, healthy for now; its always-up and always-down tables."""
    sectors = int(machine.run(f"blockdev --getsz {disk}").output.strip())
    up, down = f"0 {sectors} flakey {disk} 0 1 0\\n", f"0 {sectors} flakey {disk} 0 0 1\\n"
    done = machine.run(f'printf "{up}" | dmsetup create flaky')
    assert done.returncode == 0, done.output
    return "/dev/mapper/flaky", up, down


def remove_dm(machine: Machine, name: str) -> None:
    """Remove the test's device-mapper device, first stopping any md array that holds it:
    where a test failed before iolab's teardown ended, or udev assembled the array again from
    the member's superblock (mdadm --incremental on the table's change event), the array
    would keep it, and the disk under it, busy for every later test."""
    dev = f"$(basename $(readlink -f /dev/mapper/{name}))"
    machine.run(
        f"udevadm settle; for h in /sys/class/block/{dev}/holders/md*; do "
        f'[ -e "$h" ] && mdadm --stop "/dev/${{h##*/}}"; done; udevadm settle'
    )
    machine.run(f"dmsetup remove --retry {name} || (udevadm settle; dmsetup remove {name})")


def every_step_done(log: list[dict[str, Any]]) -> bool:
    """Each command's last try succeeded (teardown retries a wipe that met a busy member)."""
    last = {entry["command"]: entry["returncode"] for entry in log}
    return all(code == 0 for code in last.values())


def environment(db: Path) -> dict[str, Any]:
    with sqlite3.connect(db) as con:
        return dict(json.loads(con.execute("SELECT environment FROM setups").fetchone()[0]))


def run_status(db: Path) -> str:
    with sqlite3.connect(db) as con:
        return str(con.execute("SELECT status FROM runs").fetchone()[0])


@pytest.mark.parametrize("level", ["1", "5"])
def test_a_member_that_fails_mid_case_leaves_the_array_degraded(
    machine: Machine, work: Path, level: str
) -> None:
    """md fails the member whose writes error and runs on without it: the case is ok, and the
    set-up's stored environment says the array ended degraded, the member faulty."""
    count = 2 if level == "1" else 3
    member, up, down = flaky(machine, machine.disks[count - 1])
    members = [*machine.disks[: count - 1], member]
    (work / "plan.toml").write_text(f"""
[defaults]
runtime = 2
size = "64m"
[[setup]]
name = "md raid{level}"
devices = {json.dumps(members)}
raid = "mdadm"
level = {level}
[[workload]]
rw = "randwrite"
""")
    # once the case's fio runs: every I/O of the member fails until md has failed it; then
    # the device answers again (md no longer uses it), so teardown can wipe its superblock
    fault = (
        FAULT_WAIT
        + _table("flaky", down)
        + """
i=0
until [ "$(cat /sys/block/md127/md/degraded)" != 0 ]; do
    i=$((i + 1)); [ $i -gt 200 ] && break; sleep 0.02
done
"""
        + _table("flaky", up)
    )
    (work / "fault.sh").write_text(fault)
    try:
        args = [w for d in members for w in ("--yes-destroy", d)]
        done = machine.run(
            f"sh {work}/fault.sh > {work}/fault.log 2>&1 & cd {work} && {IOLAB} run plan.toml "
            f"{' '.join(args)}; rc=$?; wait; exit $rc",
            600,
        )
        assert done.returncode == 0, done.output + (work / "fault.log").read_text()
        assert [row[2] for row in stored(work / "iolab.db")] == ["ok"]
        env = environment(work / "iolab.db")
        built, ended = env["layout"]["raid"], env["layout"]["raid_at_end"]
        assert built["degraded"] == 0, built
        assert ended["degraded"] == 1, ended
        states = ended["member_states"]
        assert any("faulty" in (s or "") for name, s in states.items() if name.startswith("dm-"))
        assert every_step_done(env["log"]), env["log"]
        assert run_status(work / "iolab.db") == "done"
    finally:
        remove_dm(machine, "flaky")
    clean(machine)


def test_a_raid0_member_that_fails_mid_case_fails_the_case(machine: Machine, work: Path) -> None:
    """md raid0 has no copy to fall back on: the error reaches fio and the case fails in fio's
    words; md marks nothing (raid0 has no degraded state), and what it says is still stored.
    The member fails between a healthy head (the md superblock) and tail (where mdadm also
    looks), so teardown wipes it."""
    member, _, _ = flaky(machine, machine.disks[1])
    sectors = int(machine.run(f"blockdev --getsz {machine.disks[1]}").output.strip())
    edge, disk = 16384, machine.disks[1]
    broken = (
        f"0 {edge} flakey {disk} 0 1 0\\n{edge} {sectors - 2 * edge} flakey {disk} {edge} 0 1\\n"
        f"{sectors - edge} {edge} flakey {disk} {sectors - edge} 1 0\\n"
    )
    (work / "plan.toml").write_text(f"""
[defaults]
runtime = 2
size = "64m"
[[setup]]
name = "md raid0"
devices = {json.dumps([machine.disks[0], member])}
raid = "mdadm"
level = 0
[[workload]]
rw = "randwrite"
""")
    (work / "fault.sh").write_text(FAULT_WAIT + _table("flaky", broken))
    try:
        args = ["--yes-destroy", machine.disks[0], "--yes-destroy", member]
        done = machine.run(
            f"sh {work}/fault.sh > {work}/fault.log 2>&1 & cd {work} && {IOLAB} run plan.toml "
            f"{' '.join(args)}; rc=$?; wait; exit $rc",
            600,
        )
        assert done.returncode == 3, done.output + (work / "fault.log").read_text()
        [(_, _, status, error)] = stored(work / "iolab.db")
        assert status == "failed" and "Input/output error" in (error or ""), error
        env = environment(work / "iolab.db")
        ended = env["layout"]["raid_at_end"]
        assert ended["level"] == "raid0" and ended["degraded"] is None, ended
        assert set(ended["member_states"].values()) == {"in_sync"}, ended
        assert every_step_done(env["log"]), env["log"]
        assert run_status(work / "iolab.db") == "done"
    finally:
        remove_dm(machine, "flaky")
    clean(machine)


def test_a_degraded_raid5_is_a_set_up_of_its_own(machine: Machine, work: Path) -> None:
    """degraded = 1: the array is created with "missing" in place of its last device, which
    is neither checked nor written (its ext4 signature survives, and it needs no consent)."""
    left_out = machine.disks[2]
    assert machine.run(f"mkfs.ext4 -q -F {left_out}").returncode == 0
    (work / "plan.toml").write_text(f"""
[defaults]
runtime = 1
size = "64m"
[[setup]]
name = "md raid5, one disk gone"
devices = {devices(machine, 3)}
raid = "mdadm"
level = 5
degraded = 1
[[workload]]
rw = ["randread", "randwrite"]
""")
    shown = iolab(machine, work, "show", "plan.toml")
    assert f"{machine.disks[1]} missing" in shown.output, shown.output
    done = iolab(machine, work, "run", "plan.toml", *destroy(machine, 2))
    assert done.returncode == 0, done.output
    assert [row[2] for row in stored(work / "iolab.db")] == ["ok", "ok"]
    raid = environment(work / "iolab.db")["layout"]["raid"]
    assert raid["degraded"] == 1 and raid["raid_disks"] == 3, raid
    assert raid["members"] == [Path(d).name for d in machine.disks[:2]], raid
    assert "ext4" in machine.run(f"wipefs -n {left_out}").output
    machine.run(f"wipefs -a {left_out}")
    clean(machine)


def test_a_slow_member_shows_in_the_write_latency(machine: Machine, work: Path) -> None:
    """md raid1 waits for both members on a write: with one behind dm-delay (10 ms), the mean
    write latency is well above the same set-up's without the delay."""
    disk = machine.disks[3]
    sectors = int(machine.run(f"blockdev --getsz {disk}").output.strip())
    made = machine.run(f'dmsetup create slow --table "0 {sectors} delay {disk} 0 10"')
    assert made.returncode == 0, made.output
    slow = "/dev/mapper/slow"
    (work / "plan.toml").write_text(f"""
[defaults]
runtime = 1
size = "16m"
iodepth = 1
[[setup]]
name = "raid1"
devices = {devices(machine, 2)}
raid = "mdadm"
level = 1
[[setup]]
name = "raid1 with a slow member"
devices = {json.dumps([machine.disks[2], slow])}
raid = "mdadm"
level = 1
[[workload]]
rw = "randwrite"
bs = "4k"
""")
    try:
        args = [*destroy(machine, 3), "--yes-destroy", slow]
        done = iolab(machine, work, "run", "plan.toml", *args)
        assert done.returncode == 0, done.output
        assert "delay" in machine.run("dmsetup table slow").output
    finally:
        remove_dm(machine, "slow")
    with sqlite3.connect(work / "iolab.db") as con:
        latency = dict(
            con.execute(
                "SELECT c.setup, m.lat_mean_ns FROM metrics m JOIN cases c ON c.id = m.case_id "
                "WHERE m.direction = 'write' AND c.status = 'ok'"
            )
        )
    fast, slowed = latency["raid1"], latency["raid1 with a slow member"]
    assert slowed > 5e6 and slowed > 3 * fast, latency
    clean(machine)


REBUILT = """
from iolab.targets.provision import _Runner, _run_teardown_step
from iolab.targets.recipe import Step
runner = _Runner({{}})
try:
    _run_teardown_step(Step(("mdadm", "--zero-superblock", {members})), runner)
finally:
    for command, code, _ in runner.log:
        print(code, command)
"""


def test_teardown_stops_an_array_assembled_again_from_its_members(machine: Machine) -> None:
    """After iolab stops its array, udev may assemble it again from the members' superblocks
    and hold them open: the wipe then fails with "Couldn't open". Teardown stops such an array
    (built from nothing but its own members) and wipes; an array that also holds a device
    iolab was not given is left alone."""
    one, two, other = machine.disks[:3]
    create = "mdadm --create {} --run --metadata=1.2 --level=1 --raid-devices=2 {} {}"
    try:
        # iolab's members, and the members of the array assembled again
        for given, members in (((one, two), (one, two)), ((one,), (one, other))):
            assert machine.run(create.format("/dev/md9", *members)).returncode == 0
            machine.run("mdadm --stop /dev/md9")
            again = machine.run(f"mdadm --assemble /dev/md10 {' '.join(members)}")
            assert again.returncode == 0, again.output
            script = REBUILT.format(members=", ".join(map(json.dumps, given)))
            done = machine.run(f"{sys.executable} -c {shlex.quote(script)}")
            if given == members:
                assert done.returncode == 0, done.output
                assert "0 mdadm --stop /dev/md10" in done.output, done.output
                assert "md10" not in machine.run("cat /proc/mdstat").output
            else:
                assert done.returncode != 0 and "Couldn't open" in done.output, done.output
                assert "mdadm --stop" not in done.output, done.output
                assert "md10" in machine.run("cat /proc/mdstat").output
    finally:
        machine.run("mdadm --stop /dev/md10; mdadm --stop /dev/md9; udevadm settle")
        machine.run(f"mdadm --zero-superblock {one} {two} {other}; wipefs -a {one} {two} {other}")
    clean(machine)
