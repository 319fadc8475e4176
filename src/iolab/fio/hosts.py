"""fio's client/server mode: the same job on several hosts at once, each one's result kept.

Every host runs `fio --server`; iolab starts one `fio --client` process per case for the
whole fleet (`--client=HOST JOB` for each host, each host its own job file), under the keeper
(guard.py). fio tags each host's entries with its address and port; a server lost mid-case
costs only its own share (fio's client says "disconnected" and writes the others' results);
a server that stops answering is given up `lost_after_s` after most hosts finished:
SIGTERM to fio, then its connection cut (sockets.py), which makes fio write the others'
results too. fio's combined "All clients" entry is left out; iolab adds the hosts up itself.

fio's client prints nothing per host until the end, so progress says each host's state
(running, done) from the client's open connections, as it changes.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import logging
import os
import re
import shlex
import signal
import socket
import statistics
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from iolab.errors import FioError
from iolab.fio import durations, local, options, sockets
from iolab.fio.executor import JOB_FILE, HostLimits
from iolab.fio.outcome import Outcome
from iolab.fio.parse import ParseError, Status, load_json
from iolab.model import JSON, JSONObject

log = logging.getLogger(__name__)  # `iolab -v` shows what it ran

DEFAULT_PORT = 8765
ALL_CLIENTS = "All clients"
_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?"
_HOSTNAME = re.compile(rf"(?=.{{1,253}}$){_LABEL}(\.{_LABEL})*")
# what fio's client prints when it reaches a server:
# "hostname=vm, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.33, flags=1"
_PROBE = re.compile(
    r"hostname=(?P<hostname>[^,]*),.*\bos=(?P<os>[^,]*), arch=(?P<arch>[^,]*), fio=(?P<fio>[^,\s]*)"
)
POLL_S = 0.1
TERM_GRACE_S = 3.0  # how long fio's client is given to end on SIGTERM
CUT_GRACE_S = 10.0  # and to write the others' results once a hung host's connection is cut
CLIENT_JSON = "client.json"
NAMED_HOSTS = 12  # past this many hosts, progress counts them rather than naming each
PROBE_PARALLEL = 16  # hosts asked at once before a run: about 40 MB of memory each
PROBE_JOB = "[iolab-probe]\nioengine=null\nsize=4k\nrw=read\n"


class HostError(FioError):
    """A host that cannot be used: its name, or it did not answer. `why`, when set, says what
    is wrong without quoting the host (for a line of a file that may be no hosts file)."""

    def __init__(self, message: str, why: str = "") -> None:
        super().__init__(message)
        self.why = why


SCOPE_ID = "holds an IPv6 scope id (%...), which fio's client cannot use"
NO_ONES = "is an address no one host has (unspecified or multicast)"


def address(text: str) -> str:
    """A host as the plan gives it ("server1", "10.0.0.2:8766", "[fd00::2]:8765", or fio's
    own "ip:10.0.0.2,8766"), as "host:port"; HostError saying what is wrong."""
    value = text.strip()
    fio_form = re.fullmatch(r"(ip|ip6):([^,]+)(?:,(\d+))?", value)
    if fio_form:
        host, port = fio_form.group(2), fio_form.group(3) or str(DEFAULT_PORT)
    elif value.startswith("["):
        found = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\](?::(\d+))?", value)
        if not found:
            raise HostError(f"host {text!r}: an IPv6 address goes in brackets, e.g. [fd00::2]:8765")
        host, port = found.group(1), found.group(2) or str(DEFAULT_PORT)
    elif value.count(":") == 1:
        host, port = value.split(":")
    else:
        host, port = value, str(DEFAULT_PORT)
    host = _check(text, host, port)
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _check(text: str, host: str, port: str) -> str:
    """The host as fio's client is given it: an IP address in one spelling (an IPv4-mapped
    IPv6 address as IPv4), so that one host is never listed twice under two spellings."""
    if not (port.isascii() and port.isdigit()) or not 0 < int(port) < 65536:
        raise HostError(f"host {text!r}: port {port!r} is not a port number (1-65535)")
    if ":" in host or re.fullmatch(r"[0-9.]+", host):
        return _ip(text, host)
    if not _HOSTNAME.fullmatch(host):
        raise HostError(f"host {text!r}: not a host name or an IP address")
    return host


def _ip(text: str, host: str) -> str:
    if "%" in host:
        raise HostError(f"host {text!r}: {SCOPE_ID}", SCOPE_ID)
    try:
        ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(host)
    except ValueError:
        raise HostError(f"host {text!r}: {host!r} is not an IP address") from None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_unspecified or ip.is_multicast:
        raise HostError(f"host {text!r}: {NO_ONES}", NO_ONES)
    return str(ip)


def client_arg(host: str) -> str:
    """ "10.0.0.2:8765" -> fio's "ip:10.0.0.2,8765" ("ip6:..." for IPv6)."""
    name, port = host.rsplit(":", 1)
    if name.startswith("["):
        return f"ip6:{name[1:-1]},{port}"
    return f"ip:{name},{port}"


