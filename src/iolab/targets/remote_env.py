"""Each host's inventory (`iolab env --json` there), read over SSH before a run on hosts.

`host_env = "ssh"` runs `ssh -o BatchMode=yes HOST iolab env --json PATH` for every host at
once (at most PARALLEL at a time), each given TIMEOUT_S seconds: BatchMode never asks for a
password, so a host without a key that lets this user in fails at once rather than waiting.
A plan may give its own command instead (a list; code: --allow-hooks). A host whose
inventory cannot be read is still measured; `missing_line` says which in one line.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

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
    command: Sequence[str], paths: Sequence[tuple[str, str]], timeout_s: float = TIMEOUT_S
) -> list[RemoteEnv]:
    """Every (host, its directory)'s inventory, asked in parallel, in the order given."""
    with ThreadPoolExecutor(max_workers=max(1, min(PARALLEL, len(paths)))) as pool:
        return list(pool.map(lambda hp: read_one(command, hp[0], hp[1], timeout_s), paths))


def read_one(command: Sequence[str], host: str, path: str, timeout_s: float) -> RemoteEnv:
    """One host's inventory: {host} (its name, no port) and {path} filled in the command."""
    name = host.rsplit(":", 1)[0].strip("[]")
    argv = [part.replace("{host}", name).replace("{path}", path) for part in command]
    said = "iolab env --json over SSH" if tuple(command) == SSH_ENV else shlex.join(argv)
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return RemoteEnv(host, said, None, f"no answer in {timeout_s:g} s")
    except OSError as error:
        return RemoteEnv(host, said, None, error.strerror or str(error))
    try:
        found = json.loads(done.stdout) if done.returncode == 0 else None
    except json.JSONDecodeError:
        found = None
    if not isinstance(found, dict):
        lines = done.stderr.strip().splitlines()
        why = lines[-1] if lines else f"exit status {done.returncode}, no JSON document"
        return RemoteEnv(host, said, None, why)
    return RemoteEnv(host, said, found)


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
