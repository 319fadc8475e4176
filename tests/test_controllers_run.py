"""A RAID card's cache policy as a set-up axis, end to end: the stateful fakes of
tests/fake_raid_cli.py on PATH stand in for the card's tool, a loop device for the VD, and
real fio runs the cases. Each test reads the fake's state to see what the card was left with.

The fakes' replies to set commands are partly their own words (no recorded output holds a
real card's reply to one; see fake_raid_cli's docstring): the tests assert only on what iolab
does with them (exit status, read-back), never on those words.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import conftest
import fake_raid_cli as fake
import fake_smartctl
from conftest import IOLAB, ctrl_c_when, needs_root, results_of, run_iolab, stored_cases
from loopdevs import LoopDevs, device_sha256, loops_fixture

_ = loops_fixture  # the `loops` fixture

PLAN = """
[[setup]]
name = "vd"
devices = ["{dev}"]
controller = {{ tool = "{tool}", vd = "{vd}", {policy} }}

[[workload]]
name = "4k randwrite"
rw = "randwrite"
bs = "4k"
size = "8m"
runtime = {runtime}
time_based = 1
"""
AXIS = 'write_cache = ["write-back", "write-through"]'


@dataclass
class Card:
    """The fake's state file and the loop device standing in for its VD."""

    state: Path
    dev: str
    workdir: Path

    def edit(self, **changes: Any) -> None:
        state = fake.read_state(self.state)
        state.update(changes)
        fake.write_state(self.state, state)

    def vds(self) -> dict[str, Any]:
        vds: dict[str, Any] = fake.read_state(self.state)["vds"]
        return vds

    def sets(self) -> list[list[str]]:
        calls = fake.read_state(self.state)["calls"]
        return [
            c
            for c in calls
            if any(w.lower() in ("set", "-ldsetprop", "modify", "setcache") for w in c)
        ]

    @property
    def first(self) -> dict[str, Any]:
        """/c0/v0 as the card had it before any test changed it."""
        return {**FIRST, "device": self.dev}

    def plan(self, tool: str, vd: str, policy: str = AXIS, runtime: int = 1) -> str:
        text = PLAN.format(dev=self.dev, tool=tool, vd=vd, policy=policy, runtime=runtime)
        (self.workdir / "plan.toml").write_text(text)
        return "plan.toml"


