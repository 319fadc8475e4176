"""Plans on several hosts: real `fio --server` processes on loopback addresses (the fleet of
tests/fleet_servers.py), real clients.

Hostile input on the way to and from the hosts (issue 40, findings 5 and 7).

A set-up's directory on the hosts reaches a shell there: ssh joins the words after the host
into one line for the host's shell. Each word is quoted for it (tried through a real sshd on
loopback, the one the fleet tests use: a path with a space reaches `iolab env` as one word,
a ';', a backtick, a '|' or a '$(...)' in it runs nothing), and a plan whose host directory
holds a shell's mark or a control character is refused when it is loaded, in one line naming
the set-up and the character, before any host is asked (tried with a real fio server and sshd
that would have run it).

What a host answers is read as an import is: bounded, decoded, strict JSON, typed. Each
hostile reply (a plan's host_env command printing it, run for real) is one reason naming the
host, and a run on real fio servers stores none of it and exports valid JSON.
"""

from __future__ import annotations

import json
import shutil
import socket
import sqlite3
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import run_iolab, start_iolab, wait_for
from fleet_servers import Fleet, Sshd, free_port
from iolab.fio.hosts import HostError, HostInfo, address, client_arg, versions
from iolab.fio.hosts import _probed as probed
from iolab.plan.load import parse_plan
from iolab.targets import remote_env
from iolab.targets.path import TEST_FILE
from iolab.targets.remote_env import SSH_ENV


@pytest.fixture
def servers(workdir: Path) -> Iterator[Fleet]:
    made = Fleet(workdir, net=2)
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
def test_three_hosts_are_stored_one_by_one_and_added_up(servers: Fleet, workdir: Path) -> None:
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
    servers: Fleet, workdir: Path
) -> None:
    hosts = servers.start(3)
    (workdir / "plan.toml").write_text(plan_text(hosts, servers.dirs, runtime=4))
    child = start_iolab("run", "plan.toml", cwd=workdir)
    victim = hosts[1]
    wait_for((servers.dirs[victim] / TEST_FILE).exists)  # its job has begun
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
    servers.restart(victim)
    resumed = run_iolab("run", "--resume", "1", cwd=workdir, check=True)
    assert "1 failed will run again" in resumed.stderr
    rows = host_rows(workdir / "iolab.db")
    assert {(status, host) for status, host, _, _ in rows} == {("ok", h) for h in ["", *hosts]}


@pytest.mark.fio
@pytest.mark.hosts
def test_a_host_that_never_answers_times_out_in_one_line(servers: Fleet, workdir: Path) -> None:
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
    port = free_port("127.0.0.6")
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
def test_host_count_runs_a_set_up_on_the_first_hosts(servers: Fleet, workdir: Path) -> None:
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
def test_each_hosts_environment_where_the_plan_says_how(servers: Fleet, workdir: Path) -> None:
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
def test_host_env_over_ssh_says_why_it_is_missing(servers: Fleet, workdir: Path) -> None:
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


# ---------------------------------------------------------------- hostile paths and replies

NET = 5  # the hostile rows' fleet: 127.0.5.x
PWNED = "PWNED"


@pytest.fixture
def sshd(workdir: Path) -> Iterator[Sshd]:
    """A real sshd on 127.0.5.1, and `ssh` reaching it first in PATH."""
    made = Sshd(workdir / "ssh")
    try:
        made.start(["127.0.5.1"])
        yield made
    finally:
        made.stop()


