"""A mixed workload's reads and writes apart in every output (issue 32, finding 2), and
intervals wider than their value said in words (finding 3): a job file's [mixed-70-30]
section run once with real fio, then its report in each format and its export, checked
against what fio's own JSON in the store says."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, fields, replace
from pathlib import Path

import pytest

from conftest import results_of, run_iolab
from iolab.model import Direction, DirectionMetrics
from iolab.report.cells import NO_INTERVAL, format_value, stat_cell
from iolab.report.data import Repetitions
from iolab.store import CaseRow

JOB_FILE = """\
[global]
size=16m
runtime=1
time_based=1
direct=1
ioengine=libaio
iodepth=4

[mixed-70-30]
rw=randrw
rwmixread=70
bs=4k

[seq-write]
rw=write
bs=1m
"""


@dataclass(frozen=True)
class Mixed:
    folder: Path
    read: float  # IOPS, as fio's JSON in the store says
    write: float


def _fio_iops(db: Path, workload: str) -> tuple[float, float]:
    """Read and write IOPS of the workload's case from fio's own JSON, all jobs added."""
    with sqlite3.connect(db) as con:
        (raw,) = con.execute(
            "SELECT raw_json FROM cases WHERE workload = ?", (workload,)
        ).fetchone()
    jobs = json.loads(raw)["jobs"]
    return sum(j["read"]["iops"] for j in jobs), sum(j["write"]["iops"] for j in jobs)


@pytest.fixture(scope="module")
def mixed() -> Iterator[Mixed]:
    folder = Path(os.environ.get("IOLAB_TEST_DIR", "/var/tmp")) / f"iolab-test-{os.getpid()}-mixed"
    folder.mkdir()
    try:
        (folder / "mixed.fio").write_text(JOB_FILE)
        run_iolab("run", "mixed.fio", cwd=folder, check=True)
        read, write = _fio_iops(folder / "iolab.db", "mixed-70-30")
        assert read > 0 and write > 0
        yield Mixed(folder, read, write)
    finally:
        shutil.rmtree(folder)


def _report(mixed: Mixed, *args: str) -> str:
    return run_iolab("report", "--charts", "none", *args, cwd=mixed.folder, check=True).stdout


def _shown(value: float) -> str:
    return format_value(value, "iops")


@pytest.mark.fio
def test_terminal_shows_read_write_and_total_rows(mixed: Mixed) -> None:
    text = results_of(_report(mixed))
    lines = [line for line in text.splitlines() if "mixed-70-30" in line]
    parts = [[p.strip() for p in line.split("│")] for line in lines][:3]
    assert [p[2:4] for p in parts] == [["read", "IOPS"], ["write", "IOPS"], ["total", "IOPS"]]
    assert parts[0][4].startswith(_shown(mixed.read))
    assert parts[1][4].startswith(_shown(mixed.write))
    assert parts[2][4].startswith(_shown(mixed.read + mixed.write))
    pure = [line for line in text.splitlines() if line.startswith("│ seq-write")]
    assert len(pure) == 1 and "│ write " in pure[0] and "MB/s" in pure[0]


@pytest.mark.fio
def test_markdown_rows_per_direction(mixed: Mixed) -> None:
    text = results_of(_report(mixed, "--format", "markdown"))
    assert "| workload | direction | metric | here |" in text
    for part, value in (("read", mixed.read), ("write", mixed.write)):
        assert f"| mixed-70-30 | {part} | IOPS | {_shown(value)}" in text
    assert f"| mixed-70-30 | total | IOPS | {_shown(mixed.read + mixed.write)}" in text
    assert "reads and writes apart" in text


@pytest.mark.fio
def test_html_rows_per_direction(mixed: Mixed) -> None:
    text = _report(mixed, "--format", "html")
    for part, value in (("read", mixed.read), ("write", mixed.write)):
        row = f"<th>mixed-70-30</th><td>{part}</td><td>IOPS</td>"
        assert row in text
        assert _shown(value) in text.split(row, 1)[1].split("</tr>", 1)[0]


@pytest.mark.fio
def test_csv_has_a_direction_column_and_adds_up(mixed: Mixed) -> None:
    rows = list(csv.DictReader(io.StringIO(_report(mixed, "--format", "csv"))))
    found = {r["direction"]: float(r["value"]) for r in rows if r["workload"] == "mixed-70-30"}
    assert set(found) == {"read", "write", "total"}
    assert found["read"] == pytest.approx(mixed.read, rel=1e-5)
    assert found["write"] == pytest.approx(mixed.write, rel=1e-5)
    assert found["total"] == pytest.approx(found["read"] + found["write"], rel=1e-5)
    pure = [r for r in rows if r["workload"] == "seq-write"]
    assert [(r["direction"], r["metric"]) for r in pure] == [("write", "MB/s")]


@pytest.mark.fio
def test_json_rows_carry_their_part(mixed: Mixed) -> None:
    document = json.loads(_report(mixed, "--format", "json"))
    table = next(t for s in document["sections"] for t in s["tables"] if t["name"] == "results")
    assert table["stub_headers"] == ["direction", "metric"]
    found = {r["part"]: r["cells"][0]["value"] for r in table["rows"] if r.get("part")}
    assert found["read"] == pytest.approx(mixed.read, rel=1e-9)
    assert found["write"] == pytest.approx(mixed.write, rel=1e-9)
    assert found["total"] == pytest.approx(mixed.read + mixed.write, rel=1e-9)


@pytest.mark.fio
def test_export_gives_each_direction_its_line(mixed: Mixed) -> None:
    out = run_iolab("export", "--format", "csv", "-o", "-", cwd=mixed.folder, check=True)
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    found = {r["direction"]: float(r["iops"]) for r in rows if r["workload"] == "mixed-70-30"}
    assert found == pytest.approx({"read": mixed.read, "write": mixed.write}, rel=1e-6)


@pytest.mark.fio
def test_latency_rows_read_in_one_unit(mixed: Mixed) -> None:
    document = json.loads(_report(mixed, "--format", "json"))
    table = next(t for s in document["sections"] for t in s["tables"] if t["name"] == "latency")
    assert table["stub_headers"] == ["setup", "direction", "unit"]
    assert all("(" not in column for column in table["columns"])  # the unit is the row's
    for row in table["rows"]:
        units = {c["unit"] for c in row["cells"] if c["value"] is not None}
        assert units == {row["stubs"][2]}
        largest = max(c["value"] for c in row["cells"][:-1] if c["value"] is not None)
        assert 1 <= largest < 1000 or row["stubs"][2] == "s"


# ---------------------------------------------------------------- intervals (no fio)


def test_an_interval_wider_than_its_value_is_said_in_words() -> None:
    cell = stat_cell([2107.0 - 440, 2107.0 + 440], "MB/s", "bw", runs="passes")
    assert cell.summary is not None and cell.summary.half_width is not None
    assert cell.summary.half_width > cell.summary.median  # 2 passes: t = 12.7
    assert "±" not in cell.text
    assert cell.text.startswith(f"2,107 (2 passes: {NO_INTERVAL})")
    assert NO_INTERVAL in cell.flags


def test_a_useful_interval_is_printed() -> None:
    cell = stat_cell([100.0, 101.0, 99.0], "IOPS", "iops")
    assert cell.text == "100 ± 2"
    assert NO_INTERVAL not in cell.flags


def test_a_cases_total_adds_its_directions_once_and_is_no_field() -> None:
    """read + write added once a case (a big report asks each case many times); the sums
    are no field: a report's copy of the row and equality never see them."""
    shares: tuple[tuple[Direction, float], ...] = (("read", 700.0), ("write", 300.0))
    metrics = {
        d: DirectionMetrics(d, iops, iops * 4096, int(iops * 4096), 1000, None, None)
        for d, iops in shares
    }
    row = CaseRow("one", "mixed", 0, 1, {"rw": "randrw", "bs": "4k"}, "ok", None, metrics, ())
    assert (row.total("iops"), row.total("bw")) == (1000.0, 1000.0 * 4096)
    assert row == replace(row)  # asked already: still equal to a copy that was not
    case = Repetitions().case(7, "one", row)  # the report's copy, made after the sums
    assert (case.total("iops"), case.run_id, case.metric) == (1000.0, 7, row.metric)
    assert {f.name for f in fields(case)} == {f.name for f in fields(row)} | {"run_id"}
