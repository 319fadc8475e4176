"""Each host's inventory (`iolab env --json` there), read over SSH before a run on hosts.

`host_env = "ssh"` runs `ssh -o BatchMode=yes HOST 'iolab' 'env' '--json' 'PATH'` for every
host at once (at most PARALLEL at a time), each given TIMEOUT_S seconds: BatchMode never asks
for a password, so a host without a key that lets this user in fails at once rather than
waiting. ssh joins the words after the host into one line for the host's shell, so each is
quoted for it (a path with a space stays one word, a ';' in it is a letter). A plan may give
its own command instead (a list, each word one argument; code: --allow-hooks). A host whose
inventory cannot be read is still measured; `missing_line` says which in one line.

What a host answers is data from elsewhere, read as an import is: at most MAX_REPLY bytes
(more, and the command is ended and its reply refused), UTF-8, strict JSON (no NaN or
Infinity, no number beyond 2^64, nesting at most MAX_DEPTH deep, no text longer than
MAX_TEXT), an object. Of its error output the last MAX_STDERR bytes are kept, and its last
line is quoted on one line, cut to MAX_WHY characters.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
import selectors
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from iolab import names
from iolab.model import JSON

# host_env = "ssh": each host's full environment, where iolab is installed there
SSH_ENV = (
    "ssh",
    "-o",
    "BatchMode=yes",
    "-o",
    "ConnectTimeout=5",
    "{host}",
    "iolab",
    "env",
    "--json",
    "{path}",
)
PARALLEL = 32  # ssh processes at once: a fleet of hundreds is read in a few rounds
TIMEOUT_S = 60.0
SHOWN = 3  # hosts named in the missing line, with why; the rest counted
MAX_REPLY = 1024 * 1024  # bytes of a host's inventory (`iolab env --json` writes a few KiB)
MAX_STDERR = 64 * 1024  # bytes of its error output kept, the last ones
MAX_WHY = 200  # characters of its error output's last line quoted in the warning
MAX_DEPTH = 64  # objects and lists inside each other in an inventory
MAX_TEXT = 4096  # characters of one text in an inventory
MAX_NUMBER = 2**64  # no fact of a host is larger (a device's bytes, a counter)
CHUNK = 64 * 1024


@dataclass(frozen=True)
class RemoteEnv:
    """What a host's inventory command gave: its document, or why not."""

    host: str
    said: str  # how it was asked ("iolab env --json over SSH", or the command)
    environment: dict[str, JSON] | None
    missing: str = ""  # why there is none

    def facts(self) -> dict[str, JSON]:
        """As the run records it beside the host (environment.hosts)."""
        if self.environment is not None:
            return {"environment_from": self.said, "environment": self.environment}
        return {
            "environment_from": "fio's server only",
            "environment_missing": f"{self.said}: {self.missing}",
        }


def read_all(
    command: Sequence[str],
    paths: Sequence[tuple[str, str]],
    timeout_s: float = TIMEOUT_S,
    told: Callable[[int, int], None] | None = None,
) -> list[RemoteEnv]:
    """Every (host, its directory)'s inventory, asked in parallel (PARALLEL at a time), in
    the order given; `told(read, of)` as each host's answer is in."""
    done = itertools.count(1)
    lock = threading.Lock()

    def one(host: str, path: str) -> RemoteEnv:
        found = read_one(command, host, path, timeout_s)
        with lock:
            if told:
                told(next(done), len(paths))
        return found

    with ThreadPoolExecutor(max_workers=max(1, min(PARALLEL, len(paths)))) as pool:
        return list(pool.map(lambda hp: one(*hp), paths))


def read_one(command: Sequence[str], host: str, path: str, timeout_s: float) -> RemoteEnv:
    """One host's inventory: {host} (its name, no port) and {path} filled in the command."""
    argv = arguments(command, host.rsplit(":", 1)[0].strip("[]"), path)
    said = "iolab env --json over SSH" if tuple(command) == SSH_ENV else shlex.join(argv)
    try:
        reply = ask(argv, timeout_s)
    except subprocess.TimeoutExpired:
        return RemoteEnv(host, said, None, f"no answer in {timeout_s:g} s")
    except OSError as error:
        return RemoteEnv(host, said, None, error.strerror or str(error))
    found = inventory(reply)
    if isinstance(found, str):
        return RemoteEnv(host, said, None, found)
    return RemoteEnv(host, said, found)


def arguments(command: Sequence[str], name: str, path: str) -> list[str]:
    """The command with {host} and {path} filled in: each word one argument, and for
    `host_env = "ssh"` the words after the host quoted for the host's shell, as one line."""
    filled = [part.replace("{host}", name).replace("{path}", path) for part in command]
    if tuple(command) != SSH_ENV:
        return filled
    after = SSH_ENV.index("{host}") + 1
    return [*filled[:after], shlex.join(filled[after:])]


