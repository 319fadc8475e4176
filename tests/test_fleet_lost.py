"""A host lost or hung while one fio client drives the fleet: real `fio --server` processes on
loopback (127.0.4.x), one killed mid-case (SIGKILL: its connection closes) and one stopped
(SIGSTOP: its connection stays open and nothing answers on it). The case keeps every other
host's figures and names both; the run goes on to its next case (the
second repetition)."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import start_iolab
from fleet_servers import Fleet
from iolab.targets.path import TEST_FILE
from test_fleet import plan_text
from test_hosts import host_rows

HOSTS = 6


@pytest.fixture
def fleet(workdir: Path) -> Iterator[Fleet]:
    made = Fleet(workdir / "fleet", net=4)
    try:
        yield made
    finally:
        made.stop_all()


@pytest.mark.fio
@pytest.mark.hosts
def test_a_killed_and_a_stopped_host_cost_only_their_share(fleet: Fleet, workdir: Path) -> None:
    hosts = fleet.start(HOSTS)
    killed, stopped = hosts[1], hosts[4]
    text = plan_text(hosts, fleet.dirs, runtime=4, extra="host_timeout = 3\nrepeat = 2")
    (workdir / "plan.toml").write_text(text)
    child = start_iolab("run", "plan.toml", cwd=workdir)
    deadline = time.monotonic() + 120
    while not all(any(fleet.dirs[h].glob(f"{TEST_FILE}*")) for h in (killed, stopped)):
        assert time.monotonic() < deadline, "the case never began on every host"
        time.sleep(0.05)
    time.sleep(1)
    fleet.kill(killed)
    fleet.pause(stopped)
    out, err = child.communicate(timeout=240)
    assert child.returncode == 3, out + err
    assert "Traceback" not in err
    assert f"host {killed} was lost mid-case" in out, out
    assert f"host {stopped} stopped answering" in out, out

    with sqlite3.connect(workdir / "iolab.db") as con:
        cases = con.execute("SELECT id, status, warnings FROM cases ORDER BY id").fetchall()
    assert [status for _, status, _ in cases] == ["failed", "failed"], out
    first = json.loads(cases[0][2])
    (lost,) = [w for w in first if w["code"] == "host-lost"]
    assert sorted(lost["hosts"]) == sorted([killed, stopped]), out
    rows = host_rows(workdir / "iolab.db")
    kept = [(host, iops) for status, host, iops, _ in rows if host]
    survivors = set(hosts) - {killed, stopped}
    assert sorted(h for h, _ in kept) == sorted([*survivors, *survivors]), out
    assert all(iops > 250 for _, iops in kept), kept  # 500 a second each, on a busy machine
    # the second case: the killed host refuses the connection, the stopped one never answers
    second = json.loads(cases[1][2])
    (lost,) = [w for w in second if w["code"] == "host-lost"]
    assert sorted(lost["hosts"]) == sorted([killed, stopped])
