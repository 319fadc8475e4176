"""Finding RAID cards through their tools (`iolab env`), against the stateful fakes of
tests/fake_raid_cli.py: the cards they list, set commands showing in the next read, refused
and silently ignored policies, a battery that makes the policy in effect differ, tools that
fail or hang, and a host with none of the tools.

Most tests run the probe in-process with the fakes first on PATH (no fio, no root); the
`iolab env` ones start the real command line, which asks fio for its version.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import fake_raid_cli as fake
from iolab.targets import controllers
from iolab.targets.controllers import Controller, DriveCache, Health, Io, Read, Write, differs

GIB = 1024**3
# the cards' tools are stand-ins started as processes, several a test: the full lane's
pytestmark = pytest.mark.slow
FAMILY_OF = {
    "storcli64": "storcli",
    "perccli": "storcli",
    "MegaCli": "MegaCli",
    "ssacli": "ssacli",
    "arcconf": "arcconf",
}


@dataclass
class Fakes:
    """The fakes' launchers, their state file and the environment that finds them."""

    bin: Path
    state: Path
    env: dict[str, str]

    def edit(self, **changes: Any) -> None:
        state = fake.read_state(self.state)
        state.update(changes)
        fake.write_state(self.state, state)

    def run(self, tool: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.bin / tool), *args],
            env=self.env,
            cwd=cwd,
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )

    def calls(self) -> list[list[str]]:
        calls: list[list[str]] = fake.read_state(self.state)["calls"]
        return calls


@pytest.fixture
def fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fakes:
    """No fake installed yet: `install(tool)` puts one on PATH (in this process too)."""
    if not fake.REFERENCE.is_dir():
        fake.reference_absent()
    folder = tmp_path / "bin"
    folder.mkdir()
    state = tmp_path / "state.json"
    path = f"{folder}:{os.environ['PATH']}"
    monkeypatch.setenv("PATH", path)
    monkeypatch.setenv(fake.STATE_ENV, str(state))
    return Fakes(folder, state, {**os.environ, "PATH": path, fake.STATE_ENV: str(state)})


def install(fakes: Fakes, tool: str, **changes: Any) -> None:
    fake.install(fakes.bin, [tool])
    fake.write_state(fakes.state, {**fake.default_state(FAMILY_OF[tool]), **changes})


def only(found: controllers.CardsFound) -> Controller:
    assert found.problems == ()
    (card,) = found.controllers
    return card


# ------------------------------------------------------------- what each tool lists

WB, WT, AWB = Write.BACK, Write.THROUGH, Write.ALWAYS_BACK
LISTED = [
    (
        "storcli64",
        "storcli",
        "/c0",
        "PRAID EP420i",
        2 * GIB,
        "CacheVault CVPM02 optimal",
        [("/c0/v0", "/dev/sdb", (WB, Read.AHEAD, Io.DIRECT), (WB, Read.AHEAD, Io.DIRECT))],
    ),
    (
        "perccli",
        "perccli",
        "/c0",
        "PRAID EP420i",
        2 * GIB,
        "CacheVault CVPM02 optimal",
        [("/c0/v0", "/dev/sdb", (WB, Read.AHEAD, Io.DIRECT), (WB, Read.AHEAD, Io.DIRECT))],
    ),
    (
        "MegaCli",
        "MegaCli",
        "-a0",
        None,
        None,
        "BBU iBBU08 optimal",
        [("-L0 -a0", None, (WB, Read.AHEAD, Io.DIRECT), (WB, Read.AHEAD, Io.DIRECT))],
    ),
    (
        "ssacli",
        "ssacli",
        "slot=0",
        "Smart Array P440ar",
        2 * GIB,
        "Batteries optimal (OK)",
        [
            ("slot=0 ld 1", "/dev/sda", (AWB, Read.ADAPTIVE, None), (AWB, Read.ADAPTIVE, None)),
            ("slot=0 ld 2", "/dev/sdb", (AWB, Read.ADAPTIVE, None), (AWB, Read.ADAPTIVE, None)),
        ],
    ),
    (
        "arcconf",
        "arcconf",
        "1",
        None,
        None,
        "not reported",
        [("1 LOGICALDRIVE 0", None, (AWB, Read.AHEAD, None), (AWB, Read.AHEAD, None))],
    ),
]


