"""Hostile targets and a hostile fio, table-driven (issue 19, findings 2, 3, 11 and 12).

- Targets are judged by what they are: a directory on a kernel pseudo filesystem (/dev,
  /proc, /sys, however spelled: '//dev', '/tmp/../dev', a symlink, a bind mount) is refused in
  one line before fio runs a job, and nothing is made there; on hosts, a path is judged once
  spelled plainly ('//' and '.' collapsed) and '..' is refused.
- Locks are keyed by what the target is: a bind mount, a symlink or another spelling of a
  target meets the lock of a run already on it.
- The fio commands run before the cases have a time limit (lowered here through
  IOLAB_FIO_ANSWER_S): a fio that sleeps or is stopped (SIGSTOP) is killed, with what it
  started, and iolab says which command did not answer; a fio that prints non-UTF-8 is read
  or refused in one line.

Every refusal row asserts: exit code 1, exactly one line on stderr ("iolab: error: ..."), no
traceback, nothing created or changed in the scratch directory or the temporary directory,
and nothing made in the refused place. The fake fio scripts either hang, stop, or print
bytes that no fio prints; what they print that fio prints comes from the real fio (exec).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import IOLAB
from iolab.errors import FioError, TargetError
from iolab.fio import info
from iolab.model import Setup
from iolab.plan.load import parse_plan
from iolab.targets import evidence, lock
from iolab.targets.path import TEST_FILE, prepare
from loopdevs import LoopDevs, loops_fixture, sh
from test_bad_input import invoke, listing, plan, problems_with_output, spawn

REAL_FIO = shutil.which("fio") or "/usr/bin/fio"  # looked up before any stand-in is on PATH
LIMIT_S = 1  # IOLAB_FIO_ANSWER_S in the hostile-fio rows where no real fio answers
REAL_LIMIT_S = 8  # where the real fio answers the other questions (a busy machine is slow)
PSEUDO = "kernel pseudo filesystem"


@dataclass
class Scene:
    """One row's world: the scratch directory (cwd), TMPDIR, and the fio iolab finds."""

    cwd: Path
    tmp: Path
    bin: Path
    log: Path  # the arguments of every fio command, one line each (first argument)
    pids: Path  # the processes the fake fio started

    def fio(self, body: str, raw: bool = False) -> None:
        """Put a fio first on PATH that records its calls, then runs `body` (sh); `raw`: a
        file holding only `body`."""
        script = self.bin / "fio"
        record = f'#!/bin/sh\necho "$1" >> {self.log}\necho $$ >> {self.pids}\n'
        run = body.replace("@REAL@", REAL_FIO).replace("@PIDS@", str(self.pids))
        script.write_text(body if raw else record + run)
        script.chmod(0o755)

    def fio_calls(self) -> list[str]:
        return self.log.read_text().split() if self.log.exists() else []

    def started(self) -> list[int]:
        return [int(p) for p in self.pids.read_text().split()] if self.pids.exists() else []


@pytest.fixture
def scene(workdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Scene]:
    made = Scene(
        workdir, tmp_path / "tmp", tmp_path / "bin", tmp_path / "fio.log", tmp_path / "fio.pids"
    )
    made.tmp.mkdir()
    made.bin.mkdir()
    monkeypatch.setenv("PATH", f"{made.bin}:{os.environ['PATH']}")
    try:
        yield made
    finally:
        for pid in _running(made.started(), wait_s=0):  # only what our fake fio started
            os.kill(pid, signal.SIGKILL)


def _running(pids: list[int], wait_s: float = 5.0) -> list[int]:
    """The processes still alive (not gone, not a zombie) after waiting up to wait_s."""
    deadline = time.monotonic() + wait_s
    while True:
        alive = [pid for pid in pids if _alive(pid)]
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


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


# ---------------------------------------------------------------- local pseudo filesystems

