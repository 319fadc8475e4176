"""Shared fixtures: real fio, small files, short runtimes."""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from chromium import Browser
    from fakes import Scene
    from iolab.report.charts import Chart
    from iolab.targets.lab import Kernel

FIXTURES = Path(__file__).parent / "fixtures"
IOLAB = [sys.executable, "-m", "iolab"]
# A plan's opening for one set-up, "here", in the folder `{path}`: 1 s cases of 8 MiB files.
HERE_SETUP = """
[defaults]
runtime = 1
size = "8m"

[[setup]]
name = "here"
path = "{path}"
"""

# Bytecode caches are written even where PYTHONDONTWRITEBYTECODE is set: without them each
# pytest-xdist worker compiles every test module again. An iolab a test spawns still hears
# that variable, and reads the caches the tests wrote for what they import (most of the
# package: half of its start). They are Python's own (gitignored __pycache__ folders),
# checked against their source at every import.
sys.dont_write_bytecode = False


def run_iolab(
    *args: str, cwd: Path, check: bool = False, timeout_s: float = 300
) -> subprocess.CompletedProcess[str]:
    """The real command line, as a user types it."""
    done = subprocess.run(
        [*IOLAB, *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=timeout_s
    )
    if check and done.returncode != 0:
        raise AssertionError(f"iolab {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done


def start_iolab(*args: str, cwd: Path) -> subprocess.Popen[str]:
    """The real command line started, not waited for: for a test that acts while it runs
    (a host killed or held mid-case); its output is read with communicate()."""
    return subprocess.Popen(
        [*IOLAB, *args], cwd=cwd, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def iolab_here(*args: str, cwd: Path, check: bool = False) -> subprocess.CompletedProcess[str]:
    """The same command run in this process (click's runner), in `cwd`, as run_iolab answers:
    for a test whose point is what iolab prints or stores, not the process (bad input's one
    line and exit code, signals, pipes, terminals and the real command line spawn it). An
    exception that escapes iolab ends on stderr as its traceback, as the real command's would."""
    from click.testing import CliRunner

    from iolab.cli import main

    before = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, list(args))
    finally:
        os.chdir(before)
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "".join(traceback.format_exception(result.exception))
    done = subprocess.CompletedProcess([*IOLAB, *args], result.exit_code, result.stdout, stderr)
    if check and done.returncode != 0:
        raise AssertionError(f"iolab {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done


def ctrl_c_when(args: list[str], cwd: Path, ready: Callable[[], bool]) -> tuple[int, str]:
    """Start `iolab ARGS`, press Ctrl-C (SIGINT) once `ready()` holds; its exit code and stderr."""
    child = subprocess.Popen(
        [*IOLAB, *args], cwd=cwd, text=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None and not ready():
        time.sleep(0.1)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    return child.returncode, err


def results_of(report: str) -> str:
    """A report's text from its results table on, past the Findings above it."""
    for marker in ("\n## Results\n", "\nResults\n"):
        if marker in report:
            return report.split(marker, 1)[1]
    return report


def said(stderr: str) -> list[str]:
    """The lines iolab said on stderr (each starts "iolab: "), past the run's progress,
    which shares stderr with them (stdout holds the results alone)."""
    return [line for line in stderr.splitlines() if line.startswith("iolab: ")]


def stored_cases(db: Path) -> list[tuple[str, str, int, str]]:
    """(setup, workload, repetition, status) of every stored case, in the order stored."""
    if not db.exists():
        return []
    with sqlite3.connect(db) as con:
        try:
            rows = con.execute("SELECT setup, workload, repetition, status FROM cases ORDER BY id")
        except sqlite3.OperationalError:  # read while iolab is still creating the database
            return []
        return list(rows)


def file_sha256(path: Path) -> str:
    """The sha256 of a file's bytes, in hex."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def chart_points(chart: Chart) -> int:
    """How many points a chart draws (a series' gaps not counted)."""
    return sum(1 for s in chart.series for y in s.y if y is not None)


def json_at(data: object, *keys: str) -> object:
    """The value under `keys` in stored JSON (each step must be an object)."""
    for key in keys:
        assert isinstance(data, Mapping), (key, data)
        data = data[key]
    return data


def wait_for(condition: Callable[[], bool], timeout_s: float = 120) -> None:
    """Until `condition()` holds; an AssertionError after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def dead_pid() -> int:
    """The id of a process that has come and gone."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


# ---------------------------------------------------------------- refusals, as tables check them

Word = str | tuple[str, ...]  # a word stderr must hold; a tuple: any one of these


def listing(root: Path) -> dict[str, tuple[str, int, str]]:
    """Every entry under root: kind, size, and the hash of a regular file (FIFOs stay shut)."""
    found: dict[str, tuple[str, int, str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath, name)
            st = path.lstat()
            rel = str(path.relative_to(root))
            if stat.S_ISREG(st.st_mode):
                found[rel] = ("file", st.st_size, hashlib.sha256(path.read_bytes()).hexdigest())
            elif stat.S_ISLNK(st.st_mode):
                found[rel] = ("link", 0, os.readlink(path))
            else:
                found[rel] = (stat.filemode(st.st_mode)[0], st.st_size, "")
    return found


class Hung(BaseException):
    """Raised by the alarm: an in-process invocation took far too long."""


@dataclass
class Outcome:
    code: int | None
    stdout: str
    stderr: str
    seconds: float
    crash: str = ""  # an exception that escaped iolab, formatted


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise Hung("still running after the time limit")


def invoke(args: Sequence[str], limit_s: float) -> Outcome:
    """ARGS run in this process (click's runner), stopped after `limit_s`."""
    from click.testing import CliRunner

    from iolab.cli import main

    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, limit_s)
    t0 = time.monotonic()
    try:
        result = CliRunner().invoke(main, list(args))
    except Hung:
        return Outcome(None, "", "", time.monotonic() - t0, crash=traceback.format_exc())
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    seconds = time.monotonic() - t0
    crash = ""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        crash = "".join(traceback.format_exception(result.exception))
    return Outcome(result.exit_code, result.stdout, result.stderr, seconds, crash)


def spawn(args: Sequence[str], cwd: Path, tmp: Path, limit_s: float) -> Outcome:
    """The real entry point, memory-capped, in its own session (killed whole on a time-out)."""
    command = ["prlimit", f"--as={4 << 30}", "--", *IOLAB, *args]
    env = {**os.environ, "TMPDIR": str(tmp)}
    t0 = time.monotonic()
    child = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        text=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = child.communicate(timeout=limit_s)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        out, err = child.communicate()
        return Outcome(None, out, err, time.monotonic() - t0, crash="still running; killed")
    return Outcome(child.returncode, out, err, time.monotonic() - t0)


def problems_with_output(outcome: Outcome, words: Sequence[Word]) -> list[str]:
    found = []
    if outcome.crash:
        found.append(f"crashed: {outcome.crash[-1500:]}")
    if outcome.code != 1:
        found.append(f"exit code {outcome.code}, not 1")
    if "Traceback" in outcome.stdout + outcome.stderr:
        found.append("a traceback was printed")
    err = outcome.stderr
    line = err.removesuffix("\n")
    if not line or "\n" in line or not err.endswith("\n"):
        found.append(f"stderr is not exactly one line: {err[:600]!r}")
    if not line.startswith("iolab: error: "):
        found.append(f"stderr does not start with 'iolab: error: ': {line[:300]!r}")
    if any(ord(c) < 32 or ord(c) == 127 for c in line):
        found.append(f"stderr holds control characters: {line[:300]!r}")
    for word in words:
        choices = word if isinstance(word, tuple) else (word,)
        if not any(choice in line for choice in choices):
            found.append(f"stderr lacks {' or '.join(map(repr, choices))}: {line[:300]!r}")
    return found


def pytest_sessionstart(session: pytest.Session) -> None:
    """Clear what a killed earlier suite left attached and mounted, before anything runs."""
    if os.geteuid() == 0:
        from loopdevs import reap_stale

        reaped = reap_stale()
        if reaped:
            print(f"cleared loop devices left by a killed earlier suite: {', '.join(reaped)}")


# The fast lane (scripts/test --fast) deselects tests marked with what they need; these
# stand-ins fail any other test that starts one of these tools, so a missing mark shows.
FAST_LANE_TOOLS = {
    "fio": "fio",
    "losetup": "root",
    "mount": "root",
    "mkfs.btrfs": "root",
    "mkfs.xfs": "root",
    "mkfs.ext4": "root",
    "linux.uml": "kernel",
    "chromium": "browser",
}
FAST_LANE = "IOLAB_FAST_LANE"


# Fixtures that bring a slow part with them: a test that uses one is marked for it.
FIXTURE_MARKS = {
    "loops": "root",
    "devs": "root",
    "browser": "browser",
    "machine": "kernel",
    "lab_host": "kernel",
    "lab_kernel": "kernel",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        used = getattr(item, "fixturenames", ())
        for fixture, mark in FIXTURE_MARKS.items():
            if fixture in used:
                item.add_marker(getattr(pytest.mark, mark))


@pytest.fixture(autouse=True, scope="session")
def _fast_lane_guard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """In the fast lane, put stand-ins for slow tools first on PATH (see FAST_LANE_TOOLS)."""
    if not os.environ.get(FAST_LANE):
        yield
        return
    folder = tmp_path_factory.mktemp("fast-lane-tools")
    for tool, mark in FAST_LANE_TOOLS.items():
        stand_in = folder / tool
        stand_in.write_text(
            "#!/bin/sh\n"
            f'echo "fast lane: this test runs {tool}; mark it @pytest.mark.{mark}" >&2\n'
            "exit 99\n"
        )
        stand_in.chmod(0o755)
    path = os.environ["PATH"]
    os.environ["PATH"] = f"{folder}:{path}"
    yield
    os.environ["PATH"] = path


@pytest.fixture(autouse=True, scope="session")
def _state_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """iolab's state directory (IOLAB_STATE_DIR) in a scratch folder of the session: no test
    reads or leaves a record (a pending restore of a card's policy) in the host's own."""
    if os.environ.get("IOLAB_STATE_DIR"):
        yield
        return
    os.environ["IOLAB_STATE_DIR"] = str(tmp_path_factory.mktemp("iolab-state"))
    yield
    os.environ.pop("IOLAB_STATE_DIR", None)


LAB_DISKS, LAB_DISK_MIB = 4, 384  # the session's lab kernel: what test_raid_lab builds on
# how long a lab command (`run --lab`, `rehearse`) may take: QEMU without KVM emulates every
# instruction of its boot and of each iolab it starts, on a host busy with other work
LAB_COMMAND_S = 1800


@pytest.fixture(scope="session")
def lab_kernel() -> Iterator[Kernel]:
    """The lab kernel, booted once for the whole session (the backend IOLAB_LAB_BACKEND
    names, else user-mode Linux, else QEMU) with LAB_DISKS image disks of LAB_DISK_MIB each:
    the md and LVM tests build on its disks, the drive-cache tests on a SCSI disk they add;
    a boot under QEMU without KVM takes minutes, so the tests share one. Where none is
    installed or none can run here, every test that needs it FAILS with the reason in one
    line: a check not made never passes."""
    from iolab.errors import TargetError
    from iolab.targets import lab

    base = Path(os.environ.get("IOLAB_TEST_DIR", "/var/tmp"))
    folder = base / f"iolab-lab-{os.getpid()}"
    folder.mkdir(parents=True, exist_ok=True)
    kernel = lab.Kernel(folder, [LAB_DISK_MIB * 1024**2] * LAB_DISKS)
    try:
        kernel.start()
    except TargetError as error:
        subprocess.run(["rm", "-rf", str(folder)], check=False)
        pytest.fail(f"THE LAB CANNOT RUN HERE: {error}", pytrace=False)
    yield kernel
    kernel.stop()
    subprocess.run(["rm", "-rf", str(folder)], check=False)  # images, spool, console log


@pytest.fixture(scope="session")
def lab_host(lab_kernel: Kernel) -> None:
    """That a lab kernel runs here, for the tests that boot one of their own (`iolab run
    --lab`, `iolab rehearse`): the session's has booted (see lab_kernel)."""


@pytest.fixture
def workdir(tmp_path: Path) -> Iterator[Path]:
    """A scratch directory on a real filesystem (not tmpfs, which has no O_DIRECT)."""
    base = Path(os.environ.get("IOLAB_TEST_DIR", "/var/tmp"))
    path = base / f"iolab-test-{os.getpid()}-{tmp_path.name}"
    path.mkdir(parents=True)
    yield path
    shutil.rmtree(path, ignore_errors=True)  # in this process: a fork of pytest costs more


@pytest.fixture(scope="session")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Path, Path], None]:
    """Copies a committed store to a path, brought to this iolab's schema as any command brings
    it first: migrated once a session (a migration writes and syncs every table), then copied
    with whatever the migration left beside it; each test changes only its copy."""
    from iolab.store import Store

    made: dict[Path, Path] = {}  # committed store -> its migrated copy, named "db"

    def copy(committed: Path, to: Path) -> None:
        if committed not in made:
            made[committed] = tmp_path_factory.mktemp("migrated") / "db"
            shutil.copyfile(committed, made[committed])
            Store(made[committed]).close()
        for path in sorted(made[committed].parent.iterdir()):  # "db", then "db-wal" if left
            shutil.copyfile(path, to.with_name(to.name + path.name.removeprefix("db")))

    return copy


def needs_root() -> pytest.MarkDecorator:
    """A test that needs root: without it, it fails with the reason (a check not made never
    passes, also on a workstation)."""
    return pytest.mark.usefixtures("root_user")


@pytest.fixture
def root_user() -> None:
    require_root()


def require_root(what: str = "loop devices and mounts") -> None:
    """Fail, with the reason, where the test's part (root) is missing: never a skip."""
    if os.geteuid() != 0:
        pytest.fail(
            f"NOT CHECKED: needs root for {what}; run the suite as root (scripts/test)",
            pytrace=False,
        )


@pytest.fixture
def no_drives(monkeypatch: pytest.MonkeyPatch) -> None:
    """No smartctl for iolab in this process: the runner's logic without the host's own
    drives, which smartctl reads where it is installed (their tests: tests/test_drive_*.py)."""
    from iolab.targets import drive_health

    monkeypatch.setattr(drive_health, "installed", lambda: False)


@pytest.fixture
def scene(workdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Scene]:
    """A scratch directory, its TMPDIR, and a fake fio first on PATH (tests/fakes.py)."""
    from fakes import Scene, running

    made = Scene(
        workdir, tmp_path / "tmp", tmp_path / "bin", tmp_path / "fio.log", tmp_path / "fio.pids"
    )
    made.tmp.mkdir()
    made.bin.mkdir()
    monkeypatch.setenv("PATH", f"{made.bin}:{os.environ['PATH']}")
    try:
        yield made
    finally:
        for pid in running(made.started(), wait_s=0):  # only what our fake fio started
            os.kill(pid, signal.SIGKILL)


def refused(scene: Scene, args: list[str], words: list[str], limit_s: float = 60) -> list[str]:
    """Run iolab ARGS in the scene; the problems with how it refused (empty: none)."""
    before = listing(scene.cwd)
    outcome = spawn(args, scene.cwd, scene.tmp, limit_s=limit_s)
    problems = problems_with_output(outcome, words)
    after = listing(scene.cwd)
    problems += [
        f"{name} changed"
        for name in before.keys() | after.keys()
        if before.get(name) != after.get(name)
    ]
    left = sorted(str(p.relative_to(scene.tmp)) for p in scene.tmp.rglob("*"))
    if left:
        problems.append(f"left in the temporary directory: {left[:5]}")
    return problems


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Headless Chromium, one per module (tests/chromium.py)."""
    from chromium import CHROMIUM, Browser

    if not Path(CHROMIUM).exists():
        pytest.fail("chromium is not installed: run scripts/setup --test (as root)")
    with tempfile.TemporaryDirectory(prefix="iolab-chromium-") as profile:
        opened = Browser(Path(profile))
        yield opened
        opened.close()


@functools.cache
def source_tree(path: Path) -> ast.Module:
    """A source file of iolab's parsed, once a session (the house's and the layers' tests
    read the trees, never change them)."""
    return ast.parse(path.read_text(), str(path))


@functools.cache
def source_nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of a source file's tree, in ast.walk's order, walked once a session (the
    house's and the layers' tests look through the nodes of every file many times)."""
    return tuple(ast.walk(source_tree(path)))