@dataclass(frozen=True)
class HostInfo:
    """What a host's fio server says of itself when the client connects."""

    host: str  # as the plan names it: "10.0.0.2:8765"
    hostname: str
    os: str
    arch: str
    fio_version: str

    def facts(self) -> dict[str, str]:
        return {
            "host": self.host,
            "hostname": self.hostname,
            "os": self.os,
            "arch": self.arch,
            "fio_version": self.fio_version,
        }


def probe(
    fio: str,
    hosts: Sequence[str],
    timeout_s: float,
    workdir: Path,
    told: Callable[[int, int], None] | None = None,
) -> list[HostInfo]:
    """Ask every host, PROBE_PARALLEL at a time, each given `timeout_s`; `told(answered,
    of)` as each ends. HostError (one line) naming a host that does not answer.

    One client process per host here: fio's client prints what a server says of itself
    (its name, OS, fio version) without saying which server it is."""
    job = workdir / "probe.fio"
    job.write_text(PROBE_JOB)
    commands = [
        ([fio, f"--client={client_arg(host)}", str(job)], workdir / f"probe-{n}")
        for n, host in enumerate(hosts)
    ]
    _bounded(commands, timeout_s, told or (lambda _done, _of: None))
    return [_probed(host, workdir / f"probe-{n}", timeout_s) for n, host in enumerate(hosts)]


def _bounded(
    commands: Sequence[tuple[list[str], Path]], timeout_s: float, told: Callable[[int, int], None]
) -> None:
    """Run the commands, PROBE_PARALLEL at a time, each stopped after `timeout_s`."""
    waiting = list(commands)
    running: list[tuple[subprocess.Popen[bytes], float]] = []
    done = 0
    try:
        while waiting or running:
            while waiting and len(running) < PROBE_PARALLEL:
                running.append((_start(*waiting.pop(0)), time.monotonic() + timeout_s))
            for child, deadline in list(running):
                if child.poll() is not None or time.monotonic() > deadline:
                    _end(child)
                    running.remove((child, deadline))
                    done += 1
                    told(done, len(commands))
            time.sleep(POLL_S)
    finally:
        for child, _ in running:
            _end(child)


def _end(child: subprocess.Popen[bytes]) -> None:
    local.stop(child, grace_s=0)  # a probe has nothing to finish
    if child.stdin:
        child.stdin.close()


def _probed(host: str, base: Path, timeout_s: float) -> HostInfo:
    said = _read(base.with_suffix(".out")) + _read(base.with_suffix(".err"))
    found = _PROBE.search(said)
    if found:
        return HostInfo(host, found["hostname"], found["os"], found["arch"], found["fio"])
    mismatch = re.search(r"client/server version mismatch \((\d+) != (\d+)\)", said)
    if mismatch:
        raise HostError(
            f"host {host} runs a fio whose client/server protocol is {mismatch[1]}, and this "
            f"machine's is {mismatch[2]}: their results would not compare; install the same "
            "fio version on every host"
        )
    why = next((line for line in said.splitlines() if line.startswith("fio:")), "")
    if why:
        raise HostError(
            f"host {host} did not answer ({why.removeprefix('fio: ')}); "
            "start `fio --server` there (see the README)"
        )
    raise HostError(
        f"host {host} did not answer in {timeout_s:g} s; is `fio --server` running there, "
        "and is its port open to this machine?"
    )


