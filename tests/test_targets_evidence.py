"""A database is data, not instructions (issue 29, findings 3, 6 and 12).

- A database whose run is marked running, with an owner that names this host and a process
  that is gone, and rows in `leftovers`, makes no command that only reads (runs, report,
  history, check, compare, export, advise) delete, unmount or set anything, nor write the
  database: each row builds that database (a copy of a real one, then the hostile rows) beside
  the things it names, runs the command, and checks that every file is as it was (checksums),
  the mount still mounted, the RAID tool never run, the database unchanged, the exit code 0,
  no traceback, and at most one line on stderr, which removes nothing.
- Clean-up after a dead run rests on this host's record of it (targets.evidence): a real
  process makes a test file and a scratch folder through the Ledger and dies without a word
  (os._exit); the next `iolab run` removes them, but only while they still carry iolab's proof
  (rows swap each for a user's file, a link, a folder reached through a link).
- A file named iolab.testfile that iolab did not make is refused in one line, and left as it
  was; one that carries iolab's mark is iolab's to reuse.
- kill -9 while fio checks the plan's jobs leaves no job file in the temporary folder; kill -9
  during a case leaves a test file and a scratch folder that reading commands only mention,
  and the next `iolab run` removes.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, IOLAB, dead_pid, invoke, listing, stored_cases, wait_for
from iolab.runner.recovery import dead_runs, recover
from iolab.store import Store
from iolab.targets import evidence, process
from iolab.targets.path import TEST_FILE

GOLDEN = FIXTURES.parent / "golden" / "devices.db"  # two real runs of one plan
REAL_FIO = shutil.which("fio") or "/usr/bin/fio"
CARD = json.dumps(
    {"tool": "storcli", "vd": "/c0/v0", "restore": {"write_cache": "always-write-back"}}
)
TOKEN = "0123456789abcdef0123456789abcdef"
SAID_NOTHING_DONE = ("removed", "unmounted", "restored")


# ---------------------------------------------------------------- the world of a row


@dataclass
class World:
    """A row's scratch folder (cwd), its database, the state folder, and the fake RAID tool."""

    cwd: Path
    db: Path
    state: Path
    tool_log: Path

    def leftover(self, kind: str, path: str) -> None:
        with sqlite3.connect(self.db) as con:
            con.execute("INSERT INTO leftovers VALUES (2, ?, ?)", (kind, path))
        con.close()

    def owner(self, text: str) -> None:
        with sqlite3.connect(self.db) as con:
            con.execute("UPDATE runs SET status = 'running', owner = ? WHERE id = 2", (text,))
        con.close()


@pytest.fixture
def world(
    workdir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    migrated: Callable[[Path, Path], None],
) -> World:
    state = tmp_path / "state"
    monkeypatch.setenv(evidence.STATE_ENV, str(state))
    tools = tmp_path / "bin"
    tools.mkdir()
    log = tmp_path / "storcli.log"
    fake = tools / "storcli64"  # a RAID card's tool: records that it was run, changes nothing
    fake.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexit 1\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:{os.environ['PATH']}")
    monkeypatch.chdir(workdir)
    db = workdir / "iolab.db"
    migrated(GOLDEN, db)  # so that a command that only reads has nothing to write
    return World(workdir, db, state, log)


def owner_json(**changes: Any) -> str:
    return json.dumps({**process.me(), "pid": dead_pid(), "start": 1, **changes})


# What a hostile database names, and what it names it on: each makes the thing and returns the
# leftover row's (kind, path).
def archive_dir(w: World) -> tuple[str, str]:
    folder = w.cwd / "iolab-runs-archive"
    (folder / "2025").mkdir(parents=True)
    (folder / "2025" / "results.csv").write_text("years of results\n")
    return "dir", str(folder)


def users_test_file(w: World) -> tuple[str, str]:
    (w.cwd / "data").mkdir()
    (w.cwd / "data" / TEST_FILE).write_bytes(os.urandom(65536))
    return "file", str(w.cwd / "data" / TEST_FILE)


def file_through_a_link(w: World) -> tuple[str, str]:
    (w.cwd / "real").mkdir()
    (w.cwd / "real" / TEST_FILE).write_bytes(os.urandom(4096))
    (w.cwd / "linked").symlink_to(w.cwd / "real")
    return "file", str(w.cwd / "linked" / TEST_FILE)


