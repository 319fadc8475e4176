"""Plans on several hosts: real `fio --server` processes on loopback addresses, real clients."""

from __future__ import annotations

import json
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conftest import run_iolab, start_iolab
from iolab.fio.hosts import HostError, HostInfo, address, client_arg, versions
from iolab.fio.hosts import _probed as probed
from iolab.plan.load import parse_plan
from iolab.targets.path import TEST_FILE

FIO = shutil.which("fio") or "fio"


class Servers:
    """fio servers on 127.0.0.2, .3, ... each with a folder of its own to run in."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.dirs: dict[str, Path] = {}

    def start(self, n: int) -> list[str]:
        return [self.one(f"127.0.0.{2 + k}") for k in range(n)]

    def one(self, ip: str, port: int | None = None) -> str:
        port = port or _free_port(ip)
        host = f"{ip}:{port}"
        self.dirs[host] = self.root / f"host-{ip}-{port}"
        self.dirs[host].mkdir(exist_ok=True)
        self.procs[host] = subprocess.Popen(
            [FIO, f"--server=ip:{ip},{port}"],
            cwd=self.dirs[host],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _wait_listening(ip, port)
        return host

    def kill(self, host: str) -> None:
        subprocess.run(["pkill", "-f", f"fio --server=ip:{host.replace(':', ',')}$"], check=False)
        self.procs[host].wait(10)

    def stop_all(self) -> None:
        for host, proc in self.procs.items():
            if proc.poll() is None:
                self.kill(host)


def _free_port(ip: str) -> int:
    with socket.socket() as probe:
        probe.bind((ip, 0))
        return int(probe.getsockname()[1])


def _wait_listening(ip: str, port: int) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex((ip, port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"fio --server on {ip}:{port} did not start")


@pytest.fixture
def servers(workdir: Path) -> Iterator[Servers]:
    made = Servers(workdir)
    try:
        yield made
    finally:
        made.stop_all()


def plan_text(hosts: list[str], dirs: dict[str, Path], runtime: int = 1, extra: str = "") -> str:
    listed = ", ".join(f'"{h}"' for h in hosts)
    moved = "".join(f'"{h}" = "{dirs[h]}"\n' for h in hosts[1:])
    return f"""name = "on hosts"
