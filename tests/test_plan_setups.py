"""Set-ups on devices in the plan: layouts, levels, device-count sweeps, and their faults."""

from __future__ import annotations

import pytest

from iolab.errors import PlanError
from iolab.plan.load import parse_plan

WORK = '\n[[workload]]\nrw = "randread"\n'


def test_btrfs_raid_and_study_a_xfs() -> None:
    found = parse_plan(
        """
[[setup]]
name = "btrfs raid10 of 4"
devices = ["/dev/loop0", "/dev/loop1", "/dev/loop2", "/dev/loop3"]
raid = "btrfs"
level = "raid10"
metadata = "raid1"

[[setup]]
name = "xfs"
devices = ["/dev/loop0"]
filesystem = "xfs"
mkfs_options = "-f -b size=4096 -i size=512 -l size=64m"
mount_options = "noatime,logbufs=8"
queue = { scheduler = "none", read_ahead_kb = 0 }
discard = true
"""
        + WORK,
        "plan.toml",
    ).setups
    btrfs, xfs = (s.layout for s in found)
    assert btrfs is not None and xfs is not None
    assert (btrfs.raid, btrfs.level, btrfs.metadata, btrfs.filesystem) == (
        "btrfs",
        "raid10",
        "raid1",
        "btrfs",
    )
    assert (xfs.raid, xfs.filesystem, xfs.mount_options) == ("none", "xfs", "noatime,logbufs=8")
    assert dict(xfs.queue) == {"scheduler": "none", "read_ahead_kb": "0"} and xfs.discard


def test_device_count_is_an_axis() -> None:
    found = parse_plan(
        """
[[setup]]
name = "md raid0"
devices = ["/dev/loop0", "/dev/loop1", "/dev/loop2", "/dev/loop3"]
device_count = [1, 2, 4]
raid = "mdadm"
level = 0
chunk = "256k"
filesystem = "xfs"
"""
        + WORK,
        "plan.toml",
    ).setups
    assert [s.name for s in found] == ["md raid0 x1", "md raid0 x2", "md raid0 x4"]
    layouts = [s.layout for s in found]
    assert [(x.raid, x.level, len(x.devices)) for x in layouts if x] == [
        ("none", None, 1),
        ("mdadm", "0", 2),
        ("mdadm", "0", 4),
    ]


def test_levels_in_either_spelling_and_a_sweep_down_to_one_device() -> None:
    found = parse_plan(
        """
[[setup]]
name = "btrfs"
devices = ["/dev/loop0", "/dev/loop1", "/dev/loop2"]
raid = "btrfs"
level = "RAID1C3"
metadata = 1

[[setup]]
name = "md"
devices = ["/dev/loop0", "/dev/loop1", "/dev/loop2", "/dev/loop3"]
device_count = [1, 4]
raid = "mdadm"
level = "raid10"
md_layout = "f2"
chunk = "64k"

[[setup]]
name = "lvm"
devices = ["/dev/loop0", "/dev/loop1"]
raid = "lvm"
level = "linear"
"""
        + WORK.replace("randread", "read"),
        "plan.toml",
    ).setups
    shown = [(s.name, x.raid, x.level, x.metadata, x.md_layout) for s in found if (x := s.layout)]
    assert shown == [
        ("btrfs", "btrfs", "raid1c3", "raid1", None),
        ("md x1", "none", None, None, None),
        ("md x4", "mdadm", "10", None, "f2"),
        ("lvm", "lvm", "linear", None, None),
    ]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ('devices = ["/dev/loop0", "/dev/loop1"]', "2 devices need raid = btrfs, mdadm or lvm"),
        ('devices = ["loop0"]', "devices must list block devices"),
        ('devices = ["/dev/loop0"]\npath = "."', "takes path or devices, not both"),
        (
            'devices = ["/dev/loop0", "/dev/loop1"]\nraid = "zfs"',
            "raid = 'zfs' is not allowed; choose one of none, btrfs, mdadm, lvm",
        ),
        (
            'devices = ["/dev/loop0", "/dev/loop1"]\nraid = "btrfs"\nlevel = "raid5"',
            "btrfs raid5 needs at least 3 devices, not 2",
        ),
        (
            'devices = ["/dev/loop0", "/dev/loop1"]\nraid = "mdadm"\nlevel = 7',
            "level = '7' is not a mdadm level; choose one of 0, 1, 4, 5, 6, 10",
        ),
        (
            'devices = ["/dev/loop0", "/dev/loop1"]\nraid = "btrfs"\nfilesystem = "xfs"',
            "builds a btrfs filesystem",
        ),
        (
            'devices = ["/dev/loop0", "/dev/loop1"]\nraid = "lvm"\nlevel = 6',
            "lvm 6 needs at least 4 devices, not 2",
        ),
        (
            'devices = ["/dev/loop0", "/dev/loop1"]\nraid = "btrfs"\nmetadata = "raid7"',
            "metadata = 'raid7' is not a btrfs profile",
        ),
        (
            'devices = ["/dev/loop0"]\nfilesystem = "xfs"\nmkfs_options = "mkfs.ext4 -q"',
            "mkfs_options start with mkfs.ext4 but the tool is mkfs.xfs",
        ),
        ('devices = ["/dev/loop0"]\nmount_options = "noatime"', "mount_options need a filesystem"),
        ('devices = ["/dev/loop0"]\nqueue = { elevator = "none" }', "unknown key 'elevator'"),
        ('devices = ["/dev/loop0"]\ndevice_count = [1, 2]', "device_count 2 must be between 1"),
        ('devices = ["/dev/loop0"]\ncolour = 1', "unknown key 'colour' in [[setup]] 1"),
    ],
)
def test_layout_faults_are_one_line(body: str, words: str) -> None:
    with pytest.raises(PlanError) as caught:
        parse_plan(f'[[setup]]\nname = "x"\n{body}\n' + WORK, "plan.toml")
    assert words in str(caught.value)
    assert str(caught.value).startswith("plan.toml:")
