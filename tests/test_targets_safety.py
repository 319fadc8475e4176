"""Safety rules on real loop devices: each refusal names the rule, and the device is unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from iolab.errors import TargetError
from iolab.model import Layout
from iolab.targets import devices as dv
from iolab.targets import provision, safety
from loopdevs import LoopDevs, device_sha256, loops_fixture, sh

__all__ = ["loops_fixture"]

MIB_SECTORS = 2048


def assert_refused(
    dev: str, match: str, tmp_path: Path, *, confirmed: set[str] | None = None, wipe: bool = True
) -> str:
    """Both check() and build() refuse the device with `match`, and it stays byte-identical."""
    confirmed = {dev} if confirmed is None else confirmed
    before = device_sha256(dev)
    with pytest.raises(TargetError, match=match) as check_error:
        safety.check_erasable([dev], confirmed, wipe)
    layout = Layout(devices=(dev,), filesystem="ext4")
    with (
        pytest.raises(TargetError, match=match),
        provision.build(layout, tmp_path / "mnt", confirmed=confirmed, wipe_signatures=wipe),
    ):
        pytest.fail("build() went ahead on a refused device")
    assert device_sha256(dev) == before
    assert not (tmp_path / "mnt").exists()
    message = str(check_error.value)
    assert "\n" not in message
    assert message.startswith(dev)
    return message


@pytest.mark.root
def test_clean_confirmed_device_passes(loops: LoopDevs) -> None:
    dev = loops.make(64)
    safety.check_erasable([dev], {dev}, wipe_signatures=False)


@pytest.mark.root
def test_unconfirmed_device_is_refused_with_the_flag_to_pass(
    loops: LoopDevs, tmp_path: Path
) -> None:
    dev, other = loops.make(64), loops.make(64)
    message = assert_refused(dev, "not confirmed", tmp_path, confirmed={other}, wipe=False)
    assert f"--yes-destroy {dev}" in message


@pytest.mark.root
def test_symlinks_and_real_paths_name_the_same_device(loops: LoopDevs, tmp_path: Path) -> None:
    dev = loops.make(64)
    link = tmp_path / "by-id-link"
    link.symlink_to(dev)
    safety.check_erasable([str(link)], {dev}, wipe_signatures=False)
    safety.check_erasable([dev], {str(link)}, wipe_signatures=False)
    with pytest.raises(TargetError, match="named twice"):
        safety.check_erasable([dev, str(link)], {dev}, wipe_signatures=False)


def test_a_regular_file_is_not_a_block_device(tmp_path: Path) -> None:
    path = tmp_path / "file.img"
    path.write_bytes(b"x" * 4096)
    with pytest.raises(TargetError, match="not a block device"):
        safety.check_erasable([str(path)], {str(path)}, wipe_signatures=True)


@pytest.mark.root
def test_mounted_device_is_refused_even_when_confirmed(loops: LoopDevs, tmp_path: Path) -> None:
    dev = loops.make(64)
    sh("mkfs.ext4", "-q", dev)
    loops.mount(dev, tmp_path / "used", "-o", "ro")
    message = assert_refused(dev, "is mounted at", tmp_path)
    assert str(tmp_path / "used") in message


@pytest.mark.root
def test_device_with_a_mounted_partition_is_refused(loops: LoopDevs, tmp_path: Path) -> None:
    dev = loops.make(64, partitions=[(MIB_SECTORS, 16 * MIB_SECTORS)])
    sh("mkfs.ext4", "-q", f"{dev}p1")
    loops.mount(f"{dev}p1", tmp_path / "part", "-o", "ro")
    assert_refused(dev, f"its partition {dev}p1 is mounted", tmp_path)


@pytest.mark.root
def test_device_whose_holder_is_mounted_is_refused(loops: LoopDevs, tmp_path: Path) -> None:
    dev = loops.make(64)
    upper = loops.make(backing=dev)
    assert_refused(dev, f"backs the loop device {upper}", tmp_path)
    sh("mkfs.ext4", "-q", upper)
    loops.mount(upper, tmp_path / "upper", "-o", "ro")
    assert_refused(dev, rf"{upper} \(built on it\) is mounted", tmp_path)


@pytest.mark.root
def test_member_of_a_mounted_btrfs_is_refused(loops: LoopDevs, tmp_path: Path) -> None:
    first, second = loops.make(256), loops.make(256)
    sh("mkfs.btrfs", "-q", "-f", "-d", "raid1", "-m", "raid1", first, second)
    sh("btrfs", "device", "scan", first, second)
    loops.mount(first, tmp_path / "btrfs", "-o", "ro")
    assert_refused(second, "member of the mounted btrfs filesystem", tmp_path)


@pytest.mark.root
def test_swap_device_is_refused(loops: LoopDevs, tmp_path: Path) -> None:
    dev = loops.make(64)
    sh("mkswap", dev)
    sh("swapon", dev)
    try:
        assert_refused(dev, "used as swap", tmp_path)
    finally:
        sh("swapoff", dev)


def test_the_root_filesystem_device_is_refused(tmp_path: Path) -> None:
    root = dv.mount_of_target("/")
    if root is None or not root.devices:
        pytest.fail(
            "NOT CHECKED: the root filesystem is not on a block device here (a container's "
            "overlay?); run the suite on a machine or VM",
            pytrace=False,
        )
    dev = dv.dev_path(root.devices[0])
    # Read-only: the root rule comes before anything that opens the device.
    with pytest.raises(TargetError, match="holds the root filesystem"):
        safety.check_erasable([dev], {dev}, wipe_signatures=True)


@pytest.mark.root
def test_a_device_holding_root_is_refused(
    loops: LoopDevs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dev = loops.make(64)
    sh("mkfs.ext4", "-q", dev)
    loops.mount(dev, tmp_path / "root", "-o", "ro")
    monkeypatch.setattr(safety, "ROOT", str(tmp_path / "root"))
    assert_refused(dev, "holds the root filesystem", tmp_path)


@pytest.mark.root
def test_filesystem_signature_is_refused_unless_wiping(loops: LoopDevs, tmp_path: Path) -> None:
    dev = loops.make(64)
    sh("mkfs.ext4", "-q", dev)
    message = assert_refused(dev, "carries signatures: ext4", tmp_path, wipe=False)
    assert "--wipe-signatures" in message
    safety.check_erasable([dev], {dev}, wipe_signatures=True)


@pytest.mark.root
def test_partition_table_signature_is_refused(loops: LoopDevs, tmp_path: Path) -> None:
    dev = loops.make(64, partitions=[(MIB_SECTORS, 16 * MIB_SECTORS)])
    sh("mkfs.ext4", "-q", f"{dev}p1")
    message = assert_refused(dev, "a dos partition table", tmp_path, wipe=False)
    assert f"ext4 on {dev}p1" in message


@pytest.mark.root
def test_a_device_and_its_partition_overlap(loops: LoopDevs) -> None:
    dev = loops.make(64, partitions=[(MIB_SECTORS, 16 * MIB_SECTORS)])
    with pytest.raises(TargetError, match="overlaps"):
        safety.check_erasable([dev, f"{dev}p1"], {dev, f"{dev}p1"}, wipe_signatures=True)


@pytest.mark.root
def test_read_only_device_is_refused(loops: LoopDevs, tmp_path: Path) -> None:
    dev = loops.make(64, read_only=True)
    with pytest.raises(TargetError, match="read-only"):
        safety.check_erasable([dev], {dev}, wipe_signatures=True)


@pytest.mark.root
def test_wipe_signatures_erases_them_before_building(loops: LoopDevs, tmp_path: Path) -> None:
    dev = loops.make(64, partitions=[(MIB_SECTORS, 16 * MIB_SECTORS)])
    sh("mkfs.ext4", "-q", f"{dev}p1")
    layout = Layout(devices=(dev,), filesystem="ext4", mkfs_options="-q")
    with provision.build(layout, tmp_path / "mnt", confirmed={dev}, wipe_signatures=True) as b:
        assert sh("blkid", "-p", "-o", "value", "-s", "TYPE", dev).stdout.strip() == "ext4"
    commands = [entry[0] for entry in b.log]
    assert commands[:2] == [f"wipefs -a {dev}p1", f"wipefs -a {dev}"]


@pytest.mark.root
def test_describe_names_model_size_and_serial(loops: LoopDevs) -> None:
    dev = loops.make(64)
    line = dv.describe(dev)
    assert line.startswith(f"{dev}: loop device over {loops.image(dev)}")
    assert "64.0 MiB" in line
    assert "serial" in line
    assert "\n" not in line