@pytest.mark.parametrize(
    ("tool", "label", "address", "model", "cache", "battery", "drives"), LISTED
)
def test_the_probe_lists_a_tools_card(
    fakes: Fakes,
    tool: str,
    label: str,
    address: str,
    model: str | None,
    cache: int | None,
    battery: str,
    drives: list[tuple[str, str | None, Any, Any]],
) -> None:
    install(fakes, tool)
    card = only(controllers.probe())
    assert (card.tool, card.address, card.model, card.cache_bytes) == (label, address, model, cache)
    assert card.battery.summary() == battery
    listed = [
        (
            vd.id,
            vd.block_device,
            vd.configured and vd.configured.parts(),
            vd.effective and vd.effective.parts(),
        )
        for vd in card.drives
    ]
    assert listed == drives
    assert all(differs(vd, card) is None for vd in card.drives)


def test_every_installed_tool_is_asked(fakes: Fakes) -> None:
    tools = ["storcli64", "MegaCli", "ssacli", "arcconf"]
    fake.install(fakes.bin, tools)
    fake.write_state(fakes.state, fake.default_state(*tools))
    found = controllers.probe()
    assert found.problems == ()
    assert [(c.tool, c.address) for c in found.controllers] == [
        ("storcli", "/c0"),
        ("MegaCli", "-a0"),
        ("ssacli", "slot=0"),
        ("arcconf", "1"),
    ]


def test_storcli_is_asked_for_each_vd_with_nolog(fakes: Fakes) -> None:
    install(fakes, "storcli64")
    only(controllers.probe())
    assert fakes.calls() == [
        ["storcli64", "/cALL", "show", "all", "J", "nolog"],
        ["storcli64", "/c0/v0", "show", "all", "J", "nolog"],
    ]


# -------------------------------------------------- a set command shows in the next read