def file_that_is_a_link(w: World) -> tuple[str, str]:
    (w.cwd / "precious.txt").write_text("precious\n")
    (w.cwd / "here").mkdir()
    (w.cwd / "here" / TEST_FILE).symlink_to(w.cwd / "precious.txt")
    return "file", str(w.cwd / "here" / TEST_FILE)


def card_policy(w: World) -> tuple[str, str]:
    return "controller", CARD


def a_mount(w: World) -> tuple[str, str]:
    where = w.cwd / "mnt"
    where.mkdir()
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "iolab-hostile", str(where)], check=True
    )
    (where / "kept").write_text("on the mount\n")
    return "mount", str(where)


LEFTOVERS: dict[str, Callable[[World], tuple[str, str]]] = {
    "archive-dir": archive_dir,
    "users-testfile": users_test_file,
    "testfile-via-linked-dir": file_through_a_link,
    "testfile-symlink": file_that_is_a_link,
    "storcli-awb": card_policy,
    "tmpfs-mount": a_mount,
}
READING = {
    "runs": ["runs"],
    "report": ["report"],
    "history": ["history"],
    "check": ["check", "--no-strict"],  # a store of one run: not judged, said, exit 0
    "compare": ["compare", "1", "2"],
    "export": ["export", "--format", "json", "-o", "-"],
    "advise": ["advise"],
}
OWNERS: dict[str, Callable[[], str]] = {  # processes that lie: gone, reused, rebooted, garbage
    "pid-gone": owner_json,
    "pid-reused": lambda: json.dumps({**process.me(), "start": 1}),  # this pid, another start
    "other-boot": lambda: owner_json(boot_id="00000000-0000-0000-0000-000000000000"),
    "pid-not-a-number": lambda: owner_json(pid="1; storcli64 /c0/v0 set wrcache=awb"),
    "pid-negative": lambda: owner_json(pid=-1),
    "no-start": lambda: owner_json(start=None),
    "owner-a-list": lambda: json.dumps([process.me()]),
    "owner-not-json": lambda: "{not json",
    "owner-other-host": lambda: owner_json(host="elsewhere"),
    "owner-alive": lambda: json.dumps({**process.me(), "pid": 1, "start": None}),
}


def hostile(command: str, leftover: str, owner: str = "pid-gone", immutable: bool = False) -> Any:
    marks = [pytest.mark.root] if leftover == "tmpfs-mount" or immutable else []
    name = f"{command}-{leftover}" + (f"-{owner}" if owner != "pid-gone" else "")
    name += "-immutable-db" if immutable else ""
    return pytest.param(command, leftover, owner, immutable, id=name, marks=marks)


ROWS = (
    [hostile(c, k) for c in READING for k in LEFTOVERS]
    + [hostile("report", "archive-dir", owner) for owner in OWNERS if owner != "pid-gone"]
    + [
        hostile("runs", "storcli-awb", "other-boot"),
        hostile("runs", "users-testfile", "owner-a-list"),
        hostile("report", "archive-dir", immutable=True),
        hostile("runs", "users-testfile", immutable=True),
    ]
)


def test_the_table_is_big_and_its_ids_are_unique() -> None:
    ids = [p.id for p in ROWS]
    assert len(ids) == len(set(ids))
    assert len(ids) >= 30


def mounted(path: Path) -> bool:
    return subprocess.run(["mountpoint", "-q", str(path)], check=False).returncode == 0


@pytest.mark.parametrize(("command", "leftover", "owner", "immutable"), ROWS)
def test_a_hostile_database_makes_a_reading_command_touch_nothing(
    world: World, command: str, leftover: str, owner: str, immutable: bool
) -> None:
    kind, path = LEFTOVERS[leftover](world)
    world.leftover(kind, path)
    world.owner(OWNERS[owner]())
    mount = Path(path) if kind == "mount" else None
    before = listing(world.cwd)
    try:
        if immutable:
            subprocess.run(["chattr", "+i", str(world.db)], check=True)
        outcome = invoke([*READING[command], "--db", str(world.db)], limit_s=60)
        after = listing(world.cwd)
        still_mounted = mount is None or mounted(mount)
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(world.db)], check=False)
        if mount is not None and mounted(mount):
            subprocess.run(["umount", str(mount)], check=False)
    problems = []
    if outcome.crash or "Traceback" in outcome.stdout + outcome.stderr:
        problems.append(f"crashed: {outcome.crash[-1500:] or outcome.stderr[-1500:]}")
    if outcome.code != 0:
        problems.append(f"exit code {outcome.code}, not 0: {outcome.stderr[-600:]}")
    lines = outcome.stderr.splitlines()
    if len(lines) > 1 or any(not line.startswith("iolab: ") for line in lines):
        problems.append(f"stderr is more than one line of iolab's: {outcome.stderr[:600]!r}")
    if any(word in outcome.stderr for word in SAID_NOTHING_DONE):
        problems.append(f"says it did something: {outcome.stderr[:600]!r}")
    for name in sorted(before.keys() | after.keys()):
        if before.get(name) != after.get(name):
            problems.append(f"{name}: {before.get(name)} became {after.get(name)}")
    if not still_mounted:
        problems.append(f"{mount} was unmounted")
    if world.tool_log.exists():
        problems.append(f"the RAID card's tool was run: {world.tool_log.read_text()!r}")
    assert not problems, "\n".join([f"iolab {command} ({leftover}, owner {owner})", *problems])


