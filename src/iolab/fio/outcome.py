"""What one fio invocation left behind, wherever it ran, and fio's own words when it failed."""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from iolab.fio.document import FioDocument
from iolab.fio.parse import ParseError


@dataclass(frozen=True)
class Outcome:
    """fio's exit status, its JSON output, its stderr and the log files it wrote."""

    returncode: int
    json_text: str
    stderr: str
    log_files: tuple[Path, ...]
    timed_out: bool = False
    lost: tuple[tuple[str, str], ...] = ()  # (host, why) for hosts that sent no result
    fio_s: float | None = None  # fio's own wall time, start to end, where its keeper said it

    @cached_property
    def document(self) -> FioDocument | None:
        """fio's JSON result, read once for everyone who looks at it; None when fio printed
        none that can be read (nothing, cut short, no jobs)."""
        try:
            return FioDocument.read(self.json_text)
        except ParseError:
            return None


def failure(outcome: Outcome) -> str | None:
    """One line saying why fio failed, in fio's own words; None when it did not."""
    if outcome.timed_out:
        return "fio did not finish in time and was stopped"
    document = outcome.document
    error = document.error if document is not None else 0
    if document is not None and outcome.returncode == 0 and error == 0:
        return None
    lines = [line.strip() for line in outcome.stderr.splitlines() if line.strip()]
    told = [line for line in lines if "error" in line.lower() or line.startswith("fio:")]
    line = told[0] if told else lines[0] if lines else ""
    number = re.search(r"\berr=(\d+)", line)
    code = int(number.group(1)) if number else error
    if code and line:
        return f"{errno_words(code)}: {line}"
    if code:
        return f"fio's job stopped with {errno_words(code)}"
    return line or f"fio exited with code {outcome.returncode}"


def errno_words(code: int) -> str:
    """22 -> 'EINVAL: Invalid argument'."""
    return f"{errno.errorcode.get(code, f'error {code}')}: {os.strerror(code)}"
