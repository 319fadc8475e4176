"""NVMe in the lab: a plan's /dev/nvme0n1 becomes QEMU's emulated NVMe controller (whatever
backend the other lab tests use: only QEMU gives one), and its volatile write cache is a
sweep axis (`drive_cache`, feature 06h through nvme-cli): `iolab run --lab` stores one case
per setting, each under the setting as set and read back (a setting not read back measures
nothing), the controller's model (QEMU NVMe Ctrl) in the set-up's stored environment. The
one lab test that needs QEMU: where QEMU's lab is not installed it fails saying so."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from conftest import needs_root, run_iolab
from iolab.targets import lab

pytestmark = [pytest.mark.kernel, pytest.mark.root, needs_root()]
PLAN = """name = "nvme write cache"
[[setup]]
name = "nvme"
devices = ["/dev/nvme0n1"]
drive_cache = ["write-back", "write-through"]
[[workload]]
name = "4k randwrite"
rw = "randwrite"
bs = "4k"
size = "16m"
runtime = 1
time_based = 1
direct = 1
"""


def test_an_nvme_write_cache_sweep_runs_in_the_lab(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(lab.SETTING, raising=False)  # the plan's NVMe chooses QEMU
    lacking = lab.missing(nvme=True)
    if lacking:
        pytest.fail(f"THE LAB CANNOT GIVE AN NVMe CONTROLLER HERE: {lacking}", pytrace=False)
    (workdir / "plan.toml").write_text(PLAN)
    done = run_iolab("run", "plan.toml", "--lab", cwd=workdir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "/dev/nvme0n1 -> /dev/nvme0n1 (" in done.stderr and "in QEMU (" in done.stderr
    with sqlite3.connect(workdir / "iolab.db") as con:
        cases = con.execute("SELECT setup, status FROM cases ORDER BY id").fetchall()
        setups = con.execute("SELECT name, definition, environment FROM setups").fetchall()
        (origin,) = con.execute("SELECT origin FROM runs").fetchone()
    assert [status for _, status in cases] == ["ok", "ok"], cases
    assert json.loads(origin)["lab"].startswith("QEMU ("), origin
    for (name, definition, environment), cache in zip(
        setups, ("write-back", "write-through"), strict=True
    ):
        assert cache in name and f'"drive_cache": "{cache}"' in definition, definition
        assert "QEMU NVMe Ctrl" in environment, "the controller's model, as the kernel read it"
    shown = run_iolab("report", "--format", "markdown", cwd=workdir, check=True).stdout
    assert "in the lab's kernel (QEMU (" in shown, shown
    assert "drive_cache=write-back over /dev/nvme0n1" in shown, shown
    assert "drive_cache=write-through over /dev/nvme0n1" in shown, shown
