"""Building and tearing down set-ups on real loop devices: RAID, mkfs, mount, queue, hooks."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import json_at
from iolab.errors import TargetError
from iolab.model import Layout
from iolab.targets import provision
from loopdevs import LoopDevs, device_sha256, is_mounted, loops_fixture, sh

__all__ = ["loops_fixture"]

STUDY_A_MKFS = "mkfs.xfs -f -b size=4096 -i size=512 -l size=64m"
STUDY_A_MOUNT = "-o noatime,logbufs=8"
XFS_MIB = 320  # mkfs.xfs refuses filesystems under 300 MiB


def findmnt(target: Path) -> dict[str, str]:
    done = sh("findmnt", "-J", "-o", "SOURCE,FSTYPE,OPTIONS", "--mountpoint", str(target))
    found: dict[str, str] = json.loads(done.stdout)["filesystems"][0]
    return found


def signature(dev: str) -> str:
    return sh("blkid", "-p", "-o", "value", "-s", "TYPE", dev, check=False).stdout.strip()


def queue(dev: str, key: str) -> str:
    return Path(f"/sys/block/{Path(dev).name}/queue/{key}").read_text().strip()


def md_supported() -> str | None:
    """Why mdadm tests cannot run here, or None when they can."""
    if not Path("/proc/mdstat").exists():
        probe = shutil.which("modprobe")
        if probe is None or sh(probe, "-n", "md_mod", check=False).returncode != 0:
            return "this kernel has no md driver (no /proc/mdstat, modprobe -n md_mod fails)"
    if shutil.which("mdadm") is None:
        return "mdadm is not installed (apt-get install mdadm)"
    return None


def dm_supported() -> str | None:
    """Why LVM tests cannot run here, or None when they can."""
    if not (Path("/sys/module/dm_mod").exists() or Path("/dev/mapper/control").exists()):
        return "this kernel has no device-mapper (no /sys/module/dm_mod, no /dev/mapper/control)"
    if shutil.which("lvcreate") is None:
        return "lvm2 is not installed (apt-get install lvm2)"
    return None


# -- dry run --------------------------------------------------------------------------------


@pytest.mark.root
def test_dry_run_lists_every_command_and_runs_none(loops: LoopDevs, tmp_path: Path) -> None:
    dev = loops.make(64)
    before = device_sha256(dev)
    marker = tmp_path / "hook-ran"
    layout = Layout(
        devices=(dev,),
        filesystem="xfs",
        mkfs_options=STUDY_A_MKFS,
        mount_options=STUDY_A_MOUNT,
        queue={"read_ahead_kb": "256", "scheduler": "mq-deadline"},
        discard=True,
        setup_hook=f"touch {marker}",
        teardown_hook="echo done",
    )
    mnt = tmp_path / "mnt"
    name = Path(dev).name
    sched = queue(dev, "scheduler").split("[")[1].split("]")[0]
    ahead = queue(dev, "read_ahead_kb")
    assert provision.commands(layout, mnt, wipe_signatures=True) == [
        ["bash", "-c", f"touch {marker}"],
        ["wipefs", "-a", dev],
        ["blkdiscard", "-f", dev],
        ["mkfs.xfs", "-f", "-b", "size=4096", "-i", "size=512", "-l", "size=64m", dev],
        ["mkdir", "-p", str(mnt)],
        ["mount", "-t", "xfs", "-o", "noatime,logbufs=8", dev, str(mnt)],
        ["sh", "-c", f"echo mq-deadline > /sys/block/{name}/queue/scheduler"],
        ["sh", "-c", f"echo 256 > /sys/block/{name}/queue/read_ahead_kb"],
        ["sh", "-c", f"echo {sched} > /sys/block/{name}/queue/scheduler"],
        ["sh", "-c", f"echo {ahead} > /sys/block/{name}/queue/read_ahead_kb"],
        ["umount", str(mnt)],
        ["rmdir", str(mnt)],
        ["wipefs", "-a", dev],
        ["bash", "-c", "echo done"],
    ]
    assert not marker.exists()
    assert not mnt.exists()
    assert device_sha256(dev) == before


def test_dry_run_of_btrfs_mdadm_and_lvm_layouts() -> None:
    devs = ("/dev/disk/by-id/a", "/dev/disk/by-id/b", "/dev/disk/by-id/c")
    mnt = Path("/mnt/iolab")
    btrfs = Layout(devices=devs, raid="btrfs", level="raid5", metadata="1", filesystem="btrfs")
    assert provision.commands(btrfs, mnt)[:3] == [
        ["mkfs.btrfs", "-f", "-d", "raid5", "-m", "raid1", *devs],
        ["btrfs", "device", "scan", *devs],
        ["mkdir", "-p", str(mnt)],
    ]
    md = Layout(devices=devs, raid="mdadm", level="raid5", chunk="64K", md_layout="left-symmetric")
    cmds = provision.commands(md, mnt)
    array = cmds[0][2]
    assert array.startswith("/dev/md")
    assert cmds == [
        [
            "mdadm",
            "--create",
            array,
            "--run",
            "--metadata=1.2",
            "--level=5",
            "--raid-devices=3",
            "--chunk=64",
            "--layout=left-symmetric",
            "--assume-clean",
            *devs,
        ],
        ["mdadm", "--stop", array],
        ["mdadm", "--zero-superblock", *devs],
    ]
    lvm = Layout(devices=devs[:2], raid="lvm", level="0", chunk="64k", filesystem="ext4")
    cmds = provision.commands(lvm, mnt)
    vg = cmds[1][1]
    assert cmds[:4] == [
        ["pvcreate", "--yes", "-ff", *devs[:2]],
        ["vgcreate", vg, *devs[:2]],
        [
            "lvcreate",
            "--yes",
            "--wipesignatures",
            "y",
            "-n",
            "bench",
            "-l",
            "100%FREE",
            "--type",
            "striped",
            "-i",
            "2",
            "-I",
            "64k",
            vg,
        ],
        ["mkfs.ext4", "-F", f"/dev/mapper/{vg}-bench"],
    ]
    assert cmds[-3:] == [
        ["wipefs", "-a", f"/dev/mapper/{vg}-bench"],
        ["vgremove", "--yes", "-f", vg],
        ["pvremove", "--yes", "-ff", *devs[:2]],
    ]


@pytest.mark.parametrize(
    ("layout", "match"),
    [
        (Layout(devices=()), "no devices"),
        (Layout(devices=("/dev/a", "/dev/b"), filesystem="xfs"), "2 devices need raid = btrfs"),
        (Layout(devices=("/dev/a",), raid="btrfs", filesystem="xfs"), "drop filesystem"),
        (
            Layout(devices=("/dev/a", "/dev/b"), raid="btrfs", level="raid7"),
            "level = 'raid7' is not a btrfs level; choose one of single, dup, raid0",
        ),
        (Layout(devices=("/dev/a", "/dev/b"), raid="mdadm", level="3"), "not a mdadm level"),
        (Layout(devices=("/dev/a", "/dev/b"), raid="mdadm"), "raid = mdadm needs a level"),
        (
            Layout(devices=("/dev/a", "/dev/b"), raid="mdadm", level="raid5"),
            "mdadm 5 needs at least 3 devices, not 2",
        ),
        (
            Layout(devices=("/dev/a", "/dev/b"), raid="btrfs", metadata="raid1c3"),
            "btrfs raid1c3 needs at least 3 devices",
        ),
        (Layout(devices=("/dev/a",), md_layout="f2"), "md_layout applies to raid = mdadm only"),
        (Layout(devices=("/dev/a",), metadata="dup"), "applies to raid = btrfs only"),
        (Layout(devices=("/dev/a",), mount_options="noatime"), "mount_options need a filesystem"),
        (Layout(devices=("/dev/a",), queue={"../../x": "1"}), "not a sysfs queue"),
        (
            Layout(devices=("/dev/a",), filesystem="xfs", mkfs_options="mkfs.ext4 -b 4096"),
            "start with mkfs.ext4 but the tool is mkfs.xfs",
        ),
    ],
)
def test_layouts_that_cannot_be_built_are_refused(layout: Layout, match: str) -> None:
    with pytest.raises(TargetError, match=match):
        provision.commands(layout, Path("/mnt/x"))


# -- filesystems on one device --------------------------------------------------------------


@pytest.mark.root
def test_xfs_with_study_a_options(loops: LoopDevs, tmp_path: Path) -> None:
    dev = loops.make(XFS_MIB)
    old_sched = queue(dev, "scheduler")
    old_ahead = queue(dev, "read_ahead_kb")
    layout = Layout(
        devices=(dev,),
        filesystem="xfs",
        mkfs_options=STUDY_A_MKFS,
        mount_options=STUDY_A_MOUNT,
        queue={"scheduler": "mq-deadline", "read_ahead_kb": "256", "nr_requests": "64"},
    )
    mnt = tmp_path / "mnt"
    with provision.build(layout, mnt, confirmed={dev}) as built:
        found = findmnt(mnt)
        assert found["source"] == dev
        assert found["fstype"] == "xfs"
        assert {"noatime", "logbufs=8"} <= set(found["options"].split(","))
        info = sh("xfs_info", str(mnt)).stdout
        assert "bsize=4096" in info
        assert "isize=512" in info
        fs = built.layout.filesystem
        assert fs is not None
        assert (fs["block_size"], fs["inode_size"], fs["log_bytes"]) == (4096, 512, 64 * 1024**2)
        assert json_at(fs, "params", "log") == "internal log"
        assert built.layout.mount is not None
        assert built.layout.mount.options == found["options"]
        assert queue(dev, "scheduler").find("[mq-deadline]") >= 0
        assert queue(dev, "read_ahead_kb") == "256"
        assert built.layout.queue is not None
        assert built.layout.queue[dev]["nr_requests"].after == queue(dev, "nr_requests")
        assert json_at(built.facts, "queue", dev, "nr_requests", "after") == queue(
            dev, "nr_requests"
        )
        assert built.path == mnt / "iolab.testfile"
        assert not built.raw
        built.path.write_bytes(b"iolab" * 1000)
    assert not is_mounted(mnt)
    assert not mnt.exists()
    assert queue(dev, "scheduler") == old_sched
    assert queue(dev, "read_ahead_kb") == old_ahead
    assert signature(dev) == ""


@pytest.mark.root
def test_ext4_records_tune2fs_figures(loops: LoopDevs, tmp_path: Path) -> None:
    dev = loops.make(128)
    layout = Layout(
        devices=(dev,), filesystem="ext4", mkfs_options="-q -b 4096 -I 256", mount_options="noatime"
    )
    with provision.build(layout, tmp_path / "mnt", confirmed={dev}) as built:
        assert "noatime" in findmnt(tmp_path / "mnt")["options"].split(",")
        fs = built.layout.filesystem
        assert fs is not None
        assert fs["tool"] == "tune2fs"
        assert (fs["block_size"], fs["inode_size"]) == (4096, 256)
        features = fs["features"]
        assert isinstance(features, list | str) and "has_journal" in features
        assert json_at(fs, "params", "Block size") == "4096"
    assert not is_mounted(tmp_path / "mnt")


@pytest.mark.root
def test_a_raw_device_named_with_colons_is_given_to_fio_by_its_kernel_node(
    loops: LoopDevs,
) -> None:
    """fio splits filename= at each ':' (as in /dev/disk/by-path names): a link resolves to
    the kernel's node; a node whose own name has one is refused."""
    dev = loops.make(64)
    link, node = (
        Path(f"/dev/iolab-test-{os.getpid()}:0:1"),
        Path(f"/dev/iolab-test-{os.getpid()}:n"),
    )
    link.symlink_to(dev)
    os.mknod(node, 0o600 | stat.S_IFBLK, os.stat(dev).st_rdev)
    nowhere = Path("/nonexistent")
    try:
        with provision.build(Layout(devices=(str(link),)), nowhere, confirmed={str(link)}) as built:
            assert built.raw and built.paths == (Path(dev),) and built.path == Path(dev)
        refused = pytest.raises(TargetError, match="has a ':', which fio reads as a list of files")
        with refused, provision.build(Layout(devices=(str(node),)), nowhere, confirmed={str(node)}):
            raise AssertionError("built")
    finally:
        link.unlink()
        node.unlink()


