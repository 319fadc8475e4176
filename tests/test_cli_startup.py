"""Each command imports what it uses: `import iolab.cli` (what every command pays, `iolab
--help` too) loads no use case, report, plan loader, importer or runner, and `iolab history`
loads no report document. Structural: which modules a fresh process holds, not how long it
took (bench/ times things)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

GOLDEN_STORE = Path(__file__).parent / "golden" / "store.db"
# The heavy modules (history does load the runner's recovery, the terminal's reading line and
# the pending restores: light modules of the same packages)
HEAVY = (
    "iolab.runner.campaign",
    "iolab.runner.executing",
    "iolab.report.document",
    "iolab.plan.load",
    "iolab.plan.checks",
    "iolab.exchange.importer",
    "iolab.exchange.fio_json",
)
# What building the commands needs beside click and rich: nothing that reads or measures.
LIGHT = {
    "iolab",
    "iolab.version",
    "iolab.errors",
    "iolab.names",
    "iolab.shell",
    "iolab.units",
    "iolab.choices",
    "iolab.exchange",  # empty, for iolab.load:
    "iolab.exchange.frame",  # which imports what it reads when called
}


def loaded_by(code: str, cwd: Path) -> set[str]:
    """The modules a fresh Python holds after running `code` (on stderr, after a marker line)."""
    listing = "print('--modules--', *sorted(sys.modules), sep='\\n', file=sys.stderr)"
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\n{listing}"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    _, marker, listed = done.stderr.partition("--modules--\n")
    assert marker, f"no module list:\n{done.stdout}\n{done.stderr}"
    return set(listed.split())


def iolab_code(*args: str) -> str:
    """Run the command line in-process, as `python -m iolab ARGS` would, keeping the process."""
    call = f"main({list(args)!r})"
    return f"from iolab.cli import main\ntry:\n    {call}\nexcept SystemExit:\n    pass"


def test_importing_the_cli_loads_no_use_case(tmp_path: Path) -> None:
    loaded = loaded_by("import iolab.cli", tmp_path)
    assert "iolab.cli.results" in loaded  # the commands are built
    assert {m for m in loaded if m.startswith("iolab.") and not m.startswith("iolab.cli")} <= LIGHT
    assert "numpy" not in loaded


def test_help_loads_no_heavy_module(tmp_path: Path) -> None:
    loaded = loaded_by(iolab_code("--help"), tmp_path)
    assert "iolab.cli" in loaded
    assert not [m for m in (*HEAVY, "iolab.targets.controllers") if m in loaded]
    assert not [m for m in loaded if m.startswith("iolab.app.")]  # no use case imported


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
@pytest.mark.parametrize("command", ["history", "export", "run"])
def test_a_commands_help_loads_no_use_case(tmp_path: Path, command: str) -> None:
    """Beside the group's own (app.base: the restores every command says), a command's
    --help imports no use case and no report."""
    loaded = loaded_by(iolab_code(command, "--help"), tmp_path)
    assert {m for m in loaded if m.startswith("iolab.app.")} == {"iolab.app.base"}
    assert "iolab.report.document" not in loaded and "iolab.runner.campaign" not in loaded


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
def test_history_loads_no_report_document(tmp_path: Path) -> None:
    """`iolab history`'s table needs the history's text, not the report's document (nor the
    charts and formats behind it)."""
    db = tmp_path / "store.db"
    shutil.copyfile(GOLDEN_STORE, db)
    loaded = loaded_by(iolab_code("history", "--db", str(db)), tmp_path)
    assert "iolab.report.text.history_text" in loaded  # it did write the history
    assert "iolab.report.document" not in loaded
    assert "iolab.report.formats.output" not in loaded
    assert "iolab.app.running" not in loaded and "iolab.app.transfer" not in loaded


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
def test_history_loads_none_of_the_heavy_modules(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    shutil.copyfile(GOLDEN_STORE, db)
    loaded = loaded_by(iolab_code("history", "--db", str(db)), tmp_path)
    assert "iolab.report.text.history_text" in loaded
    assert [m for m in HEAVY if m in loaded] == []
