"""A set-up's drives read as its cases go: after it is built (before its preconditioning),
then after each case, between cases, never while fio runs. Each case is judged on what moved
between the reading before it and the one after (analysis.drive_checks); the set-up's record
keeps the first reading and the latest (`DriveLog`). Only where smartctl is installed and the
set-up is on this host's disks; a drive that cannot be read (smartctl failed, hung or printed
what is not its JSON) is said once, in one line, and not asked again in this set-up: a
smartctl that hangs costs its time limit once, not once per case."""

from __future__ import annotations

import time
from dataclasses import replace

from iolab.analysis import drive_checks
from iolab.model import Code, Result
from iolab.model.drive import DriveLog, DriveReading, changes
from iolab.model.facts import TargetFacts
from iolab.model.setup_record import Recorder
from iolab.runner.listener import Listener
from iolab.targets import drive_health

INTERVAL = "after the set-up was built, then after each case"
NOT_DRIVES = ("loop", "ram", "zram", "nbd", "ubd", "md", "dm-")  # no account of their own


def disks_of(target: TargetFacts | None) -> tuple[str, ...]:
    """The whole disks a set-up's target reaches that may give an account of themselves."""
    if target is None:
        return ()
    return tuple(d for d in target.disks if not d.startswith(NOT_DRIVES))


class Drives:
    """One set-up's drives: read once now, and after each case (`judged`)."""

    def __init__(self, disks: tuple[str, ...], record: Recorder, listener: Listener) -> None:
        self.disks, self.record, self.listener = disks, record, listener
        self.seconds = 0.0  # spent reading them
        self.first = self.latest = self.read()
        self.keep()

    @classmethod
    def of(cls, target: TargetFacts | None, record: Recorder, listener: Listener) -> Drives | None:
        """The set-up's drives, where smartctl is installed and the target has some."""
        disks = disks_of(target)
        if not disks or not drive_health.installed():
            return None
        return cls(disks, record, listener)

    def read(self) -> DriveReading:
        started = time.monotonic()
        found = drive_health.reading(self.disks, time.time())
        self.seconds += time.monotonic() - started
        for problem in found.problems:
            self.listener.note(f"drive not read: {problem}; not asked again for this set-up")
        self.disks = tuple(d for d in self.disks if d in found.drives)
        return found

    def keep(self) -> None:
        """The first reading and the latest, in the set-up's record."""
        self.record.drives(DriveLog(self.first, self.latest, INTERVAL))

    @property
    def written_share(self) -> float | None:
        """The least any of them wrote in its life, as a share of its capacity."""
        return drive_checks.written_share(self.latest)

    def judged(self, result: Result) -> Result:
        """Read them again: what moved over the case, warned on it."""
        before, after = self.latest, self.read()
        self.latest = after
        if result.status != "ok":
            return result
        mixed = any(w.code == Code.MIXED_SPEEDS for w in result.warnings)
        found = drive_checks.warnings(before, after, changes(before, after), mixed)
        return replace(result, warnings=result.warnings + found) if found else result