# (tool, its set command, what the reply holds, (VD, part, value as the next read shows it))
SETS = [
    (
        "storcli64",
        ["/c0/v0", "set", "wrcache=wt", "J"],
        '"Status" : "Success"',
        ("/c0/v0", "write", WT),
    ),
    (
        "storcli64",
        ["/c0/v0", "set", "wrcache=awb", "J"],
        '"Status" : "Success"',
        ("/c0/v0", "write", AWB),
    ),
    (
        "storcli64",
        ["/c0/v0", "set", "rdcache=nora", "J"],
        '"Property" : "rdcache"',
        ("/c0/v0", "read", Read.NONE),
    ),
    (
        "storcli64",
        ["/c0/v0", "set", "iopolicy=cached", "J"],
        '"Value" : "CACHED"',
        ("/c0/v0", "io", Io.CACHED),
    ),
    (
        "storcli64",
        ["/c0/v0", "set", "pdcache=off", "J"],
        '"Status" : "Success"',
        ("/c0/v0", "drive_cache", DriveCache.OFF),
    ),
    (
        "perccli",
        ["/c0/v0", "set", "wrcache=wt", "J"],
        '"Status" : "Success"',
        ("/c0/v0", "write", WT),
    ),
    (
        "MegaCli",
        ["-LDSetProp", "WT", "-L0", "-a0", "-NoLog"],
        "Set Write Policy to WriteThrough on Adapter 0, VD 0 (target id: 0) success",
        ("-L0 -a0", "write", WT),
    ),
    (
        "MegaCli",
        ["-LDSetProp", "CachedBadBBU", "-Lall", "-aAll", "-NoLog"],
        "Set Write Cache OK if bad BBU on Adapter 0, VD 0 (target id: 0) success",
        ("-L0 -a0", "write", AWB),
    ),
    (
        "MegaCli",
        ["-LDSetProp", "NORA", "-L0", "-a0", "-NoLog"],
        "success",
        ("-L0 -a0", "read", Read.NONE),
    ),
    (
        "MegaCli",
        ["-LDSetProp", "ADRA", "-L0", "-a0", "-NoLog"],
        "success",
        ("-L0 -a0", "read", Read.ADAPTIVE),
    ),
    (
        "MegaCli",
        ["-LDSetProp", "Cached", "-L0", "-a0", "-NoLog"],
        "success",
        ("-L0 -a0", "io", Io.CACHED),
    ),
    (
        "MegaCli",
        ["-LDSetProp", "-DisDskCache", "-L0", "-a0", "-NoLog"],
        "success",
        ("-L0 -a0", "drive_cache", DriveCache.OFF),
    ),
    (
        "ssacli",
        ["ctrl", "slot=0", "ld", "1", "modify", "arrayaccelerator=disable"],
        "",
        ("slot=0 ld 1", "write", WT),
    ),
    (
        "ssacli",
        ["ctrl", "slot=0", "logicaldrive", "2", "modify", "arrayaccelerator=disable"],
        "",
        ("slot=0 ld 2", "read", Read.NONE),
    ),
    ("ssacli", ["ctrl", "slot=0", "modify", "cacheratio=100/0"], "", ("slot=0 ld 1", "write", WT)),
    (
        "ssacli",
        ["ctrl", "slot=0", "modify", "nobatterywritecache=disable"],
        "",
        ("slot=0 ld 2", "write", WB),
    ),
    (
        "ssacli",
        ["ctrl", "slot=0", "modify", "cacheratio=0/100"],
        "",
        ("slot=0 ld 1", "read", Read.NONE),
    ),
    (
        "arcconf",
        ["SETCACHE", "1", "LOGICALDRIVE", "0", "wt", "noprompt"],
        "Command completed successfully.",
        ("1 LOGICALDRIVE 0", "write", WT),
    ),
    (
        "arcconf",
        ["SETCACHE", "1", "LOGICALDRIVE", "0", "wbb", "noprompt"],
        "Command completed successfully.",
        ("1 LOGICALDRIVE 0", "write", WB),
    ),
    (
        "arcconf",
        ["SETCACHE", "1", "LOGICALDRIVE", "0", "roff", "noprompt"],
        "Command completed successfully.",
        ("1 LOGICALDRIVE 0", "read", Read.NONE),
    ),
]


def _part(card: Controller, vd_id: str, part: str) -> tuple[object, object]:
    """(as configured, in effect) of one part of a VD's policy, or its drive cache twice."""
    vd = next(vd for vd in card.drives if vd.id == vd_id)
    if part == "drive_cache":
        return vd.drive_cache, vd.drive_cache
    assert vd.configured is not None
    assert vd.effective is not None
    return getattr(vd.configured, part), getattr(vd.effective, part)