def test_a_reading_command_says_a_dead_run_in_one_line(world: World) -> None:
    """The database's word alone: said, with the run to resume; nothing removed."""
    world.owner(owner_json())
    outcome = invoke(["runs", "--db", str(world.db)], limit_s=60)
    assert outcome.code == 0, outcome.stderr
    line = outcome.stderr.strip()
    assert line.startswith("iolab: run 2 is marked running, but its iolab (pid "), line
    assert "so iolab removes nothing" in line and "resume with: iolab run --resume 2" in line


# ---------------------------------------------------------------- this host's record


LEDGER_CHILD = """
import os, sys, tempfile
from pathlib import Path
from iolab.runner.executing import Ledger, start
from iolab.store import Store

store, run_id, where = Store(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
start(store, run_id)
ledger = Ledger(store, run_id)
scratch = Path(tempfile.mkdtemp(prefix=f"iolab-run{run_id}-", dir=where))
held = [ledger.holding("dir", scratch), ledger.holding("file", where / "target" / "iolab.testfile")]
for hold in held:  # kept referenced: a context dropped unfinished would clean up on collection
    hold.__enter__()
(where / "target" / "iolab.testfile").write_bytes(b"fio's data" * 100)
print(scratch, flush=True)
os._exit(0)  # dies as kill -9 leaves it: no clean-up, no word
"""


@dataclass
class Dead:
    """What a real iolab process made through its Ledger before it died."""

    store: Store
    testfile: Path
    scratch: Path


@pytest.fixture
def dead(world: World) -> Iterator[Dead]:
    (world.cwd / "target").mkdir()
    done = subprocess.run(
        [sys.executable, "-c", LEDGER_CHILD, str(world.db), "2", str(world.cwd)],
        capture_output=True,
        text=True,
        check=True,
    )
    with Store(world.db) as store:
        yield Dead(store, world.cwd / "target" / TEST_FILE, Path(done.stdout.strip()))


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
def test_the_next_run_removes_what_a_dead_run_recorded(dead: Dead) -> None:
    said = [r.said for r in dead_runs(dead.store)]
    assert len(said) == 1 and said[0].startswith("run 2's iolab (pid "), said
    assert dead.testfile.exists() and dead.scratch.exists(), "a reading command removes nothing"
    recovered = recover(dead.store)
    assert len(recovered) == 1, recovered
    assert f"removed {dead.testfile}" in recovered[0].said
    assert f"removed {dead.scratch}" in recovered[0].said
    assert not dead.testfile.exists() and not dead.scratch.exists()
    assert dead.store.run(2).status == "interrupted"
    assert evidence.records() == [] and recover(dead.store) == [], "said once"


def swap_in_users_file(d: Dead) -> Path:
    d.testfile.unlink()
    d.testfile.write_text("the user's own, made after iolab died\n")
    return d.testfile


def swap_in_a_link(d: Dead) -> Path:
    victim = d.testfile.parent.parent / "victim.txt"
    victim.write_text("precious\n")
    d.testfile.unlink()
    d.testfile.symlink_to(victim)
    return victim


def swap_the_folder_for_a_link(d: Dead) -> Path:
    moved = d.testfile.parent.with_name("moved")
    d.testfile.parent.rename(moved)
    other = d.testfile.parent.parent / "other"
    other.mkdir()
    (other / TEST_FILE).write_text("another folder's file of that name\n")
    d.testfile.parent.symlink_to(other)
    return other / TEST_FILE


