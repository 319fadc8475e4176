"""The fleet's outlier rule (median and MAD, |robust z| > 3.5) and what differs in a host's
inventory; its false-alarm rate on fleets of equal hosts with noise; the progress line of a
fleet. The runs on real fio servers are in test_fleet.py."""

from __future__ import annotations

import random

import pytest

from iolab.analysis import fleet
from iolab.fio.hosts import progress_line, shares_line


def env(
    scheduler: str = "mq-deadline", options: str = "rw,relatime", kernel: str = "6.1.0"
) -> dict[str, object]:
    return {
        "host": {"kernel": kernel, "fio_version": "fio-3.33", "governor": None},
        "target": {
            "filesystem": {"fstype": "ext4", "options": options},
            "device": {"model": "QEMU HARDDISK", "firmware": "2.5+", "scheduler": scheduler},
        },
    }


def test_a_slow_host_among_equals_is_named_with_what_differs() -> None:
    figures = {f"h{k}": 12_100.0 + 10 * (k % 5) for k in range(32)}
    figures["h7"] = 7_140.0
    inventories = [fleet.inventory(h, env("none" if h == "h7" else "mq-deadline")) for h in figures]
    (found,) = fleet.outliers("rack", "4k randread", "IOPS", figures, inventories)
    assert found.host == "h7" and found.value == 7_140.0 and found.known
    assert found.spread.median == 12_120.0 and found.spread.count == 32
    assert found.z == fleet.Z_SCALE * (7_140.0 - 12_120.0) / found.spread.scale < -fleet.Z_LIMIT
    assert round(found.off, 2) == -0.41
    assert found.differs == ("its scheduler is none where 31 of 32 run mq-deadline",)


def test_a_fact_without_a_majority_or_unknown_is_not_said() -> None:
    split = [fleet.inventory(f"h{k}", env(kernel=f"6.{k % 2}")) for k in range(4)]
    assert fleet.differs("h0", split) == (), "2 against 2: no majority"
    unknown = [fleet.inventory("h0", None), *split[1:]]
    assert fleet.differs("h0", unknown) == ()
    assert fleet.inventory("h0", None).facts == tuple((name, None) for name, _ in fleet.FACTS)


def test_an_outlier_is_far_in_z_and_in_share_and_few_hosts_name_none() -> None:
    equal = {f"h{k}": 500.0 for k in range(31)}
    assert fleet.far({**equal, "odd": 460.0}) == [], "z -5.4 (the MAD's 1% floor), but 8% off"
    (named,) = fleet.far({**equal, "odd": 440.0})
    assert named[0] == "odd" and named[1] == fleet.Z_SCALE * -60 / 5.0
    loose = {f"h{k}": 500.0 + 40 * (k % 5 - 2) for k in range(31)}  # MAD 40: 8% of 500
    assert fleet.far({**loose, "odd": 400.0}) == [], "20% off, but z -1.7"
    assert fleet.far({"a": 1.0, "b": 1.0, "c": 1.0, "d": 100.0}) == [], "4 hosts: too few"


@pytest.mark.slow
def test_false_alarms_on_fleets_of_equal_hosts() -> None:
    """32 equal hosts whose figures scatter normally (2% and 10% of the mean), 2,000 fleets
    each: the share of hosts named where nothing is wrong (measured 0 and 0.36%: the normal's
    own |z| > 3.5 is 0.05%, a MAD of 32 values wavers; at 2% no host is 10% off), and of
    fleets with a host named (measured 0 and 9%: see docs/hosts.md)."""
    rng = random.Random(34)
    for spread in (0.02, 0.10):
        named = fleets = 0
        for _ in range(2000):
            figures = {f"h{k}": rng.gauss(1000.0, 1000.0 * spread) for k in range(32)}
            found = len(fleet.far(figures))
            named, fleets = named + found, fleets + (found > 0)
        assert named / (2000 * 32) < 0.005, (spread, named)
        assert fleets / 2000 < 0.12, (spread, fleets)


def test_the_progress_line_counts_a_fleet() -> None:
    few = [("a:8765", "running"), ("b:8765", "1,000 IOPS")]
    assert progress_line(few) == "a:8765 running · b:8765 1,000 IOPS"
    many = [(f"h{k}:8765", "running") for k in range(30)]
    many += [("h30:8765", "498 IOPS"), ("h31:8765", "lost")]
    assert progress_line(many) == "32 hosts: 30 running · 1 done · 1 lost"
    shares = [(f"h{k}:8765", 500.0) for k in range(31)] + [("h31:8765", 50.0)]
    assert shares_line(shares) == (
        "median 500 over 32 hosts, lowest h31:8765 50, highest h30:8765 500"
    )


def _with_drive(firmware: str, celsius: int) -> dict[str, object]:
    """An inventory whose disk gave its own account (iolab env --json's shape)."""
    found = env()
    target = found["target"]
    assert isinstance(target, dict)
    health = {"model": "INTEL SSDPE2KX080T8", "firmware": firmware, "temperature_c": celsius}
    target.update(disks=["nvme0n1"], devices={"nvme0n1": {"health": health}})
    return found


def test_a_drive_on_other_firmware_or_hotter_is_named() -> None:
    hosts = [fleet.inventory(f"h{k}", _with_drive("VDV10170", 34 + k % 3)) for k in range(8)]
    hosts[3] = fleet.inventory("h3", _with_drive("VDV10131", 71))
    assert fleet.differs("h3", hosts) == (
        "its drive firmware is VDV10131 where 7 of 8 run VDV10170",
        "its drive is at 71 °C where the fleet's median is 35 °C",
    )
    assert fleet.differs("h4", hosts) == ()  # a degree or two warmer is not named
