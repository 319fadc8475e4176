"""A database written by iolab's first schema opens, is upgraded in place, and reports as before.

tests/fixtures/store/v1.db was written by the version-1 iolab (commit 81a04dc) running a small
plan (two set-ups, two workloads, two repetitions, samples); the v1-report.* files are what
that iolab's `report` printed from it, re-rendered where the report's format changed on
purpose since (issue 13: absolute values beside the change, one latency unit per column,
set-up details). The upgraded database must print them byte for byte.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from conftest import FIXTURES, run_iolab
from iolab.store import APPLICATION_ID, SCHEMA_VERSION, Store

STORE = FIXTURES / "store"


@pytest.fixture
def v1(tmp_path: Path) -> Path:
    copy = tmp_path / "v1.db"
    shutil.copy(STORE / "v1.db", copy)
    return copy


def test_fixture_is_version_1() -> None:
    with sqlite3.connect(STORE / "v1.db") as con:
        assert con.execute("PRAGMA user_version").fetchone()[0] == 1


def test_upgrade_keeps_every_metric_and_sample(v1: Path) -> None:
    with sqlite3.connect(v1) as con:
        metrics = sorted(con.execute("SELECT case_id, direction, iops, bw_bytes FROM metrics"))
        samples = con.execute("SELECT count(*) FROM samples").fetchone()[0]
    with Store(v1) as store:
        assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        # known as iolab's by its tables (made before the mark), marked once upgraded
        assert store.db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        rows = store.db.execute("SELECT case_id, direction, iops, bw_bytes FROM metrics")
        assert sorted(tuple(r) for r in rows) == metrics
        assert store.db.execute("SELECT count(*) FROM samples").fetchone()[0] == samples > 0
        phases = {tuple(r) for r in store.db.execute("SELECT phase, round, host FROM metrics")}
        assert phases == {("measure", 0, "")}
        assert store.run(1).plan_name == "version one"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "golden"),
    [
        ((), "v1-report.txt"),
        (("--format", "markdown"), "v1-report.md"),
        (("--format", "csv"), "v1-report.csv"),
        (("--baseline", "b"), "v1-report-baseline-b.txt"),
    ],
)
def test_upgraded_database_reports_exactly_as_before(
    v1: Path, args: tuple[str, ...], golden: str
) -> None:
    done = run_iolab("report", "--db", str(v1), *args, cwd=v1.parent, check=True)
    assert done.stdout == (STORE / golden).read_text()