@dataclass(frozen=True)
class Reply:
    """What a host's inventory command gave: its exit status, at most MAX_REPLY + 1 bytes of
    its output (more: `over`), and the last MAX_STDERR bytes of its error output."""

    status: int
    out: bytes
    err: bytes
    over: bool


def ask(argv: Sequence[str], timeout_s: float) -> Reply:
    """Run the command (its own session, no input) and read at most MAX_REPLY + 1 bytes of
    its output; TimeoutExpired when it has not ended in `timeout_s` (its session killed)."""
    with subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    ) as proc:
        deadline = time.monotonic() + timeout_s
        try:
            out, err = _read(proc, deadline)
            over = len(out) > MAX_REPLY
            if over:
                _kill(proc)
            proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _kill(proc)
            raise subprocess.TimeoutExpired(list(argv), timeout_s) from None
        return Reply(proc.returncode, bytes(out), bytes(err), over)


def _read(proc: subprocess.Popen[bytes], deadline: float) -> tuple[bytearray, bytearray]:
    out, err = bytearray(), bytearray()
    assert proc.stdout is not None and proc.stderr is not None
    with selectors.DefaultSelector() as watch:
        watch.register(proc.stdout, selectors.EVENT_READ, out)
        watch.register(proc.stderr, selectors.EVENT_READ, err)
        while watch.get_map() and len(out) <= MAX_REPLY:
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(proc.args, 0)
            for key, _ in watch.select(left):
                chunk = os.read(key.fd, CHUNK)
                if not chunk:
                    watch.unregister(key.fileobj)
                elif key.data is out:
                    out += chunk[: MAX_REPLY + 1 - len(out)]
                else:
                    err += chunk
                    del err[:-MAX_STDERR]
    return out, err


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """The command's session ended (ssh, or what a plan's command started)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def inventory(reply: Reply) -> dict[str, JSON] | str:
    """The host's document, or why there is none (words after "HOST: ")."""
    if reply.over:
        return f"its inventory is larger than {MAX_REPLY // 1024:,} KiB; not read"
    if reply.status != 0:
        return _why(reply)
    try:
        text = reply.out.decode("utf-8")
    except UnicodeDecodeError:
        return "its inventory is not UTF-8 text; not read"
    try:
        found = _DECODER.decode(text)
    except RecursionError:
        return f"its inventory nests more than {MAX_DEPTH} levels deep; not read"
    except ValueError as error:  # JSONDecodeError, NaN, overlong numbers
        said = error.msg if isinstance(error, json.JSONDecodeError) else str(error)
        return f"its inventory is not JSON ({said}); not read" if text.strip() else _why(reply)
    if not isinstance(found, dict):
        return "its inventory is not a JSON object; not read"
    problem = _problem(found, 0)
    return f"its inventory {problem}; not read" if problem else found


def _why(reply: Reply) -> str:
    """The last line of the command's error output, on one line and cut to MAX_WHY."""
    lines = reply.err.decode("utf-8", "replace").strip().splitlines()
    if not lines:
        return f"exit status {reply.status}, no JSON document"
    line = names.one_line(lines[-1].strip())
    return line if len(line) <= MAX_WHY else f"{line[: MAX_WHY - 1]}…"


def _constant(name: str) -> float:
    raise ValueError(f"{name}, not a finite number")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("a number beyond the range of a double")
    return value


def _int(text: str) -> int:
    if len(text) > 21 or abs(int(text)) > MAX_NUMBER:
        raise ValueError(f"a number beyond 2^64 ({len(text.lstrip('-'))} digits)")
    return int(text)


_DECODER = json.JSONDecoder(parse_constant=_constant, parse_float=_float, parse_int=_int)


def _problem(value: JSON, depth: int) -> str | None:
    """What breaks the inventory's bounds (nesting, a text's length), or None."""
    if depth > MAX_DEPTH:
        return f"nests more than {MAX_DEPTH} levels deep"
    if isinstance(value, str):
        return f"holds a text of {len(value):,} characters" if len(value) > MAX_TEXT else None
    items: list[JSON] = []
    if isinstance(value, dict):
        items = [*value.keys(), *value.values()]
    elif isinstance(value, list):
        items = value
    return next((p for p in (_problem(item, depth + 1) for item in items) if p), None)


def missing_line(found: Sequence[RemoteEnv]) -> str | None:
    """One line for the hosts whose inventory could not be read (None: all were)."""
    missing = [env for env in found if env.environment is None]
    if not missing:
        return None
    named = "; ".join(f"{env.host}: {env.missing}" for env in missing[:SHOWN])
    more = f"; and {len(missing) - SHOWN:,} more" if len(missing) > SHOWN else ""
    return (
        f"the inventory of {len(missing)} of {len(found)} hosts could not be read "
        f"({missing[0].said}; {named}{more}); they are measured all the same, and their "
        "outliers are named without what differs"
    )