# -- btrfs RAID -----------------------------------------------------------------------------


@pytest.mark.root
@pytest.mark.parametrize(
    ("level", "count"), [("raid0", 2), ("raid0", 4), ("raid10", 4), ("raid5", 3)]
)
def test_btrfs_raid(loops: LoopDevs, tmp_path: Path, level: str, count: int) -> None:
    devs = tuple(loops.make(256) for _ in range(count))
    layout = Layout(devices=devs, raid="btrfs", level=level, metadata="raid1", filesystem="btrfs")
    mnt = tmp_path / "mnt"
    with provision.build(layout, mnt, confirmed=set(devs)) as built:
        assert findmnt(mnt)["fstype"] == "btrfs"
        df = sh("btrfs", "filesystem", "df", str(mnt)).stdout
        assert f"Data, {level.upper()}:" in df
        assert "Metadata, RAID1:" in df
        raid = built.layout.raid
        assert raid.kind == "btrfs"
        assert raid.members == tuple(Path(d).name for d in devs)
        assert json_at(raid.details, "profiles", "data") == level.upper()
        listed = raid.details["devices"]
        assert isinstance(listed, list)
        assert sorted(str(json_at(d, "path")) for d in listed) == sorted(devs)
        built.path.write_bytes(os.urandom(1024 * 1024))
    assert not is_mounted(mnt)
    assert [signature(d) for d in devs] == [""] * count


