"""A degraded md array as a set-up of its own (`degraded = N`): the rules, the commands, and
what is left alone. The array itself is built in test_raid_lab.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from iolab import layouts
from iolab.errors import PlanError
from iolab.model import Layout
from iolab.plan.load import parse_plan
from iolab.targets import recipe

DEVS = ["/dev/nvme0n1", "/dev/nvme1n1", "/dev/nvme2n1", "/dev/nvme3n1"]


def parsed(setup: str, count: int = 4) -> list[Layout]:
    text = (
        f'[[setup]]\nname = "s"\ndevices = {DEVS[:count]!r}\n{setup}\n[[workload]]\nrw = "read"\n'
    )
    return [s.layout for s in parse_plan(text.replace("'", '"'), "plan.toml").setups if s.layout]


@pytest.mark.parametrize(
    ("setup", "count", "message"),
    [
        ('raid = "mdadm"\nlevel = 5\ndegraded = 2', 3, "at most 1 of them missing"),
        ('raid = "mdadm"\nlevel = 6\ndegraded = 3', 4, "at most 2 of them missing"),
        ('raid = "mdadm"\nlevel = 0\ndegraded = 1', 2, "at most 0 of them missing"),
        ('raid = "mdadm"\nlevel = 10\ndegraded = 2', 4, "at most 1 of them missing"),
        ('raid = "mdadm"\nlevel = 1\ndegraded = 2', 2, "at most 1 of them missing"),
        ('raid = "lvm"\nlevel = 5\ndegraded = 1', 3, "degraded applies to raid = mdadm only"),
        ('raid = "mdadm"\nlevel = 5\ndegraded = true', 3, "must be a count of devices"),
        ('raid = "mdadm"\nlevel = 5\ndegraded = -1', 3, "must be a count of devices"),
    ],
)
def test_a_layout_may_not_leave_out_more_than_its_level_survives(
    setup: str, count: int, message: str
) -> None:
    with pytest.raises(PlanError) as caught:
        parsed(setup, count)
    assert message in str(caught.value) and "plan.toml:" in str(caught.value)
    assert "degraded" in str(caught.value)


def test_what_each_level_survives() -> None:
    assert parsed('raid = "mdadm"\nlevel = 1\ndegraded = 2', 3)[0].degraded == 2
    assert parsed('raid = "mdadm"\nlevel = 10\nmd_layout = "n3"\ndegraded = 2', 4)[0].degraded == 2
    assert parsed('raid = "mdadm"\nlevel = 6\ndegraded = 2', 4)[0].degraded == 2


def test_the_left_out_devices_are_missing_to_mdadm_and_never_touched() -> None:
    [layout] = parsed('raid = "mdadm"\nlevel = 5\ndegraded = 1\ndiscard = true', 4)
    assert layouts.present(layout) == tuple(DEVS[:3])
    commands = recipe.commands(layout, Path("/run/iolab/x"), wipe_signatures=True)
    create = next(c for c in commands if c[:2] == ["mdadm", "--create"])
    assert create[-4:] == [*DEVS[:3], "missing"] and "--raid-devices=4" in create
    assert not any(DEVS[3] in command for command in commands), commands
    assert layouts.capacity(layout, [100, 100, 100, 100]) == 300


def test_one_device_of_a_sweep_is_not_degraded() -> None:
    x1, x3 = parsed('raid = "mdadm"\nlevel = 5\ndegraded = 1\ndevice_count = [1, 3]', 4)
    assert (x1.raid, x1.degraded) == ("none", 0)
    assert (x3.devices, x3.degraded) == (tuple(DEVS[:3]), 1)


def test_a_plan_without_it_keeps_its_case_keys() -> None:
    """degraded = 0 is left out of a set-up's definition, so stored runs still resume."""
    assert "degraded" not in Layout(tuple(DEVS[:2]), raid="mdadm", level="0").definition()
    assert (
        Layout(tuple(DEVS[:3]), raid="mdadm", level="5", degraded=1).definition()["degraded"] == 1
    )
