"""Shared fixtures: real fio, small files, short runtimes."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
IOLAB = [sys.executable, "-m", "iolab"]


def run_iolab(*args: str, cwd: Path, check: bool = False) -> subprocess.CompletedProcess[str]:
    """The real command line, as a user types it."""
    done = subprocess.run(
        [*IOLAB, *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=300
    )
    if check and done.returncode != 0:
        raise AssertionError(f"iolab {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done


@pytest.fixture
def workdir(tmp_path: Path) -> Iterator[Path]:
    """A scratch directory on a real filesystem (not tmpfs, which has no O_DIRECT)."""
    base = Path(os.environ.get("IOLAB_TEST_DIR", "/var/tmp"))
    path = base / f"iolab-test-{os.getpid()}-{tmp_path.name}"
    path.mkdir(parents=True)
    yield path
    subprocess.run(["rm", "-rf", str(path)], check=False)


def needs_root() -> pytest.MarkDecorator:
    """Skip without root on a workstation; in CI (CI set) run anyway, so a missing root fails."""
    return pytest.mark.skipif(
        os.geteuid() != 0 and not os.environ.get("CI"), reason="needs root for mounts"
    )
