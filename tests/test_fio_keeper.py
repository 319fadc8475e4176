"""fio's keeper (fio/guard.py --serve): one a process, every fio of it run through it, real
fio on fio's null engine. What it guarantees when iolab dies (SIGKILL, SIGTERM, SIGHUP,
Ctrl-C) is tried on a real `iolab run` in test_hardening and test_hostile_cli."""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

import psutil
import pytest

from iolab.fio import local
from iolab.fio.outcome import Outcome

pytestmark = pytest.mark.fio

JOB = """[global]
ioengine=null
size=16m
bs=4k
rw=randread
time_based=1
runtime={runtime}
[keeper]
"""


def _fio() -> str:
    found = shutil.which("fio")
    assert found, "fio is not installed: these tests need the real one"
    return found


def _run(workdir: Path, runtime: float, timeout_s: float | None = None) -> Outcome:
    workdir.mkdir()
    job = workdir / "job.fio"
    job.write_text(JOB.format(runtime=f"{runtime}s"))
    return local.run(_fio(), job, workdir, None, timeout_s)


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_one_keeper_runs_each_fio_and_says_its_wall_time(tmp_path: Path) -> None:
    started = time.monotonic()
    first = _run(tmp_path / "one", 1)
    took = time.monotonic() - started
    keeper = local.keeper().process.pid
    second = _run(tmp_path / "two", 1)

    assert (first.returncode, second.returncode) == (0, 0), first.stderr + second.stderr
    assert first.document is not None and second.document is not None
    assert local.keeper().process.pid == keeper, "a keeper a fio, not one a process"
    for outcome in (first, second):
        assert outcome.fio_s is not None and outcome.fio_s >= 1.0, outcome.fio_s
    assert first.fio_s is not None and first.fio_s <= took, "fio's time is within the call's"
    assert Path(f"/proc/{keeper}/cwd").readlink() == Path("/"), "it holds no folder"


def test_a_timeout_stops_fio_through_the_keeper_which_stays(tmp_path: Path) -> None:
    """A fio past its time is asked to stop as on Ctrl-C (SIGINT, passed on by the keeper):
    it stops, its wall time is said, and the keeper serves the next fio."""
    keeper = local.keeper().process.pid
    stopped = _run(tmp_path / "long", 60, timeout_s=2)

    assert stopped.timed_out
    assert stopped.fio_s is not None and stopped.fio_s < 30, stopped.fio_s
    assert local.keeper().process.pid == keeper
    assert _run(tmp_path / "next", 1).returncode == 0


def test_a_keeper_killed_between_cases_is_replaced(tmp_path: Path) -> None:
    gone = local.keeper().process
    os.kill(gone.pid, signal.SIGKILL)
    gone.wait()

    outcome = _run(tmp_path / "after", 1)
    assert outcome.returncode == 0, outcome.stderr
    assert local.keeper().process.pid != gone.pid


def test_sigterm_to_the_keeper_mid_fio_kills_fio_and_says_so(tmp_path: Path) -> None:
    """SIGTERM to the keeper (iolab giving up on fio) kills every fio process and the keeper;
    the case says fio was killed (no wall time), and a new keeper serves the next."""
    keeper = local.keeper()
    workdir = tmp_path / "killed"
    workdir.mkdir()
    job = workdir / "job.fio"
    job.write_text(JOB.format(runtime="60s"))
    reading, writing = os.pipe()
    with (workdir / "stderr.txt").open("wb") as errors:
        keeper.start([_fio(), str(job)], workdir, writing, errors.fileno())
    os.close(writing)
    fio = _child_of(keeper.process.pid)
    os.kill(keeper.process.pid, signal.SIGTERM)
    answer = keeper.answer(30)
    os.close(reading)

    assert answer == local.KeeperWord(137), answer
    assert not _alive(fio), "fio outlived its keeper's SIGTERM"
    assert _run(tmp_path / "next", 1).returncode == 0


def test_a_fio_that_cannot_start_is_said_and_the_keeper_stays(tmp_path: Path) -> None:
    keeper = local.keeper().process.pid
    workdir = tmp_path / "missing"
    workdir.mkdir()
    (workdir / "job.fio").write_text(JOB.format(runtime="1s"))
    outcome = local.run(str(tmp_path / "no-fio"), workdir / "job.fio", workdir)

    assert outcome.returncode == local.NOT_STARTED
    assert "fio could not be started: No such file or directory" in outcome.stderr
    assert local.keeper().process.pid == keeper


def _child_of(pid: int) -> int:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            children = []
        if children:
            return int(children[0])
        time.sleep(0.01)
    raise AssertionError(f"the keeper ({pid}) started no fio")
