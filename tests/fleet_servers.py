"""A fleet on this machine for the tests and the bench: N real `fio --server` processes, one
per loopback address (127.0.1.1, .2, ...), each with a folder of its own; one of them can be
throttled (the block cgroup on its server's process: its reads from its filesystem's device
held to a few I/Os a second) or killed (its process group, by id).

And a real OpenSSH server on the same addresses (`Sshd`), with a host key and a user key the
test makes, so that `host_env = "ssh"` reads each host's `iolab env --json` for real; `ssh`
reaches it through a client config the test writes, named by an `ssh` first in PATH.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

FIO = shutil.which("fio") or "fio"
SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
BLKIO = Path("/sys/fs/cgroup/blkio")
UNIFIED = (Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup"))


def address(n: int, net: int = 1) -> str:
    """The n-th loopback address of a fleet (1-based): 127.0.NET.n."""
    return f"127.0.{net}.{n}"


def free_port(ip: str) -> int:
    with socket.socket() as probe:
        probe.bind((ip, 0))
        return int(probe.getsockname()[1])


def wait_listening(ip: str, port: int, timeout_s: float = 20) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex((ip, port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on {ip}:{port}")


def _descendants(pid: int) -> list[int]:
    """Every process below `pid`, from /proc's parent links."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


class Fleet:
    """fio servers, each in its own process group and folder under `root`."""

    def __init__(self, root: Path, net: int = 1) -> None:
        self.root = root
        self.net = net
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.dirs: dict[str, Path] = {}
        self.group: Path | None = None

    def start(self, n: int) -> list[str]:
        hosts = [self._one(address(k + 1, self.net)) for k in range(n)]
        for host in hosts:
            ip, port = host.split(":")
            wait_listening(ip, int(port))
        return hosts

    def _one(self, ip: str, port: int | None = None) -> str:
        port = port or free_port(ip)
        host = f"{ip}:{port}"
        self.dirs[host] = self.root / f"host-{ip}"
        self.dirs[host].mkdir(parents=True, exist_ok=True)
        self.procs[host] = subprocess.Popen(
            [FIO, f"--server=ip:{ip},{port}"],
            cwd=self.dirs[host],
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return host

    def kill(self, host: str) -> None:
        """The host's fio server and the jobs it forked, gone at once (as a crash)."""
        proc = self.procs[host]
        if proc.poll() is None:
            for pid in _descendants(proc.pid):  # a job it forked into a session of its own
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)

    def restart(self, host: str) -> None:
        """The host's fio server started again, on the address and port it had."""
        ip, port = host.split(":")
        self._one(ip, int(port))
        wait_listening(ip, int(port))

    def pause(self, host: str) -> None:
        """The host's fio server and the jobs it forked stopped (SIGSTOP), as a machine that
        hangs: its connections stay open, and nothing answers on them."""
        for pid in [self.procs[host].pid, *_descendants(self.procs[host].pid)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)

    def throttle(self, host: str, device: str, iops: int) -> None:
        """The host's server (and every job it forks from now on) may read `device` at
        `iops` I/Os a second: the block cgroup, v1 or v2."""
        rdev = os.stat(device).st_rdev
        where = f"{os.major(rdev)}:{os.minor(rdev)}"
        if BLKIO.is_dir():
            self.group = BLKIO / f"iolab-fleet-{os.getpid()}"
            self.group.mkdir(exist_ok=True)
            (self.group / "blkio.throttle.read_iops_device").write_text(f"{where} {iops}\n")
        else:
            root = next(p for p in UNIFIED if (p / "cgroup.controllers").exists())
            (root / "cgroup.subtree_control").write_text("+io")
            self.group = root / f"iolab-fleet-{os.getpid()}"
            self.group.mkdir(exist_ok=True)
            (self.group / "io.max").write_text(f"{where} riops={iops}\n")
        (self.group / "cgroup.procs").write_text(f"{self.procs[host].pid}\n")

    def stop_all(self) -> None:
        for host in self.procs:
            self.kill(host)
        if self.group is not None and self.group.exists():
            self.group.rmdir()


class Sshd:
    """A real sshd on the fleet's addresses, its own port, keys made here; `env()` is the
    environment in which `ssh` (this user, BatchMode) reaches it and `iolab` runs there."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    def start(self, addresses: list[str]) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        for name in ("host_key", "user_key"):
            subprocess.run(
                ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.root / name)],
                check=True,
            )
        (self.root / "authorized_keys").write_text((self.root / "user_key.pub").read_text())
        self.port = free_port(addresses[0])
        bin_dir = Path(sys.executable).parent  # iolab's own, as installed on the "hosts"
        listen = "".join(f"ListenAddress {a}:{self.port}\n" for a in addresses)
        (self.root / "sshd_config").write_text(
            f"{listen}HostKey {self.root / 'host_key'}\n"
            f"AuthorizedKeysFile {self.root / 'authorized_keys'}\n"
            "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
            "PermitRootLogin prohibit-password\nStrictModes no\n"
            f"PidFile {self.root / 'sshd.pid'}\n"
            f"SetEnv PATH={bin_dir}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"
        )
        Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege separation directory
        self.proc = subprocess.Popen(
            [SSHD, "-D", "-f", str(self.root / "sshd_config"), "-E", str(self.root / "log")],
            start_new_session=True,
        )
        for ip in addresses:
            wait_listening(ip, self.port)
        self._client()

    def _client(self) -> None:
        """The client's config (this user, the test's key, the host key known) and an `ssh`
        that reads it, first in PATH."""
        key = (self.root / "host_key.pub").read_text().split()
        (self.root / "known_hosts").write_text(f"fleet {key[0]} {key[1]}\n")
        (self.root / "ssh_config").write_text(
            f"Host *\n  Port {self.port}\n  User {os.environ.get('USER', 'root')}\n"
            f"  IdentityFile {self.root / 'user_key'}\n  IdentitiesOnly yes\n"
            f"  UserKnownHostsFile {self.root / 'known_hosts'}\n  HostKeyAlias fleet\n"
            "  StrictHostKeyChecking yes\n  LogLevel ERROR\n"
        )
        bin_dir = self.root / "bin"
        bin_dir.mkdir(exist_ok=True)
        ssh = shutil.which("ssh") or "/usr/bin/ssh"
        (bin_dir / "ssh").write_text(f'#!/bin/sh\nexec {ssh} -F {self.root / "ssh_config"} "$@"\n')
        (bin_dir / "ssh").chmod(0o755)

    def env(self) -> dict[str, str]:
        return {**os.environ, "PATH": f"{self.root / 'bin'}:{os.environ['PATH']}"}

    def iolab(self, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        """`iolab ARGS` run in `cwd`, its `ssh` this sshd's."""
        return subprocess.run(
            [sys.executable, "-m", "iolab", *args],
            cwd=cwd,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(10)
