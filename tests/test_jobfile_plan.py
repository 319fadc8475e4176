"""`iolab run job.fio`: a user's fio job file runs as it is, with the safety rules of plans,
each fault one line naming the file and its line."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from conftest import iolab_here, run_iolab
from iolab.errors import PlanError
from iolab.plan import jobfile_plan
from iolab.plan.load import load_file, parse_plan, preset_text

JOB = """; written for fio, not for iolab
[global]
ioengine=psync
direct=1
size=8m
runtime=1
time_based

[randread-4k]
rw=randread
bs=4k

[global]
numjobs=2

[seqwrite]
stonewall
rw=write
bs=128k
"""


def test_every_section_is_a_workload_with_the_globals_before_it(tmp_path: Path) -> None:
    (tmp_path / "mine.fio").write_text(JOB)
    loaded = load_file(tmp_path / "mine.fio")
    assert [s.name for s in loaded.setups] == ["here"] and loaded.setups[0].path == "."
    first, second = loaded.workloads
    assert first.name == "randread-4k" and second.name == "seqwrite"
    assert first.options["numjobs"] == 1 and second.options["numjobs"] == 2  # fio's order
    assert first.options["time_based"] == 1 and second.options["stonewall"] == 1
    assert first.options["ioengine"] == "psync" and first.options["direct"] == 1
    assert loaded.text == JOB and loaded.name == "mine"


def test_what_the_file_leaves_out_is_fios_default_not_iolabs(tmp_path: Path) -> None:
    (tmp_path / "bare.job").write_text("[one]\nrw=randwrite\n")
    options = load_file(tmp_path / "bare.job").workloads[0].options
    assert options["ioengine"] == "psync" and options["direct"] == 0
    assert options["time_based"] == 0 and options["bs"] == "4k" and options["iodepth"] == 1


def test_found_by_content_without_the_extension(tmp_path: Path) -> None:
    (tmp_path / "job").write_text(JOB)
    assert load_file(tmp_path / "job").workloads[0].name == "randread-4k"
    assert jobfile_plan.is_job_file("plan", "[randread]\nrw=randread\n")
    assert not jobfile_plan.is_job_file("plan", '[defaults]\nsize = "8m"\n')
    assert not jobfile_plan.is_job_file("plan", 'name = "x"\n[[workload]]\nrw = "read"\n')
    assert not jobfile_plan.is_job_file("x.toml", "[randread]\n")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[a]\nrw=read\nfilename=/a:/b\n", "job.fio:3: filename must name one path"),
        (
            "[a]\ndirectory=/x\n[b]\ndirectory=/y\n",
            "job.fio:4: section [b] runs on /y, section [a] on /x: iolab runs a job file on one",
        ),
        ("[a]\nexec_prerun=rm -rf /\n", "job.fio:2: exec_prerun is not allowed in a plan"),
        ("[a]\nioengine=rbd\n", "job.fio:2: ioengine = 'rbd' is not an ioengine iolab runs"),
        ("[a]\ninclude other.fio\n", "job.fio:2: include names another file"),
        ("rw=read\n[a]\n", "job.fio:1: rw comes before any section"),
        ("[a]\nbs=4q\n", "job.fio:2: bs = '4q' is not a size"),
        ("[a]\nrw=read\x1b\n", "job.fio:2: rw holds a control character"),
        ("[a]\niodepth=8\n", "job.fio:2: iodepth = 8 has no effect with ioengine = 'psync'"),
        ("; nothing\n", "job.fio: no job section"),
    ],
)
def test_the_rules_of_plans_apply_line_by_line(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "job.fio").write_text(text)
    with pytest.raises(PlanError) as caught:
        parse_plan(text, "job.fio")
    assert str(caught.value).startswith(message), str(caught.value)


@pytest.mark.fio
def test_runs_stores_and_reports_like_a_plan(workdir: Path) -> None:
    (workdir / "mine.fio").write_text(JOB)
    done = run_iolab("run", "mine.fio", cwd=workdir)
    assert done.returncode == 0, done.stderr
    assert "randread-4k" in done.stdout and "seqwrite" in done.stdout
    with sqlite3.connect(workdir / "iolab.db") as db:
        rows = db.execute("SELECT setup, workload, status FROM cases ORDER BY id").fetchall()
        source = db.execute("SELECT plan_source FROM runs").fetchone()[0]
    assert rows == [("here", "randread-4k", "ok"), ("here", "seqwrite", "ok")]
    assert source == "mine.fio" and not (workdir / "iolab.testfile").exists()


@pytest.mark.fio
def test_fios_own_refusal_names_the_line(workdir: Path) -> None:
    (workdir / "typo.fio").write_text("[a]\nruntime=1\nverify=sha7\ntime_based\n")
    done = run_iolab("run", "typo.fio", cwd=workdir)
    assert done.returncode == 1 and not (workdir / "iolab.db").exists()
    assert done.stderr.startswith("iolab: error: typo.fio:3: workload 'a': fio rejects verify=sha7")


def test_target_and_overrides_apply(workdir: Path) -> None:
    (workdir / "mine.fio").write_text(JOB)
    (workdir / "elsewhere").mkdir()
    done = iolab_here("show", "mine.fio", "--target", "elsewhere", "--size", "4m", cwd=workdir)
    assert done.returncode == 0, done.stderr
    assert "elsewhere  randread-4k  #1" in done.stdout and "size=4m" in done.stdout


def test_show_toml_prints_a_preset_to_copy(workdir: Path) -> None:
    done = iolab_here("show", "--preset", "crystaldiskmark", "--toml", cwd=workdir)
    assert done.returncode == 0 and done.stdout == preset_text("crystaldiskmark")
    (workdir / "mine.toml").write_text(preset_text("quick"))
    mine = iolab_here("show", "mine.toml", "--toml", cwd=workdir)
    assert mine.stdout == preset_text("quick")
