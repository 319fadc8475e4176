"""Tables of percentages (issue 32, finding 7): study E's Write Back as a percentage of Write
Through, imported as what it is, figures relative to a named baseline, stored apart from
measurements and shown as "x of baseline" beside measured runs, never as IOPS, never ranked
and never cited by a finding. The table is study E's as published
(tests/fixtures/import/published); the measured runs are real fio."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path

import pytest

from conftest import FIXTURES, iolab_here, run_iolab
from iolab.store import Store

E = FIXTURES / "import" / "published" / "E_megaraid_wb_vs_wt_percent.csv"
NAMES = ("--setup", "9264-8i write-back", "--baseline", "9264-8i write-through")


def _published() -> list[dict[str, str]]:
    lines = [line for line in E.read_text().splitlines() if not line.startswith("#")]
    return list(csv.DictReader(lines))


def test_study_es_table_imports_as_shares_of_its_named_baseline(tmp_path: Path) -> None:
    done = iolab_here("import", str(E), "--db", "e.db", *NAMES, cwd=tmp_path, check=True)
    assert "run 1: 40 figures of 9264-8i write-back relative to 9264-8i write-through" in (
        done.stdout
    )
    store = Store(tmp_path / "e.db", create=False)
    ratios = store.ratios(1)
    rows = _published()
    # every exercised direction of every row, as printed; 0.0% where not exercised is none
    expected = [
        (row, way)
        for row in rows
        for way in ("read", "write")
        if (way == "read" and row["read_pct"] != "0")
        or (way == "write" and row["read_pct"] != "100")
    ]
    assert len(ratios) == len(expected) == 40
    for ratio, (row, way) in zip(ratios, expected, strict=True):
        assert ratio.direction == way and ratio.metric == "iops"
        assert ratio.percent == pytest.approx(float(row[f"{way}_iops_pct"]))
        assert ratio.setup == "9264-8i write-back" and ratio.baseline == "9264-8i write-through"
    first = ratios[0]
    assert first.workload == "512 rw=read iodepth=1"
    assert first.options["description"] == "512 B; 100% Read; 0% random_QD1"
    # no measurement: the run holds no case, no metric row
    assert store.run(1).case_count == 0 and store.cases(1) == []
    with sqlite3.connect(tmp_path / "e.db") as db:
        assert db.execute("SELECT COUNT(*) FROM metrics").fetchone()[0] == 0


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
def test_without_the_set_ups_named_the_table_is_one_line_and_nothing_is_stored(
    tmp_path: Path,
) -> None:
    done = run_iolab("import", str(E), "--db", "e.db", cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "a table of percentages (one set-up's figures as a share of another's)" in done.stderr
    assert "--setup NAME --baseline NAME" in done.stderr
    assert not (tmp_path / "e.db").exists()
    same = run_iolab(
        "import", str(E), "--db", "e.db", "--setup", "x", "--baseline", "x", cwd=tmp_path
    )
    assert same.returncode == 1 and "--setup and --baseline name one set-up" in same.stderr


def test_a_report_shows_shares_as_shares_in_every_format(tmp_path: Path) -> None:
    iolab_here("import", str(E), "--db", "e.db", *NAMES, cwd=tmp_path, check=True)
    terminal = iolab_here("report", "--db", "e.db", cwd=tmp_path, check=True).stdout
    assert "Relative to a baseline (published shares, not measurements)" in terminal
    assert "IOPS:" in terminal and "55.7% (0.56x) ⚑" in terminal
    markdown = iolab_here(
        "report", "--db", "e.db", "--format", "markdown", cwd=tmp_path, check=True
    ).stdout
    line = next(
        x for x in markdown.splitlines() if x.startswith("| 512 rw=rw rwmixread=50 iodepth=32 ")
    )
    assert "281.8% (2.82x) ⚑ published" in line and "283.2% (2.83x) ⚑ published" in line
    table = iolab_here("report", "--db", "e.db", "--format", "csv", cwd=tmp_path, check=True).stdout
    rows = list(csv.DictReader(table.splitlines()))
    shares = [r for r in rows if r["value"]]
    assert len(shares) == 40 and {r["unit"] for r in shares} == {"% of baseline"}
    assert all(r["flags"] == "published" for r in shares)
    document = json.loads(
        iolab_here("report", "--db", "e.db", "--format", "json", cwd=tmp_path, check=True).stdout
    )
    assert document["findings"] == []  # a share is never a finding's measured figure
    html = iolab_here("report", "--db", "e.db", "--format", "html", cwd=tmp_path, check=True).stdout
    assert "published shares, not measurements" in html


@pytest.mark.fio
def test_shares_stand_beside_a_measured_run_never_in_its_iops_nor_its_ranking(
    workdir: Path,
) -> None:
    plan = workdir / "wbwt.toml"
    plan.write_text(
        'name = "wb against wt"\n[defaults]\nsize = "8m"\nruntime = 1\n'
        '[[setup]]\nname = "9264-8i write-back"\npath = "."\n'
        '[[setup]]\nname = "9264-8i write-through"\npath = "."\n'
        '[[workload]]\nname = "4k"\nrw = "write"\nbs = "4k"\niodepth = [1, 32]\n'
    )
    run_iolab("run", str(plan), cwd=workdir, check=True)
    run_iolab("import", str(E), *NAMES, cwd=workdir, check=True)
    page = run_iolab("report", "1", "2", "--format", "markdown", cwd=workdir, check=True).stdout
    results = page.split("## Results")[1].split("## Relative to a baseline")[0]
    rows = [line for line in results.splitlines() if line.startswith("| 4k iodepth=")]
    assert len(rows) == 2 and all("%" not in row and "published" not in row for row in rows)
    share = next(x for x in page.splitlines() if x.startswith("| 4k rw=write iodepth=1 |"))
    cells = [c.strip() for c in share.strip("|").split("|")]
    assert cells[-2] == "190.9% (1.91x) ⚑ published"  # as study E printed it
    assert cells[-1].split(" ")[0].endswith("%")  # the share measured here, beside it
    document = json.loads(
        run_iolab("report", "1", "2", "--format", "json", cwd=workdir, check=True).stdout
    )
    cited = " ".join(f["sentence"] for f in document["findings"])
    assert "190.9" not in cited and "published" not in cited
