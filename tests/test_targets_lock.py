"""Locks are keyed by what the target is (issue 19, finding 3): a bind mount, a symlink, a hard
link or another spelling of a target meets the lock of a run already on it, and a block device
is one lock by its number."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import IOLAB, require_root
from iolab.errors import TargetError
from iolab.targets import lock
from iolab.targets.path import TEST_FILE
from loopdevs import LoopDevs, loops_fixture, sh
from test_bad_input import plan

# ---------------------------------------------------------------- locks by what a target is


def conflict(first: Path, second: Path, what: str = "set-up 'b'") -> str:
    """The one-line refusal to hold `second` while `first` is held (it must be refused)."""
    with (
        lock.held([(str(first), "set-up 'a'")]),
        pytest.raises(TargetError) as raised,
        lock.held([(str(second), what)]),
    ):
        pass
    return str(raised.value)


def _spellings(target: Path, tmp_path: Path) -> dict[str, Path]:
    link = tmp_path / "link"
    link.symlink_to(target)
    return {"symlink": link, "dotted": Path(f"{target}/."), "slashes": Path(f"/{target}")}


def test_every_spelling_of_a_directory_is_one_lock(workdir: Path, tmp_path: Path) -> None:
    key = lock.keys(str(workdir / TEST_FILE))
    for name, spelled in _spellings(workdir, tmp_path).items():
        assert lock.keys(str(spelled / TEST_FILE)) == key, name
    other = workdir / "other"
    other.mkdir()
    assert lock.keys(str(other / TEST_FILE)) != key


def test_a_second_hold_through_a_symlink_is_refused(workdir: Path, tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(workdir)
    text = conflict(workdir / TEST_FILE, tmp_path / "link" / TEST_FILE, "set-up 'b': target x")
    assert "set-up 'b': target x is in use by another iolab" in text
    assert f"pid {os.getpid()}" in text and "\n" not in text
    with lock.held([(str(tmp_path / "link" / TEST_FILE), "after")]):
        pass  # released with the first


def test_a_hard_link_of_a_file_is_the_same_lock(workdir: Path) -> None:
    (workdir / "a").mkdir()
    (workdir / "b").mkdir()
    (workdir / "a" / "data").write_bytes(b"x")
    os.link(workdir / "a" / "data", workdir / "b" / "same")
    assert "in use by another iolab" in conflict(workdir / "a" / "data", workdir / "b" / "same")


def test_one_target_named_twice_in_a_run_is_held_once(workdir: Path, tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(workdir)
    twice = [(str(workdir / TEST_FILE), "a"), (str(tmp_path / "link" / TEST_FILE), "b")]
    with lock.held(twice):
        pass


@pytest.mark.root
def test_a_bind_mount_is_the_same_lock(workdir: Path, tmp_path: Path) -> None:
    require_root("a bind mount")
    bound = tmp_path / "bind"
    bound.mkdir()
    sh("mount", "--bind", str(workdir), str(bound))
    try:
        assert lock.keys(str(bound / TEST_FILE)) == lock.keys(str(workdir / TEST_FILE))
        assert "in use by another iolab" in conflict(workdir / TEST_FILE, bound / TEST_FILE)
    finally:
        sh("umount", str(bound))


@pytest.mark.root
def test_a_block_device_is_one_lock_by_its_number(loops: LoopDevs, tmp_path: Path) -> None:
    dev = loops.make(16)
    (tmp_path / "disk").symlink_to(dev)
    keys = lock.keys(dev)
    assert keys == lock.keys(str(tmp_path / "disk"))
    assert len(keys) == 1 and keys[0].startswith("block ")
    assert "in use by another iolab" in conflict(Path(dev), tmp_path / "disk")


@pytest.fixture
def bound(workdir: Path, tmp_path: Path) -> Iterator[Path]:
    """A bind mount of the scratch directory, unmounted afterwards."""
    require_root("a bind mount")
    mounted = tmp_path / "bind"
    mounted.mkdir()
    sh("mount", "--bind", str(workdir), str(mounted))
    yield mounted
    sh("umount", str(mounted))


TWO_RUNS = [
    pytest.param("bind", id="bind-mount", marks=pytest.mark.root),
    pytest.param("symlink", id="symlink"),
    pytest.param("dotted", id="dotted"),
    pytest.param("slashes", id="double-slash"),
]


@pytest.mark.fio
@pytest.mark.parametrize("spelling", TWO_RUNS)
def test_a_second_run_on_another_spelling_is_refused_while_the_first_runs(
    spelling: str, workdir: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    target = workdir / "t"
    target.mkdir()
    if spelling == "bind":
        other = request.getfixturevalue("bound") / "t"
    else:
        other = _spellings(target, tmp_path)[spelling]
    (workdir / "plan.toml").write_text(
        plan(target=f'path = "{target}"', runtime="30", size='"16m"')
    )
    first = subprocess.Popen(
        [*IOLAB, "run", "plan.toml", "--db", "one.db"],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (target / TEST_FILE).exists() and first.poll() is None:
            assert time.monotonic() < deadline, "the first run did not start its case"
            time.sleep(0.1)
        assert first.poll() is None, f"the first run ended early: {first.stderr}"
        second = subprocess.run(
            [*IOLAB, "run", "--target", str(other), "--db", "two.db", "--runtime", "1"],
            cwd=workdir,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert first.poll() is None, "the first run ended before the second was refused"
    finally:
        first.send_signal(signal.SIGINT)
        _, first_err = first.communicate(timeout=120)
    assert second.returncode == 1
    assert len(second.stderr.splitlines()) == 1 and "Traceback" not in second.stderr
    assert "is in use by another iolab" in second.stderr
    assert f"pid {first.pid}" in second.stderr
    assert not (workdir / "two.db").exists()
    assert "in use" not in first_err
    assert not (target / TEST_FILE).exists(), "the first run's test file was left"


__all__ = ["loops_fixture"]
