"""A RAID card's drives read through smartctl's `-d megaraid,N` / `-d cciss,N`: each card
tool's recorded output (../shared/reference/raid-cli/) names a VD's physical drives and the
number the card knows each by; a smartctl on PATH (tests/fake_smartctl.py) answers each `-d`
with a real drive's recorded output, and the reading names each drive by the card's slot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import fake_raid_cli
import fake_smartctl
from iolab.targets import drive_health
from iolab.targets.controllers import megacli, ssacli, storcli
from iolab.targets.controllers.model import Controller, member_name

RAID = fake_raid_cli.REFERENCE


def _storcli() -> Controller:
    return storcli.parse((RAID / "storcli/cALL-show-all-J.praid-ep420i.json").read_text())[0]


def _megacli() -> Controller:
    return megacli.parse((RAID / "megacli/mega-phys-drives-info.txt").read_text())[0]


def _ssacli() -> Controller:
    return ssacli.parse((RAID / "ssacli/ssacli-P212_P410i.txt").read_text())[1]  # the P410i


# a card, its VD's drives as (the card's name for it, smartctl's -d), as the tool printed them
CARDS = {
    "storcli": (
        _storcli,
        [
            ("/c0/e252/s0", "megaraid,2"),
            ("/c0/e252/s1", "megaraid,3"),
            ("/c0/e252/s4", "megaraid,7"),
            ("/c0/e252/s5", "megaraid,6"),
        ],
    ),
    "MegaCli": (  # its PD blocks in this order: slot and Device Id agree on this card
        _megacli,
        [(f"[32:{n}] -a0", f"megaraid,{n}") for n in (0, 2, 1, 3, 5, 4, 6, 7)],
    ),
    "ssacli": (
        _ssacli,
        [("slot=0 pd 2I:1:5", "cciss,4"), ("slot=0 pd 2I:1:6", "cciss,5")],
    ),
}


def test_each_cards_tool_names_its_vds_drives() -> None:
    if not RAID.is_dir():
        fake_raid_cli.reference_absent()
    for tool, (card_of, expected) in CARDS.items():
        card = card_of()
        members = [(member_name(card, m), m.smart) for m in card.drives[0].members]
        assert members == expected, tool


def test_a_storcli_vds_own_document_lists_its_drives() -> None:
    text = (RAID / "storcli/c0-v0-show-all-J-nolog.json").read_text()
    (vd,) = storcli.parse_vd(text)
    assert [(m.slot, m.smart) for m in vd.members] == [
        ("252:6", "megaraid,9"),
        ("252:7", "megaraid,8"),
        ("252:8", "megaraid,7"),
        ("252:9", "megaraid,6"),
    ]


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
@pytest.mark.parametrize("tool", sorted(CARDS))
def test_each_drive_behind_the_card_is_read_through_it(
    tool: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    card_of, _ = CARDS[tool]
    card = card_of()
    files = fake_smartctl.recorded_files()
    members = card.drives[0].members
    given = {m.smart: files[n % len(files)] for n, m in enumerate(members)}
    state = tmp_path / "smart.json"
    env = fake_smartctl.install(tmp_path / "bin", state, file="", devices=given)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    behind = {member_name(card, m): ("/dev/sdq", m.smart) for m in members}
    found = drive_health.reading((), 0.0, behind=behind)
    assert found.problems == ()
    for m in members:
        expected = drive_health.parse((fake_smartctl.reference() / given[m.smart]).read_text())
        assert found.drives[member_name(card, m)] == expected
    asked = json.loads(state.read_text())["asked"]
    assert asked == [f"-j -a -d {m.smart} /dev/sdq" for m in members]


def test_a_drive_the_card_does_not_reach_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = fake_smartctl.install(tmp_path / "bin", tmp_path / "smart.json", file="", devices={})
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    behind = {"/c0/e252/s9": ("/dev/sdq", "megaraid,99"), "x": ("/dev/sdq", "sat;rm -rf /")}
    found = drive_health.reading((), 0.0, behind=behind)
    assert found.drives == {}
    assert found.problems == (
        "/c0/e252/s9: smartctl printed what is not JSON",
        "x: 'sat;rm -rf /' is not a RAID card's drive smartctl reaches (-d)",
    )
