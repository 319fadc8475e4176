"""NVMe in the lab: a plan's /dev/nvme0n1 becomes QEMU's emulated NVMe controller (whatever
backend the other lab tests use: only QEMU gives one), and its volatile write cache is a
sweep axis (`drive_cache`, feature 06h through nvme-cli): `iolab run --lab` stores one case
per setting, each under the setting as set and read back (a setting not read back measures
nothing). The real smartctl reads the emulated drive before and after each set-up's case:
its record holds the controller's model (QEMU NVMe Ctrl), its temperature and the bytes it
counted written, fio's within one data unit; the report says them and the cache as set and
read back in every format. The one lab test that needs QEMU: where QEMU's lab, nvme-cli or
smartctl is not installed it fails saying so."""

from __future__ import annotations

import html
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from conftest import LAB_COMMAND_S, needs_root, run_iolab
from iolab.model import codec
from iolab.model.setup_record import SetupRecord
from iolab.targets import drive_health, lab

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
    lacking = lab.missing(nvme=True) or _tools_lacking()
    if lacking:
        pytest.fail(f"THE LAB CANNOT GIVE AN NVMe CONTROLLER HERE: {lacking}", pytrace=False)
    (workdir / "plan.toml").write_text(PLAN)
    done = run_iolab("run", "plan.toml", "--lab", cwd=workdir, timeout_s=LAB_COMMAND_S)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "/dev/nvme0n1 -> /dev/nvme0n1 (" in done.stderr and "in QEMU (" in done.stderr
    with sqlite3.connect(workdir / "iolab.db") as con:
        cases = con.execute("SELECT setup, status, raw_json FROM cases ORDER BY id").fetchall()
        setups = con.execute("SELECT name, definition, environment FROM setups").fetchall()
        (origin,) = con.execute("SELECT origin FROM runs").fetchone()
    assert [status for _, status, _ in cases] == ["ok", "ok"], cases
    assert json.loads(origin)["lab"].startswith("QEMU ("), origin
    temperatures = set()
    for (name, definition, environment), cache in zip(
        setups, ("write-back", "write-through"), strict=True
    ):
        assert cache in name and f'"drive_cache": "{cache}"' in definition, definition
        assert "QEMU NVMe Ctrl" in environment, "the controller's model, as the kernel read it"
        record = codec.from_json(SetupRecord, json.loads(environment))
        temperatures.add(_drive_account(record, cache, _fio_wrote(cases, name)))
    _shown_in_every_format(workdir, temperatures)


def _tools_lacking() -> str | None:
    """The tools the guest runs, from the host's root: nvme-cli and smartctl."""
    lacking = [tool for tool in ("nvme", "smartctl") if shutil.which(tool) is None]
    return (
        f"no {' or '.join(lacking)} on PATH (scripts/setup --test installs them)"
        if lacking
        else None
    )


def _fio_wrote(cases: list[tuple[str, str, str]], setup: str) -> int:
    """The bytes fio says it wrote in the set-up's cases (its JSON, job by job)."""
    jobs = [job for name, _, raw in cases if name == setup for job in json.loads(raw)["jobs"]]
    return sum(int(job["write"]["io_bytes"]) for job in jobs)


def _drive_account(record: SetupRecord, cache: str, fio: int) -> int:
    """The set-up's record: its drive_cache as set and read back through nvme-cli, and the
    drive read by smartctl before and after its case: the controller's model and
    temperature, and the bytes it counted written, fio's within one NVMe data unit (1,000 x
    512 bytes: the controller counts 512-byte blocks and reports thousands of them, rounded
    up, so the difference of two readings is within one unit of what was written)."""
    (setting,) = record.drive_cache
    assert (setting.device, setting.asked) == ("/dev/nvme0n1", cache), setting
    assert setting.read_back == cache.replace("-", " "), setting
    assert setting.switch.startswith("nvme-cli feature 06h"), setting
    assert record.drives is not None and record.drives.before and record.drives.after
    before = record.drives.before.drives["nvme0n1"]
    after = record.drives.after.drives["nvme0n1"]
    assert before.model == after.model == "QEMU NVMe Ctrl", before
    assert before.temperature_c is not None and after.temperature_c is not None, before
    written = record.drives.changes()["nvme0n1"].written_bytes
    assert fio > 0 and written is not None, (fio, written)
    assert abs(written - fio) < drive_health.NVME_UNIT, (written, fio)
    print(
        f"{cache}: fio wrote {fio:,} bytes, the drive counted {written:,}; {after.temperature_c} °C"
    )
    return after.temperature_c


def _shown_in_every_format(workdir: Path, temperatures: set[int]) -> None:
    """The report names the controller, its temperature and the cache as set and read back,
    in the terminal, Markdown, HTML and JSON."""
    page = workdir / "r.html"
    run_iolab("report", "--format", "html", "-o", str(page), cwd=workdir, check=True)
    data = run_iolab("report", "--format", "json", cwd=workdir, check=True).stdout
    shown = {
        "terminal": run_iolab("report", cwd=workdir, check=True).stdout,
        "markdown": run_iolab("report", "--format", "markdown", cwd=workdir, check=True).stdout,
        "html": html.unescape(page.read_text()),
        "json": json.dumps(json.loads(data), ensure_ascii=False),
    }
    for form, text in shown.items():
        assert "in the lab's kernel (QEMU (" in text or form != "markdown", text
        assert "QEMU NVMe Ctrl" in text, form
        assert any(f"{t} °C" in text for t in temperatures), (form, temperatures)
        for cache in ("write-back", "write-through"):
            assert f"drive_cache={cache} over /dev/nvme0n1" in text or form != "markdown"
            said = f"drive write cache: set {cache}; read back: {cache.replace('-', ' ')}"
            assert said in text, (form, said)