def versions(infos: Sequence[HostInfo], client: str) -> str | None:
    """A warning when the hosts (and this client) do not all run the same fio version."""
    seen = {info.host: info.fio_version for info in infos}
    if len({*seen.values(), client}) <= 1:
        return None
    listed = ", ".join(f"{host} {version}" for host, version in seen.items())
    return (
        f"fio versions differ (this machine {client}; {listed}): their JSON and defaults may "
        "not compare; install one fio version everywhere"
    )


@dataclass(frozen=True)
class Cluster:
    """The Executor for several hosts: one fio client process for all of them."""

    fio: str
    hosts: tuple[str, ...]
    lost_after_s: float  # how long a host may stay silent after another has reported
    # (file every host uses, host, that host's own file) where a set-up's path differs
    moved: tuple[tuple[str, str, str], ...] = ()

    def job_for(self, job_text: str, host: str) -> str:
        """The job as `host` runs it: its own file where its set-up's path differs there."""
        for default, where, own in self.moved:
            if where == host:
                problem = options.expansion(own)
                if problem or not own.isprintable():  # as jobfile's lines are checked
                    raise FioError(
                        f"host {host}: its path {own!r} cannot go into a job file: "
                        f"it {problem or 'holds a control character'}"
                    )
                job_text = job_text.replace(f"\nfilename={default}\n", f"\nfilename={own}\n")
        return job_text

    def remove(self, filename: str, workdir: Path) -> None:
        """Remove iolab's test file on every host (fio's unlink), best effort, through one
        client as a case runs."""
        job = f"[iolab-remove]\nfilename={filename}\nioengine=null\nsize=4k\nunlink=1\n"
        command = [self.fio]
        for n, host in enumerate(self.hosts):
            (workdir / f"remove-{n}.fio").write_text(self.job_for(f"\n{job}", host))
            command += [f"--client={client_arg(host)}", str(workdir / f"remove-{n}.fio")]
        child = _start(command, workdir / "remove")
        ClientWatch(self.hosts, None).follow(child, self.lost_after_s, self.lost_after_s)
        _end(child)

    def limits(self) -> HostLimits:
        # fio's server tells nothing of its CPUs or memory; the checks that need them
        # (page cache, CPU-bound, AIO room) cannot be made for remote hosts.
        return HostLimits(cpus=0, memory_bytes=0, aio_room=1 << 30)

    def run(
        self,
        job_text: str,
        workdir: Path,
        on_status: Callable[[Status], None] | None,
        timeout_s: float | None,
    ) -> Outcome:
        """Run the job on every host through one fio client; an Outcome whose JSON holds
        every host's entries that came back, and names the hosts whose did not."""
        command = [self.fio, "--output-format=json+", f"--output={workdir / CLIENT_JSON}"]
        for n, host in enumerate(self.hosts):
            job = workdir / f"host-{n}-{JOB_FILE}"
            job.write_text(self.job_for(job_text, host))
            command += [f"--client={client_arg(host)}", str(job)]
        watch = ClientWatch(self.hosts, on_status)
        child = _start(command, workdir / "client")
        try:
            ending = watch.follow(child, timeout_s, self.lost_after_s, _planned_s(timeout_s))
        except BaseException:
            local.stop(child)
            raise
        finally:
            for pipe in (child.stdin, child.stdout):
                if pipe:
                    pipe.close()
        return self._outcome(workdir, child, ending)

    def _outcome(self, workdir: Path, child: subprocess.Popen[bytes], ending: Ending) -> Outcome:
        text = _read(workdir / CLIENT_JSON)
        said = text + _read(workdir / "client.err")
        owners = {_server(host): host for host in self.hosts}
        header: dict[str, JSON] = {}
        entries: list[dict[str, JSON]] = []
        with contextlib.suppress(ParseError):
            document = load_json(text, "client_stats")
            header = {k: v for k, v in document.items() if k != "client_stats"}
            for entry in _entries(document):
                port = entry.get("port")
                owner = owners.get(
                    (str(entry.get("hostname")), port if isinstance(port, int) else -1)
                )
                if owner is not None:
                    entries.append({**entry, "hostname": owner})
        kept = {str(entry["hostname"]) for entry in entries}
        lost = tuple(
            (host, _lost_why(host, said, ending, self.lost_after_s))
            for host in self.hosts
            if host not in kept
        )
        stderr = _read(workdir / "client.err")
        combined = json.dumps({**header, "jobs": entries}, indent=1) if entries else ""
        code = child.returncode or 0
        timed_out = ending.late and not entries
        return Outcome(code if not entries or lost else 0, combined, stderr, (), timed_out, lost)


