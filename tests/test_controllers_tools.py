"""Hostile RAID tools, table-driven (issue 29, findings 5, 7, 9, 11 and 12).

The tools are the stateful fakes of tests/fake_raid_cli.py, first on PATH, answering with the
outputs real cards printed (../shared/reference/raid-cli/) mutated as each row says: fields
that are not numbers, numbers thousands of digits long, missing lines, escapes in names, an
answer cut short or 17 MiB long, a tool that exits without a word or never answers. Each
refusal row runs the real `iolab run` on a loop device standing in for the VD and asserts:
exit code 1, exactly one line on stderr, starting "iolab: error: " and holding the row's
words, no traceback, no escape character from the tool's text, nothing set on the card,
nothing stored, no byte changed in the working directory or on the device, and nothing left
in the temporary directory.

Then the restores that fail, one row per way (the set hangs after taking effect, the restore
hangs, is refused, is silently ignored, the tool breaks or vanishes after the set): the run
says loudly, at its end, what the card may still have and the exact command that puts it
back; every later command says it again (one warning line each) without running any tool;
`iolab run` retries it; and once put back nothing more is said. A tool whose child keeps its
output open neither holds iolab nor outlives it; scratch folders of dead iolabs are removed.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import fake_raid_cli as fake
from conftest import IOLAB, listing, needs_root, run_iolab, said, stored_cases
from fakes import is_alive, pending_entry
from iolab.errors import ControllerError
from iolab.targets.controllers import megacli, pending, ssacli, storcli
from iolab.targets.controllers.common import size_bytes
from loopdevs import LoopDevs, device_sha256, loops_fixture
from test_controllers_parse import recorded
from test_controllers_run import FIRST, PLAN

_ = loops_fixture  # the `loops` fixture

HUGE = "9" * 5000  # past Python's 4300 digits for int(): a ValueError where it is not checked
ESC = "\x1b[2J"  # an escape that would clear the terminal
ANSWER_S = "4"  # IOLAB_RAID_ANSWER_S for the rows whose tool hangs


@dataclass
class Lab:
    """The fakes (all four families), their state, a loop device for the VD, the folders."""

    bin: Path
    state: Path
    dev: str
    workdir: Path
    tmp: Path  # TMPDIR of every iolab the test starts
    states: Path  # IOLAB_STATE_DIR

    def edit(self, **changes: Any) -> None:
        state = fake.read_state(self.state)
        state.update(changes)
        fake.write_state(self.state, state)

    def read(self) -> dict[str, Any]:
        return fake.read_state(self.state)

    def sets(self) -> list[list[str]]:
        return [c for c in self.read()["calls"] if fake._is_set(c[1:])]

    def plan(self, tool: str, vd: str, policy: str, runtime: int = 1) -> str:
        text = PLAN.format(dev=self.dev, tool=tool, vd=vd, policy=policy, runtime=runtime)
        (self.workdir / "plan.toml").write_text(text)
        return "plan.toml"

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run_iolab(*args, cwd=self.workdir)


@pytest.fixture
def lab(
    workdir: Path, loops: LoopDevs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Lab]:
    dev = loops.make(32)
    found = Lab(
        tmp_path / "bin",
        tmp_path / "state.json",
        dev,
        workdir,
        tmp_path / "tmp",
        tmp_path / "iolab-state",
    )
    found.tmp.mkdir()
    fake.tools_on_path(found.bin, found.state, monkeypatch, dev)
    monkeypatch.setenv("TMPDIR", str(found.tmp))
    monkeypatch.setenv(pending.STATE_ENV, str(found.states))
    (workdir / "mine.txt").write_text("a user's notes, never touched\n")
    yield found
    _kill_hung(found.state)


def _kill_hung(state: Path) -> None:
    """Fakes a failed test left hanging, and their children."""
    if not state.exists():
        return
    left = fake.read_state(state)
    for pid in [*left.get("hanging", []), *left.get("children", [])]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


# ---------------------------------------------------------------- refusals before anything runs

SLOT_LINE = r"^   Slot: 0$"
SSA = ("ssacli", "slot=0 ld 1", 'write_cache = "write-through"')
STOR = ("storcli", "/c0/v0", 'write_cache = "write-through"')
MEGA = ("megacli", "-L0 -a0", 'write_cache = "write-through"')
ARC = ("arcconf", "1 LOGICALDRIVE 0", 'write_cache = "write-through"')
NOT_A_SLOT = "ssacli: line 3 (Slot) of `ctrl all show config detail` is not a slot number"
STOR_JSON = "storcli: `/cALL show all J` printed no complete JSON document"


def refusal(
    row_id: str,
    card: tuple[str, str, str],
    words: str,
    mutate: list[tuple[str, str]] | None = None,
    env: dict[str, str] | None = None,
    **state: Any,
) -> Any:
    changes = {**state, **({"mutate": [list(m) for m in mutate]} if mutate else {})}
    return pytest.param(card, changes, env or {}, words, id=row_id)


# fmt: off
REFUSALS = [
    # finding 9: ssacli's Slot line, not a number (a ValueError at ssacli.py's int())
    refusal("ssa-slot-words", SSA, NOT_A_SLOT, [(SLOT_LINE, "   Slot: zero")]),
    refusal("ssa-slot-superscript", SSA, NOT_A_SLOT, [(SLOT_LINE, "   Slot: \u00b2")]),
    refusal("ssa-slot-huge", SSA, NOT_A_SLOT, [(SLOT_LINE, f"   Slot: {HUGE}")]),
    refusal("ssa-slot-escape", SSA, NOT_A_SLOT, [(SLOT_LINE, f"   Slot: 0{ESC}")]),
    refusal("ssa-caching-missing", SSA, "ssacli: the Caching field of logical drive 1 is unread",
            [(r"^\s*Caching:.*\n", "")]),
    refusal("ssa-caching-escape", SSA, "ssacli: the Caching field of logical drive 1 is unread",
            [(r"Caching:  Enabled", f"Caching:  {ESC}Enabled")]),
    refusal("ssa-no-slot-header", SSA, "names no controller (no '... in Slot N' line)",
            [(r" in Slot 0 \(Embedded\)", " (Embedded)")]),
    refusal("ssa-ratio-missing", (*SSA[:2], 'cache_ratio = "25/75"'),
            "ssacli does not print cache_ratio of slot=0 ld 1, so iolab could not restore it",
            [(r"^\s*Cache Ratio:.*\n", "")]),
    refusal("ssa-other-disk", SSA, "ssacli says slot=0 ld 1 is /dev/sdz, but the set-up measures",
            [(r"Disk Name: .*$", "Disk Name: /dev/sdz")]),
    # storcli's JSON
    refusal("stor-controller-superscript", STOR, "storcli: a document's Controller field is not "
            "a number", [(r'"Controller" : 0', '"Controller" : "\u00b2"')]),
    refusal("stor-controller-huge", STOR, STOR_JSON,
            [(r'"Controller" : 0', f'"Controller" : {HUGE}')]),
    refusal("stor-cache-escape", STOR, "storcli: the Cache field of /c0/v0 is not a cache policy",
            [(r'"Cache" : "RWBD"', '"Cache" : "R\\u001b[2JWBD"')]),
    refusal("stor-vd-key-huge", STOR, "storcli does not print write_cache of /c0/v0",
            [(r'"/c0/v0" :', f'"/c0/v{HUGE}" :')]),
    refusal("stor-initial-words", STOR, "storcli does not print write_cache of /c0/v0",
            [(r'"Write Cache\(initial setting\)" : "\w+"',
              '"Write Cache(initial setting)" : "Sometimes"')]),
    refusal("stor-dg-vd-words", STOR, "storcli: a VD LIST row's DG/VD field is not two numbers",
            [(r'"DG/VD" : "0/0"', '"DG/VD" : "0/zero"')]),
    refusal("stor-cut", STOR, STOR_JSON, cut=0.5),
    refusal("stor-silent-failure", STOR, "storcli: `/cALL show all J nolog` exited with status 2",
            broken=2),
    refusal("stor-17-mib", STOR, "storcli: `/cALL show all J nolog` printed more than 16 MiB",
            pad=17 << 20),
    refusal("stor-hangs", STOR, f"storcli: `/cALL show all J nolog` did not answer within "
            f"{ANSWER_S} s", env={"IOLAB_RAID_ANSWER_S": ANSWER_S}, hang=True),
    refusal("answer-limit-words", STOR, "IOLAB_RAID_ANSWER_S is not a number of seconds",
            env={"IOLAB_RAID_ANSWER_S": "soon"}),
    refusal("answer-limit-infinite", STOR, "IOLAB_RAID_ANSWER_S is not a number of seconds",
            env={"IOLAB_RAID_ANSWER_S": "inf"}),
    # MegaCli's text
    refusal("mega-default-escape", MEGA, "MegaCli: the Default Cache Policy of -L0 -a0 names no "
            "write policy", [(r"^Default Cache Policy:.*$", f"Default Cache Policy: {ESC}EVIL")]),
    refusal("mega-adapter-words", MEGA, "MegaCli: `-LDPDInfo -aAll` names no adapter",
            [(r"^Adapter #0$", "Adapter #zero")]),
    refusal("mega-vd-missing", MEGA, "megacli lists no virtual drive '-L0 -a0'; check vd",
            [(r"^Virtual Drive: 0 .*$", "Virtual Drive: zero")]),
    # arcconf's text
    refusal("arc-write-words", ARC, "arcconf: the Write-cache setting of 1 LOGICALDRIVE 0 is not "
            "one arcconf prints", [(r"^\s*Write-cache setting\s*:.*$",
                                    "   Write-cache setting : Sometimes")]),
    refusal("arc-read-missing", (*ARC[:2], 'read_ahead = "none"'),
            "arcconf does not print read_ahead of 1 LOGICALDRIVE 0",
            [(r"^\s*Read-cache setting\s*:.*\n", "")]),
    refusal("arc-ld-words", ARC, "arcconf: `GETCONFIG 1 LD` names no logical device",
            [(r"^Logical Device number 0$", f"Logical Device number 0{ESC}")]),
]
# fmt: on


@pytest.mark.fio
@pytest.mark.root
@needs_root()
@pytest.mark.parametrize(("card", "state", "env", "words"), REFUSALS)
def test_a_tool_output_iolab_cannot_read_refuses_the_run_before_anything_runs(
    lab: Lab,
    monkeypatch: pytest.MonkeyPatch,
    card: tuple[str, str, str],
    state: dict[str, Any],
    env: dict[str, str],
    words: str,
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    lab.edit(**state)
    plan = lab.plan(*card)
    vds, files, disk = lab.read()["vds"], listing(lab.workdir), device_sha256(lab.dev)
    done = lab.run("run", plan, "--yes-destroy", lab.dev)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("iolab: error: ") and done.stderr.count("\n") == 1, done.stderr
    assert words in done.stderr, done.stderr
    assert "\x1b" not in done.stderr and "EVIL" not in done.stderr
    assert lab.sets() == [], "nothing set on the card"
    assert lab.read()["vds"] == vds
    assert listing(lab.workdir) == files, "nothing written beside the plan"
    assert device_sha256(lab.dev) == disk
    assert stored_cases(lab.workdir / "iolab.db") == []
    assert list(lab.tmp.iterdir()) == [], "no scratch folder left"
    assert not any(is_alive(pid) for pid in lab.read().get("hanging", [])), "the hung tool ended"


# ---------------------------------------------------------------- iolab env: no traceback

# fmt: off
LISTED = [
    pytest.param([(SLOT_LINE, "   Slot: \u00b2")], f"problem   {NOT_A_SLOT}", id="ssa-slot"),
    pytest.param([(r"^Span Depth\s*:.*$", "Span Depth          : \u00b2")], "-L0 -a0",
                 id="mega-span-superscript"),
    pytest.param([(r"^Span Depth\s*:.*$", f"Span Depth          : {HUGE}")], "-L0 -a0",
                 id="mega-span-huge"),
    pytest.param([(r"^Size\s*: 3.491 TB$", f"Size                : {HUGE} TB")], "-L0 -a0",
                 id="mega-size-huge"),
    pytest.param([(r"Total Cache Size: 2.0 GB", f"Total Cache Size: {HUGE[:400]} GB")],
                 "slot=0 ld 1", id="ssa-cache-size-huge"),
    pytest.param([(r'"Name" : ""', '"Name" : "EVIL\\u001b[2J\\nrm -rf /"')], "/c0/v0",
                 id="stor-vd-name-escape-newline"),
    pytest.param([(r'"Controller" : 0', '"Controller" : "\u00b2"')],
                 "problem   storcli: a document's Controller field is not a number",
                 id="stor-controller-superscript"),
]
# fmt: on


@pytest.mark.fio
@pytest.mark.parametrize(("mutate", "words"), LISTED)
def test_iolab_env_lists_what_it_can_read_and_says_the_rest_in_a_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mutate: list[tuple[str, str]], words: str
) -> None:
    """Finding 9 in `iolab env`: a field that is not a number, or a number past what Python
    turns into an int or a float, is a problem line for its tool, or read as not printed; a
    name's escapes and newlines never reach the terminal as they are."""
    fake.tools_on_path(tmp_path / "bin", tmp_path / "state.json", monkeypatch, "/dev/sdb")
    state = fake.read_state(tmp_path / "state.json")
    fake.write_state(tmp_path / "state.json", {**state, "mutate": [list(m) for m in mutate]})
    done = run_iolab("env", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and done.stderr == "", done.stderr
    assert words in done.stdout, done.stdout
    assert "\x1b" not in done.stdout


HUGE_SIZE = f"{HUGE[:400]} TB"


def test_parsers_turn_unreadable_numbers_into_one_typed_line() -> None:
    """The same class of bug in every parser, in-process: int() on a tool's digits that are not
    ASCII or are thousands long, float() past its range."""
    ssa = recorded("ssacli/ssacli-P400ar.txt")
    for slot in ("zero", "\u00b2", HUGE, "-1"):
        with pytest.raises(ControllerError, match=r"^ssacli: line 3 \(Slot\)"):
            ssacli.parse(ssa.replace("   Slot: 0\n", f"   Slot: {slot}\n", 1))
    mega = recorded("megacli/mega-phys-drives-info.txt")
    for span in ("\u00b2", HUGE):
        (card,) = megacli.parse(re.sub(r"(?m)^Span Depth\s*:.*$", f"Span Depth: {span}", mega))
        assert card.drives[0].raid_level == "RAID1"
    vd = recorded("storcli/c0-v0-show-all-J-nolog.json").replace('"/c0/v0"', f'"/c0/v{HUGE}"')
    assert storcli.parse_vd(vd) == []
    assert size_bytes(HUGE_SIZE) is None and size_bytes("8 EB") is None
    assert size_bytes(f"{'9' * 18} KB") is None and size_bytes("1.5 KB") == 1536


# ---------------------------------------------------------------- restores that fail

WT = 'write_cache = "write-through"'


def restore_row(
    row_id: str,
    card: tuple[str, str],
    state: dict[str, Any],
    code: int,
    words: str,
    command: str,
    left: dict[str, Any],
) -> Any:
    return pytest.param(card, state, code, words, command, left, id=row_id)


STOR_BACK = "storcli64 /c0/v0 set wrcache=wb nolog"
TIMED_OUT = f"did not answer within {ANSWER_S} s"
# fmt: off
RESTORES = [
    # the restore takes effect, then the tool hangs: iolab cannot know, so it says "may"
    restore_row("set-hangs-after-taking-effect", STOR[:2], {"hang_sets": True}, 3,
                f"storcli: `/c0/v0 set wrcache=wb nolog` {TIMED_OUT}", STOR_BACK,
                {"write": "write-back"}),
    restore_row("restore-hangs-before-taking-effect", STOR[:2],
                {"after_set": {"stall_sets": True}}, 1,
                f"`/c0/v0 set wrcache=wb nolog` {TIMED_OUT}", STOR_BACK,
                {"write": "write-through"}),
    restore_row("tool-hangs-after-set", STOR[:2], {"after_set": {"hang": True}}, 3,
                f"`/c0/v0 set wrcache=wb nolog` {TIMED_OUT}", STOR_BACK,
                {"write": "write-through"}),
    restore_row("restore-refused", STOR[:2], {"refuse": {"write": ["write-back"]}}, 1,
                "storcli refused `/c0/v0 set wrcache=wb nolog` (exit status 1)", STOR_BACK,
                {"write": "write-through"}),
    restore_row("restore-silently-ignored", STOR[:2], {"ignore": {"write": ["write-back"]}}, 1,
                "the card did not take back write_cache = write-back on /c0/v0 (read back: "
                "write-through)", STOR_BACK, {"write": "write-through"}),
    restore_row("tool-breaks-after-set", STOR[:2], {"after_set": {"broken": 4}}, 3,
                "`/c0/v0 set wrcache=wb nolog` (exit status 4)", STOR_BACK,
                {"write": "write-through"}),
    restore_row("tool-vanishes-after-set", STOR[:2], {"after_set": {"vanish": True}}, 3,
                "storcli is not installed (not on PATH)", "=storcli64 /c0/v0 set wrcache=wb nolog",
                {"write": "write-through"}),
    restore_row("megacli-restore-refused", MEGA[:2], {"refuse": {"write": ["write-back"]}}, 1,
                "megacli refused `-LDSetProp WB -L0 -a0 -NoLog` (exit status 1)",
                "MegaCli64 -LDSetProp WB -L0 -a0 -NoLog && ", {"write": "write-through"}),
    restore_row("ssacli-restore-refused", SSA[:2], {"refuse": {"caching": [True]}}, 1,
                "ssacli refused `ctrl slot=0 ld 1 modify arrayaccelerator=enable` (exit status 1)",
                "ssacli ctrl slot=0 ld 1 modify arrayaccelerator=enable && ", {"caching": False}),
    restore_row("arcconf-restore-hangs", ARC[:2], {"after_set": {"stall_sets": True}}, 1,
                f"`SETCACHE 1 LOGICALDRIVE 0 wb noprompt` {TIMED_OUT}",
                "arcconf SETCACHE 1 LOGICALDRIVE 0 wb noprompt", {"write": "write-through"}),
]
# fmt: on


@pytest.mark.fio
@pytest.mark.root
@needs_root()
@pytest.mark.parametrize(("card", "state", "code", "words", "command", "left"), RESTORES)
def test_a_failed_restore_is_said_loudly_at_the_end_and_by_every_later_command(
    lab: Lab,
    monkeypatch: pytest.MonkeyPatch,
    card: tuple[str, str],
    state: dict[str, Any],
    code: int,
    words: str,
    command: str,
    left: dict[str, Any],
) -> None:
    """Finding 5: the card is left changed and iolab says so, with the command that puts it
    back, at the end of the run and in every later command, until it is put back."""
    monkeypatch.setenv("IOLAB_RAID_ANSWER_S", ANSWER_S)
    lab.edit(**state)
    tool, vd = card
    done = lab.run("run", lab.plan(tool, vd, WT), "--yes-destroy", lab.dev)
    assert done.returncode == code, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = said(done.stderr)
    assert len([line for line in lines if line.startswith("iolab: error: ")]) <= 1, lines
    warned = [line for line in lines if line.startswith("iolab: warning: ")]
    assert len(warned) == 1, lines
    assert f"{tool} {vd} may still have write_cache = write-through, set by run 1" in warned[0]
    assert words in warned[0], warned[0]
    shown = command[1:] if command.startswith("=") else f"{lab.bin}/{command}"  # =: not found
    assert f"restore it: {shown}" in warned[0], warned[0]
    assert all(lab.read()["vds"][vd][k] == v for k, v in left.items()), "left changed"
    (record,) = pending.pending()
    assert (record.tool, record.where, record.run) == (tool, vd, 1)
    calls = len(lab.read()["calls"])
    later = lab.run("runs")
    assert later.returncode == 0 and "Traceback" not in later.stderr, later.stderr
    warnings = [line for line in said(later.stderr) if line.startswith("iolab: warning: ")]
    assert warnings == [f"iolab: warning: {record.said()}"], later.stderr
    assert len(lab.read()["calls"]) == calls, "a reading command runs no tool"
    assert list(lab.tmp.glob("iolab-raid-tools-*")) == [], "no scratch folder left"
    assert not any(is_alive(pid) for pid in lab.read().get("hanging", [])), "the hung tool ended"


@pytest.mark.fio
@pytest.mark.root
@needs_root()
def test_iolab_run_retries_a_failed_restore_and_then_says_nothing_more(lab: Lab) -> None:
    lab.edit(refuse={"write": ["write-back"]})
    plan = lab.plan("storcli", "/c0/v0", WT)
    done = lab.run("run", plan, "--yes-destroy", lab.dev)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert lab.read()["vds"]["/c0/v0"]["write"] == "write-through"
    assert len(pending.pending()) == 1
    for command in (("runs",), ("report",), ("show", plan)):
        assert lab.run(*command).stderr.count("iolab: warning: storcli /c0/v0 may still") == 1
    lab.edit(refuse={})  # the card takes write-back again
    again = lab.run("run", plan, "--yes-destroy", lab.dev)
    assert again.returncode == 0, again.stderr
    assert "iolab: restored storcli /c0/v0 to write_cache = write-back (changed by run 1" in (
        again.stderr
    )
    assert lab.read()["vds"]["/c0/v0"] == {**FIRST, "device": lab.dev}
    assert pending.pending() == []
    quiet = lab.run("runs")
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr


@pytest.mark.fio
@pytest.mark.root
@needs_root()
def test_a_later_set_up_on_the_vd_puts_back_what_was_there_first(lab: Lab) -> None:
    """A VD an iolab that still runs left always-write-back (its restore failed, so it is
    not retried): a set-up on it reads the card as it was left, but puts back what was there
    before iolab changed it, and the record is dropped once that is done."""
    vds = lab.read()["vds"]
    vds["/c0/v0"]["write"] = "always-write-back"
    lab.edit(vds=vds)
    pending.add(pending_entry(pid=os.getpid()))  # this test's process: alive, so not retried
    done = lab.run("run", lab.plan("storcli", "/c0/v0", WT), "--yes-destroy", lab.dev)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.count("iolab: warning: storcli /c0/v0 may still have") == 1, "said first"
    assert ["storcli64", "/c0/v0", "set", "wrcache=wb", "nolog"] in [
        [Path(c[0]).name, *c[1:]] for c in lab.sets()
    ]
    assert lab.read()["vds"]["/c0/v0"] == {**FIRST, "device": lab.dev}
    assert pending.pending() == []
    assert "iolab: warning:" not in lab.run("runs").stderr


@pytest.mark.fio
@pytest.mark.root
@needs_root()
def test_ctrl_c_with_a_restore_that_hangs_says_it_on_the_way_out(
    lab: Lab, monkeypatch: pytest.MonkeyPatch
) -> None:
    lab.edit(after_set={"hang_sets": True})
    monkeypatch.setenv("IOLAB_RAID_ANSWER_S", ANSWER_S)
    plan = lab.plan("storcli", "/c0/v0", WT, runtime=30)
    child = subprocess.Popen(
        [*IOLAB, "run", plan, "--yes-destroy", lab.dev],
        cwd=lab.workdir,
        text=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and lab.read()["vds"]["/c0/v0"]["write"] != "write-through":
        time.sleep(0.1)
    time.sleep(1)  # any moment after the set: the restore runs on the way out
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=120)
    assert child.returncode == 130, err
    assert "Traceback" not in err
    warned = [line for line in said(err) if line.startswith("iolab: warning: ")]
    assert len(warned) == 1 and "restore it: " in warned[0], err
    assert len(pending.pending()) == 1


# ---------------------------------------------------------------- finding 11: the VD moves


@pytest.mark.fio
@pytest.mark.root
@needs_root()
def test_a_vd_whose_block_device_changes_after_the_set_measures_nothing(lab: Lab) -> None:
    lab.edit(after_set={"vds": {"/c0/v0": {"device": "/dev/sdz"}}})
    done = lab.run("run", lab.plan("storcli", "/c0/v0", WT), "--yes-destroy", lab.dev)
    assert done.returncode == 3 and "Traceback" not in done.stderr, done.stderr
    assert (
        f"storcli says /c0/v0 is /dev/sdz after the set, not {lab.dev} as before; nothing was "
        "measured under it"
    ) in done.stdout + done.stderr
    cases = stored_cases(lab.workdir / "iolab.db")
    assert [c[3] for c in cases] == ["failed"]
    assert lab.read()["vds"]["/c0/v0"]["write"] == "write-back", "restored"
    assert pending.pending() == []


# ---------------------------------------------------------------- finding 7: process groups


@pytest.mark.fio
@pytest.mark.root
@needs_root()
@pytest.mark.parametrize("how", [True, "setsid"], ids=["in-its-group", "in-a-session-of-its-own"])
def test_a_tools_child_holding_its_output_neither_holds_iolab_nor_outlives_it(
    lab: Lab, monkeypatch: pytest.MonkeyPatch, how: bool | str
) -> None:
    """Issue 29, finding 7; issue 40, finding 8: a child the tool started with setsid (its own
    session and group) is ended with the tool all the same."""
    monkeypatch.setenv("IOLAB_RAID_ANSWER_S", "30")  # past it, the old wait said "did not answer"
    lab.edit(child=how)
    listed = lab.run("env")
    assert listed.returncode == 0 and "did not answer" not in listed.stdout, listed.stdout
    assert "problem" not in listed.stdout, listed.stdout
    done = lab.run("run", lab.plan("storcli", "/c0/v0", WT), "--yes-destroy", lab.dev)
    assert done.returncode == 0, done.stderr
    assert lab.read()["vds"]["/c0/v0"] == {**FIRST, "device": lab.dev}
    children = lab.read()["children"]
    assert len(children) >= 6, "one per tool command"
    assert not [pid for pid in children if is_alive(pid)], "every child ended with its tool"


# ---------------------------------------------------------------- finding 12: scratch folders


@pytest.mark.fio
def test_scratch_folders_of_dead_iolabs_are_removed_and_no_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.tools_on_path(tmp_path / "bin", tmp_path / "state.json", monkeypatch, "/dev/sdb")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setenv("IOLAB_RAID_ANSWER_S", "60")
    state = fake.read_state(tmp_path / "state.json")
    fake.write_state(tmp_path / "state.json", {**state, "hang": True})
    killed = subprocess.Popen(
        [*IOLAB, "env"], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not fake.read_state(tmp_path / "state.json").get(
        "hanging"
    ):
        time.sleep(0.1)
    (left,) = tmp.glob(f"iolab-raid-tools-{killed.pid}-*")
    killed.kill()
    killed.wait()
    _kill_hung(tmp_path / "state.json")
    assert left.is_dir(), "what kill -9 leaves"
    live = tmp / f"iolab-raid-tools-{os.getpid()}-keep"  # a live process's
    users = tmp / "iolab-raid-tools-notes"  # not iolab's name
    for folder in (live, users):
        folder.mkdir()
        (folder / "f").write_text("kept")
    fake.write_state(tmp_path / "state.json", state)
    done = run_iolab("env", cwd=tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert not left.exists(), "the dead iolab's scratch folder is removed"
    assert sorted(p.name for p in tmp.iterdir()) == sorted([live.name, users.name])
