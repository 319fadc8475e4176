"""The drive's own account where a person looks: `iolab env`, a run's cases and set-up record,
every report format and the export; with a smartctl on PATH that prints what a real Intel DC
P4510 printed (tests/fake_smartctl.py), from one reading on with warning_temp_time grown."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest

import fake_smartctl
from conftest import iolab_here, run_iolab, said
from iolab.model import codec
from iolab.model.setup_record import SetupRecord
from iolab.report import data
from iolab.report.charts import Chart
from iolab.report.views import time_figures
from iolab.runner import telemetry
from iolab.store import Store
from loopdevs import LoopDevs, device_sha256, is_mounted, loops_fixture

_ = loops_fixture  # the `loops` fixture

PLAN = """
name = "drives"

[defaults]
runtime = 1
size = "8m"

[[setup]]
name = "here"
path = "{here}"

[[workload]]
rw = "randwrite"
bs = "4k"

[[workload]]
rw = "randread"
bs = "4k"
"""
DEVICE_PLAN = """
[defaults]
runtime = 1
size = "8m"

[[setup]]
name = "ext4 on loop"
devices = ["{dev}"]
filesystem = "ext4"

[[workload]]
rw = "randread"
bs = "4k"
"""
LOG = "nvme_smart_health_information_log"
HOT = {f"{LOG}.warning_temp_time": 4, f"{LOG}.temperature": 74, "temperature.current": 74}


@pytest.fixture
def smartctl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The P4510's smartctl first on PATH; its state file."""
    state = tmp_path / "smart.json"
    for key, value in fake_smartctl.install(tmp_path / "bin", state).items():
        monkeypatch.setenv(key, value)
    return state


@pytest.mark.fio  # iolab env asks fio its version
def test_env_shows_the_drives_own_account(smartctl: Path, workdir: Path) -> None:
    text = iolab_here("env", ".", cwd=workdir, check=True).stdout
    line = next(x for x in text.splitlines() if x.startswith("drive "))
    shown = ("INTEL SSDPE2KX080T8", "29 °C", "94.7 TB (94,678,652,928,000 bytes)", "0% of its")
    assert all(part in line for part in shown), line
    assert "12,164 hours" in line
    facts = json.loads(iolab_here("env", ".", "--json", cwd=workdir, check=True).stdout)
    disk = facts["target"]["disks"][0]
    health = facts["target"]["devices"][disk]["health"]
    assert health["host_written_bytes"] == 94678652928000 and health["temperature_c"] == 29
    assert health["percentage_used"] == 0 and health["power_on_hours"] == 12164
    assert "nand_written_bytes" not in health  # the P4510 does not report it: absent, not 0


@pytest.mark.fio
def test_env_says_a_smartctl_that_prints_garbage_in_one_line(smartctl: Path, workdir: Path) -> None:
    fake_smartctl.install(smartctl.parent / "bin", smartctl, mode="garbage")
    text = iolab_here("env", ".", cwd=workdir, check=True).stdout
    disk = json.loads(iolab_here("env", "--json", ".", cwd=workdir).stdout)["target"]["disks"][0]
    assert [x for x in text.splitlines() if x.startswith("drive ")] == [
        f"drive     {disk}: not read: smartctl printed what is not JSON"
    ]


def _run(workdir: Path) -> tuple[str, list[list[str]], SetupRecord]:
    (workdir / "here").mkdir()
    (workdir / "plan.toml").write_text(PLAN.format(here=workdir / "here"))
    done = run_iolab("run", "plan.toml", cwd=workdir, check=True)
    with sqlite3.connect(workdir / "iolab.db") as db:
        rows = db.execute("SELECT warnings FROM cases ORDER BY id").fetchall()
        stored = db.execute("SELECT environment FROM setups").fetchone()[0]
    codes = [[w["code"] for w in json.loads(r[0] or "[]")] for r in rows]
    return done.stdout + done.stderr, codes, codec.from_json(SetupRecord, json.loads(stored))