@dataclass(frozen=True)
class Ending:
    """How a fleet's client ended: the hosts it was still waiting on when iolab gave up on
    them (their connections cut), whether the case's own deadline passed, and whether the
    client had to be killed (then no host's result came back)."""

    hung: tuple[str, ...] = ()
    late: bool = False
    cut: bool = False  # SIGTERM did not end it: the hung hosts' connections were cut
    killed: bool = False


class ClientWatch:
    """Each host's state while one client runs the fleet: running while the client holds its
    connection, done once the client closed it (the server sent its result, or went away)."""

    def __init__(self, hosts: Sequence[str], on_status: Callable[[Status], None] | None):
        self.hosts = tuple(hosts)
        self.on_status = on_status
        self.peers = {host: _peer(host) for host in hosts}
        self.states = dict.fromkeys(hosts, "starting")
        self.seen: set[str] = set()
        self.open = sockets.Peers()  # the client's connections, each peer read once

    def follow(
        self,
        child: subprocess.Popen[bytes],
        timeout_s: float | None,
        lost_after_s: float,
        planned_s: float = 0.0,
    ) -> Ending:
        """Wait for the client; give up on the hosts still running `lost_after_s` after more
        than half of the hosts finished (and not before the case's `planned_s`: a host
        killed early closes its connection as one that finished does), or at the deadline:
        SIGTERM to fio, then their connections cut, then (only if it still does not end)
        the client and its keeper ended."""
        started = time.monotonic()
        deadline = started + timeout_s if timeout_s else None
        quiet_from: float | None = None
        while child.poll() is None:
            now = time.monotonic()
            running = self._look(child.pid)
            most_done = len(self.hosts) - len(running) > len(self.hosts) / 2
            if quiet_from is None and most_done and now - started >= planned_s:
                quiet_from = now
            late = deadline is not None and now > deadline
            if late or (quiet_from is not None and now - quiet_from > lost_after_s):
                return self._give_up(child, running, late)
            time.sleep(POLL_S)
        self._report({})
        return Ending()

    def _look(self, keeper: int) -> set[str]:
        """The hosts whose connection the client holds (every host while that cannot be
        read), their states updated and reported when they change."""
        fio = sockets.child_pid(keeper)
        open_now = self.open.of(fio) if fio else None
        if open_now is None:
            return set(self.hosts)
        running = {host for host, peer in self.peers.items() if peer in open_now}
        changed = {}
        for host in self.hosts:
            state = "running" if host in running else "done" if host in self.seen else None
            if host in running:
                self.seen.add(host)
            if state and self.states[host] != state:
                changed[host] = state
        if changed:
            self._report(changed)
        return running if self.seen else set(self.hosts)

    def _give_up(self, child: subprocess.Popen[bytes], running: set[str], late: bool) -> Ending:
        hung = tuple(host for host in self.hosts if host in running)
        log.info("giving up on %s", ", ".join(hung))
        fio = sockets.child_pid(child.pid)
        if fio is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(fio, signal.SIGTERM)  # fio's own stop first; never SIGKILL first
        if _ended(child, TERM_GRACE_S):
            return Ending(hung, late)
        if fio is not None:
            sockets.cut(fio, {peer for host in hung if (peer := self.peers[host])})
        if _ended(child, CUT_GRACE_S):
            return Ending(hung, late, cut=True)
        local.stop(child)  # the keeper ends fio and everything it started
        return Ending(hung, late, cut=True, killed=True)

    def _report(self, changed: dict[str, str]) -> None:
        self.states.update(changed)
        if self.on_status:
            self.on_status(Status(0.0, 0.0, hosts=tuple(self.states.items())))