# (row id, the target as spelled, the real path the message names). @LINK@: a symlink in the
# scratch directory to /dev; @LINK2@: a symlink to a symlink to /sys.
SPELLINGS = [
    ("dev", "/dev", "/dev"),
    ("dev-double-slash", "//dev", "/dev"),
    ("dev-dotdot", "/tmp/../dev", "/dev"),
    ("dev-dot", "/dev/.", "/dev"),
    ("dev-trailing-slash", "/dev/", "/dev"),
    ("dev-symlink", "@LINK@", "/dev"),
    ("dev-pts", "/dev/pts", "/dev/pts"),
    ("proc", "/proc", "/proc"),
    ("proc-sys", "/proc/sys", "/proc/sys"),
    ("proc-file", "/proc/sys/vm/drop_caches", "/proc/sys/vm/drop_caches"),
    ("sys", "/sys", "/sys"),
    ("sys-dotdot", "/sys/kernel/..", "/sys"),
    ("sys-kernel", "/sys/kernel", "/sys/kernel"),
    ("sys-fs-cgroup", "/sys/fs/cgroup", "/sys/fs/cgroup"),  # tmpfs or cgroup2: inside /sys
    ("sys-symlink-chain", "@LINK2@", "/sys"),
]


def _spelled(scene: Scene, spelling: str) -> str:
    link, link2 = scene.cwd / "devlink", scene.cwd / "syslink2"
    if "@LINK@" in spelling:
        link.symlink_to("/dev")
    if "@LINK2@" in spelling:
        (scene.cwd / "syslink").symlink_to("/sys")
        link2.symlink_to(scene.cwd / "syslink")
    return spelling.replace("@LINK@", str(link)).replace("@LINK2@", str(link2))


def _how(kind: str, target: str, scene: Scene) -> list[str]:
    if kind == "plan":
        text = plan(target=f'path = "{target}"')
        (scene.cwd / "plan.toml").write_text(text)
        return ["run", "plan.toml", "--db", "r.db"]
    if kind == "show":
        return ["show", "--fio", "--target", target]
    return [kind, "--target", target, "--db", "r.db"]


LOCAL_ROWS = [
    pytest.param(kind, spelling, real, id=f"{kind}-{row}")
    for row, spelling, real in SPELLINGS
    for kind in ("run", "plan")
] + [
    pytest.param(kind, spelling, real, id=f"{kind}-{row}")
    for row, spelling, real in (SPELLINGS[0], SPELLINGS[1], SPELLINGS[5], SPELLINGS[10])
    for kind in ("peak", "show")
]


@pytest.mark.fio  # iolab asks the real fio its version before it checks the targets
@pytest.mark.parametrize(("kind", "spelling", "real"), LOCAL_ROWS)
def test_a_pseudo_filesystem_target_is_refused(
    scene: Scene, kind: str, spelling: str, real: str
) -> None:
    scene.fio('exec @REAL@ "$@"\n')
    target = _spelled(scene, spelling)
    problems = refused(scene, _how(kind, target, scene), [PSEUDO, real])
    assert set(scene.fio_calls()) <= {"--version", "--enghelp"}, "fio ran more than a question"
    if Path(real).is_dir():
        made = [
            p.name
            for p in Path(real).iterdir()
            if p.name == TEST_FILE or p.name.startswith(".iolab-probe")
        ]
        assert not made, f"made in {real}: {made}"
    assert not problems, "\n".join(problems)


@pytest.mark.fio
@pytest.mark.root
def test_a_bind_mount_of_dev_is_refused_by_what_it_is(scene: Scene, tmp_path: Path) -> None:
    """A bind mount of /dev has no '/dev' in its path: it is refused for being devtmpfs."""
    if os.geteuid() != 0:
        pytest.skip("needs root for a bind mount")
    scene.fio('exec @REAL@ "$@"\n')
    mounted = tmp_path / "mnt" / "devbind"
    mounted.mkdir(parents=True)
    sh("mount", "--bind", "/dev", str(mounted))
    try:
        problems = refused(
            scene,
            ["run", "--target", str(mounted), "--db", "r.db"],
            [PSEUDO, "devtmpfs", str(mounted)],
        )
        assert not (mounted / TEST_FILE).exists()
    finally:
        sh("umount", str(mounted))
    assert set(scene.fio_calls()) <= {"--version", "--enghelp"}
    assert not problems, "\n".join(problems)