@pytest.mark.root
def test_raw_devices_without_raid(loops: LoopDevs, tmp_path: Path) -> None:
    devs = (loops.make(64), loops.make(64))
    layout = Layout(devices=devs)
    with provision.build(layout, tmp_path / "mnt", confirmed=set(devs)) as built:
        assert built.raw
        assert built.paths == tuple(Path(d) for d in devs)
        assert built.mountpoint is None
    assert built.log == []
    assert not (tmp_path / "mnt").exists()


@pytest.mark.root
def test_discard_punches_the_backing_file(loops: LoopDevs, tmp_path: Path) -> None:
    dev = loops.make(64)
    with open(dev, "wb") as handle:
        handle.write(os.urandom(16 * 1024**2))
    image = loops.image(dev)
    sh("blockdev", "--flushbufs", dev)
    assert image.stat().st_blocks * 512 >= 16 * 1024**2
    with provision.build(Layout(devices=(dev,), discard=True), tmp_path, confirmed={dev}) as b:
        assert image.stat().st_blocks * 512 < 1024**2
    assert b.log[0][:2] == (f"blkdiscard -f {dev}", 0)


# -- hooks, failures, interruption ----------------------------------------------------------


@pytest.mark.root
def test_hooks_run_first_and_last_and_their_output_is_recorded(
    loops: LoopDevs, tmp_path: Path
) -> None:
    dev = loops.make(128)
    layout = Layout(
        devices=(dev,),
        filesystem="ext4",
        mkfs_options="-q",
        setup_hook='echo "setup $IOLAB_PHASE $IOLAB_DEVICES"; echo warn >&2',
        teardown_hook='echo "teardown $IOLAB_PHASE"; findmnt "$IOLAB_MOUNTPOINT" || echo unmounted',
    )
    with provision.build(layout, tmp_path / "mnt", confirmed={dev}) as built:
        first = built.log[0]
        assert first == (f"hook {layout.setup_hook!r}", 0, f"setup set-up {dev}\nwarn")
        during = len(built.log)
    last = built.log[-1]
    assert len(built.log) > during
    assert last[0] == f"hook {' '.join(str(layout.teardown_hook).split())!r}"
    assert last[2] == "teardown teardown\nunmounted"