def _planned_s(timeout_s: float | None) -> float:
    """The case's planned time (its deadline less the margin); 0 where no runtime bounds it."""
    planned = (timeout_s or 0.0) - durations.margin_s()
    return planned if 0 < planned < durations.WEEK.most / durations.SECOND else 0.0


def _ended(child: subprocess.Popen[bytes], within_s: float) -> bool:
    try:
        child.wait(within_s)
    except subprocess.TimeoutExpired:
        return False
    return True


def _server(host: str) -> tuple[str, int]:
    """The (hostname, port) fio's client writes in a host's JSON entries."""
    name, port = host.rsplit(":", 1)
    return name.strip("[]"), int(port)


def _peer(host: str) -> sockets.Peer | None:
    """The (IP, port) of the host's connection; None for a name that does not resolve."""
    name, port = _server(host)
    try:
        found = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return None
    return (str(found[0][4][0]), port) if found else None


def progress_line(states: Sequence[tuple[str, str]]) -> str:
    """The hosts' states for the progress line: each named up to NAMED_HOSTS hosts, past that
    counted ("32 hosts: 30 running · 1 done · 1 lost"), so that a fleet's line stays one line."""
    if len(states) <= NAMED_HOSTS:
        return " · ".join(f"{host} {state}" for host, state in states)
    counts = Counter("done" if state.endswith(" IOPS") else state for _, state in states)
    return f"{len(states)} hosts: " + " · ".join(f"{n} {state}" for state, n in counts.items())


def shares_line(shares: Sequence[tuple[str, float]]) -> str:
    """A finished case's IOPS by host: each named up to NAMED_HOSTS hosts, past that the
    median, the lowest and the highest host."""
    if len(shares) <= NAMED_HOSTS:
        return " · ".join(f"{host} {iops:,.0f}" for host, iops in shares)
    ranked = sorted(shares, key=lambda share: share[1])
    (low, least), (high, most) = ranked[0], ranked[-1]
    middle = statistics.median(iops for _, iops in shares)
    return (
        f"median {middle:,.0f} over {len(shares)} hosts, lowest {low} {least:,.0f}, "
        f"highest {high} {most:,.0f}"
    )


def _entries(document: JSONObject) -> list[dict[str, JSON]]:
    """A client document's job entries, less fio's "All clients" sum."""
    stats = document["client_stats"]
    listed = stats if isinstance(stats, list) else []
    return [e for e in listed if isinstance(e, dict) and e.get("jobname") != ALL_CLIENTS]


def _lost_why(host: str, said: str, ending: Ending, lost_after_s: float) -> str:
    ip = _server(host)[0]
    if host in ending.hung:
        when = (
            "at the case's deadline"
            if ending.late
            else f"{lost_after_s:g} s after most hosts had finished"
        )
        how = (
            "the client was ended"
            if ending.killed
            else "its connection was cut"
            if ending.cut
            else "fio's client ended on SIGTERM"
        )
        return f"host {host} stopped answering (still running {when}; {how})"
    if f"host={ip} disconnected" in said:
        return f"host {host} was lost mid-case (its fio server went away)"
    if ending.killed:
        return f"host {host}: no result came back (the client had to be ended)"
    why = next((line for line in said.splitlines() if ip in line and "fio:" in line), "")
    return f"host {host} never answered: {why.removeprefix('fio: ') or 'no result came back'}"


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _start(command: list[str], base: Path) -> subprocess.Popen[bytes]:
    log.info("ran: %s", shlex.join(command))
    with base.with_suffix(".out").open("wb") as out, base.with_suffix(".err").open("wb") as err:
        return subprocess.Popen(
            local.guarded(command),
            stdin=subprocess.PIPE,
            stdout=out,
            stderr=err,
            cwd=base.parent,
            start_new_session=True,
        )