hosts = [{listed}]
{extra}
[defaults]
runtime = {runtime}
size = "8m"
[[setup]]
name = "scratch"
path = "{dirs[hosts[0]]}"
[setup.hosts]
{moved}
[[workload]]
rw = "randread"
"""


def host_rows(db: Path) -> list[tuple[str, str, float, str]]:
    """(status, host, read IOPS, raw JSON) of every stored window, case by case."""
    with sqlite3.connect(db) as con:
        return list(
            con.execute(
                "SELECT c.status, m.host, m.iops, c.raw_json FROM cases c JOIN metrics m"
                " ON m.case_id = c.id WHERE m.direction = 'read' ORDER BY c.id, m.host"
            )
        )


@pytest.mark.fio
@pytest.mark.hosts
def test_three_hosts_are_stored_one_by_one_and_added_up(servers: Servers, workdir: Path) -> None:
    hosts = servers.start(3)
    (workdir / "plan.toml").write_text(plan_text(hosts, servers.dirs))
    done = run_iolab("run", "plan.toml", cwd=workdir, check=True)
    assert "IOPS by host: " in done.stderr
    rows = host_rows(workdir / "iolab.db")
    by_host = {host: iops for _, host, iops, _ in rows}
    assert set(by_host) == {"", *hosts}
    raw = json.loads(rows[0][3])
    measured = {
        e["hostname"]: e["read"]["iops"] for e in raw["jobs"] if e["jobname"] != "All clients"
    }
    assert measured == {h: by_host[h] for h in hosts}, "each host as its server measured it"
    assert by_host[""] == pytest.approx(sum(measured.values()), rel=1e-12)
    with sqlite3.connect(workdir / "iolab.db") as con:
        env = json.loads(con.execute("SELECT environment FROM runs").fetchone()[0])
    assert [h["host"] for h in env["hosts"]] == hosts
    assert all(h["fio_version"].startswith("fio-") for h in env["hosts"])
    assert not any((servers.dirs[h] / TEST_FILE).exists() for h in hosts), "cleaned"


@pytest.mark.fio
@pytest.mark.hosts
def test_a_host_lost_mid_case_keeps_the_others_and_resume_completes(
    servers: Servers, workdir: Path
) -> None:
    hosts = servers.start(3)
    (workdir / "plan.toml").write_text(plan_text(hosts, servers.dirs, runtime=4))
    child = start_iolab("run", "plan.toml", cwd=workdir)
    victim = hosts[1]
    _wait_for((servers.dirs[victim] / TEST_FILE).exists)  # its job has begun
    time.sleep(1)
    servers.kill(victim)
    out, err = child.communicate(timeout=120)
    assert child.returncode == 3, err
    assert f"host {victim} was lost mid-case" in out, out
    rows = host_rows(workdir / "iolab.db")
    assert {(status, host) for status, host, _, _ in rows} == {
        ("failed", hosts[0]),
        ("failed", hosts[2]),
    }
    with sqlite3.connect(workdir / "iolab.db") as db:
        (warned,) = db.execute("SELECT warnings FROM cases WHERE status = 'failed'").fetchone()
    assert [w.get("hosts") for w in json.loads(warned) if w["code"] == "host-lost"] == [[victim]]
    ip, port = victim.split(":")
    servers.one(ip, int(port))
    resumed = run_iolab("run", "--resume", "1", cwd=workdir, check=True)
    assert "1 failed will run again" in resumed.stderr
    rows = host_rows(workdir / "iolab.db")
    assert {(status, host) for status, host, _, _ in rows} == {("ok", h) for h in ["", *hosts]}


def _wait_for(condition: Callable[[], bool], timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


@pytest.mark.fio
@pytest.mark.hosts
def test_a_host_that_never_answers_times_out_in_one_line(servers: Servers, workdir: Path) -> None:
    hosts = servers.start(1)
    with socket.socket() as silent:  # takes the connection, never speaks
        silent.bind(("127.0.0.5", 0))
        silent.listen(4)
        mute = f"127.0.0.5:{silent.getsockname()[1]}"
        text = plan_text(
            [*hosts, mute], {**servers.dirs, mute: servers.dirs[hosts[0]]}, extra="host_timeout = 2"
        )
        (workdir / "plan.toml").write_text(text)
        started = time.monotonic()
        done = run_iolab("run", "plan.toml", cwd=workdir)
    assert time.monotonic() - started < 30
    assert done.returncode == 1 and "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()  # iolab's 2 s, or fio's own 5 s on a loaded machine
    assert line.startswith(f"iolab: error: host {mute} did not answer "), line
    assert "in 2 s; is `fio --server` running there" in line or "timeout on cmd PROBE" in line
    assert not (workdir / "iolab.db").exists()


@pytest.mark.fio
@pytest.mark.hosts
def test_a_host_with_no_server_is_one_line(workdir: Path) -> None:
    port = _free_port("127.0.0.6")
    (workdir / "plan.toml").write_text(
        plan_text([f"127.0.0.6:{port}"], {f"127.0.0.6:{port}": workdir})
    )
    done = run_iolab("run", "plan.toml", cwd=workdir)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"iolab: error: host 127.0.0.6:{port} did not answer (connect: Connection refused); "
        "start `fio --server` there (see the README)"
    ]


def test_fio_versions_that_differ_are_a_warning() -> None:
    same = [HostInfo("a:8765", "a", "Linux", "x86-64", "fio-3.33")]
    assert versions(same, "fio-3.33") is None
    other = [*same, HostInfo("b:8765", "b", "Linux", "x86-64", "fio-3.36")]
    warning = versions(other, "fio-3.33")
    assert warning is not None and "a:8765 fio-3.33, b:8765 fio-3.36" in warning


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("server1", "server1:8765"),
        ("10.0.0.2:8766", "10.0.0.2:8766"),
        ("ip:10.0.0.3,9000", "10.0.0.3:9000"),
        ("[fd00::2]:8765", "[fd00::2]:8765"),
        ("ip6:fd00::3,8766", "[fd00::3]:8766"),
        # one spelling for one host (issue 40, finding 10): IPv4-mapped IPv6 as IPv4
        ("[::ffff:10.0.0.2]:8765", "10.0.0.2:8765"),
        ("[FD00:0::2]", "[fd00::2]:8765"),
    ],
)
def test_host_forms(given: str, expected: str) -> None:
    assert address(given) == expected
    assert client_arg(expected).endswith(expected.rsplit(":", 1)[1])


@pytest.mark.parametrize(
    ("hosts", "setup", "message"),
    [
        ('["a b"]', 'path = "/srv"', "not a host name or an IP address"),
        ('["h:99999"]', 'path = "/srv"', "is not a port number"),
        ('["h", "h:8765"]', 'path = "/srv"', "host h:8765 is listed twice"),
        ("[]", 'path = "/srv"', "hosts lists no host"),
        ('["h"]', 'devices = ["/dev/loop0"]', "devices on hosts are refused"),
        ('["h"]', 'path = "data"', "must be an absolute directory on the hosts"),
        ('["h"]', 'path = "/dev/sda"', "not under /dev, /proc or /sys"),
        ('["h"]', 'path = "/x:/dev/sda:/y"', "has a ':', which fio reads as a list of files"),
        ('["h"]', 'path = "/srv"\n[setup.hosts]\n"g" = "/x"', "g:8765 is not one of the hosts"),
        ('"missing.txt"', 'path = "/srv"', "is not a regular file"),
    ],
)
def test_bad_hosts_are_refused(hosts: str, setup: str, message: str) -> None:
    text = f'hosts = {hosts}\n[[setup]]\n{setup}\n[[workload]]\nrw = "read"\nsize = "1m"\n'
    with pytest.raises(Exception, match=message) as raised:
        parse_plan(text, "/nowhere/plan.toml")
    assert not isinstance(raised.value, HostError) or "host" in str(raised.value)


def test_a_hosts_file_as_fio_takes_it(workdir: Path) -> None:
    (workdir / "hosts.txt").write_text("# servers\nip:10.0.0.2,8765\n10.0.0.3  # rack 2\n\n")
    text = 'hosts = "hosts.txt"\n[[setup]]\npath = "/srv"\n[[workload]]\nrw = "read"\n'
    plan = parse_plan(text, str(workdir / "plan.toml"))
    assert plan.hosts is not None
    assert plan.hosts.addresses == ("10.0.0.2:8765", "10.0.0.3:8765")


@pytest.mark.fio
def test_size_auto_is_refused_on_hosts(workdir: Path) -> None:
    text = 'hosts = ["127.0.0.2"]\n[[setup]]\npath = "/srv"\n[[workload]]\nrw = "read"\n'
    (workdir / "plan.toml").write_text(text)
    done = run_iolab("run", "plan.toml", cwd=workdir)
    assert done.returncode == 1
    assert "give size" in done.stderr and len(done.stderr.splitlines()) == 1


@pytest.mark.fio
@pytest.mark.hosts
def test_host_count_runs_a_set_up_on_the_first_hosts(servers: Servers, workdir: Path) -> None:
    hosts = servers.start(2)
    text = plan_text(hosts, servers.dirs).replace(
        "[setup.hosts]", "host_count = [1, 2]\n[setup.hosts]"
    )
    (workdir / "plan.toml").write_text(text)
    shown = run_iolab("show", "plan.toml", cwd=workdir, check=True).stdout
    assert f"# set-up 'scratch on 1 host': {servers.dirs[hosts[0]]} on the first 1" in shown
    run_iolab("run", "plan.toml", cwd=workdir, check=True)
    with sqlite3.connect(workdir / "iolab.db") as con:
        rows = con.execute(
            "SELECT c.setup, count(m.host) FROM cases c JOIN metrics m ON m.case_id = c.id"
            " WHERE m.host != '' AND m.direction = 'read' GROUP BY c.id ORDER BY c.id"
        ).fetchall()
    assert rows == [("scratch on 1 host", 1), ("scratch on 2 hosts", 2)]


@pytest.mark.fio
@pytest.mark.hosts
def test_each_hosts_environment_where_the_plan_says_how(servers: Servers, workdir: Path) -> None:
    hosts = servers.start(2)
    command = f'host_env = ["{sys.executable}", "-m", "iolab", "env", "--json", "{{path}}"]'
    (workdir / "plan.toml").write_text(plan_text(hosts, servers.dirs, extra=command))
    refused = run_iolab("run", "plan.toml", cwd=workdir)
    assert refused.returncode == 1 and "--allow-hooks" in refused.stderr
    run_iolab("run", "plan.toml", "--allow-hooks", cwd=workdir, check=True)
    with sqlite3.connect(workdir / "iolab.db") as con:
        env = json.loads(con.execute("SELECT environment FROM runs").fetchone()[0])
    for host, facts in zip(hosts, env["hosts"], strict=True):
        assert facts["environment_from"].endswith(f"iolab env --json {servers.dirs[host]}")
        assert facts["environment"]["target"]["path"] == str(servers.dirs[host])


@pytest.mark.fio
@pytest.mark.hosts
def test_host_env_over_ssh_says_why_it_is_missing(servers: Servers, workdir: Path) -> None:
    hosts = servers.start(1)
    (workdir / "plan.toml").write_text(plan_text(hosts, servers.dirs, extra='host_env = "ssh"'))
    run_iolab("run", "plan.toml", cwd=workdir, check=True)
    with sqlite3.connect(workdir / "iolab.db") as con:
        env = json.loads(con.execute("SELECT environment FROM runs").fetchone()[0])
    (facts,) = env["hosts"]
    assert facts["environment_from"] == "fio's server only"
    assert facts["environment_missing"].startswith("iolab env --json over SSH: ")


def test_what_fio_says_of_a_server_is_read(tmp_path: Path) -> None:
    fixtures = Path(__file__).parent / "fixtures" / "hosts"
    for name in ("probe-same-fio", "probe-fio-3-1-server"):
        for suffix in (".out", ".err"):
            shutil.copy(fixtures / f"{name}{suffix}", tmp_path / f"{name}{suffix}")
    info = probed("127.0.0.8:8765", tmp_path / "probe-same-fio", 5)
    assert info == HostInfo("127.0.0.8:8765", "vm", "Linux", "x86-64", "fio-3.33")
    with pytest.raises(HostError) as refused:
        probed("127.0.0.7:8765", tmp_path / "probe-fio-3-1-server", 5)
    assert str(refused.value) == (
        "host 127.0.0.7:8765 runs a fio whose client/server protocol is 66, and this machine's "
        "is 97: their results would not compare; install the same fio version on every host"
    )