@pytest.mark.root
def test_failing_step_raises_its_own_error_and_tears_down(loops: LoopDevs, tmp_path: Path) -> None:
    dev = loops.make(XFS_MIB)
    marker = tmp_path / "teardown-ran"
    layout = Layout(
        devices=(dev,),
        filesystem="xfs",
        mkfs_options="-b size=3",
        setup_hook="true",
        teardown_hook=f"touch {marker}",
    )
    with (
        pytest.raises(TargetError) as error,
        provision.build(layout, tmp_path / "mnt", confirmed={dev}),
    ):
        pytest.fail("the body ran although mkfs failed")
    message = str(error.value)
    assert message.startswith(f"set-up step failed: mkfs.xfs -f -b size=3 {dev}: ")
    mkfs = sh("mkfs.xfs", "-f", "-b", "size=3", dev, check=False)
    last_line = [line for line in mkfs.stderr.splitlines() if line.strip()][-1].strip()
    assert message.endswith(last_line)
    assert "\n" not in message
    assert marker.exists()
    assert not is_mounted(tmp_path / "mnt")


@pytest.mark.root
def test_failing_teardown_is_reported_after_a_good_run(loops: LoopDevs, tmp_path: Path) -> None:
    dev = loops.make(64)
    layout = Layout(devices=(dev,), filesystem="ext4", mkfs_options="-q", teardown_hook="exit 3")
    with (
        pytest.raises(TargetError, match=r"^teardown step failed: hook 'exit 3': exit status 3;"),
        provision.build(layout, tmp_path / "mnt", confirmed={dev}),
    ):
        pass
    assert not is_mounted(tmp_path / "mnt")


