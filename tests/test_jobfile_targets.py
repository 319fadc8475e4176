"""A job file names its target the way fio's examples do (`directory=`, `filename=`): run on
its own, that is its set-up, under the rules every set-up has (a directory: iolab's own test
file there; a file of yours that would be written: --yes-destroy; a block device: named and
confirmed, or refused and left unchanged); --target or a plan's set-ups replace it, and iolab
says so in one line."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from conftest import run_iolab, said
from iolab.errors import PlanError
from iolab.plan.load import parse_plan
from loopdevs import LoopDevs, device_sha256, loops_fixture

__all__ = ["loops_fixture"]

JOB = "[global]\nrw={rw}\nbs=4k\nsize=8m\nruntime=1\n{where}\n[job]\n"


def job(where: str, rw: str = "randread") -> str:
    return JOB.format(rw=rw, where=where)


def test_the_target_a_job_file_names_is_its_set_up(tmp_path: Path) -> None:
    found = parse_plan(job(f"directory={tmp_path}"), "job.fio")
    (setup,) = found.setups
    assert setup.path == str(tmp_path) and setup.name == tmp_path.name
    assert all("directory" not in w.options for w in found.workloads)
    (tmp_path / "data.img").write_bytes(b"")
    inside = parse_plan(job(f"directory={tmp_path}\nfilename=data.img"), "job.fio")
    assert inside.setups[0].path == str(tmp_path / "data.img")
    assert parse_plan(job(""), "job.fio").setups[0].name == "here"


@pytest.mark.parametrize(
    ("where", "said_"),
    [
        ("filename=/a:/b", "job.fio:6: filename must name one path (not a ':' list)"),
        (
            "directory=/x\n[other]\ndirectory=/y",
            "job.fio:6: section [job] runs on /x, section [other] on /y: iolab runs a job file",
        ),
        ("filename=a\x1bb", "job.fio:6: filename holds a control character"),
    ],
)
def test_a_target_iolab_cannot_take_is_one_line(where: str, said_: str) -> None:
    with pytest.raises(PlanError, match=re.escape(said_)):
        parse_plan(job(where), "job.fio")


@pytest.mark.fio  # iolab asks fio its version before it looks at the target
def test_a_kernel_folder_named_by_a_job_file_is_refused(workdir: Path) -> None:
    (workdir / "job.fio").write_text(job("directory=/proc/self"))
    done = run_iolab("run", "job.fio", cwd=workdir)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "/proc" in said(done.stderr)[-1], done.stderr
    assert sorted(p.name for p in workdir.iterdir()) == ["job.fio"]


@pytest.mark.fio
def test_a_directory_gets_iolabs_own_test_file_removed_after(workdir: Path) -> None:
    target = workdir / "target"
    target.mkdir()
    (workdir / "job.fio").write_text(job(f"directory={target}", rw="randwrite"))
    done = run_iolab("run", "job.fio", "--db", "j.db", cwd=workdir, check=True)
    assert f"set-up target: path {target}" in done.stdout, done.stdout
    assert list(target.iterdir()) == [], "iolab's test file is gone"


def test_a_comment_after_a_value_ends_it_as_fio_reads_it(tmp_path: Path) -> None:
    """fio cuts each line at ; or # (fio's surface-scan example: `filename=datafile.tmp\t; or
    use a full disk, for example /dev/sda`)."""
    text = (
        job(f"directory={tmp_path}\t; or use a full disk, for example /dev/sda") + "bs=8k # mine\n"
    )
    found = parse_plan(text, "job.fio")
    assert found.setups[0].path == str(tmp_path)
    assert found.workloads[0].options["bs"] == "8k"


def test_a_file_that_does_not_exist_yet_is_iolabs_own_test_file_there(tmp_path: Path) -> None:
    """fio's examples name a new file (filename=fio-rand-read): fio would make it; iolab
    makes its own test file in that folder instead, says so, and removes it after."""
    found = parse_plan(job(f"filename={tmp_path}/fio-rand-read"), "job.fio")
    (setup,) = found.setups
    assert (setup.name, setup.path) == (tmp_path.name, str(tmp_path))
    assert found.notes == (
        f"filename={tmp_path}/fio-rand-read does not exist yet: iolab writes its own test file "
        f"in {tmp_path} instead (iolab.testfile), and removes it after",
    )
    here = parse_plan(job("filename=no-such-file-here"), "job.fio")
    assert [(s.name, s.path) for s in here.setups] == [("here", ".")]
    assert "in the current folder instead" in here.notes[0]
    nowhere = parse_plan(job(f"filename={tmp_path}/missing/x"), "job.fio")
    assert nowhere.setups[0].path == f"{tmp_path}/missing/x" and nowhere.notes == ()


@pytest.mark.fio
def test_a_new_file_named_as_fios_examples_do_runs_and_leaves_nothing(workdir: Path) -> None:
    (workdir / "job.fio").write_text(job("filename=fio-rand-write", rw="randwrite"))
    done = run_iolab("run", "job.fio", "--db", "j.db", cwd=workdir, check=True)
    assert "filename=fio-rand-write does not exist yet" in said(done.stderr)[0], done.stderr
    assert sorted(p.name for p in workdir.iterdir()) == ["j.db", "job.fio"]


@pytest.mark.fio
def test_a_file_of_yours_is_written_only_when_confirmed(workdir: Path) -> None:
    mine = workdir / "mine.img"
    mine.write_bytes(b"\x5a" * (16 << 20))
    (workdir / "job.fio").write_text(job(f"filename={mine}", rw="randwrite"))
    refused = run_iolab("run", "job.fio", "--db", "j.db", cwd=workdir)
    assert refused.returncode == 1 and f"--yes-destroy {mine}" in said(refused.stderr)[-1]
    assert mine.read_bytes() == b"\x5a" * (16 << 20) and not (workdir / "j.db").exists()
    run_iolab("run", "job.fio", "--db", "j.db", "--yes-destroy", str(mine), cwd=workdir, check=True)
    assert mine.read_bytes() != b"\x5a" * (16 << 20)


@pytest.mark.fio
@pytest.mark.root
def test_a_block_device_is_refused_unless_confirmed(workdir: Path, loops: LoopDevs) -> None:
    device = loops.make(32)
    with open(device, "r+b") as handle:
        handle.write(os.urandom(1 << 20))
    digest = device_sha256(device)
    (workdir / "job.fio").write_text(job(f"filename={device}\ndirect=1", rw="randwrite"))
    refused = run_iolab("run", "job.fio", "--db", "j.db", cwd=workdir)
    assert refused.returncode == 1 and "not confirmed for writing" in said(refused.stderr)[-1]
    assert device_sha256(device) == digest
    done = run_iolab(
        "run", "job.fio", "--db", "j.db", "--yes-destroy", device, cwd=workdir, check=True
    )
    assert f"over {Path(device).name}" in done.stdout
    assert device_sha256(device) != digest


@pytest.mark.fio
def test_target_and_a_plans_set_ups_replace_it_and_say_so(workdir: Path) -> None:
    (workdir / "other").mkdir()
    (workdir / "job.fio").write_text(job("directory=/mnt/somewhere"))
    done = run_iolab("run", "job.fio", "--target", "other", "--db", "a.db", cwd=workdir, check=True)
    assert "iolab: section [job]: its directory=/mnt/somewhere is replaced by --target" in (
        said(done.stderr)
    )
    (workdir / "plan.toml").write_text(
        '[[setup]]\npath = "other"\n[[workload]]\njobfile = "job.fio"\n'
    )
    done = run_iolab("run", "plan.toml", "--db", "b.db", cwd=workdir, check=True)
    assert (
        "iolab: section [job]: its directory=/mnt/somewhere is replaced by the plan's set-ups"
        in said(done.stderr)
    )
