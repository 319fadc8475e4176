"""Find the RAID cards on this host through whichever of their tools is installed.

Each tool family is asked once, through the first of its names found on PATH (storcli64,
storcli, perccli64, perccli; MegaCli64, MegaCli, megacli; ssacli, hpssacli, hpacucli;
arcconf), with read-only commands only, never through a shell, each with a timeout
(`IOLAB_RAID_ANSWER_S`) in a session of its own that is ended with it (`call`), its
output (at most 16 MiB) decoded with errors replaced. The tools write logs into their working
directory (storcli.log, MegaSAS.log, UcliEvt.log): they run in a scratch directory named with
iolab's pid, removed after (and, where that iolab died, by the next one: `scratch`), and with
`nolog`/`-NoLog` where they take it. A tool that fails or prints what cannot
be read is a problem in one line, beside the cards the others found; none installed is none
found, not an error.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import secrets
import shlex
import shutil
import signal
import stat
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from iolab.errors import ControllerError
from iolab.model.facts import JSONDict
from iolab.targets.controllers import arcconf, megacli, ssacli, storcli
from iolab.targets.controllers.model import UNREPORTED, Controller

log = logging.getLogger(__name__)  # `iolab -v` shows what it ran

TOOL_TIMEOUT_S = 30.0
MAX_QUERIES = 64  # per-VD and per-controller commands one probe may run
ANSWER_ENV = "IOLAB_RAID_ANSWER_S"  # seconds, to change the tools' time limits (tests lower it)
ANSWER_MAX_S = 3600.0
MAX_OUTPUT = 16 << 20  # bytes a tool may print for one command
TOOL_TOKEN = "IOLAB_TOOL_RUN"  # in the environment of a tool iolab runs, and its children's
SCRATCH = "iolab-raid-tools-"  # + the pid of the iolab that made it
FAMILIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("storcli", ("storcli64", "storcli", "perccli64", "perccli")),
    ("MegaCli", ("MegaCli64", "MegaCli", "megacli")),
    ("ssacli", ("ssacli", "hpssacli", "hpacucli")),
    ("arcconf", ("arcconf",)),
)
Run = Callable[[list[str]], str]


@dataclass(frozen=True)
class CardsFound:
    """The cards found, and what could not be read, one line each."""

    controllers: tuple[Controller, ...] = ()
    problems: tuple[str, ...] = ()

    def to_json(self) -> JSONDict:
        return {
            "controllers": [c.to_json() for c in self.controllers],
            "controller_problems": list(self.problems),
        }


def probe(timeout_s: float | None = None) -> CardsFound:
    """Every card that an installed tool lists, with its VDs, cache and battery."""
    if timeout_s is None:
        try:
            timeout_s = answer_limit(TOOL_TIMEOUT_S)
        except ControllerError as error:
            return CardsFound((), (str(error),))
    controllers: list[Controller] = []
    problems: list[str] = []
    with scratch() as folder:
        for family, names in FAMILIES:
            program = next((found for n in names if (found := shutil.which(n))), None)
            if program is None:
                continue
            label = label_of(family, program)

            def run(args: list[str], program: str = program, label: str = label) -> str:
                return run_tool(program, args, label, folder, timeout_s)

            try:
                controllers += READERS[family](label, run, problems)
            except ControllerError as error:
                problems.append(str(error))
    return CardsFound(tuple(controllers), tuple(problems))


def label_of(family: str, program: str) -> str:
    """The tool's name as iolab reports it: perccli is storcli's family, named apart."""
    return "perccli" if Path(program).name.lower().startswith("perccli") else family


def answer_limit(default: float) -> float:
    """Seconds a tool may take: IOLAB_RAID_ANSWER_S if set, else `default`."""
    text = os.environ.get(ANSWER_ENV)
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value <= ANSWER_MAX_S:
        raise ControllerError(
            f"{ANSWER_ENV} is not a number of seconds from 0 to {ANSWER_MAX_S:g}; unset it "
            f"(default {default:g} s) or give e.g. {ANSWER_ENV}=60"
        )
    return value


def call(argv: list[str], label: str, cwd: Path, timeout_s: float) -> tuple[int, str]:
    """Run a tool in its own session, its output to a file; (exit status, what it printed on
    stdout). When the tool ends, or after `timeout_s`, its whole group is ended, and every
    process it started (found by a token in their environment: a child that left for a
    session of its own with setsid too): none keeps iolab waiting nor outlives it."""
    command = " ".join(argv[1:])
    token = secrets.token_hex(16)
    log.info("ran: %s", shlex.join(argv))
    with tempfile.TemporaryFile(dir=cwd) as out:
        try:
            child = subprocess.Popen(
                argv,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                env={**os.environ, TOOL_TOKEN: token},
            )
        except OSError as error:
            raise ControllerError(
                f"{label}: could not run `{command}` ({error.strerror})"
            ) from None
        try:
            code = child.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise ControllerError(
                f"{label}: `{command}` did not answer within {timeout_s:g} s"
            ) from None
        finally:
            _end_group(child, token)
        out.seek(0)
        printed = out.read(MAX_OUTPUT + 1)
    if len(printed) > MAX_OUTPUT:
        raise ControllerError(f"{label}: `{command}` printed more than {MAX_OUTPUT >> 20} MiB")
    return code, printed.decode(errors="replace")


def _end_group(child: subprocess.Popen[bytes], token: str) -> None:
    """Kill what is left of the tool's process group (the tool, if it hangs; its children),
    and any process that carries the tool's token (one that left the group)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)
    child.wait()
    marker = f"{TOOL_TOKEN}={token}".encode()
    for pid in _pids():
        try:
            found = marker in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def run_tool(program: str, args: list[str], label: str, cwd: Path, timeout_s: float) -> str:
    """What `program args` printed on stdout; a ControllerError when it cannot run or hangs."""
    code, text = call([program, *args], label, cwd, timeout_s)
    if code != 0 and not text.strip():
        raise ControllerError(f"{label}: `{' '.join(args)}` exited with status {code}")
    return text


@contextlib.contextmanager
def scratch() -> Iterator[Path]:
    """A scratch directory for the tools' logs, named with this process's id, removed after;
    those that processes now gone left (a kill -9) are removed first."""
    base = Path(tempfile.gettempdir())
    for stale in base.glob(f"{SCRATCH}*"):
        found = re.fullmatch(rf"{SCRATCH}(\d{{1,10}})-\w+", stale.name, re.ASCII)
        if found and gone(int(found.group(1))) and _mine(stale):
            shutil.rmtree(stale, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix=f"{SCRATCH}{os.getpid()}-") as made:
        yield Path(made)


def gone(pid: int) -> bool:
    """No process has this id now."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):
        return False
    return False


def _mine(path: Path) -> bool:
    """A real directory (not a link) of this user."""
    try:
        found = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(found.st_mode) and found.st_uid == os.geteuid()


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
