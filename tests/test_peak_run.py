"""`iolab peak` end to end with real fio: 1 s points on a test file, the search, the curve,
the report; and its one-line refusals."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from conftest import ctrl_c_when, run_iolab, stored_cases
from loopdevs import LoopDevs, loops_fixture, sh

__all__ = ["loops_fixture"]


def recorded(db: Path) -> dict[str, object]:
    with sqlite3.connect(db) as con:
        (environment,) = con.execute("SELECT environment FROM setups").fetchone()
    found: dict[str, object] = json.loads(environment)["peak_search"]
    return found


@pytest.mark.fio
def test_peak_with_its_curve_on_a_real_file(workdir: Path) -> None:
    db = workdir / "peak.db"
    done = run_iolab(
        "peak",
        "--target",
        str(workdir),
        "--runtime",
        "1",
        "--size",
        "16m",
        "--numjobs",
        "1",
        "--iodepth",
        "1-4",
        "--curve",
        "--db",
        str(db),
        cwd=workdir,
        check=True,
    )
    assert "Peak search:" in done.stdout and "│ winner │" in done.stdout, done.stdout
    assert "curve search: peak" in done.stdout and "curve of 11 points" in done.stdout
    assert "the start point again after the search" in done.stdout
    found = recorded(db)["4k randread"]
    assert isinstance(found, dict)
    winner, curve = found["winner"], found["curve"]
    assert winner["numjobs"] == 1 and winner["iodepth"] in (1, 2, 4)
    assert len(winner["values"]) == 3 and winner["low"] < winner["median"] < winner["high"]
    loads = [p["load_pct"] for p in curve["points"]]
    assert loads == [*range(10, 101, 10), None]
    low = curve["points"][0]
    assert low["ok"] and low["delivered"], "10% of the peak is easy to deliver"
    assert low["p99_ns"] > 0 and low["delivered_iops"] == pytest.approx(low["asked_iops"], rel=0.1)
    with sqlite3.connect(db) as con:
        jobs = [row[0] for row in con.execute("SELECT job_file FROM cases ORDER BY id")]
    assert len(jobs) == len(found["points"]) + 2 + 10 + 1
    keys = {line.split("=")[0] for job in jobs for line in job.splitlines() if "=" in line}
    assert not keys & {"method", "peak_margin", "peak_numjobs", "peak_iodepth", "peak_again"}
    assert sum("rate_iops=" in job for job in jobs) == 10
    assert not (workdir / "iolab.testfile").exists()
    report = run_iolab(
        "report", "--db", str(db), "--format", "markdown", "-o", "r.md", cwd=workdir, check=True
    )
    text = (workdir / "r.md").read_text()
    assert "## Peak and load curve" in text and "### Latency against load" in text, report.stderr
    assert [f.name for f in (workdir / "r_files").glob("curve-*-4k-randread.png")], report.stderr
    assert not list((workdir / "r_files").glob("scaling-*")), "the search's points: own section"


@pytest.mark.fio
def test_peak_again_after_ctrl_c_resumes_its_search(workdir: Path) -> None:
    """The same command after Ctrl-C mid-search resumes it (more cases are stored by then
    than the two planned), running no stored point again."""
    db = workdir / "peak.db"
    args = [
        "peak",
        "--target",
        str(workdir),
        "--runtime",
        "1",
        "--size",
        "16m",
        "--numjobs",
        "1-4",
        "--iodepth",
        "1-16",
        "--db",
        str(db),
    ]
    code, err = ctrl_c_when(args, workdir, lambda: len(stored_cases(db)) >= 3)
    before = stored_cases(db)
    said = f"{len(before)} (2 planned, more added as it ran)"
    assert code == 130 and f"interrupted: {said} cases are stored" in err, err
    assert len(before) >= 3 and "--resume 1" in err
    report = run_iolab("report", "--db", str(db), cwd=workdir, check=True).stdout
    assert f"incomplete: run 1 has {said} cases done" in " ".join(report.split()), report
    again = run_iolab(*args, cwd=workdir, check=True)
    assert f"resuming run 1: {said} cases already stored" in again.stderr
    after = stored_cases(db)
    assert after[: len(before)] == before
    names = [(workload, repetition) for _, workload, repetition, _ in after]
    assert len(names) == len(set(names)), "no point stored twice"
    assert recorded(db)["4k randread"]["winner"] is not None  # type: ignore[index]
    assert after[len(before)][1] == "4k randread numjobs=2 iodepth=2 again", "planned: first"


@pytest.mark.fio
@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--rw", "randred"], "--rw 'randred' is not allowed; choose one of read"),
        (["--bs", "4q"], "--bs '4q' is not a size"),
        (["--numjobs", "8-1"], "--numjobs '8-1' must be LOW-HIGH (or one value), from 1 to"),
        (["--iodepth", "x"], "--iodepth 'x' must be LOW-HIGH"),
        (["--runtime", "0.1"], "runtime"),
        (["--target", "/nonexistent/here"], "does not exist"),
    ],
)
def test_bad_flags_are_one_line_and_run_nothing(workdir: Path, args: list[str], said: str) -> None:
    done = run_iolab("peak", "--db", str(workdir / "x.db"), *args, cwd=workdir)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0], done.stderr
    assert not (workdir / "x.db").exists()


def _slo_run(target: Path, workdir: Path) -> str:
    db = workdir / "slo.db"
    done = run_iolab(
        "peak",
        "--target",
        str(target),
        "--runtime",
        "1",
        "--size",
        "16m",
        "--numjobs",
        "1",
        "--iodepth",
        "1-4",
        "--slo",
        "p99<=2ms",
        "--db",
        str(db),
        cwd=workdir,
        check=True,
    )
    (line,) = [x for x in done.stdout.splitlines() if "curve search: slo p99<=2ms: " in x]
    curve = recorded(db)["4k randread"]["curve"]  # type: ignore[index]
    slo = curve["slo"]
    assert slo["target"] == "p99<=2ms" and len(slo["iops"]) == 3, slo
    assert sorted(slo["latency_ns"])[1] <= 2e6, "the median of its three runs meets it"
    md = run_iolab(
        "report", "--db", str(db), "--format", "markdown", cwd=workdir, check=True
    ).stdout
    cells = [[c.strip() for c in r.split("|")] for r in md.splitlines() if r.startswith("| ")]
    flagged = [c for c in cells if len(c) > 2 and "slo" in c[2].split(", ")]
    assert len(flagged) == 1, md
    assert line.split("slo p99<=2ms: ", 1)[1] in md.replace("&lt;", "<")
    return line


@pytest.mark.fio
def test_peak_within_a_latency_target_on_a_file(workdir: Path) -> None:
    line = _slo_run(workdir, workdir)
    assert " IOPS (95%: " in line and ", 3 runs) at " in line, line


@pytest.mark.fio
@pytest.mark.root
def test_peak_within_a_latency_target_on_a_btrfs_raid0_of_two(
    workdir: Path, loops: LoopDevs
) -> None:
    devs = [loops.make(256) for _ in range(2)]
    mnt = workdir / "mnt"
    mnt.mkdir()
    sh("mkfs.btrfs", "-f", "-d", "raid0", "-m", "raid0", *devs)
    sh("mount", devs[0], str(mnt))
    try:
        line = _slo_run(mnt, workdir)
    finally:
        sh("umount", str(mnt))
    assert " IOPS (95%: " in line, line
