"""The terminal report uses the width there is: long set-up names are not cut at 120 columns
on a 220-column terminal; piped, the text stays 120 columns wide (the same every time)."""

from __future__ import annotations

import fcntl
import os
import pty
import shutil
import struct
import subprocess
import termios
from pathlib import Path

import pytest

from conftest import IOLAB

GOLDEN = Path(__file__).parent / "golden"


def report_on_a_terminal(db: Path, columns: int) -> str:
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    child = subprocess.Popen(
        [*IOLAB, "report", "1", "--db", str(db)],
        stdout=follower,
        stderr=subprocess.DEVNULL,
        cwd=db.parent,
        env=env,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    child.wait(60)
    os.close(leader)
    return b"".join(chunks).decode(errors="replace")


@pytest.mark.slow
def test_the_report_is_as_wide_as_the_terminal(tmp_path: Path) -> None:
    db = tmp_path / "devices.db"
    shutil.copyfile(GOLDEN / "devices.db", db)
    wide = report_on_a_terminal(db, 220)
    assert max(len(line) for line in wide.splitlines()) > 120
    piped = subprocess.run(
        [*IOLAB, "report", "1", "--db", str(db)],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    ).stdout
    table = [line for line in piped.splitlines() if line.startswith(("┃", "│", "┏"))]
    assert table and max(len(line) for line in table) <= 120


def _piped(db: Path, columns: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    return subprocess.run(
        [*IOLAB, "report", "1", "--db", str(db)],
        capture_output=True,
        text=True,
        check=True,
        cwd=db.parent,
        env=env,
    ).stdout


@pytest.mark.slow
@pytest.mark.parametrize("columns", [None, "80", "250", "abc", "9", "٥٠٠"])
def test_a_file_or_pipe_honours_a_wider_columns_and_cuts_nothing(
    tmp_path: Path, columns: str | None
) -> None:
    """`COLUMNS=250 iolab report > r.txt` is up to 250 wide; a narrower COLUMNS (80, exported
    by many environments) or one that is not a width (text, not ASCII digits) leaves the 120
    of a file; at any width a name, a figure or a flag wraps onto more lines instead of being
    cut to "…" (issue 32, finding 8)."""
    db = tmp_path / "devices.db"
    shutil.copyfile(GOLDEN / "devices.db", db)
    text = _piped(db, columns)
    table = [line for line in text.splitlines() if line.startswith(("┃", "│", "┏"))]
    assert table and max(len(line) for line in table) <= (250 if columns == "250" else 120)
    assert "…" not in text
    assert text == _piped(db, None) or columns == "250"


@pytest.mark.slow
def test_long_names_fold_whole_in_a_file(tmp_path: Path) -> None:
    """Set-up names longer than a column: every character of each is in the text, in order,
    with nothing cut (the column folds them over lines)."""
    from iolab.report.cells import Cell, Row, Table
    from iolab.report.formats import terminal

    names = ("9690SA-4I-with-a-long-controller-name-write-back", "published-cache-setting-x" * 3)
    table = Table("t", "workload", names, (Row("w", (Cell(1.0, "IOPS", "1 ⚑ foreign-load"),) * 2),))
    text = terminal.render(table)
    for name in names:
        cells = [
            line.split("┃")[i + 2].strip()
            for line in text.splitlines()
            if line.startswith("┃")
            for i in [names.index(name)]
        ]
        assert "".join(cells) == name
    assert "…" not in text and "foreign-load" in text