@pytest.mark.parametrize(("tool", "args", "reply", "shows"), SETS)
def test_a_set_command_shows_in_the_next_read(
    fakes: Fakes,
    tmp_path: Path,
    tool: str,
    args: list[str],
    reply: str,
    shows: tuple[str, str, object],
) -> None:
    install(fakes, tool)
    vd, part, value = shows
    assert _part(only(controllers.probe()), vd, part) != (value, value)
    done = fakes.run(tool, *args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert reply in done.stdout
    assert _part(only(controllers.probe()), vd, part) == (value, value)


def test_ssacli_drive_write_cache_is_the_cards(fakes: Fakes, tmp_path: Path) -> None:
    install(fakes, "ssacli")
    assert only(controllers.probe()).drive_cache is DriveCache.ON
    done = fakes.run(
        "ssacli", "ctrl", "slot=0", "modify", "drivewritecache=disable", "forced", cwd=tmp_path
    )
    assert done.returncode == 0
    assert only(controllers.probe()).drive_cache is DriveCache.OFF


# ----------------------------------------------------- refused and silently ignored

# (tool, state field, refused value, its set command, VD, part, the value kept)
REFUSALS = [
    (
        "storcli64",
        "write",
        "write-through",
        ["/c0/v0", "set", "wrcache=wt", "J"],
        "/c0/v0",
        "write",
        WB,
    ),
    (
        "perccli",
        "io",
        "cached",
        ["/c0/v0", "set", "iopolicy=cached", "J"],
        "/c0/v0",
        "io",
        Io.DIRECT,
    ),
    (
        "MegaCli",
        "write",
        "write-through",
        ["-LDSetProp", "WT", "-L0", "-a0", "-NoLog"],
        "-L0 -a0",
        "write",
        WB,
    ),
    (
        "MegaCli",
        "read",
        "none",
        ["-LDSetProp", "NORA", "-L0", "-a0", "-NoLog"],
        "-L0 -a0",
        "read",
        Read.AHEAD,
    ),
    (
        "ssacli",
        "caching",
        False,
        ["ctrl", "slot=0", "ld", "1", "modify", "aa=disable"],
        "slot=0 ld 1",
        "write",
        AWB,
    ),
    (
        "ssacli",
        "cache_ratio",
        [100, 0],
        ["ctrl", "slot=0", "modify", "cacheratio=100/0"],
        "slot=0 ld 2",
        "write",
        AWB,
    ),
    (
        "arcconf",
        "write",
        "write-through",
        ["SETCACHE", "1", "LOGICALDRIVE", "0", "wt"],
        "1 LOGICALDRIVE 0",
        "write",
        AWB,
    ),
    (
        "arcconf",
        "read",
        "none",
        ["SETCACHE", "1", "LOGICALDRIVE", "0", "roff"],
        "1 LOGICALDRIVE 0",
        "read",
        Read.AHEAD,
    ),
]


@pytest.mark.parametrize("how", ["refuse", "ignore"])
@pytest.mark.parametrize(("tool", "field", "value", "args", "vd", "part", "kept"), REFUSALS)
def test_a_refused_or_ignored_policy_is_not_taken(
    fakes: Fakes,
    tmp_path: Path,
    how: str,
    tool: str,
    field: str,
    value: object,
    args: list[str],
    vd: str,
    part: str,
    kept: object,
) -> None:
    install(fakes, tool, **{how: {field: [value]}})
    done = fakes.run(tool, *args, cwd=tmp_path)
    assert (done.returncode != 0) == (how == "refuse"), done.stdout
    assert _part(only(controllers.probe()), vd, part) == (kept, kept)


# ------------------------------------------------- the policy in effect differs

LEARNING = [
    (
        "storcli64",
        {},
        "/c0/v0",
        "configured write-back, in effect write-through: the battery is learning",
    ),
    (
        "MegaCli",
        {},
        "-L0 -a0",
        "configured write-back, in effect write-through: the battery is learning",
    ),
    (
        "arcconf",
        {"vds": {"1 LOGICALDRIVE 0": {"write": "write-back", "read": "read-ahead"}}},
        "1 LOGICALDRIVE 0",
        "configured write-back, in effect write-through",
    ),
    (
        "ssacli",
        {},
        "slot=0 ld 1",
        "configured always-write-back, in effect write-through; "
        "configured adaptive, in effect no read-ahead: the card's cache is disabled",
    ),
]


@pytest.mark.parametrize(("tool", "changes", "vd_id", "said"), LEARNING)
def test_a_learning_battery_shows_as_a_difference(
    fakes: Fakes, tool: str, changes: dict[str, Any], vd_id: str, said: str
) -> None:
    install(fakes, tool, battery="learning", **changes)
    card = only(controllers.probe())
    vd = next(vd for vd in card.drives if vd.id == vd_id)
    assert differs(vd, card) == said
    drives = card.to_json()["drives"]
    assert isinstance(drives, list)
    drive = drives[[d.id for d in card.drives].index(vd_id)]
    assert isinstance(drive, dict) and drive["differs"] == said


@pytest.mark.parametrize(
    ("battery", "health"), [("failed", Health.FAILED), ("learning", Health.LEARNING)]
)
def test_megacli_battery_states(fakes: Fakes, battery: str, health: Health) -> None:
    install(fakes, "MegaCli", battery=battery)
    assert only(controllers.probe()).battery.health is health


def test_storcli_without_a_battery(fakes: Fakes) -> None:
    install(fakes, "storcli64", battery="absent")
    card = only(controllers.probe())
    assert card.battery.present is False
    assert differs(card.drives[0], card) == (
        "configured write-back, in effect write-through: the card has no battery"
    )


# ------------------------------------------------------------ tools that fail


def _script(folder: Path, name: str, body: str) -> None:
    script = folder / name
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)


