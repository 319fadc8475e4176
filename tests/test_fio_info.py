"""The fio commands iolab runs before the cases (which fio, its options: iolab.fio.info) have
a time limit, lowered here through IOLAB_FIO_ANSWER_S (issue 19, findings 11 and 12): a fio
that sleeps or is stopped (SIGSTOP) is killed, with what it started, and iolab says which
command did not answer; a fio that prints non-UTF-8 is read or refused in one line. Every
refusal row asserts: exit code 1, exactly one line on stderr, no traceback, nothing created or
changed in the scratch directory or the temporary directory. The fake fio scripts
(tests/fakes.py, Scene) either hang, stop, or print bytes that no fio prints; what they print
that fio prints comes from the real fio (exec).
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import refused
from fakes import REAL_FIO, Scene, running
from iolab.errors import FioError
from iolab.fio import info

LIMIT_S = 1  # IOLAB_FIO_ANSWER_S in the hostile-fio rows where no real fio answers
REAL_LIMIT_S = 8  # where the real fio answers the other questions (a busy machine is slow)


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
    assert running(scene.started()) == [], "a process the fake fio started is still running"


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
    assert running([int(pids.read_text())]) == []


@pytest.mark.fio
def test_a_version_with_bytes_that_are_not_utf8_is_read(scene: Scene) -> None:
    """fio's own --version output, then bytes that are not UTF-8: the version is read."""
    scene.fio(_on("--version", "@REAL@ --version; printf '\\377\\376\\n'; exit 0\n"))
    real = subprocess.run([REAL_FIO, "--version"], capture_output=True, text=True, check=True)
    found = info.probe.__wrapped__(str(scene.bin / "fio"))
    assert found.version == real.stdout.strip()
    assert found.engines  # --enghelp answered by the real fio
