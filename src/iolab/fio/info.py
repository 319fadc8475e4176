"""Which fio is installed, what it can do, and which engine suits this kernel."""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from iolab.errors import FioError

MIN_VERSION = (3, 0)


@dataclass(frozen=True)
class FioInfo:
    path: str
    version: str
    engines: tuple[str, ...]

    @property
    def default_engine(self) -> str:
        """io_uring where fio has it and the kernel allows it, else libaio, else psync."""
        if "io_uring" in self.engines and _io_uring_allowed():
            return "io_uring"
        return "libaio" if "libaio" in self.engines else "psync"


def _io_uring_allowed() -> bool:
    switch = Path("/proc/sys/kernel/io_uring_disabled")
    try:
        return switch.read_text().strip() == "0"
    except OSError:
        return Path("/proc/sys/kernel").exists()


def parse_version(text: str) -> tuple[int, int]:
    match = re.search(r"fio-(\d+)\.(\d+)", text)
    if not match:
        raise FioError(f"cannot read fio's version from {text.strip()!r}; install fio 3.x")
    return int(match.group(1)), int(match.group(2))


@functools.cache
def probe(binary: str = "fio") -> FioInfo:
    """Find fio and check that it is new enough; cached for the process."""
    path = shutil.which(binary)
    if path is None:
        raise FioError("fio is not installed: run 'apt-get install fio' (or the README's set-up)")
    version = subprocess.run([path, "--version"], capture_output=True, text=True, check=False)
    text = version.stdout.strip()
    if parse_version(text) < MIN_VERSION:
        raise FioError(f"{text} is too old: iolab needs fio 3.0 or newer")
    help_text = subprocess.run([path, "--enghelp"], capture_output=True, text=True, check=False)
    engines = tuple(line.strip() for line in help_text.stdout.splitlines()[1:] if line.strip())
    return FioInfo(path=path, version=text, engines=engines)