def test_no_controller_is_nothing_and_no_problem(fakes: Fakes) -> None:
    install(fakes, "perccli", no_controller=True)
    assert controllers.probe() == controllers.CardsFound()


def test_nothing_installed_is_nothing_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert controllers.probe() == controllers.CardsFound((), ())


# (the broken tool's script, the one problem it is)
BROKEN = [
    ("echo 'no JSON here'", "storcli: `/cALL show all J` printed no complete JSON document"),
    ("printf '\\377\\376\\000garbage'", "storcli: `/cALL show all J` printed no complete JSON"),
    ("exit 3", "storcli: `/cALL show all J nolog` exited with status 3"),
    (
        'echo \'{"Controllers": [{"Command Status": {"Status": "Failure"}}]}\'; exit 1',
        "storcli: `/cALL show all J` reports a Status other than Success",
    ),
    ("sleep 20", "storcli: `/cALL show all J nolog` did not answer within 1 s"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("body", "problem"), BROKEN)
def test_a_broken_tool_is_one_problem_beside_the_other_cards(
    fakes: Fakes, body: str, problem: str
) -> None:
    install(fakes, "ssacli")
    _script(fakes.bin, "storcli64", body)
    found = controllers.probe(timeout_s=1)
    assert [card.tool for card in found.controllers] == ["ssacli"]
    (said,) = found.problems
    assert said.startswith(problem), said
    assert "\n" not in said


def test_tools_leave_no_log_where_iolab_runs(
    fakes: Fakes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """arcconf writes UcliEvt.log into its working directory (the fake does too): the probe
    runs the tools in a scratch directory that it removes."""
    install(fakes, "arcconf")
    here = tmp_path / "here"
    here.mkdir()
    fakes.run("arcconf", "GETCONFIG", "1", "LD", cwd=here)
    assert (here / "UcliEvt.log").exists()  # the habit the probe guards against
    (here / "UcliEvt.log").unlink()
    monkeypatch.chdir(here)
    only(controllers.probe())
    assert list(here.iterdir()) == []
    assert fakes.calls()[-1] == ["arcconf", "GETCONFIG", "1", "LD"]


# ---------------------------------------------------------------- iolab env


def _iolab_env(fakes: Fakes, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "iolab", "env", str(cwd), *args],
        env=fakes.env,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


ENV_LINES = [
    (
        "storcli64",
        "controller storcli /c0: PRAID EP420i, firmware 4.680.00-8417, serial "
        "0000000061913681, cache 2.0 GiB, battery CacheVault CVPM02 optimal",
        "vd        /c0/v0: RAID6, 1.7 TiB, /dev/sdb; configured write-back, read-ahead, direct I/O",
    ),
    (
        "MegaCli",
        "controller MegaCli -a0: model not reported, cache not reported, battery BBU "
        "iBBU08 optimal",
        "vd        -L0 -a0: RAID1, 3.5 TiB, name Virtual Disk 0; configured write-back",
    ),
    (
        "ssacli",
        "controller ssacli slot=0: Smart Array P440ar, firmware 3.56-0, serial REDACTED, "
        "cache 2.0 GiB, battery Batteries optimal (OK), cache ratio 10% read / 90% write, drive "
        "write cache on",
        "vd        slot=0 ld 2: RAID1, 931.5 GiB, /dev/sdb",
    ),
    (
        "arcconf",
        "controller arcconf 1: model not reported, cache not reported, battery not reported",
        "vd        1 LOGICALDRIVE 0: RAID10, 894.0 GiB, name LogicalDrv 0; configured "
        "always-write-back, read-ahead",
    ),
]


@pytest.mark.fio
@pytest.mark.parametrize(("tool", "card_line", "vd_line"), ENV_LINES)
def test_iolab_env_lists_the_card(
    fakes: Fakes, workdir: Path, tool: str, card_line: str, vd_line: str
) -> None:
    install(fakes, tool)
    done = _iolab_env(fakes, workdir)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stdout.splitlines()
    assert card_line in lines
    assert any(line.startswith(vd_line) for line in lines), done.stdout
    assert not any(line.startswith(("warning", "problem")) for line in lines)
    assert list(workdir.iterdir()) == []


@pytest.mark.fio
def test_iolab_env_json_and_the_warning_for_a_learning_battery(fakes: Fakes, workdir: Path) -> None:
    install(fakes, "storcli64", battery="learning")
    facts = json.loads(_iolab_env(fakes, workdir, "--json").stdout)
    (card,) = facts["controllers"]
    assert (card["model"], card["cache_bytes"]) == ("PRAID EP420i", 2 * GIB)
    assert card["battery"]["health"] == "learning"
    (vd,) = card["drives"]
    assert vd["configured"]["write"] == "write-back"
    assert vd["effective"]["write"] == "write-through"
    assert vd["effective"]["words"] == "RWTD"
    said = "configured write-back, in effect write-through: the battery is learning"
    assert vd["differs"] == said
    assert facts["controller_problems"] == []
    text = _iolab_env(fakes, workdir).stdout
    assert f"warning   /c0/v0: {said}" in text.splitlines()


@pytest.mark.fio
def test_iolab_env_says_which_tool_failed(fakes: Fakes, workdir: Path) -> None:
    install(fakes, "storcli64")
    _script(fakes.bin, "ssacli", "echo 'Smart Array nonsense'")
    done = _iolab_env(fakes, workdir)
    assert done.returncode == 0
    problems = [line for line in done.stdout.splitlines() if line.startswith("problem")]
    assert problems == [
        "problem   ssacli: `ctrl all show config detail` names no controller "
        "(no '... in Slot N' line)"
    ]
    assert "controller storcli /c0: PRAID EP420i" in done.stdout


@pytest.mark.fio
def test_iolab_env_without_any_tool_lists_no_card(fakes: Fakes, workdir: Path) -> None:
    """Only fio on PATH (no RAID tool, not even a real one the host may have)."""
    only_fio = fakes.bin.parent / "only-fio"
    only_fio.mkdir()
    fio = shutil.which("fio")
    assert fio is not None
    (only_fio / "fio").symlink_to(fio)
    fakes.env["PATH"] = str(only_fio)
    facts = json.loads(_iolab_env(fakes, workdir, "--json").stdout)
    assert (facts["controllers"], facts["controller_problems"]) == ([], [])
    done = _iolab_env(fakes, workdir)
    assert done.returncode == 0
    assert done.stderr == ""
    assert not [
        line
        for line in done.stdout.splitlines()
        if line.startswith(("controller", "vd ", "warning", "problem"))
    ]
