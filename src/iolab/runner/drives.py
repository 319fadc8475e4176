"""A set-up's drives read as its cases go: after it is built (before its preconditioning),
then after each case, between cases, never while fio runs. Each case is judged on what moved
between the reading before it and the one after (analysis.drive_checks); the set-up's record
keeps the first reading and the latest (`DriveLog`). Only where smartctl is installed and the
set-up is on this host's disks; a drive that cannot be read (smartctl failed, hung or printed
what is not its JSON) is said once, in one line, and not asked again in this set-up: a
smartctl that hangs costs its time limit once, not once per case."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace

from iolab.analysis import drive_checks
from iolab.model import Code, Result
from iolab.model.drive import DriveLog, DriveReading, changes
from iolab.model.facts import TargetFacts
from iolab.model.setup_record import Recorder
from iolab.runner.listener import Listener
from iolab.targets import devices as dv
from iolab.targets import drive_health
from iolab.targets.controllers.apply import Card

INTERVAL = "after the set-up was built, then after each case"


def disks_of(target: TargetFacts | None) -> tuple[str, ...]:
    """The whole disks a set-up's target reaches that may give an account of themselves."""
    if target is None:
        return ()
    return drive_health.own_disks(target.disks)


def held(target: TargetFacts | None, disks: tuple[str, ...]) -> DriveReading | None:
    """The disks' reading that the target's facts hold: each one's account (or why it has
    none), read with the environment once the set-up was built, moments before (one smartctl
    a disk, not two); None where a disk is not among them."""
    drives, problems = {}, []
    for name in disks:
        facts = target.devices.get(name) if target else None
        if facts is not None and facts.health is not None:
            drives[name] = facts.health
        elif facts is not None and facts.health_problem:
            problems.append(f"{name}: {facts.health_problem}")
        else:
            return None
    return DriveReading(time.time(), drives, tuple(problems))


class Drives:
    """One set-up's drives: read once now, and after each case (`judged`)."""

    def __init__(
        self,
        disks: tuple[str, ...],
        record: Recorder,
        listener: Listener,
        behind: Mapping[str, tuple[str, str]] | None = None,
        first: DriveReading | None = None,
    ) -> None:
        """`first`: the reading the set-up's target facts already hold (None: read now)."""
        self.disks, self.record, self.listener = disks, record, listener
        self.behind = dict(behind or {})  # a RAID card's drives: name -> (device, -d value)
        self.seconds = 0.0  # spent reading them
        self.first = self.latest = self.read(first)
        self.keep()

    @classmethod
    def of(
        cls, target: TargetFacts | None, record: Recorder, listener: Listener, card: Card | None
    ) -> Drives | None:
        """The set-up's drives, where smartctl is installed and the target has some: its
        disks, and where a RAID card is known, the VD's members through the card (the VD
        itself, the card's disk, gives no account of its own then)."""
        disks = disks_of(target)
        behind = {name: (card.device, kind) for name, kind in card.members} if card else {}
        if behind and card is not None:
            vd = dv.try_kernel_name(card.device)
            disks = tuple(d for d in disks if d != vd)
        if not (disks or behind) or not drive_health.installed():
            return None
        first = None if behind else held(target, disks)
        return cls(disks, record, listener, behind, first)

    def read(self, found: DriveReading | None = None) -> DriveReading:
        """Every drive read now (or `found`, a reading already had), those that could not be
        said once and dropped."""
        if found is None:
            started = time.monotonic()
            found = drive_health.reading(self.disks, time.time(), behind=self.behind)
            self.seconds += time.monotonic() - started
        for problem in found.problems:
            self.listener.note(f"drive not read: {problem}; not asked again for this set-up")
        self.disks = tuple(d for d in self.disks if d in found.drives)
        self.behind = {k: v for k, v in self.behind.items() if k in found.drives}
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
