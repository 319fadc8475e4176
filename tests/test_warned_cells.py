"""A number iolab cannot vouch for is marked on the cell itself, in every format: the
terminal and Markdown cell reads "… ⚑ codes", the HTML cell has class "warned" and the
warning's words in its title, the report CSV's `flags` carries the codes (issue 21, 6)."""

from __future__ import annotations

import csv
import html
import re
import shutil
from pathlib import Path

import pytest

from conftest import run_iolab

GOLDEN = Path(__file__).parent / "golden"
WARNED = "⚑"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """The golden devices store: real fio, its mixed workload warned (randrepeat,
    fresh-device), one sync-writes repetition too short, xfs's sync writes clean."""
    copy = tmp_path / "devices.db"
    shutil.copyfile(GOLDEN / "devices.db", copy)
    return copy


def report(store: Path, *args: str) -> str:
    return run_iolab("report", "1", "--db", str(store), *args, cwd=store.parent, check=True).stdout


def row(text: str, workload: str) -> str:
    """The workload's row of the results table (past the findings and their leaders)."""
    results = text.split("Results", 1)[1]
    return next(line for line in results.splitlines() if f" {workload} " in line)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["terminal", "markdown"])
def test_terminal_and_markdown_mark_the_cell(
    store: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "300")  # no cell wraps
    text = report(store) if fmt == "terminal" else report(store, "--format", "markdown")
    mixed = row(text, "mixed")  # its read row; its write and total rows alike
    assert mixed.count(f"{WARNED} randrepeat, fresh-device") == 2, mixed
    sync = row(text, "sync writes")
    assert sync.count(WARNED) == 1 and f"{WARNED} too-short" in sync, sync
    assert "marks a value iolab cannot vouch for" in text


@pytest.mark.slow
def test_csv_flags_carry_the_codes(store: Path) -> None:
    rows = list(csv.DictReader(report(store, "--format", "csv").splitlines()))
    flags = {(r["workload"], r["setup"]): set(r["flags"].split(";")) - {""} for r in rows}
    assert {"randrepeat", "fresh-device"} <= flags[("mixed", "xfs")]
    assert "too-short" in flags[("sync writes", "btrfs raid1")]
    clean = {"unstable", "no useful interval"}
    assert flags[("sync writes", "xfs")] <= clean, "a clean cell carries no code"


@pytest.mark.slow
def test_html_cell_says_why_and_what_to_do(store: Path) -> None:
    page = store.parent / "r.html"
    report(store, "--format", "html", "-o", str(page))
    results = page.read_text().split('data-table="results"')[1].split("</table>")[0]
    cells = re.findall(r'<td class="([^"]*)" title="([^"]*)">([^<]*)</td>', results)
    warned = [(html.unescape(t), html.unescape(x)) for c, t, x in cells if "warned" in c]
    assert len(warned) == 3 * 2 + 1  # mixed: read, write and total on both set-ups
    for title, text in warned:
        assert WARNED in text
        assert "too-short: " in title or "randrepeat: " in title
    short = next(t for t, x in warned if "too-short" in x)
    assert "Use time_based = 1" in short, "the advice is on the cell"


@pytest.mark.slow
def test_compare_marks_values_and_changes(store: Path) -> None:
    text = run_iolab(
        "compare",
        "1",
        "2",
        "--db",
        str(store),
        "--format",
        "markdown",
        cwd=store.parent,
        check=True,
    ).stdout
    sync = next(line for line in text.splitlines() if " sync writes " in line and "raid1" in line)
    assert sync.count(f"{WARNED} too-short") == 3, sync  # run 1, run 2 and the change
