"""Hostile input on the way to and from the hosts (issue 40, findings 5 and 7).

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
import sqlite3
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import run_iolab
from fleet_servers import Fleet, Sshd
from iolab.targets import remote_env
from iolab.targets.remote_env import SSH_ENV

NET = 5  # the fleet's loopback addresses: 127.0.5.x
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