def _ssh(sshd: Sshd, path: str) -> remote_env.RemoteEnv:
    """`host_env = "ssh"` for one host, as a run asks it, with the test's `ssh` in PATH."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", sshd.env()["PATH"])
        return remote_env.read_one(SSH_ENV, "127.0.5.1:8765", path, 60)


# ---------------------------------------------------------------- finding 5: quoted


@pytest.mark.root
@pytest.mark.hosts
def test_a_path_with_a_space_reaches_the_host_as_one_word(sshd: Sshd, workdir: Path) -> None:
    folder = workdir / "dir with  spaces"
    folder.mkdir()
    found = _ssh(sshd, str(folder))
    assert found.environment is not None, found.missing
    target = found.environment["target"]
    assert isinstance(target, dict) and target["path"] == str(folder)


SHELL_WORDS = [
    pytest.param("x;touch {pwned}", id="semicolon"),
    pytest.param("x`touch {pwned}`", id="backtick"),
    pytest.param("x|touch {pwned}", id="pipe"),
    pytest.param("x$(touch {pwned})", id="dollar"),
    pytest.param("x||touch {pwned}", id="or"),
    pytest.param("x'';touch {pwned}", id="quote"),
    pytest.param("x\ntouch {pwned}", id="newline"),
]


@pytest.mark.root
@pytest.mark.hosts
@pytest.mark.parametrize("tail", SHELL_WORDS)
def test_a_path_is_never_the_hosts_command(sshd: Sshd, workdir: Path, tail: str) -> None:
    """Past the plan's check (as a plan's host_env might be asked): still one word."""
    pwned = workdir / PWNED
    path = f"{workdir}/{tail.format(pwned=pwned)}"
    found = _ssh(sshd, path)
    time.sleep(0.2)  # what a shell there started would have run by now
    assert not pwned.exists(), "the host's shell ran a command from the path"
    assert found.environment is None
    # iolab env there was given the whole path, one word: it says it does not exist
    assert found.missing.startswith("iolab: error: ") and "does not exist" in found.missing
    assert "\n" not in found.missing


@pytest.mark.fio
@pytest.mark.root
@pytest.mark.hosts
@pytest.mark.parametrize(
    ("key", "mark"),
    [
        pytest.param("path", "';'", id="path-semicolon"),
        pytest.param("path", "'`'", id="path-backtick"),
        pytest.param("path", "'|'", id="path-pipe"),
        pytest.param("hosts", "';'", id="setup-hosts-semicolon"),
        pytest.param("path", "U+0085", id="path-c1-control"),
    ],
)
def test_a_plan_whose_host_path_holds_a_shell_mark_is_refused_before_any_host(
    sshd: Sshd, workdir: Path, key: str, mark: str
) -> None:
    """With a fio server and an sshd that would have run it: refused at load, one line."""
    fleet = Fleet(workdir / "fleet", net=NET)
    try:
        (host,) = fleet.start(1)
        pwned = workdir / PWNED
        char = "\x85" if mark == "U+0085" else mark.strip("'")
        bad = f"{workdir}/x{char}touch {pwned}{char}"
        path, moved = (bad, "") if key == "path" else (str(workdir), f'"{host}" = "{bad}"\n')
        (workdir / "plan.toml").write_text(_plan(host, path, moved))
        before = sorted(p.name for p in workdir.iterdir())
        done = sshd.iolab("run", "plan.toml", cwd=workdir)
    finally:
        fleet.stop_all()
    assert done.returncode == 1, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("iolab: error: plan.toml") and "Traceback" not in done.stderr
    assert "set-up 'rack'" in line and f"holds {mark}" in line, line
    assert not pwned.exists()
    assert sorted(p.name for p in workdir.iterdir()) == before


def _plan(host: str, path: str, moved: str = "") -> str:
    hosts_table = f"[setup.hosts]\n{moved}" if moved else ""
    return f"""name = "hostile hosts"
