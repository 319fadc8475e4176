"""What iolab reads back from its state folder is a claim, never proof (issue 40, findings 1,
2 and 3; issue 42, point 5).

- A run's record names what the run made; a forged one (a user's unmarked file the record
  says fio was writing, a file of the same inode with no mark, a user's own iolab.testfile,
  a record whose owner still runs, a folder holding the record's token and a user's file)
  makes the real `iolab run` remove nothing: a file goes only with the run's mark and the
  device and inode the record noted, a folder only when it holds nothing but iolab's own.
- IOLAB_STATE_DIR names only an absolute, clean path to an empty folder of the user's or one
  iolab made: /etc, a relative path, a newline or an escape sequence is refused in one line,
  and nothing is made there.
- A pending restore is typed fields: a record whose restore command is a shell's is never
  shown or run (the command is built from the tool, the VD and the values, each checked
  against the tool's allow-list); reading commands run no tool for it; 5,000 records are one
  line with their count; a record of another host is said, never acted on. The record
  itself (iolab.targets.controllers.pending; issue 29, finding 12) is kept privately and read
  back; a file that is not a record, or whose time is no time, is passed over; a state folder
  that is a link is neither read nor written; its restore commands are built from its fields.
"""

from __future__ import annotations

import functools
import json
import os
import shlex
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

import fake_raid_cli as fake
from conftest import IOLAB, dead_pid, listing, needs_root, run_iolab, said, stored_cases, wait_for
from fakes import pending_entry
from iolab.errors import ControllerError
from iolab.model import codec
from iolab.targets import evidence
from iolab.targets.controllers import apply, pending
from iolab.targets.controllers.pending import PendingRestore
from iolab.targets.evidence import MOUNT_ROOT
from iolab.targets.path import TEST_FILE
from iolab.targets.process import Owner
from loopdevs import LoopDevs, loops_fixture

_ = loops_fixture  # the `loops` fixture

RUN = ["run", "--target", "t", "--runtime", "1", "--size", "1m", "--repeat", "1", "--db", "x.db"]
PWNED = "PWNED"


@dataclass
class Here:
    """A row's folder (cwd, holding the user's things and the target `t`) and state folder."""

    cwd: Path
    state: Path
    scratch: Path  # the test's own, for the stand-in RAID tool

    def run(
        self, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*IOLAB, *args],
            cwd=self.cwd,
            env={**os.environ, evidence.STATE_ENV: str(self.state), **(env or {})},
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )


