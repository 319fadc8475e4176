"""How iolab meets the process that started it (iolab.shell): standard output that cannot be
written (a full disk: one line, exit 1; a closed pipe: quiet, exit 141; closed: one line and
exit 1 where the command prints its result, and the commands that write files still work),
standard error or input closed (the exit codes kept, a run's database whole), and the signals:
SIGTERM, SIGHUP and SIGQUIT sent to a real `iolab run` stop it as Ctrl-C does (finished cases
kept, fio stopped, the test file removed, the resume command said, exit 128 + the signal's
number), and `iolab run --resume N` finishes the run (issue 19, finding 13; issue 29,
finding 11).
"""

from __future__ import annotations

import array
import fcntl
import os
import signal
import sqlite3
import subprocess
import termios
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import (
    IOLAB,
    file_sha256,
    listing,
    run_iolab,
    said,
    stored_cases,
)
from iolab.app import reporting
from iolab.cli import main
from test_cli_input import FIGURES, FULL, stored
from test_numbers import STORE, make

__all__ = ["stored"]  # a fixture, used by name


# ---------------------------------------------------------------- standard output

OUTPUT_COMMANDS = [
    pytest.param(("presets",), id="presets"),
    pytest.param(("show", "--preset", "quick"), id="show"),
    pytest.param(("--help",), id="help"),
    pytest.param(("advise", *FIGURES.split()), id="advise"),
    pytest.param(("report", "--db", "stored.db"), id="report", marks=pytest.mark.fio),
    pytest.param(
        ("report", "--format", "csv", "--db", "stored.db"), id="report-csv", marks=pytest.mark.fio
    ),
    pytest.param(("runs", "--db", "stored.db"), id="runs", marks=pytest.mark.fio),
    pytest.param(("export", "--db", "stored.db"), id="export", marks=pytest.mark.fio),
]


def _with_db(args: Sequence[str], request: pytest.FixtureRequest, folder: Path) -> None:
    if "stored.db" in args:
        (folder / "stored.db").write_bytes(request.getfixturevalue("stored").read_bytes())


@pytest.mark.slow
@pytest.mark.parametrize("args", OUTPUT_COMMANDS)
def test_a_full_disk_on_stdout_is_one_line_and_exit_1(
    args: tuple[str, ...], request: pytest.FixtureRequest, workdir: Path
) -> None:
    _with_db(args, request, workdir)
    before = listing(workdir)
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [*IOLAB, *args],
            cwd=workdir,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 1, done.stderr
    assert done.stderr == f"iolab: error: cannot write to standard output ({FULL})\n"
    assert listing(workdir) == before


@pytest.mark.slow
@pytest.mark.parametrize("args", OUTPUT_COMMANDS)
def test_a_closed_pipe_on_stdout_ends_quietly(
    args: tuple[str, ...], request: pytest.FixtureRequest, workdir: Path
) -> None:
    """As `iolab report | head -1` once head has gone: no traceback, exit 141 as SIGPIPE."""
    _with_db(args, request, workdir)
    before = listing(workdir)
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [*IOLAB, *args],
            cwd=workdir,
            stdout=write_end,
            text=True,
            stderr=subprocess.PIPE,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (141, "")
    assert listing(workdir) == before


# ---------------------------------------------------------------- signals

SIGNAL_PLAN = """name = "signalled"
[defaults]
runtime = 2
size = "8m"
[[setup]]
name = "here"
path = "{target}"
[[workload]]
name = "rr"
rw = "randread"
bs = "4k"
iodepth = [1, 2, 4, 8]
"""


