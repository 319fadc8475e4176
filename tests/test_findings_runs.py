"""Findings on a fresh run of a small study-like plan: a btrfs RAID0 of two loop devices against
one loop device with XFS, a numjobs sweep and a large-block read, 3 repetitions each. What the
findings say must agree with the tables they rest on: each figure cited is in the report, a
lead is claimed only where the results' change column says the difference is significant,
and the sweep is described per doubling."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import results_of, run_iolab
from loopdevs import LoopDevs, loops_fixture

__all__ = ["loops_fixture"]


def plan_text(devs: list[str]) -> str:
    return f"""
name = "raid0 against one"
repeat = 3
[defaults]
runtime = 1
size = "32m"
randrepeat = 0

[[setup]]
name = "one device"
devices = ["{devs[0]}"]
filesystem = "xfs"

[[setup]]
name = "btrfs raid0 of 2"
devices = ["{devs[1]}", "{devs[2]}"]
raid = "btrfs"
level = "raid0"

[[workload]]
name = "rand"
rw = "randread"
bs = "4k"
iodepth = 8
numjobs = [1, 2]

[[workload]]
name = "seq"
rw = "read"
bs = "1m"
iodepth = 8

[report]
baseline = "one device"
"""


@pytest.mark.fio
@pytest.mark.root
def test_findings_of_a_fresh_run_agree_with_its_tables(loops: LoopDevs, workdir: Path) -> None:
    devs = [loops.make(320) for _ in range(3)]  # XFS wants 300 MB
    (workdir / "plan.toml").write_text(plan_text(devs))
    confirm = [arg for d in devs for arg in ("--yes-destroy", d)]
    run_iolab("run", "plan.toml", *confirm, cwd=workdir, check=True)
    md = run_iolab("report", "--format", "markdown", cwd=workdir, check=True).stdout
    assert re.findall(r"^## (.+)$", md, re.M)[:2] == ["Findings", "Results"]
    said = md.split("### What the numbers show")[1].split("\n### ")[0]
    more = md.split("## More findings")[1] if "## More findings" in md else ""  # the appendix
    lines = [line for line in (said + more).splitlines() if line.startswith("- ") and "[" in line]
    kinds = [line.rsplit("[", 1)[1].split(";")[0].rstrip("]") for line in lines]
    assert {"winner", "cost", "scaling", "trust"} <= set(kinds), lines
    results = results_of(md).split("\n## ")[0]
    for figure in re.findall(r"\d[\d,]*(?:\.\d+)? ± [\d,.]+", said + more):
        assert figure in md.split("## Results")[1], figure  # every figure cited is shown
    rows = {
        line.split("|")[1].strip(): line
        for line in results.splitlines()
        if line.startswith("| rand") or line.startswith("| seq")
    }
    assert set(rows) == {"rand numjobs=1", "rand numjobs=2", "seq"}, rows
    leaders = md.split("### Leaders per workload")[1].split("\n### ")[0]
    for workload, row in rows.items():
        (lead,) = [line for line in leaders.splitlines() if line.startswith(f"| {workload} |")]
        within = "n.s." in row.split("|")[-2]  # the change vs the baseline, within the noise
        assert ("n.s." in lead.split("|")[-2]) == within, (lead, row)
    (family,) = [line for line in lines if line.startswith("- rand, 2 points (numjobs 1-2): ")]
    (seq,) = [line for line in lines if line.startswith("- seq:") and "[winner;" in line]
    assert re.search(r"\): (.+? leads on \d|leads: |within the noise on 2)", family), family
    assert "leads by" in seq or "not distinguishable" in seq, seq
    (sweep,) = [line for line in lines if line.startswith("- rand, per doubling of numjobs")]
    for setup in ("one device", "btrfs raid0 of 2"):
        assert re.search(rf"{setup} \(\d[^→]* → \d", sweep), (setup, sweep)  # its figures
    (cost,) = [line for line in lines if "[cost;" in line]
    assert cost.startswith("- Against one device, btrfs raid0 of 2 changes the figures by a ")


DEVICE_COUNT_PLAN = """
name = "device count"
[defaults]
runtime = 2
time_based = 1
size = "32m"
randrepeat = 0
direct = 1

[[setup]]
name = "btrfs raid0"
devices = [{devs}]
device_count = [1, 2, 4]
raid = "btrfs"
level = "raid0"

[[workload]]
name = "4k"
rw = "randread"
bs = "4k"
ioengine = "libaio"
iodepth = [1, 32]
"""


@pytest.mark.fio
@pytest.mark.root
def test_a_device_count_sweep_at_qd1_is_never_blamed_on_software(
    loops: LoopDevs, workdir: Path
) -> None:
    """btrfs RAID0 over 1, 2 and 4 loop devices at QD1 and QD32 (issue 30, finding 3): where
    QD1 goes flat, the reason given is that one I/O uses one member at a time (not "software
    is", as before), whatever else ran on the host; QD32 is never told that; the sweep starts
    at the single device (the 1 of `device_count = [1, 2, 4]`)."""
    devs = [loops.make(256) for _ in range(4)]
    (workdir / "plan.toml").write_text(
        DEVICE_COUNT_PLAN.format(devs=", ".join(f'"{d}"' for d in devs))
    )
    confirm = [arg for d in devs for arg in ("--yes-destroy", d)]
    run_iolab("run", "plan.toml", *confirm, cwd=workdir, check=True)
    md = run_iolab("report", "--format", "markdown", cwd=workdir, check=True).stdout
    flat = [line for line in md.splitlines() if "flat-scaling:" in line and "device_count" in line]
    for line in flat:
        qd1 = "iodepth=1" in line.split(":")[1]
        assert ("one I/O is in flight" in line) == qd1, line
        assert "software is" not in line or not qd1, line
    report = json.loads(run_iolab("report", "--format", "json", cwd=workdir, check=True).stdout)
    sweeps = [f for f in report["findings"] if f["group"].endswith("· device_count")]
    assert sweeps, report["findings"]
    for found in sweeps:  # each sweep's first figure is its single device's
        single = {c["setup"] for c in found["cells"][:1]}
        assert all(re.search(r"\bx?1\b|single", s) for s in single), found["cells"]