@pytest.fixture
def here(workdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Here:
    state = tmp_path / "state"
    monkeypatch.setenv(evidence.STATE_ENV, str(state))
    (workdir / "t").mkdir()
    return Here(workdir, state, tmp_path)


def dead_owner() -> Owner:
    return replace(Owner.mine(), pid=dead_pid(), start=1)


def forge_record(here: Here, made: list[evidence.Made], owner: Owner) -> evidence.Record:
    """A record iolab did not write: for the database the row's run uses."""
    record = evidence.Record("ab" * 16, str((here.cwd / "x.db").resolve()), 1, owner, made)
    record.save()
    return record


def file_made(path: Path, **changes: Any) -> evidence.Made:
    found = path.stat()
    base = evidence.Made(
        evidence.FILE,
        str(path),
        evidence.identity_of(path.parent),
        inode=found.st_ino,
        device=found.st_dev,
    )
    return replace(base, **changes)


# Each row makes the user's things and a forged record; returns what must be left as it was,
# and the words of the one error line (None: the run goes on, and must succeed).
def busy_unmarked_file(h: Here) -> tuple[Path, str | None]:
    mine = h.cwd / "mine.txt"
    mine.write_text("the user's notes\n")
    forge_record(h, [file_made(mine, busy=True, inode=0, device=0)], dead_owner())
    return mine, None


def unmarked_same_inode(h: Here) -> tuple[Path, str | None]:
    mine = h.cwd / "mine.txt"
    mine.write_text("the user's notes\n")
    forge_record(h, [file_made(mine, marked=False)], dead_owner())
    return mine, None


def marked_other_inode(h: Here) -> tuple[Path, str | None]:
    mine = h.cwd / "mine.txt"
    mine.write_text("a copy that kept the attributes of iolab's file\n")
    os.setxattr(mine, evidence.MARK, b"ab" * 16)
    forge_record(h, [file_made(mine, marked=True, inode=1)], dead_owner())
    return mine, None


REFUSED = "exists and iolab did not make it"


def users_testfile_live_owner(h: Here) -> tuple[Path, str | None]:
    users = h.cwd / "t" / TEST_FILE
    users.write_bytes(os.urandom(1 << 20))
    forge_record(h, [file_made(users, busy=True)], Owner.mine())  # this test: alive
    return users, REFUSED


def users_testfile_dead_owner(h: Here) -> tuple[Path, str | None]:
    users = h.cwd / "t" / TEST_FILE
    users.write_bytes(os.urandom(1 << 20))
    forge_record(h, [file_made(users, busy=True)], dead_owner())
    return users, REFUSED


def folder_with_token(h: Here) -> tuple[Path, str | None]:
    folder = h.cwd / "mydir"
    folder.mkdir()
    (folder / "keep.txt").write_text("the user's own, in a folder a record names\n")
    (folder / evidence.TOKEN_FILE).write_text("ab" * 16)
    made = evidence.Made(
        evidence.DIR, str(folder), evidence.identity_of(h.cwd), folder.stat().st_ino
    )
    forge_record(h, [made], dead_owner())
    return folder / "keep.txt", None


FORGED: dict[str, Callable[[Here], tuple[Path, str | None]]] = {
    "busy-unmarked-user-file": busy_unmarked_file,
    "unmarked-file-of-the-records-inode": unmarked_same_inode,
    "marked-file-of-another-inode": marked_other_inode,
    "users-testfile-live-owner": users_testfile_live_owner,
    "users-testfile-dead-owner": users_testfile_dead_owner,
    "folder-with-token-and-users-file": folder_with_token,
}


@pytest.mark.fio
@pytest.mark.parametrize("row", FORGED)
def test_a_forged_record_makes_iolab_run_remove_nothing(here: Here, row: str) -> None:
    """Finding 1: the old iolab removed each of these (a record's word was enough)."""
    kept, refused = FORGED[row](here)
    before = {k: v for k, v in listing(here.cwd).items() if not k.startswith("t/")}
    before |= {k: v for k, v in listing(here.cwd).items() if k == f"t/{TEST_FILE}"}
    done = here.run(*RUN)
    assert "Traceback" not in done.stderr, done.stderr
    after = listing(here.cwd)
    for name, value in before.items():
        assert after.get(name) == value, f"{name} was changed or removed"
    assert kept.exists()
    if refused is None:
        assert done.returncode == 0, done.stderr
        assert not any("removed" in line for line in said(done.stderr)), done.stderr
    else:
        assert done.returncode == 1, done.stderr
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("iolab: error: "), lines
        assert refused in lines[0], lines[0]


def test_a_record_of_a_live_owner_is_not_acted_on(here: Here) -> None:
    """Never for a live owner: its marked test file stays, and its record with it."""
    from iolab.runner.recovery import recover
    from iolab.store import Store

    ours = here.cwd / "t" / TEST_FILE
    ours.write_bytes(b"a live run's")
    os.setxattr(ours, evidence.MARK, b"ab" * 16)
    forge_record(here, [file_made(ours, marked=True)], Owner.mine())
    with Store(here.cwd / "x.db", create=True) as store:
        assert recover(store) == []
    assert ours.exists() and len(evidence.records()) == 1


@pytest.mark.fio
def test_a_marked_file_of_the_records_identity_is_removed(here: Here) -> None:
    """The proof that holds: the record's mark on the very file (device and inode) it
    noted, its owner gone."""
    ours = here.cwd / "t" / TEST_FILE
    ours.write_bytes(b"a dead run's")
    os.setxattr(ours, evidence.MARK, b"ab" * 16)
    forge_record(here, [file_made(ours, marked=True)], dead_owner())
    done = here.run(*RUN)
    assert done.returncode == 0, done.stderr
    assert f"removed {ours.resolve()}" in said(done.stderr)[0]


# ---------------------------------------------------------------- finding 2: the state folder


@pytest.mark.fio
@pytest.mark.parametrize(
    ("value", "words"),
    [
        pytest.param("/etc", "'/etc' is neither empty nor iolab's", id="etc"),
        pytest.param("/etc/", "is not a clean path", id="etc-slash"),
        pytest.param("/tmp/a\nb", "'/tmp/a\\\\nb' holds a control character", id="newline"),
        pytest.param("/tmp/\x1b[2J", "holds a control character", id="escape"),
    ],
)
def test_iolab_run_refuses_a_state_folder_that_is_not_its_own(
    here: Here, value: str, words: str
) -> None:
    before = sorted(os.listdir("/etc"))
    done = here.run(*RUN, env={evidence.STATE_ENV: value})
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("iolab: error: IOLAB_STATE_DIR="), lines
    assert words in lines[0] and "\x1b" not in lines[0], lines[0]
    assert sorted(os.listdir("/etc")) == before
    assert value.startswith("/etc") or not os.path.lexists(value)
    assert not (here.cwd / "x.db").exists() and list((here.cwd / "t").iterdir()) == []


def test_an_empty_folder_is_taken_and_marked_iolabs(here: Here) -> None:
    here.state.mkdir(mode=0o700)
    entry = _entry()
    pending.add(entry)
    assert sorted(os.listdir(here.state)) == [evidence.STATE_MARK, "pending-restores"]
    assert pending.pending() == [entry], "an iolab-made folder is taken again"


# ---------------------------------------------------------------- finding 3: pending restores


def _entry(**changes: Any) -> PendingRestore:
    """A sound record of a card VD left changed, by an iolab that is gone."""
    return pending_entry(**{"pid": gone_pid(), **changes})


@functools.cache
def gone_pid() -> int:
    return dead_pid()


def forge_pending(state: Path, entry: PendingRestore, **fields: Any) -> None:
    """A pending-restore record iolab did not write, under a record's own name."""
    text: dict[str, Any] = {**codec.to_object(entry), **fields}
    folder = state / "pending-restores"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    state.chmod(0o700)
    (folder / pending._name(entry.tool, entry.where)).write_text(json.dumps(text))


def card_tool(here: Here) -> Path:
    """A RAID tool on PATH that writes down each time it is run, and changes nothing."""
    tools = here.scratch / "bin"
    tools.mkdir(exist_ok=True)
    log = here.scratch / "storcli.log"
    (tools / "storcli64").write_text(f'#!/bin/sh\necho "$@" >> {log}\nexit 1\n')
    (tools / "storcli64").chmod(0o755)
    return log


SHELL = ["sh", "-c", f"touch {PWNED}"]
SHELL_RECORDS: dict[str, dict[str, Any]] = {
    "commands-of-its-own": {"commands": [SHELL]},
    "vd-with-a-command": {"where": f"/c0/v0; touch {PWNED}", "commands": [SHELL]},
    "sysfs-elsewhere": {
        "tool": "sysfs",
        "where": f"/tmp/x; touch {PWNED}",
        "restore": [["value", "write back"]],
        "commands": [["echo", "x", ">", "/etc/passwd"]],
    },
    "value-off-the-list": {"restore": [["write_cache", f"wb; touch {PWNED}"]]},
}


@pytest.mark.fio
@pytest.mark.parametrize("row", SHELL_RECORDS)
def test_a_pending_record_is_never_instructions(here: Here, row: str) -> None:
    """`iolab run` acts only on what the typed fields say; `runs`, `report` and `env` only
    say it, in one line, never a record's command, and run no tool for it."""
    fields = SHELL_RECORDS[row]
    entry = _entry(tool=fields.get("tool", "storcli"), where=fields.get("where", "/c0/v0"))
    forge_pending(here.state, entry, **fields)
    log = card_tool(here)
    path = {"PATH": f"{log.parent / 'bin'}:{os.environ['PATH']}"}
    done = here.run(*RUN, env=path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert PWNED not in done.stderr and "sh -c" not in done.stderr, done.stderr
    log.unlink(missing_ok=True)
    for command in (["runs", "--db", "x.db"], ["report", "--db", "x.db"], ["env"]):
        done = here.run(*command, env=path)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        warned = [line for line in said(done.stderr) if line.startswith("iolab: warning:")]
        assert len(warned) == 1, done.stderr
        assert PWNED not in done.stderr and "sh -c" not in done.stderr, done.stderr
        assert "echo x" not in done.stderr and "/etc/passwd" not in done.stderr, done.stderr
        sets = [c for c in (log.read_text().splitlines() if log.exists() else []) if " set " in c]
        assert sets == [], f"iolab {command[0]} set the card: {sets}"
    assert not (here.cwd / PWNED).exists() and not (here.cwd / "t" / PWNED).exists()


def test_a_pending_record_with_its_own_commands_shows_iolabs(here: Here) -> None:
    forge_pending(here.state, _entry(), commands=[SHELL])
    (read,) = pending.pending()
    assert read.said().endswith("restore it: storcli64 /c0/v0 set wrcache=wb nolog")


@pytest.mark.slow  # runs the runner over the fake executor and reports
def test_5000_pending_records_are_one_line_with_their_count(here: Here) -> None:
    for n in range(5000):
        forge_pending(here.state, _entry(where=f"/c{n // 1000}/v{n % 1000}", when=1.7e9 + n))
    done = here.run("runs", "--db", "x.db")
    assert "Traceback" not in done.stderr, done.stderr
    warned = [line for line in said(done.stderr) if "iolab: warning:" in line]
    assert len(warned) == 1, done.stderr[:2000]
    assert warned[0].startswith("iolab: warning: 5000 cache policies iolab changed"), warned[0]


def test_a_record_of_another_host_is_said_and_never_acted_on(here: Here) -> None:
    log = card_tool(here)
    os.environ["PATH"] = f"{log.parent / 'bin'}:{os.environ['PATH']}"
    try:
        forge_pending(here.state, _entry(host="the-lab-guest"))
        assert apply.retry_pending() == []
        assert not log.exists(), "no tool was run"
        (read,) = pending.pending()
        assert "storcli /c0/v0 on host the-lab-guest (not this one) may still have" in read.said()
    finally:
        os.environ["PATH"] = os.environ["PATH"].split(":", 1)[1]


def test_a_lab_guest_keeps_its_state_in_the_guest() -> None:
    """Issue 42, point 5: the guest sees the host's root; its iolab's state folder is its own
    (a tmpfs the guest mounts), never the host's /var/lib/iolab."""
    from iolab.targets import lab

    init = lab.INIT.format(
        modules="", moddir="m", spool="s", cwd="c", poll=1, idle_poll=1, busy_polls=1, tmp=""
    )
    run_at = init.index("mount -t tmpfs run /run")
    state_at = init.index(f"export {evidence.STATE_ENV}=/run/iolab-state")
    assert run_at < state_at < init.index("spool=s")


def test_the_tests_never_use_the_real_state_folder() -> None:
    """tests/conftest.py names a scratch state folder for the session (and the iolabs the
    tests start): no test reads or writes the host's own."""
    given = os.environ.get(evidence.STATE_ENV, "")
    assert given and Path(given) != evidence.default_state_folder()
    assert evidence.state_folder() == Path(given)


# ---------------------------------------------------------------- a pending restore's record itself


@pytest.fixture
def states(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "state"
    monkeypatch.setenv(pending.STATE_ENV, str(folder))
    return folder


def test_a_record_is_kept_privately_and_read_back(states: Path) -> None:
    assert pending.pending() == [] and not states.exists(), "reading makes nothing"
    pending.add(pending_entry())
    assert pending.pending() == [pending_entry()]
    assert oct((states / "pending-restores").stat().st_mode & 0o777) == "0o700"
    (kept,) = (states / "pending-restores").iterdir()
    assert oct(kept.stat().st_mode & 0o777) == "0o600"
    assert pending_entry().said() == (
        "storcli /c0/v0 may still have write_cache = always-write-back, set by run 3 at "
        f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(1_700_000_000))} (its restore failed: "
        "storcli: `/c0/v0 set wrcache=wb nolog` did not answer within 60 s); restore it: "
        "storcli64 /c0/v0 set wrcache=wb nolog"
    )
    pending.add(pending_entry(restore=(("write_cache", "write-through"),), run=4))
    (again,) = pending.pending()
    assert again.run == 4 and again.restore == (("write_cache", "write-back"),), "first kept"
    assert pending.drop("perccli", "/C0/V0"), "one card, either tool"
    assert pending.pending() == []


BAD_RECORDS = [
    pytest.param(b"not json", id="not-json"),
    pytest.param(b"[" * 100_000, id="deep"),
    pytest.param(b'{"tool": "storcli"}', id="fields-missing"),
    pytest.param(b"x" * (pending.MAX_RECORD + 10), id="huge"),
]


@pytest.mark.parametrize("text", BAD_RECORDS)
def test_a_file_that_is_not_a_record_is_passed_over(states: Path, text: bytes) -> None:
    pending.add(pending_entry())
    (kept,) = (states / "pending-restores").iterdir()
    (kept.parent / "other.json").write_bytes(text)
    assert pending.pending() == [pending_entry()]


@pytest.mark.parametrize("when", ["NaN", "Infinity", "1e400", "1" + "0" * 400, "-5"])
def test_a_record_whose_time_is_no_time_is_passed_over(states: Path, when: str) -> None:
    pending.add(pending_entry())
    (kept,) = (states / "pending-restores").iterdir()
    text = kept.read_text()
    assert '"when": 1700000000.0' in text
    (kept.parent / "other.json").write_text(text.replace("1700000000.0", when))
    assert pending.pending() == [pending_entry()]


def test_a_state_folder_that_is_a_link_is_neither_read_nor_written(
    states: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    states.mkdir(mode=0o700)
    (states / "pending-restores").symlink_to(elsewhere)
    with pytest.raises(ControllerError, match="is not a directory of iolab's user"):
        pending.add(pending_entry())
    assert list(elsewhere.iterdir()) == []
    assert pending.pending() == []


def forge(states: Path, **fields: Any) -> Path:
    """A record written by someone else than iolab, under a record's own name."""
    text: dict[str, Any] = {**codec.to_object(pending_entry()), **fields}
    folder = states / "pending-restores"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / pending._name(str(text["tool"]), str(text["where"]))
    path.write_text(json.dumps(text))
    return path


def test_a_record_is_acted_on_only_through_iolabs_own_commands(
    states: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record whose VD is not one iolab would name, or that holds commands of its own, is
    never run: `iolab run` rebuilds the commands from the tool, the VD and the values."""
    fake.tools_on_path(tmp_path / "bin", tmp_path / "state.json", monkeypatch, "/dev/sdb")
    evil = [["sh", "-c", f"touch {tmp_path}/pwned"]]
    forge(states, where="/c0/v0; reboot", commands=evil, pid=dead_pid())
    forge(states, commands=evil, pid=dead_pid())
    said_lines = apply.retry_pending()
    assert any("is not one iolab can act on" in line for line in said_lines), said_lines
    assert any(
        line.startswith("restored storcli /c0/v0 to write_cache = write-back")
        for line in said_lines
    ), said_lines
    assert not (tmp_path / "pwned").exists()
    calls = fake.read_state(tmp_path / "state.json")["calls"]
    assert [c[1:] for c in calls if fake._is_set(c[1:])] == [
        ["/c0/v0", "set", "wrcache=wb", "nolog"]
    ]
    assert [e.where for e in pending.pending()] == ["/c0/v0; reboot"], "said until done by hand"


def test_restore_commands_are_built_from_the_records_fields(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    disk = pending_entry(
        tool="sysfs",
        where="/sys/block/sdb/device/scsi_disk/1:0:0:0/cache_type",
        restore=(("value", "write back"),),
        left=(("drive_cache", "write-through"),),
    )
    assert disk.said().endswith(
        "restore it: echo 'write back' > /sys/block/sdb/device/scsi_disk/1:0:0:0/cache_type"
    )
    tools = tmp_path / "my tools"
    tools.mkdir()
    (tools / "storcli64").write_text("#!/bin/sh\nexit 1\n")
    (tools / "storcli64").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:{os.environ['PATH']}")
    assert (
        pending_entry()
        .said()
        .endswith(shlex.join([str(tools / "storcli64"), "/c0/v0", "set", "wrcache=wb", "nolog"]))
    )


def test_a_disks_write_cache_that_cannot_be_put_back_is_kept_too(
    states: Path, tmp_path: Path
) -> None:
    """A plain disk's sysfs cache_type that iolab set and cannot write back (the disk went
    away): the same loud record, with the shell line that puts it back."""
    switch = Path("/sys/block/sdzz/device/scsi_disk/9:9:9:9/cache_type")  # no such disk
    with pytest.raises(ControllerError) as caught:
        apply._put_back_disk(apply.Switch("sysfs", str(switch)), "write back", "write-through")
    assert "restoring failed: sysfs " in str(caught.value) and "\n" not in str(caught.value)
    (record,) = pending.pending()
    assert (record.tool, record.where, record.restore) == (
        "sysfs",
        str(switch),
        (("value", "write back"),),
    )
    assert record.said().endswith(f"restore it: echo 'write back' > {switch}")
    assert apply.retry_pending() == [], "its iolab (this process) still runs: not retried"


# ---------------------------------------------------------------- finding 8: kill -9 in a set-up


def mounted_at(where: str) -> bool:
    done = subprocess.run(["findmnt", "-rn", where], capture_output=True, text=True, check=False)
    return done.returncode == 0


@pytest.mark.fio
@pytest.mark.root
@needs_root()
def test_kill_9_in_a_device_set_up_then_run_cleans_up_and_resumes(
    loops: LoopDevs, workdir: Path
) -> None:
    """The next `iolab run --yes-destroy DEV` unmounts what the dead run mounted (its record
    names the mount and its source) before it checks DEV, and runs: it used to refuse "it is
    mounted at /run/iolab/ext4" and leave the mount."""
    dev = loops.make(128)
    where = f"{MOUNT_ROOT}kill-9"
    plan = f'[[setup]]\nname = "kill-9"\ndevices = ["{dev}"]\nfilesystem = "ext4"\n'
    workload = '[[workload]]\nrw = "randread"\nsize = "8m"\nruntime = 2\n'
    (workdir / "plan.toml").write_text(plan + workload)
    child = subprocess.Popen(
        [*IOLAB, "run", "plan.toml", "--yes-destroy", dev],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: mounted_at(where) or child.poll() is not None)
        child.send_signal(signal.SIGKILL)
        child.wait(30)
        assert mounted_at(where), "kill -9 left the set-up mounted"
        again = ["--yes-destroy", dev, "--wipe-signatures"]  # the ext4 the dead run made
        done = run_iolab("run", "plan.toml", *again, cwd=workdir)
    finally:
        if mounted_at(where):
            subprocess.run(["umount", where], check=False)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    first = said(done.stderr)[0]
    assert first.startswith("iolab: run 1 was left running by process "), first
    assert f"unmounted {where}" in first, first
    assert not mounted_at(where)
    assert "resuming run 1" in done.stdout + done.stderr
    assert [c[3] for c in stored_cases(workdir / "iolab.db")] == ["ok"]


def test_a_fleets_directory_on_the_hosts_is_not_locked_here(workdir: Path) -> None:
    """Finding 8: a fleet set-up's directory that exists only on the hosts was refused
    ("cannot be read to lock it"): iolab locks only what it writes to on this host."""
    from iolab.fio.executor import Local
    from iolab.fio.info import FioInfo
    from iolab.plan.load import parse_plan
    from iolab.runner import campaign
    from iolab.targets import lock
    from iolab.targets.path import Prepared

    local = workdir / "here"
    local.mkdir()
    text = (
        f'[[setup]]\nname = "far"\npath = "/srv/only-on-hosts"\n'
        f'[[setup]]\nname = "near"\npath = "{local}"\n[[workload]]\nrw = "read"\n'
    )
    plan = parse_plan(text, "plan.toml")
    far, near = plan.setups
    paths = {
        "far": Prepared(far, Path("/srv/only-on-hosts/x/iolab.testfile"), True, 0, remote=True),
        "near": Prepared(near, local / TEST_FILE, True, 1 << 30),
    }
    fio = FioInfo(path="fio", version="fio-3.33", engines=("psync",))
    held = campaign.Campaign(plan, fio, Local("fio"), campaign.Consent(), paths)
    assert [path for path, _ in campaign.targets(held)] == [str(local / TEST_FILE)]
    with campaign.locked(held):
        assert lock.keys(str(local / TEST_FILE))
