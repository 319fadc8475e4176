"""The command line as a user meets it: one-line errors, no tracebacks, every command works."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import HERE_SETUP, iolab_here, needs_root, results_of, run_iolab
from iolab.plan.load import load_preset, preset_names

GOOD = (
    HERE_SETUP
    + """
[[workload]]
rw = "randread"
bs = "4k"
"""
)


def one_line_error(done: subprocess.CompletedProcess[str], *words: str) -> str:
    assert done.returncode != 0
    assert "Traceback" not in done.stderr + done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.mark.fio
@pytest.mark.parametrize(
    ("change", "words"),
    [
        (
            ('bs = "4k"', 'bs = "4k"\nblocksze = "4k"'),
            ["plan.toml:13: unknown key 'blocksze'", "did you mean 'blocksize'?"],
        ),
        (('bs = "4k"', 'bs = "4q"'), ["plan.toml:12: bs = '4q' is not a size"]),
        (
            ('rw = "randread"', 'rw = "randred"'),
            ["plan.toml:11: rw = 'randred' is not allowed; choose one of read, write"],
        ),
        (
            ("[defaults]", "[defaults]\ncolour = 1"),
            ["plan.toml:3: unknown key 'colour'", "iolab import"],
        ),
        (
            ('path = "{path}"', 'path = "{path}/missing"'),
            ["set-up 'here'", "missing' does not exist; create the directory"],
        ),
    ],
)
def test_bad_plans_get_one_line_and_exit_1(
    workdir: Path, change: tuple[str, str], words: list[str]
) -> None:
    (workdir / "plan.toml").write_text(GOOD.replace(*change).format(path=workdir))
    done = run_iolab("run", "plan.toml", cwd=workdir)
    one_line_error(done, *words)
    assert done.returncode == 1
    assert not (workdir / "iolab.db").exists() or not _cases(workdir / "iolab.db")


def _cases(db: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as con:
        return list(con.execute("SELECT * FROM cases"))


@pytest.fixture
def read_only_dir(workdir: Path) -> Iterator[Path]:
    target = workdir / "ro"
    target.mkdir()
    subprocess.run(["mount", "--bind", "-o", "ro", str(target), str(target)], check=True)
    yield target
    subprocess.run(["umount", str(target)], check=True)


@pytest.mark.fio
@pytest.mark.root
@needs_root()
def test_read_only_target_is_refused_before_anything_runs(
    workdir: Path, read_only_dir: Path
) -> None:
    done = run_iolab("run", "--target", str(read_only_dir), "--runtime", "1", cwd=workdir)
    one_line_error(done, "is on a read-only filesystem; remount it read-write")


@pytest.mark.slow
def test_flags_are_checked_too(workdir: Path) -> None:
    one_line_error(
        run_iolab("run", "--size", "4q", cwd=workdir), "--size: size = '4q' is not a size"
    )
    one_line_error(run_iolab("run", "--preset", "nope", cwd=workdir), "no preset named 'nope'")
    one_line_error(run_iolab("run", "missing.toml", cwd=workdir), "missing.toml: no such plan file")
    one_line_error(run_iolab("report", cwd=workdir), "iolab.db does not exist")
    one_line_error(run_iolab("run", "x.toml", "--preset", "quick", cwd=workdir), "not both")


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
def test_a_newer_store_is_refused_and_left_alone(workdir: Path) -> None:
    db = workdir / "future.db"
    with sqlite3.connect(db) as con:
        con.execute("PRAGMA user_version = 99")
    done = run_iolab("runs", "--db", str(db), cwd=workdir)
    one_line_error(done, "written by a newer iolab (schema 99", "upgrade iolab")
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA user_version").fetchone()[0] == 99


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
def test_missing_fio_is_explained(workdir: Path) -> None:
    env = {**os.environ, "PATH": "/nonexistent"}
    done = subprocess.run(
        [sys.executable, "-m", "iolab", "run", "--target", str(workdir)],
        cwd=workdir,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    one_line_error(done, "fio is not installed: run 'apt-get install fio'")


def test_presets_lists_each_with_origin(workdir: Path) -> None:
    lines = iolab_here("presets", cwd=workdir, check=True).stdout.splitlines()
    assert len(lines) == len(preset_names())
    assert any(line.startswith("ssd-raid-card-2012") and "Study A (2012)" in line for line in lines)
    assert any(line.startswith("crystaldiskmark ") and "CrystalDiskMark" in line for line in lines)


@pytest.mark.fio
@pytest.mark.parametrize("name", preset_names())
def test_show_works_for_every_preset(workdir: Path, name: str) -> None:
    matrix = run_iolab("show", "--preset", name, cwd=workdir, check=True).stdout
    cases = [line for line in matrix.splitlines() if not line.startswith("#")]
    assert len(cases) == len(load_preset(name).cases())
    jobs = run_iolab(
        "show", "--preset", name, "--fio", "--target", str(workdir), cwd=workdir, check=True
    ).stdout
    assert jobs.count("\n[") + jobs.startswith("[") >= 1
    assert not (workdir / "iolab.db").exists(), "show runs nothing and stores nothing"


@pytest.mark.fio
def test_show_fio_for_study_a_has_the_published_parameters(workdir: Path) -> None:
    jobs = run_iolab(
        "show",
        "--preset",
        "ssd-raid-card-2012",
        "--fio",
        "--target",
        str(workdir),
        cwd=workdir,
        check=True,
    ).stdout
    sections = [s for s in jobs.split("\n\n") if "[" in s]
    assert len(sections) == 6
    for section in sections:
        lines = section.splitlines()
        for option in ("direct=1", "size=5g", "runtime=10", "group_reporting=1"):
            assert option in lines
    four_k = [s.splitlines() for s in sections if "\nbs=4k\n" in s]
    assert len(four_k) == 4 and all("numjobs=64" in s for s in four_k)
    big = [s.splitlines() for s in sections if "\nbs=32m\n" in s]
    assert len(big) == 2 and all("numjobs=16" in s for s in big)


@pytest.mark.fio
def test_report_formats_and_baseline(workdir: Path) -> None:
    two = GOOD.format(path=workdir) + f'\n[[setup]]\nname = "again"\npath = "{workdir}"\n'
    (workdir / "plan.toml").write_text(two)
    run_iolab("run", "plan.toml", cwd=workdir, check=True)
    md = run_iolab("report", "--format", "markdown", "--baseline", "here", cwd=workdir, check=True)
    assert "| workload | metric | here (baseline) | again |" in md.stdout
    row = next(
        line for line in results_of(md.stdout).splitlines() if line.startswith("| 4k randread")
    )
    change = row.rstrip(" |").split("|")[-1]  # the change column, with its warnings if any
    assert re.match(r"\s*[+-]\d+\.\d%", change), row
    csv_file = workdir / "out.csv"
    run_iolab("report", "1", "--format", "csv", "-o", str(csv_file), cwd=workdir, check=True)
    lines = csv_file.read_text().splitlines()
    assert lines[0] == "workload,metric,setup,value,unit,n,ci95_low,ci95_high,cov_pct,flags"
    assert len(lines) == 3 and lines[1].startswith("4k randread,IOPS,here,")
    assert lines[1].split(",")[4] == "IOPS" and float(lines[1].split(",")[3]) > 0
    one_line_error(run_iolab("report", "--baseline", "nope", cwd=workdir), "'nope' is not a set-up")
    one_line_error(run_iolab("report", "7", cwd=workdir), "has no run 7")
    missing = workdir / "no-such-dir" / "x.md"
    one_line_error(run_iolab("report", "-o", str(missing), cwd=workdir), "no directory")
    assert not missing.parent.exists()
    runs = run_iolab("runs", cwd=workdir, check=True).stdout
    assert "done" in runs and "2 of 2 cases" in runs


@pytest.mark.fio
def test_buffered_io_that_fits_in_memory_is_flagged(workdir: Path) -> None:
    (workdir / "plan.toml").write_text(
        GOOD.format(path=workdir).replace('bs = "4k"', 'bs = "4k"\ndirect = 0')
    )
    done = run_iolab("run", "plan.toml", cwd=workdir, check=True)
    assert "direct=0 over 8.0 MiB" in done.stdout and "page cache" in done.stdout
    with sqlite3.connect(workdir / "iolab.db") as con:
        (warnings,) = con.execute("SELECT warnings FROM cases").fetchone()
    assert "page-cache" in warnings


@pytest.mark.fio
def test_env_names_the_filesystem_and_device_of_a_path(workdir: Path) -> None:
    import json

    found = subprocess.run(
        ["findmnt", "-n", "-o", "SOURCE,FSTYPE", "-T", str(workdir)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    facts = json.loads(run_iolab("env", str(workdir), "--json", cwd=workdir, check=True).stdout)
    assert facts["target"]["filesystem"]["fstype"] == found[1]
    assert facts["host"]["fio_version"].startswith("fio-3")
    text = run_iolab("env", str(workdir), cwd=workdir, check=True).stdout
    assert f"{found[0]} {found[1]} on" in text
    device = facts["target"]["device"]
    if device.get("scheduler"):
        assert f"scheduler={device['scheduler']}" in text
    one_line_error(run_iolab("env", "/nonexistent", cwd=workdir), "/nonexistent does not exist")