@pytest.mark.fio
def test_a_drive_that_ran_hot_warns_on_that_case_everywhere(smartctl: Path, workdir: Path) -> None:
    # readings: 1 the env's, which is the set-up's before (one smartctl a disk, not one for
    # each), 2 after case 1, 3 after case 2: hot from 3
    state = json.loads(smartctl.read_text())
    smartctl.write_text(json.dumps({**state, "from_call": 3, "set": HOT}))
    printed, codes, record = _run(workdir)
    assert ["drive-hot" in c for c in codes] == [False, True]
    assert "the drive ran hot during the case" in printed and "4 min above its warning" in printed
    assert "highest 74 °C" in printed, printed
    log = record.drives
    assert log is not None and log.before is not None and log.after is not None
    (disk,) = log.before.drives
    assert log.before.drives[disk].warning_temp_minutes == 0
    assert log.after.drives[disk].warning_temp_minutes == 4
    assert log.changes()[disk].temperature_rise_c == 74 - 29
    for form in ("table", "markdown", "csv", "json", "html"):
        shown = run_iolab("report", "--format", form, "--charts", "none", cwd=workdir, check=True)
        assert "drive-hot" in shown.stdout or "ran hot" in shown.stdout, form
        if form != "csv":  # CSV is the results table alone
            assert "INTEL SSDPE2KX080T8" in shown.stdout, form  # the environment's drives
    markdown = run_iolab("report", "--format", "markdown", "--charts", "none", cwd=workdir).stdout
    moved = next(line for line in markdown.splitlines() if "over its cases" in line)
    assert "temperature +45 °C (highest 74 °C)" in moved and "4 min added above" in moved
    assert "wrote 0 B (0 bytes)" in moved  # the recorded drive's count did not move
    assert re.search(r"; fio wrote \d+\.\d [kMG]B$", moved), moved
    exported = run_iolab("export", "--format", "json", "-o", "-", cwd=workdir, check=True)
    assert "drive-hot" in exported.stdout and "warning_temp_minutes" in exported.stdout


@pytest.mark.fio
def test_drives_whose_counters_do_not_move_warn_nothing(smartctl: Path, workdir: Path) -> None:
    printed, codes, record = _run(workdir)
    assert not any(code.startswith("drive-") for case in codes for code in case), codes
    assert "ran hot" not in printed
    assert record.drives is not None and record.drives.interval
    assert fake_smartctl.calls(smartctl) >= 3  # read before the set-up and after each case


def _failing(smartctl: Path) -> None:
    state = json.loads(smartctl.read_text())
    smartctl.write_text(json.dumps({**state, "set": {"smart_status.passed": False}}))