def _holders(folder: Path) -> list[str]:
    """Processes that hold a file under folder open, or work in it: fio left running."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            links = [os.readlink(proc / "cwd")]
            links += [os.readlink(fd) for fd in (proc / "fd").iterdir()]
        except OSError:  # gone, or not ours to read
            continue
        if any(link.startswith(f"{folder}/") or link == str(folder) for link in links):
            found.append(f"{proc.name}: {(proc / 'cmdline').read_bytes()[:200]!r}")
    return found


def _run_status(db: Path) -> list[tuple[int, str]]:
    with sqlite3.connect(db) as con:
        rows = list(con.execute("SELECT id, status FROM runs ORDER BY id"))
    con.close()
    return rows


@pytest.mark.fio
@pytest.mark.parametrize(
    "signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT], ids=["SIGTERM", "SIGHUP", "SIGQUIT"]
)
def test_a_stop_signal_during_a_run_is_ctrl_c_and_resume_finishes(
    signum: signal.Signals, workdir: Path, tmp_path: Path
) -> None:
    target = workdir / "target"
    target.mkdir()
    (workdir / "plan.toml").write_text(SIGNAL_PLAN.format(target=target))
    db = workdir / "iolab.db"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    child = subprocess.Popen(
        [*IOLAB, "run", "plan.toml"],
        cwd=workdir,
        env=env,
        text=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None and not stored_cases(db):
        time.sleep(0.1)
    assert child.poll() is None, "the run ended before its first case was stored"
    child.send_signal(signum)
    _, err = child.communicate(timeout=120)

    assert child.returncode == 128 + signum, err
    (line,) = said(err)  # one line, past the progress
    assert line.startswith(f"iolab: interrupted by {signum.name}: "), err
    assert err.rstrip("\n").endswith(line), "the last line on stderr"
    assert "resume with: iolab run --resume 1 --db iolab.db" in err and "Traceback" not in err
    kept = stored_cases(db)
    assert 1 <= len(kept) < 4 and all(status == "ok" for *_, status in kept), kept
    assert _run_status(db) == [(1, "interrupted")]
    assert list(target.iterdir()) == [], "the test file was left behind"
    assert list(scratch.iterdir()) == [], "a scratch folder was left behind"
    assert _holders(workdir) == [], "fio (or its keeper) is still running"

    done = run_iolab("run", "--resume", "1", cwd=workdir)
    assert done.returncode == 0, done.stderr
    finished = stored_cases(db)
    assert finished[: len(kept)] == kept and len(finished) == 4
    assert {status for *_, status in finished} == {"ok"}
    assert len({(s, w, r) for s, w, r, _ in finished}) == 4, "a case ran twice"
    assert _run_status(db) == [(1, "done")] and list(target.iterdir()) == []


def _unread(fd: int) -> int:
    count = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, count)
    return count[0]


@pytest.mark.fio
def test_sigterm_outside_a_run_is_one_line_and_exit_143(stored: Path, workdir: Path) -> None:
    """`iolab report` blocked on a reader that does not read, then SIGTERM: one line, 143,
    at once (it does not wait on the reader to say so)."""
    (workdir / "stored.db").write_bytes(stored.read_bytes())
    read_end, write_end = os.pipe()
    try:
        child = subprocess.Popen(
            [*IOLAB, "report", "--format", "html", "--db", "stored.db"],
            cwd=workdir,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
        )
        os.close(write_end)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and _unread(read_end) < 65536:
            time.sleep(0.1)
        assert child.poll() is None and _unread(read_end) >= 65536, "it never filled the pipe"
        child.send_signal(signal.SIGTERM)
        _, err = child.communicate(timeout=30)
    finally:
        os.close(read_end)
    assert (child.returncode, err) == (143, "iolab: interrupted by SIGTERM\n")


def _signalling(signum: int) -> Any:
    def runs(db: str, ui: Any) -> list[Any]:
        # to this thread, at once: a signal sent to the process may be taken by another
        # thread (pytest-xdist's), and the command would go on before its handler ran
        signal.raise_signal(signum)
        return []

    return runs


@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGQUIT, 131)]
)
def test_a_stop_signal_in_any_command_exits_128_plus_its_number(
    signum: int, code: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reporting, "runs", _signalling(signum))
    before = signal.getsignal(signum)
    result = CliRunner().invoke(main, ["runs", "--db", "x.db"])
    assert result.exit_code == code, result.output
    assert result.stderr == f"iolab: interrupted by {signal.Signals(signum).name}\n"
    assert signal.getsignal(signum) == before, "the handler was left installed"


def test_a_hangup_the_parent_ignores_stays_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under nohup (SIGHUP ignored), a hangup does not stop iolab."""
    monkeypatch.setattr(reporting, "runs", _signalling(signal.SIGHUP))
    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        result = CliRunner().invoke(main, ["runs", "--db", "x.db"])
    finally:
        signal.signal(signal.SIGHUP, before)
    assert result.exit_code == 0 and result.stderr == "", result.output


# ---------------------------------------------------------------- standard streams closed

CLOSED_STDOUT = "iolab: error: cannot write to standard output (Bad file descriptor)\n"
# Commands that print their result on standard output: with it closed, one line and exit 1.
PRINTERS = [
    pytest.param(("presets",), id="presets"),
    pytest.param(("show", "--preset", "quick"), id="show"),
    pytest.param(("--version",), id="version"),
    pytest.param(("--help",), id="help"),
    pytest.param(("advise", *FIGURES.split()), id="advise"),
    pytest.param(("runs", "--db", "g.db"), id="runs"),
    pytest.param(("report", "--db", "g.db"), id="report"),
    pytest.param(("compare", "1", "2", "--db", "g.db"), id="compare"),
    pytest.param(("history", "--db", "g.db"), id="history"),
    pytest.param(("export", "--db", "g.db"), id="export"),
    pytest.param(("check", "--db", "g.db"), id="check"),
]
# Commands that write files and print nothing on standard output: closed, they still work.
WRITERS = [
    pytest.param(
        ("report", "--format", "markdown", "-o", "r.md", "--db", "g.db"),
        "r.md",
        id="report-markdown-file",
    ),
    pytest.param(("export", "-o", "e.json", "--db", "g.db"), "e.json", id="export-file"),
]


