"""A fake executor: replays output fio really printed (tests/fixtures/fio), runs nothing.

It lets the runner's logic (order, saving, failure, Ctrl-C, resume, retry, clean-up) be tested
without root, without fio, in milliseconds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from iolab.fio.executor import HostLimits
from iolab.fio.outcome import Outcome
from iolab.fio.parse import Status

FIO = Path(__file__).parent / "fixtures" / "fio"
Behaviour = Literal["ok", "enospc", "interrupt"]


def recorded(name: str) -> Outcome:
    """What fio printed for the fixture `name`: its JSON, stderr and exit code."""
    folder = FIO / name
    stderr = folder / f"{name}.stderr"
    return Outcome(
        returncode=int((folder / f"{name}.rc").read_text().strip()),
        json_text=(folder / f"{name}.json").read_text(),
        stderr=stderr.read_text() if stderr.exists() else "",
        log_files=(),
    )


OUTCOMES: dict[str, str] = {"ok": "randread-jsonplus", "enospc": "failed-enospc"}


@dataclass
class FakeExecutor:
    """Runs nothing: each call takes the next behaviour of `script` (then "ok")."""

    script: list[Behaviour] = field(default_factory=list)
    limits_: HostLimits = field(
        default_factory=lambda: HostLimits(cpus=4, memory_bytes=8 * 1024**3, aio_room=65536)
    )
    jobs: list[str] = field(default_factory=list)
    on_run: Callable[[Path], None] | None = None

    def limits(self) -> HostLimits:
        return self.limits_

    def run(
        self,
        job_text: str,
        workdir: Path,
        on_status: Callable[[Status], None] | None,
        timeout_s: float | None,
    ) -> Outcome:
        self.jobs.append(job_text)
        behaviour = self.script.pop(0) if self.script else "ok"
        if self.on_run:
            self.on_run(workdir)
        if behaviour == "interrupt":
            raise KeyboardInterrupt
        return recorded(OUTCOMES[behaviour])