hosts = ["{host}"]
host_env = "ssh"
[defaults]
runtime = 1
size = "1m"
[[setup]]
name = "rack"
path = {json.dumps(path)}
{hosts_table}
[[workload]]
rw = "randread"
"""


# ---------------------------------------------------------------- finding 7: bounded

# Python programs that answer as a hostile host would, run as a plan's host_env command
REPLIES = {
    "deep": "sys.stdout.write('[' * 200_000)",
    "deep-object": "sys.stdout.write('{\"a\": ' * 70 + '1' + '}' * 70)",
    "not-utf8": 'sys.stdout.buffer.write(b\'{"host": "\\xff\\xfe"}\')',
    "huge": "sys.stdout.write('{\"a\": \"' + 'x' * 40_000_000 + '\"}')",
    "huge-text": "sys.stdout.write('{\"a\": \"' + 'x' * 100_000 + '\"}')",
    "nan": 'sys.stdout.write(\'{"host": {"cpu_count": NaN}}\')',
    "infinity": 'sys.stdout.write(\'{"host": {"memory_bytes": -Infinity}}\')',
    "overflow": 'sys.stdout.write(\'{"host": {"memory_bytes": 1e999}}\')',
    "long-number": "sys.stdout.write('{\"host\": {\"memory_bytes\": ' + '9' * 5000 + '}}')",
    "a-list": "sys.stdout.write('[1, 2]')",
    "stderr-huge": "sys.stderr.write('\\x1b[31m' + 'e' * 5_000_000 + '\\n'); sys.exit(1)",
    "stderr-escape": "sys.stderr.write('boom\\x1b]0;owned\\x07\\u202e\\n'); sys.exit(3)",
}
WHY = {
    "deep": "its inventory nests more than 64 levels deep; not read",
    "deep-object": "its inventory nests more than 64 levels deep; not read",
    "not-utf8": "its inventory is not UTF-8 text; not read",
    "huge": "its inventory is larger than 1,024 KiB; not read",
    "huge-text": "its inventory holds a text of 100,000 characters; not read",
    "nan": "its inventory is not JSON (NaN, not a finite number); not read",
    "infinity": "its inventory is not JSON (-Infinity, not a finite number); not read",
    "overflow": "its inventory is not JSON (a number beyond the range of a double); not read",
    "long-number": "its inventory is not JSON (a number beyond 2^64 (5000 digits)); not read",
    "a-list": "its inventory is not a JSON object; not read",
    "stderr-escape": "boom\\u001b]0;owned\\u0007\\u202e",
}


def _command(name: str) -> tuple[str, ...]:
    return (sys.executable, "-c", f"import sys; {REPLIES[name]}", "{host}", "{path}")


@pytest.mark.parametrize("name", sorted(REPLIES))
def test_a_hostile_reply_is_one_bounded_reason(name: str) -> None:
    started = time.monotonic()
    found = remote_env.read_one(_command(name), "127.0.5.9:8765", "/srv", 60)
    assert found.environment is None
    assert "\n" not in found.missing and "\x1b" not in found.missing
    if name == "stderr-huge":
        assert len(found.missing) == remote_env.MAX_WHY and found.missing.endswith("…")
        assert found.missing.startswith("eeee")  # the last 64 KiB kept, its line cut
    else:
        assert found.missing == WHY[name]
    assert time.monotonic() - started < 30, "a 40 MB reply is cut, not read whole"
    line = remote_env.missing_line([found])
    assert line is not None and "127.0.5.9:8765: " in line and len(line) < 1000


def test_a_reply_is_read_at_most_to_its_cap() -> None:
    """A host that never stops talking: cut at MAX_REPLY, its command ended at once."""
    endless = (sys.executable, "-c", "import sys\nwhile True: sys.stdout.write('x' * 65536)")
    started = time.monotonic()
    found = remote_env.read_one(endless, "127.0.5.9:8765", "/srv", 60)
    assert found.missing == WHY["huge"]
    assert time.monotonic() - started < 30


@pytest.mark.fio
@pytest.mark.hosts
def test_a_run_stores_no_hostile_inventory_and_exports_json(workdir: Path) -> None:
    """Two real fio servers, each answering its inventory badly: the run measures them,
    says so in one line naming both hosts, and stores and exports none of it."""
    fleet = Fleet(workdir / "fleet", net=NET)
    script = (
        "import sys\n"
        "if sys.argv[1] == '127.0.5.1': sys.stdout.write('{\"a\": \"' + 'x' * 40_000_000 + '\"}')\n"
        'else: sys.stdout.write(\'{"host": {"cpu_count": NaN}}\')\n'
    )
    (workdir / "reply.py").write_text(script)
    try:
        hosts = fleet.start(2)
        command = json.dumps([sys.executable, str(workdir / "reply.py"), "{host}", "{path}"])
        moved = f'"{hosts[1]}" = "{fleet.dirs[hosts[1]]}"'
        text = _plan(hosts[0], str(fleet.dirs[hosts[0]]), moved)
        text = text.replace(f'hosts = ["{hosts[0]}"]', f"hosts = {json.dumps(hosts)}")
        (workdir / "plan.toml").write_text(
            text.replace('host_env = "ssh"', f"host_env = {command}")
        )
        done = run_iolab("run", "plan.toml", "--allow-hooks", cwd=workdir)
    finally:
        fleet.stop_all()
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    (line,) = [s for s in done.stderr.splitlines() if "could not be read" in s]
    assert f"{hosts[0]}: {WHY['huge']}" in line and f"{hosts[1]}: {WHY['nan']}" in line
    assert (workdir / "iolab.db").stat().st_size < 2 * 1024 * 1024
    with sqlite3.connect(workdir / "iolab.db") as con:
        env = json.loads(con.execute("SELECT environment FROM runs").fetchone()[0])
    assert [("environment" in h, h["environment_from"]) for h in env["hosts"]] == [
        (False, "fio's server only"),
        (False, "fio's server only"),
    ]
    exported = run_iolab("export", "-o", "out.json", cwd=workdir, check=True)
    assert "Traceback" not in exported.stderr
    json.loads((workdir / "out.json").read_text(), parse_constant=_refuse)


def _refuse(name: str) -> None:
    raise AssertionError(f"the export holds {name}, which is not JSON")
