"""`hosts`: the fio servers a plan runs on, and what set-ups may be on them.

    hosts = ["10.0.0.2", "10.0.0.3:8766"]   # or hosts = "hosts.txt", one host a line
    host_timeout = 30                        # seconds a host may be silent after the others
    on_host_lost = "continue"                # or "stop"
    hosts_report = "each"                    # every host its own subject (default "sum")

A set-up on hosts is a path: a directory that exists on every host, where fio makes its test
file. Devices on remote hosts are refused: iolab cannot check its safety rules there.
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import Any, Literal

from iolab import names
from iolab.fio.hosts import HostError, address
from iolab.model import Hosts, Setup
from iolab.plan.common import Where
from iolab.targets.path import several_files
from iolab.targets.remote_env import SSH_ENV  # host_env = "ssh"

KEYS = ("hosts", "host_timeout", "on_host_lost", "host_env", "hosts_report")
MAX_HOSTS = 256
MAX_HOSTS_FILE = 64 * 1024
HOST_FORMS = "NAME, NAME:PORT, ADDRESS:PORT, [IPv6]:PORT or ip:ADDRESS,PORT"
FORBIDDEN_ROOTS = ("/dev", "/proc", "/sys")  # where a host's pseudo filesystems are mounted
ALLOWED_UNDER_ROOTS = ("/dev/shm",)  # a tmpfs for files; /run (tmpfs) is not under them
# what a POSIX shell reads as more than a letter in a word (a space is quoted, as any word is)
SHELL_MARKS = frozenset(";&|<>()$`\\\"'*?[]{}!#~")


def hosts(data: dict[str, Any], top: Where, setups: tuple[Setup, ...]) -> Hosts | None:
    """The plan's hosts, checked, and its set-ups checked against them; None without hosts."""
    raw = data.get("hosts")
    if raw is None:
        for key in KEYS[1:]:
            if key in data:
                raise top.fail(key, f"{key} needs hosts = [...] (the fio servers to run on)")
        if any(setup.host_paths or setup.host_count for setup in setups):
            raise top.fail("setup", "a set-up names hosts, and the plan has no hosts = [...]")
        return None
    listed = _listed(raw, top)
    if not listed:
        raise top.fail("hosts", "hosts lists no host; name at least one fio server")
    if len(listed) > MAX_HOSTS:
        raise top.fail("hosts", f"{len(listed)} hosts; at most {MAX_HOSTS}")
    addresses = _addresses(listed, top)
    for setup in setups:
        _check_setup(setup, top, addresses)
    return Hosts(
        tuple(addresses),
        _timeout(data, top),
        _on_lost(data, top),
        _env(data, top),
        _report(data, top),
    )


def _addresses(listed: list[tuple[str, str | None]], top: Where) -> list[str]:
    """Each host as "host:port"; one given by a hosts file is named by its line, never
    quoted (the file may be no hosts file at all)."""
    addresses: list[str] = []
    for text, line in listed:
        try:
            found = address(names.check(text))  # the rule of names, then a host's syntax
        except names.BadName as error:
            said = f"{line}: its host {error}" if line else f"host {error}"
            raise top.fail("hosts", said) from None
        except HostError as error:
            said = str(error)
            if line:
                said = (
                    f"{line}: its host {error.why}"
                    if error.why
                    else f"{line}: not a host ({HOST_FORMS}); fix that line"
                )
            raise top.fail("hosts", said) from None
        if found in addresses:
            said = f"{line}: its host is listed twice" if line else f"host {found} is listed twice"
            raise top.fail("hosts", said)
        addresses.append(found)
    return addresses


def _listed(raw: object, top: Where) -> list[tuple[str, str | None]]:
    """Each host's text, and for one a hosts file gives, "hosts file PATH:LINE"."""
    if isinstance(raw, list) and all(isinstance(item, str) for item in raw):
        return [(str(item), None) for item in raw]
    if isinstance(raw, str):
        return _hosts_file(raw, top)
    raise top.fail("hosts", 'hosts is a list of hosts ("10.0.0.2:8765") or a file of them')


def _hosts_file(name: str, top: Where) -> list[tuple[str, str | None]]:
    """A file of hosts as fio's --client takes it: one a line; blank lines and # comments."""
    path = Path(name) if Path(name).is_absolute() else Path(top.source).parent / name
    try:
        if not path.is_file():
            raise top.fail("hosts", f"hosts file {path} is not a regular file")
        text = path.read_bytes()[: MAX_HOSTS_FILE + 1].decode()
    except UnicodeDecodeError:
        raise top.fail("hosts", f"hosts file {path} is not UTF-8 text; one host a line") from None
    except OSError as error:
        raise top.fail("hosts", f"hosts file {path} cannot be read ({error.strerror})") from None
    if len(text) > MAX_HOSTS_FILE:
        raise top.fail("hosts", f"hosts file {path} is larger than 64 KiB")
    lines = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return [(line, f"hosts file {path}:{n}") for n, line in enumerate(lines, start=1) if line]