def forge_the_scratch_token(d: Dead) -> Path:
    (d.scratch / evidence.TOKEN_FILE).write_text(TOKEN)
    return d.scratch / evidence.TOKEN_FILE


def swap_the_scratch_folder(d: Dead) -> Path:
    shutil.rmtree(d.scratch)
    d.scratch.mkdir()
    (d.scratch / "mine.txt").write_text("a folder of the same name, not iolab's\n")
    return d.scratch / "mine.txt"


def mark_with_another_token(d: Dead) -> Path:
    os.setxattr(d.testfile, evidence.MARK, TOKEN.encode())
    return d.testfile


FORGED = {
    "testfile-now-users": swap_in_users_file,
    "testfile-now-a-link": swap_in_a_link,
    "testfile-folder-now-a-link": swap_the_folder_for_a_link,
    "testfile-marked-by-another-run": mark_with_another_token,
    "scratch-token-forged": forge_the_scratch_token,
    "scratch-folder-replaced": swap_the_scratch_folder,
}


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
@pytest.mark.parametrize("forge", FORGED)
def test_what_no_longer_carries_iolabs_proof_is_left(dead: Dead, forge: str) -> None:
    """The record names the thing, but what stands there now is not what the run made."""
    kept = FORGED[forge](dead)
    before = kept.read_bytes()
    recovered = recover(dead.store)
    assert len(recovered) == 1 and dead.store.run(2).status == "interrupted"
    assert kept.read_bytes() == before, f"{kept} was changed or removed"
    assert str(kept) not in recovered[0].said


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
def test_the_records_of_another_database_are_not_its(dead: Dead, world: World) -> None:
    other = world.cwd / "other.db"
    shutil.copyfile(world.db, other)
    with Store(other) as store:
        assert recover(store) != [], "its run 2 is marked running by a dead process"
    assert dead.testfile.exists() and dead.scratch.exists()


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
@pytest.mark.parametrize("problem", ["a symbolic link", "open to other users"])
def test_a_state_folder_that_cannot_be_trusted_is_not_read(
    dead: Dead, world: World, problem: str
) -> None:
    folder = world.state / "runs"
    real = world.state.with_name("elsewhere")  # outside: a state folder holds only iolab's
    folder.rename(real)
    if problem == "a symbolic link":
        folder.symlink_to(real)
    else:
        folder.mkdir()
        for record in real.iterdir():
            shutil.copy(record, folder / record.name)
        folder.chmod(0o777)
    recovered = recover(dead.store)
    assert all("; removed" not in r.said for r in recovered), recovered
    assert dead.testfile.exists() and dead.scratch.exists()


# ---------------------------------------------------------------- a test file without proof


def plain_file(target: Path) -> Path:
    (target / TEST_FILE).write_bytes(os.urandom(1 << 20))
    return target / TEST_FILE


def empty_file(target: Path) -> Path:
    (target / TEST_FILE).touch()
    return target / TEST_FILE


def foreign_mark(target: Path) -> Path:
    made = plain_file(target)
    os.setxattr(made, evidence.MARK, b"not an iolab token")
    return made


def other_attribute(target: Path) -> Path:
    made = plain_file(target)
    os.setxattr(made, "user.comment", TOKEN.encode())
    return made


UNPROVEN = {
    "plain-file": (plain_file, ""),
    "empty-file": (empty_file, ""),
    "foreign-mark": (foreign_mark, ""),
    "another-attribute": (other_attribute, ""),
    "via-linked-target": (plain_file, "link"),
}


