"""Find the RAID cards on this host through whichever of their tools is installed.

Each tool family is asked once, through the first of its names found on PATH (storcli64,
storcli, perccli64, perccli; MegaCli64, MegaCli, megacli; ssacli, hpssacli, hpacucli;
arcconf), with read-only commands only, never through a shell, each with a timeout, its
output decoded with errors replaced. The tools write logs into their working directory
(storcli.log, MegaSAS.log, UcliEvt.log): they run in a scratch directory that is removed
after, and with `nolog`/`-NoLog` where they take it. A tool that fails or prints what cannot
be read is a problem in one line, beside the cards the others found; none installed is none
found, not an error.
"""

from __future__ import annotations

import logging
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from iolab.errors import ControllerError
from iolab.targets.controllers import arcconf, megacli, ssacli, storcli
from iolab.targets.controllers.model import UNREPORTED, Controller, JSONDict

log = logging.getLogger(__name__)  # `iolab -v` shows what it ran

TOOL_TIMEOUT_S = 30.0
MAX_QUERIES = 64  # per-VD and per-controller commands one probe may run
FAMILIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("storcli", ("storcli64", "storcli", "perccli64", "perccli")),
    ("MegaCli", ("MegaCli64", "MegaCli", "megacli")),
    ("ssacli", ("ssacli", "hpssacli", "hpacucli")),
    ("arcconf", ("arcconf",)),
)
Run = Callable[[list[str]], str]


@dataclass(frozen=True)
class Found:
    """The cards found, and what could not be read, one line each."""

    controllers: tuple[Controller, ...] = ()
    problems: tuple[str, ...] = ()

    def to_json(self) -> JSONDict:
        return {
            "controllers": [c.to_json() for c in self.controllers],
            "controller_problems": list(self.problems),
        }


def probe(timeout_s: float = TOOL_TIMEOUT_S) -> Found:
    """Every card that an installed tool lists, with its VDs, cache and battery."""
    controllers: list[Controller] = []
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="iolab-raid-tools-") as scratch:
        for family, names in FAMILIES:
            program = next((found for n in names if (found := shutil.which(n))), None)
            if program is None:
                continue
            label = label_of(family, program)

            def run(args: list[str], program: str = program, label: str = label) -> str:
                return run_tool(program, args, label, Path(scratch), timeout_s)

            try:
                controllers += READERS[family](label, run, problems)
            except ControllerError as error:
                problems.append(str(error))
    return Found(tuple(controllers), tuple(problems))


def label_of(family: str, program: str) -> str:
    """The tool's name as iolab reports it: perccli is storcli's family, named apart."""
    return "perccli" if Path(program).name.lower().startswith("perccli") else family


def run_tool(program: str, args: list[str], label: str, cwd: Path, timeout_s: float) -> str:
    """What `program args` printed on stdout; a ControllerError when it cannot run or hangs."""
    command = " ".join(args)
    log.info("ran: %s", shlex.join([program, *args]))
    try:
        done = subprocess.run(
            [program, *args],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ControllerError(
            f"{label}: `{command}` did not answer within {timeout_s:g} s"
        ) from None
    except OSError as error:
        raise ControllerError(f"{label}: could not run `{command}` ({error.strerror})") from None
    text = done.stdout.decode(errors="replace")
    if done.returncode != 0 and not text.strip():
        raise ControllerError(f"{label}: `{command}` exited with status {done.returncode}")
    return text


def _storcli(label: str, run: Run, problems: list[str]) -> list[Controller]:
    cards = storcli.parse(run(["/cALL", "show", "all", "J", "nolog"]), label)
    budget = MAX_QUERIES
    detailed: list[Controller] = []
    for card in cards:
        details = []
        for vd in card.drives[: max(budget, 0)]:
            try:
                details += storcli.parse_vd(run([vd.id, "show", "all", "J", "nolog"]), label)
            except ControllerError as error:
                problems.append(str(error))
        budget -= len(card.drives)
        detailed.append(storcli.with_details(card, details))
    return detailed


def _megacli(label: str, run: Run, problems: list[str]) -> list[Controller]:
    cards = megacli.parse(run(["-LDPDInfo", "-aAll", "-NoLog"]))
    try:
        batteries = megacli.parse_bbu(run(["-AdpBbuCmd", "-aAll", "-NoLog"]))
    except ControllerError as error:
        problems.append(str(error))
        return cards
    return [replace(card, battery=batteries.get(card.index, UNREPORTED)) for card in cards]


def _ssacli(label: str, run: Run, problems: list[str]) -> list[Controller]:
    return ssacli.parse(run(["ctrl", "all", "show", "config", "detail"]))


def _arcconf(label: str, run: Run, problems: list[str]) -> list[Controller]:
    first = run(["GETCONFIG", "1", "LD"])
    cards = arcconf.parse(first, 1)
    count = min(arcconf.controllers_found(first) or 1, MAX_QUERIES)
    for number in range(2, count + 1):
        try:
            cards += arcconf.parse(run(["GETCONFIG", str(number), "LD"]), number)
        except ControllerError as error:
            problems.append(str(error))
    return cards


READERS: dict[str, Callable[[str, Run, list[str]], list[Controller]]] = {
    "storcli": _storcli,
    "MegaCli": _megacli,
    "ssacli": _ssacli,
    "arcconf": _arcconf,
}
