"""`--json` for scripts: `runs --json`, `show --json`, and `report`/`compare --format json`
give what the human formats show, as typed values (numbers as numbers, intervals, flags and
the warnings a cell rests on)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import run_iolab

pytestmark = pytest.mark.slow
GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    copy = tmp_path / "devices.db"
    shutil.copyfile(GOLDEN / "devices.db", copy)
    return copy


def out(*args: str, cwd: Path) -> object:
    done = run_iolab(*args, cwd=cwd, check=True)
    assert done.stderr == ""
    return json.loads(done.stdout)


def test_runs(store: Path) -> None:
    runs = out("runs", "--db", str(store), "--json", cwd=store.parent)
    assert isinstance(runs, list) and [r["id"] for r in runs] == [1, 2]
    assert runs[0]["plan"] == "devices" and runs[0]["status"] == "done"
    assert runs[0]["cases_done"] == runs[0]["cases_planned"] == 8
    assert isinstance(runs[0]["started_at"], float)


def test_report_cells_carry_values_intervals_and_warnings(store: Path) -> None:
    doc = out("report", "1", "--db", str(store), "--format", "json", cwd=store.parent)
    assert isinstance(doc, dict) and doc["schema"] == "iolab-report"
    assert doc["sections"][0]["title"] == "Findings"
    table = next(s for s in doc["sections"] if s["title"] == "Results")["tables"][0]
    assert table["columns"] == ["xfs", "btrfs raid1"]
    mixed = next(r for r in table["rows"] if r["label"] == "mixed")
    cell = mixed["cells"][0]
    assert isinstance(cell["value"], float) and cell["unit"] == "IOPS" and cell["n"] == 2
    low, high = cell["ci95"]
    assert low < cell["value"] < high
    codes = {w["code"] for w in cell["warnings"]}
    assert codes == {"randrepeat", "fresh-device"} and codes <= set(cell["flags"])
    assert all(w["advice"] for w in cell["warnings"]), "what to do, on the cell"


def test_compare(store: Path) -> None:
    doc = out("compare", "1", "2", "--db", str(store), "--format", "json", cwd=store.parent)
    assert isinstance(doc, dict)
    table = next(t for s in doc["sections"] for t in s["tables"] if t["name"] == "comparison")
    change = table["rows"][0]["cells"][2]
    assert change["unit"] == "%" and change["significant"] in (True, False, None)


def test_show(tmp_path: Path) -> None:
    doc = out("show", "--preset", "quick", "--json", cwd=tmp_path)
    assert isinstance(doc, dict) and doc["plan"] == "quick"
    assert [s["name"] for s in doc["setups"]] == ["here"]
    assert len(doc["cases"]) == 4 and doc["cases"][0]["options"]["rw"] == "randread"
    lines = run_iolab("show", "--preset", "quick", cwd=tmp_path, check=True).stdout
    assert sum(1 for line in lines.splitlines() if line.strip()[:1].isdigit()) == 4
