"""A plan's workloads from elsewhere: `jobfile = "mine.fio"` in a [[workload]] (every section
of the job file a workload, on every set-up) and `workloads = "PRESET"` (a preset's workloads
first). The rules of plans apply to every line of a job file; each fault is one line."""

from __future__ import annotations

import sqlite3
import tomllib
from pathlib import Path

import pytest

from conftest import iolab_here, run_iolab, stored_cases
from iolab.errors import PlanError
from iolab.plan.common import Overrides
from iolab.plan.load import load_file, load_preset, parse_plan

JOB = """; written for fio, with a "quote" and a \\ backslash
[global]
ioengine=psync
size=16m
runtime=1
time_based

[rr]
rw=randread
bs=4k

[global]
numjobs=2

[sw]
rw=write
bs=128k
"""

PLAN = """name = "mixed"

[defaults]
runtime = 7

[[setup]]
name = "one"
path = "one"

[[setup]]
name = "two"
path = "two"

[[workload]]
jobfile = "mine.fio"
name = "mine"

[[workload]]
name = "own"
rw = "randread"
"""


def _write(folder: Path, plan_text: str = PLAN, job: str = JOB) -> Path:
    (folder / "mine.fio").write_text(job)
    for name in ("one", "two"):
        (folder / name).mkdir(exist_ok=True)
    (folder / "plan.toml").write_text(plan_text)
    return folder / "plan.toml"


def test_every_section_is_a_workload_on_every_setup(tmp_path: Path) -> None:
    loaded = load_file(_write(tmp_path))
    assert [w.name for w in loaded.workloads] == ["mine rr", "mine sw", "own"]
    rr, sw, own = (w.options for w in loaded.workloads)
    assert rr["rw"] == "randread" and rr["bs"] == "4k" and rr["numjobs"] == 1
    assert sw["rw"] == "write" and sw["bs"] == "128k" and sw["numjobs"] == 2  # [global] in order
    assert rr["ioengine"] == "psync" and rr["size"] == "16m" and rr["time_based"] == 1
    assert rr["runtime"] == 1 and rr["direct"] == 0  # the file's and fio's, not [defaults]
    assert own["runtime"] == 7 and own["direct"] == 1  # the plan's own: [defaults] apply
    assert not {"filename", "directory"} & {*rr, *sw}
    cases = [(c.setup.name, c.workload.name) for c in loaded.cases()]
    assert cases == [(s, w) for s in ("one", "two") for w in ("mine rr", "mine sw", "own")]
    assert [w.table for w in loaded.workloads] == [0, 1, 2]  # a section each, then the table


def test_without_a_name_the_sections_keep_theirs(tmp_path: Path) -> None:
    text = PLAN.replace('name = "mine"\n', "")
    names = [w.name for w in load_file(_write(tmp_path, text)).workloads]
    assert names == ["rr", "sw", "own"]