@pytest.mark.root
@pytest.mark.parametrize("fstype", ["tmpfs", "ramfs"])
def test_a_filesystem_in_memory_is_not_refused_here(fstype: str, tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to mount")
    where = tmp_path / fstype
    where.mkdir()
    sh("mount", "-t", fstype, "none", str(where))
    try:
        prepared = prepare(Setup(name="ram", path=str(where)), probe_write=True)
        assert prepared.filename == where / TEST_FILE
    finally:
        sh("umount", str(where))


@pytest.mark.parametrize("where", ["/dev/shm"])
def test_tmpfs_is_not_refused_here(where: str) -> None:
    """tmpfs holds files (in memory); another check warns about it. /dev/shm sits on /dev."""
    found = (
        sh("findmnt", "--noheadings", "--output", "TARGET,FSTYPE", "--target", where, check=False)
        .stdout.split("\n")[0]
        .split()
    )
    if found != [where, "tmpfs"]:
        pytest.skip(f"{where} is not a tmpfs mount here")
    prepared = prepare(Setup(name="shm", path=where), probe_write=False)
    assert prepared.filename == Path(where).resolve() / TEST_FILE


def test_a_symlinked_spelling_names_both_paths(tmp_path: Path) -> None:
    link = tmp_path / "here"
    link.symlink_to("/proc")
    with pytest.raises(TargetError) as raised:
        prepare(Setup(name="p", path=str(link)), probe_write=False)
    assert f"'{link}' ('/proc') is on proc" in str(raised.value)


# ---------------------------------------------------------------- paths on hosts

HOST_PATHS = [
    ("dev", "/dev", "/dev"),
    ("dev-double-slash", "//dev", "means /dev"),
    ("dev-triple-slash", "///dev", "means /dev"),
    ("dev-dotdot", "/tmp/../dev", "means /dev"),
    ("dev-dot", "/dev/.", "means /dev"),
    ("dev-trailing-slash", "/dev/", "means /dev"),
    ("dev-node", "///dev//sda", "means /dev/sda"),
    ("dev-shm-escape", "/dev/shm/../sda", "means /dev/sda"),
    ("dev-pts", "/dev/pts", "/dev/pts"),
    ("proc", "/proc", "/proc"),
    ("proc-dotdot", "/proc/1/..", "means /proc"),
    ("sys", "/sys", "/sys"),
    ("sys-cgroup", "/sys/fs/cgroup", "/sys/fs/cgroup"),
    ("sys-dot-slash", "/./sys/./kernel", "means /sys/kernel"),
    ("srv-dotdot-dev", "/srv/../dev", "means /dev"),
    ("dotdot-elsewhere", "/srv/../data", "'..'"),
    ("dotdot-self", "/srv/data/..", "'..'"),
    ("dotdot-root", "/..", "'..'"),
    ("relative", "data", "must be an absolute directory"),
    ("relative-dot", "./data", "must be an absolute directory"),
    ("relative-dotdot", "../data", "must be an absolute directory"),
    ("relative-tilde", "~/data", "must be an absolute directory"),
]


def _hosts_plan(path: str, per_host: bool) -> str:
    lines = ['hosts = ["127.0.0.1"]', "[[setup]]", 'name = "far"']
    if per_host:
        lines += ['path = "/srv"', "[setup.hosts]", f'"127.0.0.1" = "{path}"']
    else:
        lines.append(f'path = "{path}"')
    lines += ["[[workload]]", 'rw = "read"', 'size = "8m"', "runtime = 1"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("per_host", [False, True], ids=["path", "per-host-path"])
@pytest.mark.parametrize(("path", "words"), [pytest.param(p, w, id=i) for i, p, w in HOST_PATHS])
def test_a_host_path_is_judged_by_what_it_names(
    scene: Scene, path: str, words: str, per_host: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In-process (it is refused as the plan is read, before fio or anything else)."""
    scene.fio('exec @REAL@ "$@"\n')
    (scene.cwd / "plan.toml").write_text(_hosts_plan(path, per_host))
    monkeypatch.chdir(scene.cwd)
    before = listing(scene.cwd)
    outcome = invoke(["run", "plan.toml", "--db", "r.db"], limit_s=60)
    problems = problems_with_output(outcome, ["plan.toml:", repr(path), words])
    assert listing(scene.cwd) == before
    assert scene.fio_calls() == [], "fio ran for a plan refused as it was read"
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", ["/srv", "/srv/./data", "//srv", "/dev/shm", "/dev/shm/x", "/run"])
def test_plain_host_paths_pass(path: str, tmp_path: Path) -> None:
    found = parse_plan(_hosts_plan(path, per_host=False), str(tmp_path / "plan.toml"))
    assert [s.path for s in found.setups] == [path]


# ---------------------------------------------------------------- a hostile fio

SLEEPS = "sleep 600 & echo $! >> @PIDS@; wait $!\n"
STOPS = "kill -STOP $$\n"


def _on(flag: str, body: str) -> str:
    """Misbehave on `flag`; answer every other command as the real fio does."""
    return f'if [ "$1" = "{flag}" ]; then\n{body}fi\nexec @REAL@ "$@"\n'


@dataclass(frozen=True)
class Hostile:
    body: str
    words: tuple[str, ...]
    real: bool  # the script also runs the real fio (for the questions it answers)
    raw: bool = False  # the body is the whole file, not a script


HOSTILE = {
    "version-sleeps": Hostile(SLEEPS, ("--version", "did not answer in 1 s"), False),
    "version-sleeps-itself": Hostile("exec sleep 600\n", ("--version", "did not answer"), False),
    "version-stops-itself": Hostile(STOPS, ("--version", "did not answer in 1 s"), False),
    "version-not-utf8": Hostile(r"printf '\377\376\033[31m\n'" "\n", ("no fio version",), False),
    "version-empty-exit-1": Hostile("exit 1\n", ("no fio version",), False),
    "not-a-program": Hostile("\x7fELF\x02\x01 not a program\n", ("cannot run", "fio"), False, True),
    "version-not-utf8-old": Hostile(
        r"printf 'fio-2.1\377\376\n'" "\n", ("fio-2.1 is too old",), False
    ),
    "enghelp-sleeps": Hostile(_on("--enghelp", SLEEPS), ("--enghelp", "did not answer"), True),
    "enghelp-stops-itself": Hostile(_on("--enghelp", STOPS), ("--enghelp",), True),
    "parse-only-sleeps": Hostile(
        _on("--parse-only", SLEEPS), ("--parse-only", f"did not answer in {REAL_LIMIT_S} s"), True
    ),
    "parse-only-stops-itself": Hostile(_on("--parse-only", STOPS), ("--parse-only",), True),
    "real-parse-only-stopped": Hostile(
        _on(
            "--parse-only",
            'exec 2>/dev/null; @REAL@ "$@" & echo $! >> @PIDS@; kill -STOP $!; wait $!\n',
        ),
        ("--parse-only", "did not answer"),
        True,
    ),
    "parse-only-not-utf8": Hostile(
        _on("--parse-only", r"printf '\377\376\033[31mno\007\n'; exit 1" "\n"),
        ("fio rejects the job",),
        True,
    ),
}


def _hostile_rows() -> list[Any]:
    rows = []
    for name, hostile in HOSTILE.items():
        commands = ["run"]
        if name == "version-sleeps":
            commands += ["show", "env", "peak"]
        for command in commands:
            marks = [pytest.mark.fio] if hostile.real else []
            rows.append(pytest.param(hostile, command, id=f"{name}-{command}", marks=marks))
    return rows


def _command(command: str, cwd: Path) -> list[str]:
    if command == "env":
        return ["env", str(cwd)]
    if command == "show":
        return ["show", "--fio", "--target", str(cwd)]
    return [command, "--target", str(cwd), "--db", "r.db", "--size", "16m"]


@pytest.mark.slow
@pytest.mark.parametrize(("hostile", "command"), _hostile_rows())
def test_a_hostile_fio_is_refused_in_one_line(
    scene: Scene, hostile: Hostile, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    limit_s = REAL_LIMIT_S if hostile.real else LIMIT_S
    monkeypatch.setenv(info.ANSWER_ENV, str(limit_s))
    scene.fio(hostile.body, hostile.raw)
    started = time.monotonic()
    problems = refused(scene, _command(command, scene.cwd), list(hostile.words), limit_s=40)
    took = time.monotonic() - started
    assert not problems, "\n".join(problems)
    assert took < limit_s + 20, f"took {took:.1f} s with a {limit_s} s limit"
    assert _running(scene.started()) == [], "a process the fake fio started is still running"


@pytest.mark.slow
@pytest.mark.parametrize("value", ["abc", "0", "-1", "inf", "nan", "", "1e9", "3601", "30s"])
def test_a_bad_time_limit_is_refused(
    scene: Scene, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene.fio('exec @REAL@ "$@"\n')
    monkeypatch.setenv(info.ANSWER_ENV, value)
    problems = refused(scene, _command("run", scene.cwd), [info.ANSWER_ENV])
    assert scene.fio_calls() == []
    assert not problems, "\n".join(problems)


def test_the_time_limit_defaults_and_can_be_lowered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(info.ANSWER_ENV, raising=False)
    assert info.answer_limit() == info.ANSWER_S == 30
    monkeypatch.setenv(info.ANSWER_ENV, "2.5")
    assert info.answer_limit() == 2.5


def test_ask_kills_a_stopped_command_and_what_it_started(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    script = f"sleep 600 & echo $! > {pids}; kill -STOP $$"
    started = time.monotonic()
    with pytest.raises(FioError, match=r"'sh -c' \(a test\) did not answer in 0.5 s"):
        info.ask(["sh", "-c", script], "a test", timeout_s=0.5)
    assert time.monotonic() - started < 10
    assert _running([int(pids.read_text())]) == []


@pytest.mark.fio
def test_a_version_with_bytes_that_are_not_utf8_is_read(scene: Scene) -> None:
    """fio's own --version output, then bytes that are not UTF-8: the version is read."""
    scene.fio(_on("--version", "@REAL@ --version; printf '\\377\\376\\n'; exit 0\n"))
    real = subprocess.run([REAL_FIO, "--version"], capture_output=True, text=True, check=True)
    found = info.probe.__wrapped__(str(scene.bin / "fio"))
    assert found.version == real.stdout.strip()
    assert found.engines  # --enghelp answered by the real fio


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
    if os.geteuid() != 0:
        pytest.skip("needs root for a bind mount")
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
    if os.geteuid() != 0:
        pytest.skip("needs root for a bind mount")
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


# ------------------------------------------- what already stands at iolab's test file name


def _link_to(victim: Path) -> Any:
    return lambda at: at.symlink_to(victim)


def _hard_link_to(victim: Path) -> Any:
    return lambda at: os.link(victim, at)


TEST_FILE_SQUATTERS = {
    "symlink to a file": ("a symbolic link", _link_to),
    "symlink to nothing yet": ("a symbolic link", lambda v: _link_to(v.with_name("later"))),
    "hard link to a file": ("2 hard links", _hard_link_to),
    "a fifo": ("a FIFO", lambda v: os.mkfifo),
    "a directory": ("a directory", lambda v: Path.mkdir),
}


@pytest.mark.parametrize("kind", TEST_FILE_SQUATTERS)
def test_a_test_file_name_that_leads_elsewhere_is_refused(workdir: Path, kind: str) -> None:
    """A link at DIR/iolab.testfile (made by anyone who can write to DIR) would have fio
    write through it: the set-up is refused, and the victim is unchanged."""
    victim = workdir / "victim.txt"
    victim.write_text("precious\n")
    target = workdir / "shared"
    target.mkdir()
    words, make = TEST_FILE_SQUATTERS[kind]
    make(victim)(target / TEST_FILE)
    with pytest.raises(TargetError, match=words) as refused:
        prepare(Setup(name="here", path=str(target)), probe_write=False)
    assert "remove it, or choose another directory" in str(refused.value)
    assert victim.read_text() == "precious\n" and not victim.with_name("later").exists()


def test_a_test_file_left_by_an_earlier_run_is_reused(workdir: Path) -> None:
    """Reused only when it carries iolab's mark (issue 29, finding 6:
    tests/test_targets_evidence)."""
    (workdir / TEST_FILE).write_bytes(b"\0" * 4096)
    os.setxattr(workdir / TEST_FILE, evidence.MARK, b"0123456789abcdef0123456789abcdef")
    prepared = prepare(Setup(name="here", path=str(workdir)), probe_write=False)
    assert prepared.owned and prepared.filename == workdir.resolve() / TEST_FILE


@pytest.mark.fio
def test_the_command_refuses_a_linked_test_file_before_fio_writes(workdir: Path) -> None:
    victim = workdir / "victim.txt"
    victim.write_text("precious\n")
    target = workdir / "shared"
    target.mkdir()
    (target / TEST_FILE).symlink_to(victim)
    done = subprocess.run(
        [*IOLAB, "run", "--target", str(target), "--runtime", "1", "--size", "1m"],
        cwd=workdir,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "symbolic link" in done.stderr
    assert victim.read_text() == "precious\n"
    assert not (workdir / "iolab.db").exists()