def _loops_now() -> list[str]:
    listed = subprocess.run(
        ["losetup", "--list", "--noheadings", "-O", "NAME"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return sorted(listed.split())


@pytest.mark.fio
def test_a_failing_drive_is_refused_for_writes_before_anything_is_made(
    smartctl: Path, workdir: Path
) -> None:
    _failing(smartctl)
    (workdir / "here").mkdir()
    (workdir / "plan.toml").write_text(PLAN.format(here=workdir / "here"))
    refused = run_iolab("run", "plan.toml", cwd=workdir)
    assert refused.returncode != 0
    lines = said(refused.stderr)
    assert len(lines) == 1 and "SMART status says the drive is failing" in lines[0], lines
    assert "--failing-drives" in lines[0] and "set-up 'here'" in lines[0]
    assert list((workdir / "here").iterdir()) == []  # no test file
    assert sorted(p.name for p in workdir.iterdir()) == ["here", "plan.toml"]  # no database
    # the pre-flight's one question (all of it, kept for the set-up's environment and first
    # reading): the set-up was never read
    (asked,) = json.loads(smartctl.read_text())["asked"]
    assert asked.startswith("-j -a /dev/"), asked
    insisted = run_iolab("run", "plan.toml", "--failing-drives", cwd=workdir)
    assert insisted.returncode == 0, insisted.stderr
    assert "SMART FAILED" in run_iolab("report", cwd=workdir, check=True).stdout


@pytest.mark.fio
def test_a_failing_drive_is_read_by_reading_workloads(smartctl: Path, workdir: Path) -> None:
    _failing(smartctl)
    (workdir / "here").mkdir()
    (workdir / "plan.toml").write_text(
        PLAN.format(here=workdir / "here").replace("randwrite", "read")
    )
    done = run_iolab("run", "plan.toml", cwd=workdir)
    assert done.returncode == 0, done.stderr


@pytest.mark.fio
def test_a_set_up_on_a_failing_drive_is_never_built(
    smartctl: Path, workdir: Path, loops: LoopDevs
) -> None:
    """A loop device over a file on the host's disk: the disk's SMART status fails, so the
    set-up (ext4 on the loop device) is refused before mkfs, mount or test file."""
    dev = loops.make(64)
    before, loops_before = device_sha256(dev), _loops_now()
    (workdir / "plan.toml").write_text(DEVICE_PLAN.format(dev=dev))
    _failing(smartctl)
    refused = run_iolab("run", "plan.toml", "--yes-destroy", dev, cwd=workdir)
    assert refused.returncode != 0
    lines = said(refused.stderr)
    assert len(lines) == 1 and "SMART status says the drive is failing" in lines[0], lines
    assert device_sha256(dev) == before  # no mkfs, not a byte written
    assert _loops_now() == loops_before  # no loop device made
    assert (
        not is_mounted("/run/iolab/ext4-on-loop") and not Path("/run/iolab/ext4-on-loop").exists()
    )
    assert sorted(p.name for p in workdir.iterdir()) == ["plan.toml"]  # no database


@pytest.mark.fio
def test_a_smartctl_that_hangs_costs_its_limit_once_and_is_said_once(
    smartctl: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_smartctl.install(smartctl.parent / "bin", smartctl, mode="hang")
    monkeypatch.setenv("IOLAB_DRIVE_ANSWER_S", "1")
    printed, codes, record = _run(workdir)
    # the target's facts, which are the set-up's first reading too: asked once
    assert fake_smartctl.calls(smartctl) == 1
    said = [line for line in printed.splitlines() if "drive not read" in line]
    assert len(said) == 1 and "did not answer within 1 s" in said[0], printed
    assert not any(code.startswith("drive-") for case in codes for code in case)
    assert record.drives is not None and record.drives.before is not None
    assert record.drives.before.drives == {} and len(record.drives.before.problems) == 1


SERIES_PLAN = """
[defaults]
runtime = 3
time_based = 1
size = "8m"
log_avg_msec = 1000

[[setup]]
name = "here"
path = "{here}"

[[workload]]
rw = "randread"
bs = "4k"
"""


TIMESERIES = ("--charts", "timeseries")


def _series_run(workdir: Path) -> list[Chart]:
    (workdir / "here").mkdir()
    (workdir / "plan.toml").write_text(SERIES_PLAN.format(here=workdir / "here"))
    iolab_here("run", "plan.toml", cwd=workdir, check=True)
    with Store(workdir / "iolab.db") as store:
        return time_figures.time_series(data.load(store, [None]))


@pytest.mark.fio
def test_the_time_series_shows_the_drives_temperature_where_it_was_read(
    workdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk under the target given a sensor (hwmon's file, in a sysfs tree of the
    test's): the telemetry reads it each second and the chart carries it, in °C."""
    watched = telemetry.devices_of([workdir])
    assert watched, "the target's disk is counted in /proc/diskstats"
    monkeypatch.setattr(telemetry, "SYS_BLOCK", tmp_path / "sys")
    for device in watched:
        folder = tmp_path / "sys" / device / "device" / "hwmon7"
        folder.mkdir(parents=True)
        (folder / "temp1_input").write_text("43850\n")
    charts = _series_run(workdir)
    (panel,) = [c for c in charts if c.y.unit == "°C"]
    assert panel.panel and panel.title == "Drive temperature over time: 4k randread"
    assert panel.x.label == charts[0].x.label  # the same clock as the series above
    (line,) = panel.series
    assert line.name == watched[0] and set(line.y) == {43.85} and len(line.y) >= 3
    iolab_here("report", "--format", "html", "-o", "r.html", *TIMESERIES, cwd=workdir, check=True)
    page = (workdir / "r.html").read_text()
    assert f'data-chart="{panel.name}"' in page and "drive temperature (\\u00b0C)" in page
    iolab_here("report", "--format", "markdown", "-o", "r.md", *TIMESERIES, cwd=workdir, check=True)
    assert f"r_files/{panel.name}.png" in (workdir / "r.md").read_text()
    assert (workdir / "r_files" / f"{panel.name}.png").stat().st_size > 0


@pytest.mark.fio
def test_the_time_series_has_no_temperature_where_none_was_read(
    workdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(telemetry, "SYS_BLOCK", tmp_path / "no-sensors")
    charts = _series_run(workdir)
    assert [c.y.unit for c in charts] == ["IOPS", "MB/s = 10⁶ bytes/s", "µs"]
    assert not any(c.panel or "temperature" in c.title for c in charts)
