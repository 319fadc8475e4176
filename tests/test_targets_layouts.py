"""What a layout is (iolab.layouts) and the typed facts stored per set-up (targets.facts)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from iolab import layouts
from iolab.errors import PlanError, TargetError
from iolab.model import JSONObject, Layout, Setup, codec
from iolab.plan.load import parse_plan
from iolab.report.cells import setup_line
from iolab.targets import provision
from iolab.targets.facts import DeviceFacts, LayoutFacts, SetupFacts

TESTS = Path(__file__).parent
STORES = (TESTS / "fixtures" / "store" / "v1.db", TESTS / "golden" / "store.db")
DEVS = ("/dev/a", "/dev/b", "/dev/c", "/dev/d")


def test_levels_are_spelled_as_each_tool_spells_them() -> None:
    btrfs = layouts.spelled(Layout(DEVS[:2], raid="btrfs", level="5", metadata="RAID1"))
    assert (btrfs.level, btrfs.metadata) == ("raid5", "raid1")
    assert layouts.spelled(Layout(DEVS, raid="mdadm", level="RAID10")).level == "10"
    assert layouts.spelled(Layout(DEVS, raid="lvm")).level == "linear"
    assert layouts.spelled(Layout(DEVS, raid="lvm", level="striped")).level == "0"
    with pytest.raises(layouts.LayoutError) as caught:
        layouts.spelled(Layout(DEVS, raid="lvm", level="raid7"))
    assert caught.value.key == "level"
    assert str(caught.value) == (
        "level = 'raid7' is not a lvm level; choose one of linear, 0, 1, 4, 5, 6, 10"
    )


@pytest.mark.parametrize(
    ("raid", "level", "usable"),
    [
        ("none", None, 400),
        ("btrfs", None, 400),
        ("btrfs", "raid0", 400),
        ("btrfs", "raid1", 200),
        ("btrfs", "raid1c3", 133),
        ("btrfs", "raid5", 200),
        ("mdadm", "1", 100),
        ("mdadm", "raid5", 200),
        ("mdadm", "10", 200),
        ("lvm", None, 400),
        ("lvm", "6", 100),
    ],
)
def test_capacity_follows_the_level(raid: str, level: str | None, usable: int) -> None:
    layout = Layout(DEVS[:3], raid=raid, level=level)  # type: ignore[arg-type]
    assert layouts.capacity(layout, [100, 100, 200]) == usable


def test_one_device_of_a_sweep_is_the_plain_device() -> None:
    md = Layout(DEVS[:1], raid="mdadm", level="5", chunk="64k", md_layout="f2")
    assert layouts.settle(md) == Layout(DEVS[:1], chunk="64k")
    btrfs = Layout(DEVS[:1], raid="btrfs", level="raid10", metadata="raid1", filesystem="btrfs")
    settled = layouts.settle(btrfs)
    assert (settled.raid, settled.level, settled.metadata) == ("btrfs", "single", None)


@pytest.mark.parametrize(
    ("toml", "layout", "message"),
    [
        (
            'raid = "mdadm"\nlevel = "raid5"',
            Layout(DEVS[:2], raid="mdadm", level="raid5"),
            "mdadm 5 needs at least 3 devices, not 2",
        ),
        (
            'raid = "mdadm"\nlevel = 0\nmetadata = "raid1"',
            Layout(DEVS[:2], raid="mdadm", level="0", metadata="raid1"),
            "metadata (a btrfs profile) applies to raid = btrfs only",
        ),
        (
            'raid = "btrfs"\nmkfs_options = "mkfs.xfs -f"',
            Layout(DEVS[:2], raid="btrfs", mkfs_options="mkfs.xfs -f"),
            "mkfs_options start with mkfs.xfs but the tool is mkfs.btrfs",
        ),
    ],
)
def test_the_plan_and_the_builder_refuse_a_layout_alike(
    toml: str, layout: Layout, message: str
) -> None:
    text = f'[[setup]]\nname = "x"\ndevices = ["/dev/a", "/dev/b"]\n{toml}\n'
    with pytest.raises(PlanError) as planned:
        parse_plan(text + '[[workload]]\nrw = "read"\n', "plan.toml")
    assert str(planned.value).startswith("plan.toml:")
    assert str(planned.value).endswith(f": {message}")
    with pytest.raises(TargetError) as built:
        provision.validate(layout)
    assert str(built.value) == f"layout: {message}"


def _stored_environments() -> list[JSONObject]:
    found = []
    for db in STORES:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
            found += [json.loads(row[0]) for row in con.execute("SELECT environment FROM setups")]
    assert found
    return found


def test_stored_environments_load_typed_and_write_back_unchanged() -> None:
    for stored in _stored_environments():
        facts = codec.from_json(SetupFacts, stored)
        assert codec.to_object(facts) == stored
        target = facts.target
        assert target is not None and target.filesystem is not None and target.device is not None
        assert (target.filesystem.fstype, target.device.transport) == ("ext4", "virtio")
        assert target.devices["vda"].rotational is True
        assert target.stack.below[0].below[0].device == "vda"
        assert target.raid is None


def test_missing_facts_load_as_none() -> None:
    assert codec.from_json(SetupFacts, {}) == SetupFacts()
    assert codec.to_object(SetupFacts()) == {}
    partial = codec.from_json(DeviceFacts, {"name": "sdz"})
    assert (partial.name, partial.model, partial.partitions, partial.read_only) == (
        "sdz",
        None,
        (),
        False,
    )
    legacy = codec.from_json(
        SetupFacts, {"path": "/x/f", "filesystem": {"fstype": "xfs", "source": "s"}}
    )
    assert legacy.target is not None and legacy.target.path == "/x/f"
    assert setup_line("p", Setup.from_definition({"kind": "path", "path": "/x"}), legacy) == (
        "set-up p: path /x (xfs on s)"
    )
    layout = codec.from_json(
        LayoutFacts, {"raid": {"kind": "mdadm", "level": "raid0", "members": ["a"]}}
    )
    assert (layout.raid.kind, layout.raid.members, layout.raid.details) == (
        "mdadm",
        ("a",),
        {"level": "raid0"},
    )
    assert layout.queue is None and layout.mount is None