def _closed(args: Sequence[str], cwd: Path, closing: str) -> subprocess.CompletedProcess[str]:
    """iolab ARGS run by a shell that closes `closing` ('>&-', '2>&-', '<&-', or several)
    before it starts iolab; what is left open is captured."""
    return subprocess.run(
        ["sh", "-c", f'exec "$@" {closing}', "sh", *IOLAB, *args],
        cwd=cwd,
        text=True,
        capture_output=True,
        timeout=120,
        check=False,
    )


def _stderr_of(args: Sequence[str], cwd: Path, closing: str) -> tuple[int, str]:
    """Exit code and standard error of iolab ARGS with standard output (and `closing`) closed."""
    errors = cwd / "stderr.txt"
    command = f'exec "$@" >&- {closing} 2>"{errors}"'
    done = subprocess.run(
        ["sh", "-c", command, "sh", *IOLAB, *args], cwd=cwd, text=True, timeout=120, check=False
    )
    said = errors.read_text()
    errors.unlink()
    return done.returncode, said


@pytest.mark.slow
@pytest.mark.parametrize("args", PRINTERS)
def test_standard_output_closed_is_one_line_and_exit_1(
    args: tuple[str, ...], workdir: Path, migrated: Callable[[Path, Path], None]
) -> None:
    make(workdir / "g.db", STORE, {}, None, migrated)
    before = listing(workdir)
    for closing in ("", "<&-"):
        code, said = _stderr_of(args, workdir, closing)
        assert (code, said) == (1, CLOSED_STDOUT), (closing, said[-2000:])
    assert listing(workdir) == before
    quiet = _closed(args, workdir, ">&- 2>&-")  # nothing to say anything on: the code says it
    assert quiet.returncode == 1
    assert listing(workdir) == before


@pytest.mark.slow
@pytest.mark.parametrize(("args", "written"), WRITERS)
def test_a_command_that_writes_files_works_with_standard_streams_closed(
    args: tuple[str, ...], written: str, workdir: Path, migrated: Callable[[Path, Path], None]
) -> None:
    make(workdir / "g.db", STORE, {}, None, migrated)
    store = file_sha256(workdir / "g.db")
    code, said = _stderr_of(args, workdir, "<&-")
    assert code == 0 and "Traceback" not in said, said[-2000:]
    first = file_sha256(workdir / written)
    (workdir / written).unlink()
    quiet = _closed(args, workdir, ">&- 2>&- <&-")
    assert quiet.returncode == 0
    assert file_sha256(workdir / written) == first, "the same file, written with nothing open"
    assert file_sha256(workdir / "g.db") == store


@pytest.mark.slow
def test_standard_error_closed_keeps_the_exit_codes(
    workdir: Path, migrated: Callable[[Path, Path], None]
) -> None:
    """Nothing to say a refusal on: the exit code still tells it, and no traceback goes to
    standard output in its place."""
    make(workdir / "g.db", STORE, {}, None, migrated)
    refused = _closed(("report", "9", "--db", "g.db"), workdir, "2>&-")
    assert (refused.returncode, refused.stdout) == (1, "")
    fine = _closed(("runs", "--db", "g.db"), workdir, "2>&-")
    assert fine.returncode == 0 and "golden" in fine.stdout


RUN_PLAN = """name = "closed"
[defaults]
runtime = 1
size = "4m"
[[setup]]
name = "here"
path = "{target}"
[[workload]]
name = "rr"
rw = "randread"
bs = "4k"
"""


@pytest.mark.fio
@pytest.mark.slow
def test_a_run_with_standard_output_and_error_closed_keeps_its_database_whole(
    workdir: Path,
) -> None:
    """With fd 1 and 2 closed, the database (or fio's output) would be opened as fd 1 or 2,
    and the table or a child's error written into it: iolab holds them on /dev/null first.
    The run is stored whole; the table it could not print makes the exit code 1."""
    target = workdir / "target"
    target.mkdir()
    (workdir / "plan.toml").write_text(RUN_PLAN.format(target=target))
    done = _closed(("run", "plan.toml", "--db", "c.db"), workdir, ">&- 2>&-")
    assert done.returncode == 1
    with sqlite3.connect(workdir / "c.db") as con:
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert con.execute("SELECT status FROM cases").fetchall() == [("ok",)]
    con.close()
    assert list(target.iterdir()) == [], "the test file removed"
    shown = run_iolab("report", "--db", "c.db", cwd=workdir)
    assert shown.returncode == 0 and "rr" in shown.stdout, shown.stderr
