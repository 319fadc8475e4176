"""Typed errors. Library code raises these; only the cli turns them into messages."""

import signal
from dataclasses import dataclass

# Signals that stop iolab as Ctrl-C does (the cli raises Stopped for them); exit 128 + number.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


@dataclass(frozen=True)
class Resume:
    """A run that stopped part way and can go on: its number and its database."""

    run_id: int
    db: str


class IolabError(Exception):
    """A problem the user can act on. str(error) is one line that says what to do; `resume`,
    when set, names the run the user can resume (the cli says how)."""

    resume: Resume | None = None


class PlanError(IolabError):
    """The plan file, a preset or an override is invalid."""


class TargetError(IolabError):
    """A target path or device cannot be used as asked."""


class ToolOptionError(TargetError):
    """A free-text option for a tool that builds a set-up (mkfs, mount, mdadm, lvcreate) that
    the allow-list (targets/tool_options.py) refuses: the plan `key` it came from, the `tool`,
    the `option` as written (shortened), and `why`, which says what to do."""

    def __init__(self, key: str, tool: str, option: str, why: str) -> None:
        shown = option if len(option) <= 60 else option[:57] + "..."
        super().__init__(f"{key}: {tool} {shown!r} {why}")
        self.key, self.tool, self.option, self.why = key, tool, option, why


class LabHostError(TargetError):
    """The lab kernel (user-mode Linux) cannot run on this host at all: its CPU or kernel is
    one the installed user-mode Linux does not support. Nothing was built or measured."""


class FioError(IolabError):
    """fio is missing, too old, or failed in a way that stops the whole run."""


class StoreError(IolabError):
    """The results database cannot be opened, migrated or queried."""


class JSONShapeError(StoreError):
    """Stored JSON (a set-up's record, a card, a file in iolab's state folder) is not the
    shape iolab reads (model.codec): `where` it was read, the `field` (a path such as
    "points[2].value"), what was `expected`, and what was `found` (a kind, never the value)."""

    def __init__(self, where: str, field: str, expected: str, found: str) -> None:
        place = f"{where}: " if where else ""
        super().__init__(f"{place}{field or 'the value'} is {found}, expected {expected}")
        self.where, self.field, self.expected, self.found = where, field, expected, found


class ReportError(IolabError):
    """A report cannot be built from what the store holds."""


class ControllerError(IolabError):
    """A RAID card's tool (storcli, perccli, MegaCli, ssacli, arcconf) printed what iolab
    cannot read, or refused: the message names the tool and the field, never its text."""


class Interrupted(IolabError):
    """The user stopped the run (Ctrl-C, or a signal that stops as it does); finished cases
    are kept. `signum`: the signal (2 for Ctrl-C), whose number the exit code carries."""

    def __init__(self, message: str, resume: Resume, signum: int = 2) -> None:
        super().__init__(message)
        self.resume = resume
        self.signum = signum


class Stopped(KeyboardInterrupt):
    """SIGTERM, SIGHUP or SIGQUIT, raised where iolab is so that it stops as on Ctrl-C:
    fio stopped, test files and set-ups cleaned up, finished cases kept."""

    def __init__(self, signum: int, name: str) -> None:
        super().__init__(name)
        self.signum = signum
        self.name = name
