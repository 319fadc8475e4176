"""A hypervisor's cache measured as the disk (issue 30, finding 5): on a virtual disk whose
write cache is write back, writes well above the reads of the same shape carry ⚑
virtual-cache on their cell, in every format; reads, and disks that are not virtual, do not."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from conftest import run_iolab
from iolab.analysis import virtual_cache
from iolab.analysis.virtual_cache import CachedFigure
from iolab.model import FioValue
from iolab.model.facts import DeviceFacts
from iolab.store import Store


def device(name: str, **given: Any) -> DeviceFacts:
    values: dict[str, Any] = {f.name: None for f in fields(DeviceFacts)}
    values.update(name=name, path=f"/dev/{name}", kind="disk", disk=name, read_only=False)
    values.update(partitions=(), holders=(), slaves=())
    values.update(given)
    return DeviceFacts(**values)


DISKS = [
    (device("vda", transport="virtio", write_cache="write back"), "vda (virtio"),
    (device("vda", transport="virtio", write_cache="write through"), ""),
    (device("nvme0n1", transport="nvme", write_cache="write back"), ""),
    (
        device(
            "sda", transport="scsi", vendor="VMware", model="Virtual disk", write_cache="write back"
        ),
        "sda (VMware Virtual disk",
    ),
    (
        device(
            "sdb", transport="scsi", vendor="Msft", model="Virtual Disk", write_cache="write back"
        ),
        "sdb (Msft Virtual Disk",
    ),
    (
        device(
            "nvme1n1",
            transport="nvme",
            model="Amazon Elastic Block Store",
            write_cache="write back",
        ),
        "nvme1n1 (Amazon Elastic Block Store",
    ),
    (device("xvda", write_cache="write back"), "xvda (a virtual disk"),
    (device("sdc", transport="ata", model="Samsung SSD 870", write_cache="write back"), ""),
]


@pytest.mark.parametrize(
    ("disk", "said"), DISKS, ids=[d.name + str(i) for i, (d, _) in enumerate(DISKS)]
)
def test_a_virtual_disk_with_write_back_is_told_apart(disk: DeviceFacts, said: str) -> None:
    found = virtual_cache.virtual_write_back([disk])
    assert found.startswith(said) if said else found == ""


SEQ: dict[str, FioValue] = {"bs": "1m", "iodepth": 8, "numjobs": 1}
RAND: dict[str, FioValue] = {"bs": "4k", "iodepth": 32, "numjobs": 1}
FIGURES = [
    # (read MB/s, write MB/s, the shapes alike?, warned?)
    (1_919.0, 4_129.0, True, True),  # the quick preset on a virtio disk with write back
    (1_919.0, 2_400.0, True, False),  # within 1.3x: a disk may write a little faster
    (1_919.0, 4_129.0, False, False),  # nothing to compare with
]


@pytest.mark.parametrize(("read", "write", "alike", "warned"), FIGURES)
def test_writes_far_above_reads_of_their_shape_are_warned(
    read: float, write: float, alike: bool, warned: bool
) -> None:
    figures = [
        CachedFigure("seq read", {"rw": "read", **SEQ}, read),
        CachedFigure("seq write", {"rw": "write", **(SEQ if alike else RAND)}, write),
    ]
    found = virtual_cache.warnings("vda (virtio, write cache: write back)", figures)
    assert ("seq write" in found) == warned and "seq read" not in found
    if warned:
        assert f"{write:,.0f} MB/s" in found["seq write"].message
        assert "cache=none" in found["seq write"].advice
    assert virtual_cache.warnings("", figures) == {}


PLAN = """name = "virtual"
[defaults]
size = "64m"
runtime = 2
time_based = 1
direct = 1
bs = "1m"
iodepth = 8
[[setup]]
name = "here"
path = "."
[[workload]]
name = "seq read"
rw = "read"
[[workload]]
name = "seq write"
rw = "write"
"""


def _claim_virtio_write_back(db: Path) -> bool:
    """The stored set-up's disks made virtio with write back (the environment the test
    controls); whether the run's writes were 1.3x its reads (what the check must then say)."""
    with Store(db) as store:
        run = store.run()
        ((name, _, environment),) = store.setups(run.id)
        changed: dict[str, Any] = json.loads(json.dumps(environment))
        for entry in changed["target"]["devices"].values():
            entry.update(transport="virtio", write_cache="write back")
        store.set_setup_environment(run.id, name, changed)
        mb = {c.workload: c.total("bw") / 1e6 for c in store.cases(run.id)}
    return mb["seq write"] > virtual_cache.ABOVE_READS * mb["seq read"]


@pytest.mark.fio
def test_every_format_carries_it_on_the_write_cell(workdir: Path) -> None:
    (workdir / "plan.toml").write_text(PLAN)
    run_iolab("run", "plan.toml", cwd=workdir, check=True)
    faster = _claim_virtio_write_back(workdir / "iolab.db")
    terminal = run_iolab("report", cwd=workdir, check=True).stdout
    write_line = next(line for line in terminal.splitlines() if "seq write" in line)
    read_line = next(line for line in terminal.splitlines() if "seq read" in line)
    assert ("virtual-cache" in write_line) == faster and "virtual-cache" not in read_line
    run_iolab("report", "--format", "csv", "-o", "r.csv", cwd=workdir, check=True)
    rows = list(csv.DictReader(io.StringIO((workdir / "r.csv").read_text())))
    flagged = {r.get("workload") for r in rows if "virtual-cache" in json.dumps(r)}
    assert flagged == ({"seq write"} if faster else set())
    run_iolab("report", "--format", "markdown", "-o", "r.md", cwd=workdir, check=True)
    rows_md = [line for line in (workdir / "r.md").read_text().splitlines() if "| seq " in line]
    flagged = {line.split("|")[1].strip() for line in rows_md if "virtual-cache" in line}
    assert flagged == ({"seq write"} if faster else set())
    assert all("⚑" in line for line in rows_md if "virtual-cache" in line)