@pytest.fixture
def card(workdir: Path, loops: LoopDevs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Card:
    if not fake.REFERENCE.is_dir():
        fake.reference_absent()
    folder = fake.install(tmp_path / "bin")
    state = tmp_path / "state.json"
    dev = loops.make(32)
    fake.write_state(state, fake.default_state("storcli", "MegaCli", "ssacli", "arcconf"))
    monkeypatch.setenv("PATH", f"{folder}:{os.environ['PATH']}")
    monkeypatch.setenv(fake.STATE_ENV, str(state))
    found = Card(state, dev, workdir)
    vds = found.vds()
    for vd in ("/c0/v0", "slot=0 ld 1"):  # the VDs whose tools name their block device
        vds[vd]["device"] = dev
    found.edit(vds=vds)
    return found


def environments(db: Path) -> dict[str, dict[str, Any]]:
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT name, environment FROM setups").fetchall()
    return {name: json.loads(env) for name, env in rows}


FIRST = {
    "write": "write-back",
    "read": "read-ahead",
    "io": "direct",
    "drive_cache": "drive default",
    "device": "/dev/sdb",
}


@pytest.mark.fio
@pytest.mark.root
@needs_root()
def test_a_write_cache_axis_runs_both_set_ups_records_and_restores(card: Card) -> None:
    plan = card.plan("storcli", "/c0/v0")
    shown = run_iolab("show", plan, cwd=card.workdir, check=True)
    assert "storcli64 /c0/v0 set wrcache=wt nolog" in shown.stdout
    assert card.sets() == [], "iolab show runs nothing"
    done = run_iolab("run", plan, "--yes-destroy", card.dev, cwd=card.workdir, check=True)
    assert [c[0] for c in stored_cases(card.workdir / "iolab.db")] == [
        "vd write-back",
        "vd write-through",
    ]
    assert {c[3] for c in stored_cases(card.workdir / "iolab.db")} == {"ok"}
    envs = environments(card.workdir / "iolab.db")
    for name, write in (("vd write-back", "write-back"), ("vd write-through", "write-through")):
        recorded = envs[name]["controller"]
        assert recorded["vd"]["effective"]["write"] == write
        assert recorded["vd"]["configured"]["write"] == write
        assert recorded["model"] == "PRAID EP420i" and recorded["cache_bytes"] == 2 * 1024**3
        assert recorded["before"] == {"write_cache": "write-back"}
    assert card.vds()["/c0/v0"] == card.first, "the card is back to its first policy"
    assert ["storcli64", "/c0/v0", "set", "wrcache=wt", "nolog"] in card.sets()
    assert "cache-policy" not in done.stdout
    report = run_iolab("report", "--format", "markdown", cwd=card.workdir, check=True).stdout
    assert "| vd write-back | vd write-through |" in report.replace("  ", " ")
    assert "cache policy in effect write-through" in report
    assert "cache policy in effect write-back" in report


@pytest.mark.fio
@pytest.mark.root
@needs_root()
def test_ctrl_c_restores_the_cards_policy(card: Card) -> None:
    plan = card.plan("storcli", "/c0/v0", 'write_cache = "write-through"', runtime=30)
    args = ["run", plan, "--yes-destroy", card.dev]
    code, err = ctrl_c_when(
        args, card.workdir, lambda: card.vds()["/c0/v0"]["write"] == "write-through"
    )
    assert code == 130, err
    assert "Traceback" not in err
    assert card.vds()["/c0/v0"] == card.first


@pytest.mark.fio
@pytest.mark.root
@needs_root()
def test_after_kill_9_the_next_run_restores_it(card: Card) -> None:
    plan = card.plan("storcli", "/c0/v0", 'write_cache = "write-through"', runtime=4)
    child = subprocess.Popen(
        [*IOLAB, "run", plan, "--yes-destroy", card.dev],
        cwd=card.workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and card.vds()["/c0/v0"]["write"] != "write-through":
        time.sleep(0.1)
    time.sleep(0.5)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    time.sleep(5)  # its fio finishes its 4 s on its own
    assert card.vds()["/c0/v0"]["write"] == "write-through", "left set by the killed run"
    runs = run_iolab("runs", cwd=card.workdir)
    assert runs.returncode == 0, runs.stderr
    assert "restored" not in runs.stderr and card.sets()[-1][-2] == "wrcache=wt", "reads only"
    resumed = run_iolab("run", "--resume", "1", "--yes-destroy", card.dev, cwd=card.workdir)
    assert resumed.returncode == 0, resumed.stderr
    assert "restored the cache policy of /c0/v0" in resumed.stderr
    assert card.vds()["/c0/v0"] == card.first
    again = run_iolab("runs", cwd=card.workdir)
    assert "restored" not in again.stderr, "restored once"


@pytest.mark.fio
@pytest.mark.root
@needs_root()
@pytest.mark.parametrize(
    ("state", "said"),
    [
        ({"refuse": {"write": ["write-through"]}}, "storcli refused `/c0/v0 set wrcache=wt nolog`"),
        (
            {"ignore": {"write": ["write-through"]}},
            "the card did not take write_cache = write-through on /c0/v0 (read back: write-back)",
        ),
    ],
    ids=["refused", "silently-ignored"],
)
def test_a_policy_the_card_does_not_take_measures_nothing(
    card: Card, state: dict[str, Any], said: str
) -> None:
    card.edit(**state)
    plan = card.plan("storcli", "/c0/v0")
    done = run_iolab("run", plan, "--yes-destroy", card.dev, cwd=card.workdir)
    assert done.returncode == 3 and "Traceback" not in done.stderr, "3: some cases failed"
    assert len(conftest.said(done.stderr)) == 1, done.stderr
    assert said in done.stderr, "the case's failure shows in the progress"
    cases = stored_cases(card.workdir / "iolab.db")
    assert [(c[0], c[3]) for c in cases] == [
        ("vd write-back", "ok"),
        ("vd write-through", "failed"),
    ]
    with sqlite3.connect(card.workdir / "iolab.db") as con:
        raw = con.execute("SELECT raw_json FROM cases WHERE setup = 'vd write-through'").fetchone()
    assert raw == (None,), "nothing measured under the wrong policy"
    assert card.vds()["/c0/v0"] == card.first


@pytest.mark.fio
@pytest.mark.root
@needs_root()
def test_a_learning_battery_gets_the_cache_policy_warning(card: Card) -> None:
    card.edit(battery="learning")
    plan = card.plan("storcli", "/c0/v0", 'write_cache = "write-back"')
    done = run_iolab("run", plan, "--yes-destroy", card.dev, cwd=card.workdir, check=True)
    assert "configured write-back, in effect write-through: the battery is learning" in done.stdout
    report = run_iolab("report", "--format", "markdown", cwd=card.workdir, check=True).stdout
    assert "in effect write-through: the battery is learning" in report
    assert re.search(r"⚑ [^|]*cache-policy", report), "on the cell itself"
    table = run_iolab("report", "--format", "csv", cwd=card.workdir, check=True).stdout
    assert "cache-policy" in table.splitlines()[1].split(",")[-1], table
    page = card.workdir / "r.html"
    run_iolab("report", "--format", "html", "-o", str(page), cwd=card.workdir, check=True)
    assert 'class="num warned" title="' in page.read_text()
    assert "in effect write-through: the battery is learning" in page.read_text()
    env = environments(card.workdir / "iolab.db")["vd"]["controller"]
    assert env["vd"]["effective"]["write"] == "write-through"
    assert card.vds()["/c0/v0"] == card.first


STUDY_E = (
    PLAN.replace("[[setup]]", '[report]\nbaseline = "vd write-through"\n\n[[setup]]')
    + """
[[workload]]
name = "4k randread"
rw = "randread"
bs = "4k"
size = "8m"
runtime = 1
time_based = 1
"""
)


@pytest.mark.fio
@pytest.mark.root
@needs_root()
def test_study_e_ratio_table_from_one_plan(card: Card) -> None:
    """Study E's table: write-back as a change against write-through, per workload, from one
    plan whose axis is the card's write cache."""
    text = STUDY_E.format(dev=card.dev, tool="storcli", vd="/c0/v0", policy=AXIS, runtime=1)
    (card.workdir / "plan.toml").write_text(text)
    run_iolab("run", "plan.toml", "--yes-destroy", card.dev, cwd=card.workdir, check=True)
    out = card.workdir / "e.md"
    run_iolab("report", "--format", "markdown", "-o", str(out), cwd=card.workdir, check=True)
    report = out.read_text()
    assert "change vs vd write-through" in report
    rows = [
        line
        for line in results_of(report).splitlines()
        if line.startswith(("| 4k randwrite", "| 4k randread"))
    ]
    assert len(rows) >= 2 and all(re.search(r"\| [+-]\d+\.\d%", row) for row in rows[:2]), rows
    assert re.search(r"!\[[^]]*Change vs vd write-through[^]]*\]\([^)]*ratio[^)]*\.png\)", report)
    assert card.vds()["/c0/v0"] == card.first


@pytest.mark.fio
@pytest.mark.root
@needs_root()
def test_a_vd_that_is_another_device_is_refused(card: Card) -> None:
    """storcli names the VD's block device: when it is not the set-up's, the run is refused
    before anything runs (a policy on one disk, fio on another): nothing set, nothing measured."""
    vds = card.vds()
    vds["/c0/v0"]["device"] = "/dev/sdb"
    card.edit(vds=vds)
    plan = card.plan("storcli", "/c0/v0")
    done = run_iolab("run", plan, "--yes-destroy", card.dev, cwd=card.workdir)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("iolab: error: ") and done.stderr.count("\n") == 1, done.stderr
    said = f"storcli says /c0/v0 is /dev/sdb, but the set-up measures {card.dev}"
    assert said in done.stderr, done.stderr
    assert card.sets() == [], "nothing set"
    assert stored_cases(card.workdir / "iolab.db") == []
    assert card.vds()["/c0/v0"] == {**FIRST, "device": "/dev/sdb"}


OTHERS = [
    (
        "MegaCli",
        "megacli",
        "-L0 -a0",
        'write_cache = "write-through", read_ahead = "adaptive"',
        [
            ["MegaCli64", "-LDSetProp", "WT", "-L0", "-a0", "-NoLog"],
            ["MegaCli64", "-LDSetProp", "ADRA", "-L0", "-a0", "-NoLog"],
        ],
    ),
    (
        "ssacli",
        "ssacli",
        "slot=0 ld 1",
        'write_cache = "write-through"',
        [["ssacli", "ctrl", "slot=0", "ld", "1", "modify", "arrayaccelerator=disable"]],
    ),
    (
        "arcconf",
        "arcconf",
        "1 LOGICALDRIVE 0",
        'write_cache = "write-through", read_ahead = "none"',
        [
            ["arcconf", "SETCACHE", "1", "LOGICALDRIVE", "0", "wt", "noprompt"],
            ["arcconf", "SETCACHE", "1", "LOGICALDRIVE", "0", "roff", "noprompt"],
        ],
    ),
]


@pytest.mark.fio
@pytest.mark.root
@needs_root()
@pytest.mark.parametrize(("launcher", "tool", "vd", "policy", "sets"), OTHERS)
def test_the_set_and_restore_cycle_with_each_tool(
    card: Card, launcher: str, tool: str, vd: str, policy: str, sets: list[list[str]]
) -> None:
    for other in ("storcli64", "storcli", "perccli", "perccli64", "MegaCli64", "MegaCli"):
        if other != launcher:
            (Path(os.environ["PATH"].split(":")[0]) / other).unlink()
    first = card.vds()[vd]
    plan = card.plan(tool, vd, policy)
    run_iolab("run", plan, "--yes-destroy", card.dev, cwd=card.workdir, check=True)
    launched = [[launcher, *c[1:]] for c in sets]
    assert card.sets()[: len(sets)] == launched, "set as asked"
    assert len(card.sets()) > len(sets), "then restored"
    assert card.vds()[vd] == first, "back to what was there"
    recorded = environments(card.workdir / "iolab.db")["vd"]["controller"]
    assert recorded["vd"]["configured"]["write"] == "write-through"
    assert recorded["vd"]["id"] == vd


@pytest.mark.fio
@pytest.mark.root
@needs_root()
def test_smart_array_cache_ratio_as_an_axis(card: Card) -> None:
    """Smart Array's read/write split of its cache: each value set on the controller, read
    back from its "Cache Ratio", recorded, and the first split restored."""
    for other in ("storcli64", "storcli", "perccli", "perccli64", "MegaCli64", "MegaCli"):
        (Path(os.environ["PATH"].split(":")[0]) / other).unlink()
    plan = card.plan("ssacli", "slot=0 ld 1", 'cache_ratio = ["25/75", "75/25"]')
    shown = run_iolab("show", plan, cwd=card.workdir, check=True).stdout
    assert "ssacli ctrl slot=0 modify cacheratio=25/75" in shown
    run_iolab("run", plan, "--yes-destroy", card.dev, cwd=card.workdir, check=True)
    cases = stored_cases(card.workdir / "iolab.db")
    assert [(c[0], c[3]) for c in cases] == [("vd cache 25/75", "ok"), ("vd cache 75/25", "ok")]
    envs = environments(card.workdir / "iolab.db")
    for name, read in (("vd cache 25/75", 25), ("vd cache 75/25", 75)):
        recorded = envs[name]["controller"]
        assert recorded["cache_ratio"] == {"read": read, "write": 100 - read}
        assert recorded["before"] == {"cache_ratio": "10/90"}
    calls = card.sets()
    assert ["ssacli", "ctrl", "slot=0", "modify", "cacheratio=25/75"] in calls
    assert calls[-1] == ["ssacli", "ctrl", "slot=0", "modify", "cacheratio=10/90"], "restored"
    assert fake.read_state(card.state)["card"]["cache_ratio"] == [10, 90]


# ------------------------------------------------------------- bad controller tables

BAD_TABLE = """
[[setup]]
name = "vd"
devices = ["/dev/sdz"]
{line}

[[workload]]
rw = "randread"
"""
BAD = [
    (
        'controller = { tool = "ssacli", vd = "slot=0 ld 1", cache_ratio = "50/60" }',
        "cache_ratio = '50/60' is not allowed; choose one of READ/WRITE percentages",
    ),
    ('controller = { tool = "ssacli", vd = "slot=0 ld 1", cache_ratio = 25 }', "cache_ratio"),
    ('controller = "storcli"', "controller is a table"),
    ('controller = { vd = "/c0/v0" }', "tool = None is not one of"),
    ('controller = { tool = "storcli64", vd = "/c0/v0" }', "tool = 'storcli64' is not one of"),
    ('controller = { tool = "StorCLI", vd = "/c0/v0" }', "is not one of"),
    ('controller = { tool = "hpacucli", vd = "slot=0 ld 1" }', "is not one of"),
    ('controller = { tool = "storcli" }', "vd = None is not a storcli virtual drive"),
    ('controller = { tool = "storcli", vd = 0 }', "is not a storcli virtual drive"),
    ('controller = { tool = "storcli", vd = "/c0/v0; reboot" }', "'/c0/v0'"),
    ('controller = { tool = "storcli", vd = "/c0/v0 /c1/v1" }', "not a storcli virtual drive"),
    ('controller = { tool = "storcli", vd = "/call/vall" }', "not a storcli virtual drive"),
    ('controller = { tool = "storcli", vd = "-L0 -a0" }', "not a storcli virtual drive"),
    ('controller = { tool = "storcli", vd = "$(id)" }', "not a storcli virtual drive"),
    ('controller = { tool = "storcli", vd = "/c0/v0\\n" }', "control character"),
    ('controller = { tool = "perccli", vd = "c0/v0" }', "not a perccli virtual drive"),
    ('controller = { tool = "megacli", vd = "/c0/v0" }', "'-L0 -a0'"),
    ('controller = { tool = "megacli", vd = "-L0 -aALL" }', "not a megacli virtual drive"),
    ('controller = { tool = "megacli", vd = "-L0  -a0" }', "not a megacli virtual drive"),
    ('controller = { tool = "ssacli", vd = "slot=0 ld 1 modify" }', "'slot=0 ld 1'"),
    ('controller = { tool = "ssacli", vd = "slot=a ld 1" }', "not a ssacli virtual drive"),
    ('controller = { tool = "arcconf", vd = "1 LOGICALDRIVE" }', "'1 LOGICALDRIVE 0'"),
    ('controller = { tool = "arcconf", vd = "1 LD 0" }', "not a arcconf virtual drive"),
    (
        'controller = { tool = "storcli", vd = "/c0/v0", write_cache = "wb" }',
        "write_cache = 'wb' is not allowed; choose one of write-back, write-through",
    ),
    (
        'controller = { tool = "storcli", vd = "/c0/v0", write_cache = "WriteBack" }',
        "is not allowed",
    ),
    (
        'controller = { tool = "storcli", vd = "/c0/v0", write_cache = ["write-back", "wt"] }',
        "write_cache = 'wt' is not allowed",
    ),
    ('controller = { tool = "storcli", vd = "/c0/v0", write_cache = [] }', "write_cache is a word"),
    ('controller = { tool = "storcli", vd = "/c0/v0", write_cache = 1 }', "write_cache is a word"),
    ('controller = { tool = "storcli", vd = "/c0/v0", write_cache = true }', "is a word"),
    (
        'controller = { tool = "storcli", vd = "/c0/v0", write_cache = [["write-back"]] }',
        "is a word",
    ),
    (
        'controller = { tool = "storcli", vd = "/c0/v0", read_ahead = "adaptive" }',
        "read_ahead = 'adaptive' is not allowed; choose one of read-ahead, none",
    ),
    ('controller = { tool = "storcli", vd = "/c0/v0", read_ahead = "ra" }', "is not allowed"),
    ('controller = { tool = "storcli", vd = "/c0/v0", io_policy = "dio" }', "is not allowed"),
    (
        'controller = { tool = "storcli", vd = "/c0/v0", drive_cache = "enabled" }',
        "drive_cache = 'enabled' is not allowed",
    ),
    (
        'controller = { tool = "megacli", vd = "-L0 -a0", drive_cache = "default" }',
        "choose one of on, off",
    ),
    (
        'controller = { tool = "ssacli", vd = "slot=0 ld 1", read_ahead = "none" }',
        "ssacli has no set command for read_ahead",
    ),
    (
        'controller = { tool = "ssacli", vd = "slot=0 ld 1", io_policy = "direct" }',
        "ssacli has no set command for io_policy",
    ),
    (
        'controller = { tool = "arcconf", vd = "1 LOGICALDRIVE 0", io_policy = "direct" }',
        "arcconf has no set command for io_policy",
    ),
    (
        'controller = { tool = "arcconf", vd = "1 LOGICALDRIVE 0", drive_cache = "on" }',
        "arcconf has no set command for drive_cache",
    ),
    ('controller = { tool = "storcli", vd = "/c0/v0", cache_ratio = "50/50" }', "cache_ratio"),
    ('controller = { tool = "storcli", vd = "/c0/v0", wrcache = "wb" }', "wrcache"),
    ('controller = { tool = "storcli", vd = "/c0/v0", hook = "reboot" }', "hook"),
    ('drive_cache = "on"', "drive_cache = 'on' is not allowed; choose one of write-back"),
    ('drive_cache = "write back"', "is not allowed"),
    ('drive_cache = ["write-back", 1]', "drive_cache is a word"),
    ("drive_cache = []", "drive_cache is a word"),
    ("drive_cache = false", "drive_cache is a word"),
]


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
@pytest.mark.parametrize(  # an iolab process each: the fast lane runs the first three
    ("line", "said"),
    [pytest.param(*bad, marks=[pytest.mark.slow] if n >= 3 else []) for n, bad in enumerate(BAD)],
    ids=[f"bad-{n}" for n in range(len(BAD))],
)
def test_a_bad_controller_table_is_one_line(tmp_path: Path, line: str, said: str) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(BAD_TABLE.format(line=line))
    before = sorted(p.name for p in tmp_path.iterdir())
    done = run_iolab("show", str(plan), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("iolab: ") and done.stderr.count("\n") == 1, done.stderr
    assert said in done.stderr, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before, "nothing written"


@pytest.mark.fio
@pytest.mark.root
@needs_root()
def test_a_loop_device_has_no_drive_cache_to_set(workdir: Path, loops: LoopDevs) -> None:
    dev = loops.make(16)
    plan = BAD_TABLE.replace("/dev/sdz", dev).format(line='drive_cache = "write-through"')
    (workdir / "plan.toml").write_text(plan)
    done = run_iolab("run", "plan.toml", "--yes-destroy", dev, cwd=workdir)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    name = Path(dev).name
    assert (
        "drive_cache needs a SCSI/SATA disk's sysfs cache_type or an NVMe controller's "
        f"volatile write cache, and {name} has neither; remove drive_cache"
    ) in done.stderr
    assert stored_cases(workdir / "iolab.db") == []


@pytest.mark.fio
@pytest.mark.root
@needs_root()
def test_a_tool_that_is_not_installed_is_refused_before_anything_runs(
    workdir: Path, loops: LoopDevs
) -> None:
    dev = loops.make(16)
    line = 'controller = { tool = "arcconf", vd = "1 LOGICALDRIVE 0", write_cache = "write-back" }'
    (workdir / "plan.toml").write_text(BAD_TABLE.replace("/dev/sdz", dev).format(line=line))
    done = run_iolab("run", "plan.toml", "--yes-destroy", dev, cwd=workdir)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "arcconf is not installed (not on PATH)" in done.stderr


MEMBERS = {  # /c0/v0's drives as the fake storcli prints them, each a real drive's recording
    "megaraid,9": "INTEL_SSDPE2KX080T8_1.json",
    "megaraid,8": "sat-Samsung_based_SSDs-SAMSUNG_MZ7LH480HAHQ-00005-sda.json",
    "megaraid,7": "ST3500418AS_11.json",
    "megaraid,6": "SAMSUNG_MZ7WD240HAFV-00003_21.json",
}


def _with_smartctl(card: Card, tmp_path: Path, *args: str, **more: Any) -> tuple[int, str, Path]:
    """`iolab run` of the card's plan with a smartctl on PATH answering /c0/v0's drives."""
    state = tmp_path / "smart.json"
    env = fake_smartctl.install(tmp_path / "smart-bin", state, devices=MEMBERS, **more)
    plan = card.plan("storcli", "/c0/v0", policy='write_cache = "write-back"')
    done = subprocess.run(
        [*IOLAB, "run", plan, "--yes-destroy", card.dev, *args],
        cwd=card.workdir,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    return done.returncode, done.stderr, state


@pytest.mark.fio
@pytest.mark.root
@needs_root()
def test_the_vds_drives_are_read_through_the_card(card: Card, tmp_path: Path) -> None:
    """storcli names /c0/v0's drives (slot 252:6 is device id 9, and so on); a smartctl on
    PATH answers `-d megaraid,N` with real drives' recorded outputs: the set-up's record names
    each drive by its slot on the card, read before and after its cases."""
    code, stderr, state = _with_smartctl(card, tmp_path)
    assert code == 0, stderr
    log = environments(card.workdir / "iolab.db")["vd"]["drives"]
    for moment in ("before", "after"):
        drives = log[moment]["drives"]
        models = {name: drives[name].get("model") for name in drives if name.startswith("/c0")}
        assert models == {
            "/c0/e252/s6": "INTEL SSDPE2KX080T8",
            "/c0/e252/s7": "SAMSUNG MZ7LH480HAHQ-00005",
            "/c0/e252/s8": "ST3500418AS",
            "/c0/e252/s9": "SAMSUNG MZ7WD240HAFV-00003",
        }, moment
    asked = json.loads(state.read_text())["asked"]
    assert f"-j -a -d megaraid,9 {card.dev}" in asked
    report = run_iolab("report", "--format", "markdown", cwd=card.workdir, check=True).stdout
    assert "/c0/e252/s8" in report and "ST3500418AS" in report


@pytest.mark.fio
@pytest.mark.root
@needs_root()
def test_a_failing_drive_behind_the_card_is_refused_before_anything(
    card: Card, tmp_path: Path
) -> None:
    failing = {"megaraid,7": {"smart_status.passed": False}}
    before = device_sha256(card.dev)
    code, stderr, _ = _with_smartctl(card, tmp_path, set_for=failing)
    assert code != 0
    assert conftest.said(stderr) == [
        "iolab: error: set-up 'vd': /c0/e252/s8: its SMART status says the drive is failing; "
        "iolab does not write to it (--failing-drives to write anyway)"
    ]
    assert card.sets() == [] and device_sha256(card.dev) == before  # nothing set, nothing made
    assert not (card.workdir / "iolab.db").exists()
    code, stderr, _ = _with_smartctl(card, tmp_path, "--failing-drives", set_for=failing)
    assert code == 0, stderr