@pytest.mark.root
def test_failing_teardown_does_not_hide_the_first_error(loops: LoopDevs, tmp_path: Path) -> None:
    dev = loops.make(64)
    layout = Layout(devices=(dev,), setup_hook="echo no >&2; exit 1", teardown_hook="exit 3")
    with (
        pytest.raises(TargetError, match=r"^set-up step failed: hook .*: no; and teardown"),
        provision.build(layout, tmp_path / "mnt", confirmed={dev}),
    ):
        pass


@pytest.mark.root
def test_bad_queue_value_fails_after_mount_and_unmounts(loops: LoopDevs, tmp_path: Path) -> None:
    dev = loops.make(64)
    layout = Layout(devices=(dev,), filesystem="ext4", mkfs_options="-q", queue={"scheduler": "x"})
    with (
        pytest.raises(TargetError, match=r"scheduler: Invalid argument$"),
        provision.build(layout, tmp_path / "mnt", confirmed={dev}),
    ):
        pass
    assert not is_mounted(tmp_path / "mnt")
    assert signature(dev) == ""


@pytest.mark.root
def test_unknown_queue_setting_is_refused_before_anything_runs(
    loops: LoopDevs, tmp_path: Path
) -> None:
    dev = loops.make(64)
    layout = Layout(devices=(dev,), filesystem="ext4", queue={"no_such_knob": "1"})
    with (
        pytest.raises(TargetError, match="has no queue setting 'no_such_knob'"),
        provision.build(layout, tmp_path / "mnt", confirmed={dev}),
    ):
        pass
    assert signature(dev) == ""


@pytest.mark.root
def test_keyboard_interrupt_in_the_body_tears_down(loops: LoopDevs, tmp_path: Path) -> None:
    devs = (loops.make(256), loops.make(256))
    layout = Layout(devices=devs, raid="btrfs", level="raid0", filesystem="btrfs")
    mnt = tmp_path / "mnt"
    seen: list[bool] = []

    def interrupted_body() -> None:
        with provision.build(layout, mnt, confirmed=set(devs)):
            seen.append(is_mounted(mnt))
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        interrupted_body()
    assert seen == [True]
    assert not is_mounted(mnt)
    assert [signature(d) for d in devs] == ["", ""]


CHILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from iolab.model import Layout
    from iolab.targets import provision
    devs, mnt, hook = tuple(sys.argv[1:-2]), Path(sys.argv[-2]), sys.argv[-1]
    layout = Layout(devices=devs, raid="btrfs", level="raid0", filesystem="btrfs",
                    setup_hook=hook or None, teardown_hook=f"touch {mnt}.teardown")
    with provision.build(layout, mnt, confirmed=set(devs)):
        print("READY", flush=True)
        time.sleep(60)
    """
)


@pytest.mark.root
@pytest.mark.parametrize("where", ["body", "setup-hook"])
def test_ctrl_c_leaves_no_mount_or_raid_behind(loops: LoopDevs, tmp_path: Path, where: str) -> None:
    devs = [loops.make(256), loops.make(256)]
    mnt = tmp_path / "mnt"
    hook = f"touch {tmp_path}/hook-started; sleep 60" if where == "setup-hook" else ""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, *devs, str(mnt), hook],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        if where == "body":
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "READY"
            assert is_mounted(mnt)
        else:
            deadline = time.monotonic() + 30
            while not (tmp_path / "hook-started").exists():
                assert time.monotonic() < deadline, child.stderr
                time.sleep(0.05)
        os.killpg(child.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole group
        _, stderr = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
    assert child.returncode != 0
    assert "KeyboardInterrupt" in stderr
    assert Path(f"{mnt}.teardown").exists()
    assert not is_mounted(mnt)
    assert not mnt.exists()
    assert [signature(d) for d in devs] == ["", ""]
