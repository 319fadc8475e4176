"""What the runner tells whoever shows progress (the terminal, a test, a script)."""

from __future__ import annotations

from typing import Protocol

from iolab.fio.parse import Status
from iolab.model import Case, Result


class Listener(Protocol):
    """Told of each case as it starts, of fio's status while it runs, and as it ends; and
    of anything worth a line between cases."""

    def note(self, line: str) -> None: ...

    def case_started(self, index: int, total: int, case: Case, eta_s: float) -> None: ...
    def status(self, status: Status) -> None: ...
    def case_finished(self, result: Result) -> None: ...