def _check_setup(setup: Setup, top: Where, addresses: list[str]) -> None:
    where = Where(top.source, top.text, "setup", 0)
    if setup.layout is not None:
        raise where.fail(
            "devices",
            f"set-up {setup.name!r}: devices on hosts are refused, because iolab cannot check "
            'its safety rules on another machine; give path = "/DIR" (a directory on every '
            "host, on the set-up you built there)",
        )
    for path in (setup.path, *(p for _, p in setup.host_paths)):
        problem = several_files(path)
        if problem:
            raise where.fail(
                "path", f"set-up {setup.name!r}: path {path!r} {problem}; choose another"
            )
        problem = remote_path_problem(path)
        if problem:
            raise where.fail("path", f"set-up {setup.name!r}: path {path!r} {problem}")
    if setup.host_count > len(addresses):
        raise where.fail(
            "host_count",
            f"set-up {setup.name!r}: host_count {setup.host_count} is more than the "
            f"{len(addresses)} hosts",
        )
    for host, _ in setup.host_paths:
        if host not in addresses:
            raise where.fail("hosts", f"set-up {setup.name!r}: {host} is not one of the hosts")


def remote_path_problem(path: str) -> str | None:
    """Why a directory on the hosts cannot be a target (words after "path X"), or None.

    It cannot be statted from here, so it is judged by what it names once spelled plainly
    ('//' and '.' collapsed): not relative, no control or format character (the rule of
    names) and none of SHELL_MARKS (ssh hands the inventory's command to the host's shell as
    one line: a ';' would end it, a backtick run what it holds; iolab quotes each word too),
    not /dev, /proc or /sys nor under them (the kernel's pseudo filesystems; /dev/shm, a
    tmpfs for files, is allowed, as it is here), and no '..' (a host's symlinks decide where
    '..' leads, so it cannot be judged here).
    """
    if not path.startswith("/"):
        return (
            "must be an absolute directory on the hosts (it is relative, and a fio server "
            "would take it from its own working directory); give it from /"
        )
    found = names.refused(path)
    if found is not None:
        return f"holds {names.spelled(found)}; give a directory in printable text"
    mark = next((c for c in path if c in SHELL_MARKS), None)
    if mark is not None:
        return (
            f"holds {mark!r}, which a shell on the hosts reads as more than a letter (ssh hands "
            "its command to one); give a directory without it"
        )
    plain = "/" + posixpath.normpath(path).lstrip("/")
    if _under(plain, FORBIDDEN_ROOTS) and not _under(plain, ALLOWED_UNDER_ROOTS):
        means = "" if plain == path else f" means {plain} and"
        return (
            f"{means} is where hosts mount the kernel's pseudo filesystems, not storage; give "
            "a directory on the hosts not under /dev, /proc or /sys"
        ).lstrip()
    if ".." in path.split("/"):
        return "has a '..', whose meaning depends on the hosts' symlinks; spell it without '..'"
    return None


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(f"{root}/") for root in roots)


def _env(data: dict[str, Any], top: Where) -> tuple[str, ...]:
    """host_env: "ssh", or a command (a list, run without a shell: code, --allow-hooks)."""
    value = data.get("host_env")
    if value is None:
        return ()
    if value == "ssh":
        return SSH_ENV
    if isinstance(value, list) and value and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    raise top.fail(
        "host_env", 'host_env is "ssh" (iolab env --json over SSH) or a command as a list'
    )


def _timeout(data: dict[str, Any], top: Where) -> float:
    value = data.get("host_timeout", 30)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 1 <= value <= 3600:
        raise top.fail("host_timeout", "host_timeout is seconds, from 1 to 3600")
    return float(value)


def _on_lost(data: dict[str, Any], top: Where) -> Literal["continue", "stop"]:
    value = data.get("on_host_lost", "continue")
    if value == "stop":
        return "stop"
    if value != "continue":
        raise top.fail("on_host_lost", 'on_host_lost is "continue" or "stop"')
    return "continue"


def _report(data: dict[str, Any], top: Where) -> Literal["sum", "each"]:
    """hosts_report: "sum" (the hosts' aggregate is the subject) or "each" (every host is)."""
    value = data.get("hosts_report", "sum")
    if value == "each":
        return "each"
    if value != "sum":
        raise top.fail(
            "hosts_report",
            'hosts_report is "sum" (the hosts add up to one figure: a shared filesystem) or '
            '"each" (every host is its own subject: a fleet)',
        )
    return "sum"