@pytest.mark.fio
def test_iolab_gives_the_target(tmp_path: Path) -> None:
    _write(tmp_path)
    done = run_iolab("show", "plan.toml", "--fio", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    sections = done.stdout.split("\n\n")[1:]
    assert len(sections) == 6
    first = next(s for s in sections if "set-up 'one', workload 'mine rr'" in s)
    assert f"filename={tmp_path / 'one' / 'iolab.testfile'}\n" in first
    assert "rw=randread\n" in first and "size=16m\n" in first and "ioengine=psync\n" in first
    second = next(s for s in sections if "set-up 'two', workload 'mine sw'" in s)
    assert f"filename={tmp_path / 'two' / 'iolab.testfile'}\n" in second
    assert "numjobs=2\n" in second


def test_show_lists_the_cases(tmp_path: Path) -> None:
    _write(tmp_path)
    done = iolab_here("show", "plan.toml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "one  mine rr  #1" in done.stdout and "two  mine sw  #1" in done.stdout
    assert "rw=write bs=128k iodepth=1 numjobs=2 size=16m" in done.stdout


def test_the_job_file_is_recorded_with_the_plan(tmp_path: Path) -> None:
    path = _write(tmp_path, job=JOB.replace("\n", "\r\n"))
    loaded = load_file(path)
    assert loaded.text.startswith(PLAN)
    shown = iolab_here("show", "plan.toml", "--toml", cwd=tmp_path)
    assert shown.returncode == 0 and shown.stdout == loaded.text
    assert tomllib.loads(loaded.text)["jobfiles"] == {"mine.fio": JOB.replace("\n", "\r\n")}
    (tmp_path / "mine.fio").write_text("[changed]\nrw=read\n")  # the record, not the disk
    again = parse_plan(loaded.text, loaded.source)
    assert again.workloads == loaded.workloads and again.text == loaded.text
    (tmp_path / "mine.fio").unlink()
    assert parse_plan(loaded.text, loaded.source).workloads == loaded.workloads


def test_a_plan_may_carry_its_job_files(tmp_path: Path) -> None:
    text = PLAN + '[jobfiles]\n"mine.fio" = "[a]\\nrw=read\\n"\n'
    loaded = parse_plan(text, str(tmp_path / "plan.toml"))  # no mine.fio on disk
    assert [w.name for w in loaded.workloads] == ["mine a", "own"] and loaded.text == text


def test_a_presets_workloads_come_first(tmp_path: Path) -> None:
    text = 'workloads = "crystaldiskmark"\n' + PLAN.replace('name = "mixed"\n', "")
    loaded = load_file(_write(tmp_path, text))
    names = [w.name for w in loaded.workloads]
    assert names[:2] == ["SEQ1M Q8T1 rw=read", "SEQ1M Q8T1 rw=write"]
    assert len(names) == 11 and names[8:] == ["mine rr", "mine sw", "own"]
    seq = loaded.workloads[0].options
    assert seq["bs"] == "1m" and seq["iodepth"] == 8 and seq["size"] == "1g"  # its defaults
    assert seq["runtime"] == 7  # the plan's [defaults] over the preset's
    assert loaded.repeat == 1 and [s.name for s in loaded.setups] == ["one", "two"]
    assert [w.table for w in loaded.workloads][::2] == [0, 1, 2, 3, 4, 6]


def test_a_preset_alone_is_enough(tmp_path: Path) -> None:
    text = 'workloads = "quick"\n[[setup]]\npath = "."\n'
    loaded = parse_plan(text, str(tmp_path / "plan.toml"))
    assert [w.name for w in loaded.workloads] == [w.name for w in load_preset("quick").workloads]


def test_show_toml_prints_a_preset_as_a_plan(tmp_path: Path) -> None:
    done = iolab_here("show", "--preset", "crystaldiskmark", "--toml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    copied = parse_plan(done.stdout, "copied.toml")
    assert copied.workloads == load_preset("crystaldiskmark").workloads


@pytest.mark.slow
@pytest.mark.parametrize(
    ("plan_text", "job", "message"),
    [
        (
            PLAN,
            JOB.replace("time_based", "exec_prerun=rm -rf /"),
            "mine.fio:6: section [global]: exec_prerun is not allowed in a plan",
        ),
        (
            PLAN,
            JOB.replace("bs=128k", "ioengine=rbd"),
            "mine.fio:17: section [sw]: ioengine = 'rbd' is not an ioengine iolab runs",
        ),
        (
            PLAN,
            JOB.replace("numjobs=2", "numjobs=5000"),
            "mine.fio:13: section [global]: numjobs = 5000 must be a whole number of at least 1",
        ),
        (
            PLAN,
            JOB.replace("rw=write", "rw=write\x1b"),
            "mine.fio:16: section [sw]: rw holds a control character",
        ),
        (
            PLAN,
            JOB.replace("[sw]", "[rr]"),
            "mine.fio:15: section [rr]: workload 'mine rr' appears twice",
        ),
        (PLAN, "; nothing\n", "mine.fio: no job section"),
        (
            PLAN.replace('name = "mine"', 'name = "mine"\nbs = "4k"'),
            JOB,
            "plan.toml:17: bs does not go with jobfile",
        ),
        (
            PLAN.replace('"mine.fio"', '"gone.fio"'),
            JOB,
            "plan.toml:15: jobfile = 'gone.fio': gone.fio: no such file",
        ),
        (
            PLAN.replace('"mine.fio"', '"one"'),
            JOB,
            "plan.toml:15: jobfile = 'one': one is not a regular file",
        ),
        (PLAN.replace('"mine.fio"', "3"), JOB, "plan.toml:15: jobfile = 3 must name"),
        (
            PLAN.replace('name = "own"', 'name = "mine rr"'),
            JOB,
            "plan.toml:19: workload 'mine rr' appears twice",
        ),
        (
            'workloads = "cdm"\n' + PLAN.replace('name = "mixed"\n', ""),
            JOB,
            "plan.toml:1: workloads = 'cdm' is not a preset; choose one of crystaldiskmark, ",
        ),
        (
            PLAN.replace("runtime = 7", 'jobfile = "mine.fio"'),
            JOB,
            "plan.toml:4: jobfile goes in a [[workload]] of its own",
        ),
        (
            PLAN + '[jobfiles]\n"other.fio" = "[a]\\n"\n',
            JOB,
            "plan.toml:15: jobfile = 'mine.fio' is not in the plan's [jobfiles] table",
        ),
        (
            PLAN + '[jobfiles]\n"mine.fio" = "[a]\\n"\n"other.fio" = "[b]\\n"\n',
            JOB,
            "plan.toml:21: [jobfiles] 'other.fio' is named by no [[workload]] jobfile",
        ),
    ],
)
def test_refusals_are_one_line(tmp_path: Path, plan_text: str, job: str, message: str) -> None:
    _write(tmp_path, plan_text, job)
    done = run_iolab("show", "plan.toml", cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"iolab: error: {message}"), done.stderr
    assert done.stderr.count("\n") == 1


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
def test_a_job_file_that_is_not_text_is_one_line(tmp_path: Path) -> None:
    _write(tmp_path)
    (tmp_path / "mine.fio").write_bytes(b"[a]\nrw=read\xff\n")
    done = run_iolab("show", "plan.toml", cwd=tmp_path)
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert "jobfile = 'mine.fio': mine.fio is not UTF-8 text" in done.stderr


@pytest.mark.fio
def test_fios_own_refusal_names_the_job_files_line(workdir: Path) -> None:
    _write(workdir, job=JOB.replace("bs=128k", "verify=sha7"))
    done = run_iolab("run", "plan.toml", cwd=workdir)
    assert done.returncode == 1 and not (workdir / "iolab.db").exists()
    assert done.stderr.startswith(
        "iolab: error: mine.fio:17: section [sw]: workload 'mine sw': fio rejects verify=sha7"
    ), done.stderr


def test_the_count_limit_counts_every_source(tmp_path: Path) -> None:
    text = 'workloads = "crystaldiskmark"\n' + PLAN.replace('name = "mixed"\n', "")
    path = _write(tmp_path, text)
    assert len(load_file(path, Overrides(max_cases=22)).cases()) == 22
    with pytest.raises(PlanError, match="expands to 22 cases"):
        load_file(path, Overrides(max_cases=21))


STEADY = """
[[setup]]
path = "."

[[workload]]
rw = ["randread", "randwrite"]

[steady]
rounds = 30
"""


def test_the_count_limit_counts_the_most_rounds() -> None:
    assert parse_plan(STEADY, "s.toml", Overrides(max_cases=60)).rounds is not None
    with pytest.raises(PlanError, match="expands to 60 cases"):
        parse_plan(STEADY, "s.toml", Overrides(max_cases=59))
    alone = STEADY[: STEADY.index("[steady]")]
    assert len(parse_plan(alone, "s.toml", Overrides(max_cases=2)).cases()) == 2


@pytest.mark.fio
def test_a_job_file_runs_and_is_stored(workdir: Path) -> None:
    _write(
        workdir,
        'name = "jobs"\n[[setup]]\nname = "file"\npath = "target.bin"\n'
        '[[workload]]\njobfile = "mine.fio"\nname = "mine"\n',
    )
    (workdir / "target.bin").write_bytes(b"\0" * 16 * 1024**2)
    done = run_iolab("run", "plan.toml", "--yes-destroy", "target.bin", cwd=workdir)
    assert done.returncode == 0, done.stderr
    assert stored_cases(workdir / "iolab.db") == [
        ("file", "mine rr", 1, "ok"),
        ("file", "mine sw", 1, "ok"),
    ]
    with sqlite3.connect(workdir / "iolab.db") as db:
        stored = db.execute("SELECT plan_text FROM runs").fetchone()[0]
    assert tomllib.loads(stored)["jobfiles"] == {"mine.fio": JOB}
    assert (workdir / "target.bin").stat().st_size == 16 * 1024**2  # the user's file, kept