@pytest.mark.fio
@pytest.mark.parametrize("case", UNPROVEN)
def test_a_test_file_iolab_did_not_make_is_refused(world: World, case: str) -> None:
    make, how = UNPROVEN[case]
    target = world.cwd / "target"
    target.mkdir()
    users = make(target)
    given = target
    if how == "link":
        given = world.cwd / "link"
        given.symlink_to(target)
    before = listing(world.cwd)
    done = subprocess.run(
        [*IOLAB, "run", "--target", str(given), "--runtime", "1", "--size", "1m", "--db", "x.db"],
        cwd=world.cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("iolab: error: "), done.stderr
    assert f"{str(users)!r} exists and iolab did not make it" in lines[0]
    assert "move it away, or choose another directory" in lines[0]
    assert listing(world.cwd) == before, "nothing made, changed or removed"


@pytest.mark.fio
def test_a_test_file_that_carries_iolabs_mark_is_reused_and_removed(world: World) -> None:
    target = world.cwd / "target"
    target.mkdir()
    os.setxattr(plain_file(target), evidence.MARK, TOKEN.encode())
    done = subprocess.run(
        [
            *IOLAB,
            "run",
            "--target",
            str(target),
            "--runtime",
            "1",
            "--size",
            "1m",
            "--repeat",
            "1",
            "--db",
            "x.db",
        ],
        cwd=world.cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert list(target.iterdir()) == [], "iolab's own test file is removed at the end"
    assert evidence.records() == [], "the run's record goes with it"


# ---------------------------------------------------------------- kill -9


@pytest.mark.fio
def test_kill_9_while_fio_checks_the_jobs_leaves_no_job_file(world: World, tmp_path: Path) -> None:
    """fio's --parse-only reads the jobs from iolab's memory, not from $TMPDIR/tmp*.fio."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    stand_in = tmp_path / "bin" / "fio"
    asked = tmp_path / "parse-only"
    stand_in.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = "--parse-only" ]; then echo $$ > {asked}; exec sleep 120; fi\n'
        f'exec {REAL_FIO} "$@"\n'
    )
    stand_in.chmod(0o755)
    (world.cwd / "target").mkdir()
    child = subprocess.Popen(
        [*IOLAB, "run", "--target", "target", "--runtime", "1", "--db", "x.db"],
        cwd=world.cwd,
        env={**os.environ, "TMPDIR": str(tmp)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: asked.exists() and asked.read_text().strip() != "")
        child.send_signal(signal.SIGKILL)
        child.wait(30)
    finally:
        if asked.exists() and asked.read_text().strip():
            os.kill(int(asked.read_text()), signal.SIGKILL)
        child.kill()
    assert sorted(p.name for p in tmp.iterdir()) == [], "left in the temporary folder"


@pytest.mark.fio
def test_kill_9_mid_case_reading_commands_say_it_the_next_run_removes_it(world: World) -> None:
    target = world.cwd / "target"
    target.mkdir()
    scratch = world.cwd / "tmp"
    scratch.mkdir()
    args = ["run", "--target", "target", "--runtime", "5", "--size", "8m", "--db", "k.db"]
    env = {**os.environ, "TMPDIR": str(scratch)}
    child = subprocess.Popen(
        [*IOLAB, *args],
        cwd=world.cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for(lambda: opened(target / TEST_FILE))  # fio writes it
    # issue 40, finding 1: marked before fio wrote a byte (fio never lays it out anew), and
    # the very file the record noted: no state of a dead run needs the record alone
    found = (target / TEST_FILE).stat()
    (record,) = evidence.records()
    (made,) = [m for m in record.made if m.kind == evidence.FILE]
    assert os.getxattr(target / TEST_FILE, evidence.MARK).decode() == record.token
    assert (made.device, made.inode) == (found.st_dev, found.st_ino) and made.marked
    child.send_signal(signal.SIGKILL)
    child.wait(30)
    left = sorted(p.name for p in scratch.iterdir())
    assert (target / TEST_FILE).exists() and left, "kill -9 left the test file and scratch"
    for command in (["runs"], ["report"]):
        seen = subprocess.run(
            [*IOLAB, *command, "--db", "k.db"],
            cwd=world.cwd,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert seen.returncode == 0, seen.stderr
        assert seen.stderr.count("\n") == 1 and "run 1's iolab (pid " in seen.stderr
        assert "died; the next 'iolab run' on this database removes what it left" in seen.stderr
        assert (target / TEST_FILE).exists() and sorted(p.name for p in scratch.iterdir()) == left
    again = subprocess.run(
        [*IOLAB, *args[:3], "--runtime", "1", "--size", "8m", "--repeat", "1", "--db", "k.db"],
        cwd=world.cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert again.returncode == 0, again.stderr
    first = again.stderr.splitlines()[0]
    assert first.startswith("iolab: run 1 was left running by process "), first
    assert f"removed {target.resolve() / TEST_FILE}" in first
    assert not (target / TEST_FILE).exists() and list(scratch.iterdir()) == []
    assert evidence.records() == []


def opened(path: Path) -> bool:
    """Whether any process has the file open (fio, during a case)."""
    for fd in Path("/proc").glob("[0-9]*/fd/*"):
        try:
            if os.readlink(fd) == str(path):
                return True
        except OSError:
            continue
    return False


@pytest.mark.fio
def test_a_test_file_swapped_for_a_link_mid_run_is_not_written_through(world: World) -> None:
    """While a case runs, someone who can write to the folder puts a link to their own file at
    iolab.testfile: the next case refuses, fio never writes through it, nothing is removed.
    (A swap in the instant between iolab's check and fio's open cannot be seen from here.)"""
    target = world.cwd / "target"
    target.mkdir()
    victim = world.cwd / "victim.bin"
    victim.write_bytes(os.urandom(8 << 20))  # as big as the test file: fio would not lay it out
    before = victim.read_bytes()
    args = ["run", "--target", "target", "--runtime", "2", "--size", "8m", "--repeat", "1"]
    child = subprocess.Popen(
        [*IOLAB, *args, "--db", "s.db"],
        cwd=world.cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # case 1 stored, and case 2's fio has the file open: the swap falls between cases
        wait_for(lambda: len(stored_cases(world.cwd / "s.db")) >= 1 and opened(target / TEST_FILE))
        (target / TEST_FILE).unlink()
        (target / TEST_FILE).symlink_to(victim)
        _, err = child.communicate(timeout=300)
    finally:
        child.kill()
    assert child.returncode == 3, err
    assert "was replaced while the run went on" in err
    assert victim.read_bytes() == before, "fio wrote through the link"
    assert (target / TEST_FILE).is_symlink(), "what is not iolab's is not removed"


def open_to_others(folder: Path, real: Path) -> None:
    folder.mkdir()
    folder.chmod(0o777)


STATE_FOLDERS: dict[str, tuple[str, Callable[[Path, Path], object]]] = {
    "a-symbolic-link": ("is reached through a symbolic link", lambda f, real: f.symlink_to(real)),
    "open-to-others": ("may be written by other users", open_to_others),
    "a-file": ("is not a folder", lambda f, real: f.write_text("")),
}


@pytest.mark.fio
@pytest.mark.parametrize("kind", STATE_FOLDERS)
def test_a_run_that_cannot_keep_its_record_is_refused(world: World, kind: str) -> None:
    words, make = STATE_FOLDERS[kind]
    real = world.state.with_name("real-state")
    real.mkdir(mode=0o700)
    world.state.mkdir(mode=0o700)
    make(world.state / "runs", real)
    (world.cwd / "target").mkdir()
    before = listing(world.cwd)
    done = subprocess.run(
        [*IOLAB, "run", "--target", "target", "--runtime", "1", "--size", "1m", "--db", "n.db"],
        cwd=world.cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("iolab: error: iolab's state folder "), lines
    assert words in lines[0] and "name another with IOLAB_STATE_DIR" in lines[0]
    assert listing(world.cwd) == before and list(real.iterdir()) == []


@pytest.mark.fio
@pytest.mark.parametrize(
    "leftover",
    [pytest.param(k, marks=[pytest.mark.root] if k == "tmpfs-mount" else []) for k in LEFTOVERS],
)
def test_a_hostile_database_makes_iolab_run_touch_nothing_either(
    world: World, leftover: str
) -> None:
    """The one command that cleans up after dead runs does so by this host's record: the
    database's rows only get the run marked interrupted, and it says that nothing was removed."""
    kind, path = LEFTOVERS[leftover](world)
    world.leftover(kind, path)
    world.owner(owner_json())
    (world.cwd / "t").mkdir()
    mount = Path(path) if kind == "mount" else None
    before = {k: v for k, v in listing(world.cwd).items() if k not in ("iolab.db", "t")}
    try:
        done = subprocess.run(
            [*IOLAB, "run", "--target", "t", "--runtime", "1", "--size", "1m", "--repeat", "1"],
            cwd=world.cwd,
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        still_mounted = mount is None or mounted(mount)
        after = {k: v for k, v in listing(world.cwd).items() if k not in ("iolab.db", "t")}
    finally:
        if mount is not None and mounted(mount):
            subprocess.run(["umount", str(mount)], check=False)
    assert done.returncode == 0, done.stderr
    first = done.stderr.splitlines()[0]
    assert first.startswith("iolab: run 2 was left running by process "), first
    assert "marked interrupted; nothing removed (this host has no record of what it made)" in first
    assert after == before and still_mounted
    assert not world.tool_log.exists(), "the RAID card's tool was run"
