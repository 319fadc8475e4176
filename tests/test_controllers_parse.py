"""The RAID tools' parsers, on every output that real cards printed and on damaged ones.

Every file in ../shared/reference/raid-cli/ (beside the repository; read from there, never
copied here) has a row in RECORDED: what its parser must read from it (card model, firmware,
cache size, battery, each VD's RAID level, size, block device and cache policy as configured
and as in effect). Each row also lists the lines of the file its values come from
(`evidence`), and the test checks that the file holds them, so a row cannot drift from its
file. `test_every_recorded_file_has_a_row` fails for a file without a row.

Damaged input (empty, truncated, another tool's output, fields of the wrong kind, hostile
values) must give one ControllerError: one line, naming the tool first, quoting no value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from fake_raid_cli import REFERENCE, reference_absent
from iolab.errors import ControllerError
from iolab.model import codec
from iolab.targets.controllers import arcconf, common, megacli, ssacli, storcli
from iolab.targets.controllers.model import (
    UNREPORTED,
    Battery,
    CachePolicy,
    CacheRatio,
    Controller,
    DriveCache,
    Health,
    Io,
    Read,
    VirtualDrive,
    Write,
    differs,
)

KIB, MIB, GIB, TIB = 1024, 1024**2, 1024**3, 1024**4
Policy = tuple[Write | None, Read | None, Io | None]
WB_RA_D: Policy = (Write.BACK, Read.AHEAD, Io.DIRECT)


def recorded(relative: str) -> str:
    """A recorded output as the probe reads it (bytes decoded with errors replaced)."""
    if not REFERENCE.is_dir():
        reference_absent()
    return (REFERENCE / relative).read_bytes().decode(errors="replace")


@dataclass(frozen=True)
class Vd:
    id: str
    raid_level: str | None
    size_bytes: int | None
    block_device: str | None
    configured: Policy | None
    effective: Policy
    drive_cache: DriveCache | None = None


@dataclass(frozen=True)
class Card:
    tool: str
    index: int
    model: str | None
    firmware: str | None
    cache_bytes: int | None
    battery: Battery
    drives: tuple[Vd, ...] = ()
    cache_ratio: CacheRatio | None = None
    drive_cache: DriveCache | None = None


@dataclass(frozen=True)
class Recorded:
    parse: Callable[[str], Any]
    expected: Any  # list[Card], list[Vd] or dict[int, Battery]
    evidence: tuple[str, ...] = field(default=())


def _parts(policy: CachePolicy | None) -> Policy | None:
    return policy.parts() if policy else None


def _vd(vd: VirtualDrive) -> Vd:
    assert vd.effective is not None
    return Vd(
        vd.id,
        vd.raid_level,
        vd.size_bytes,
        vd.block_device,
        _parts(vd.configured),
        vd.effective.parts(),
        vd.drive_cache,
    )


def _card(card: Controller) -> Card:
    return Card(
        card.tool,
        card.index,
        card.model,
        card.firmware,
        card.cache_bytes,
        card.battery,
        tuple(_vd(vd) for vd in card.drives),
        card.cache_ratio,
        card.drive_cache,
    )


def _read_cards(parse: Callable[[str], list[Controller]]) -> Callable[[str], list[Card]]:
    return lambda text: [_card(card) for card in parse(text)]


CACHEVAULT = Battery(True, Health.OPTIMAL, "Optimal", "CacheVault CVPM02")
STORCLI_SIZE = {
    "1.745 TB": round(1.745 * TIB),
    "58.207 TB": round(58.207 * TIB),
    "55.881 TB": round(55.881 * TIB),
    "893.750 GB": round(893.75 * GIB),
    "3.491 TB": round(3.491 * TIB),
}

# fmt: off
RECORDED: dict[str, Recorded] = {
    "storcli/cALL-show-all-J.praid-ep420i.json": Recorded(
        _read_cards(storcli.parse),
        [Card("storcli", 0, "PRAID EP420i", "4.680.00-8417", 2048 * MIB, CACHEVAULT, (
            Vd("/c0/v0", "RAID6", STORCLI_SIZE["1.745 TB"], None, None, WB_RA_D,
               DriveCache.DEFAULT),))],
        ('"Model" : "PRAID EP420i"', '"Firmware Version" : "4.680.00-8417"',
         '"On Board Memory Size" : "2048MB"', '"Model" : "CVPM02"', '"State" : "Optimal"',
         '"DG/VD" : "0/0"', '"TYPE" : "RAID6"', '"Cache" : "RWBD"', '"Size" : "1.745 TB"',
         '"PDC" : "dflt"'),
    ),
    "storcli/cALL-show-all-J-nolog.megaraid-controllers-info.json": Recorded(
        _read_cards(storcli.parse),
        [Card("storcli", 0, "ServeRAID M5015 SAS/SATA Controller", "2.130.403-4660", 512 * MIB,
              Battery(True, Health.OPTIMAL, "Optimal", "BBU iBBU08"), (
            Vd("/c0/v0", "RAID6", STORCLI_SIZE["58.207 TB"], None, None, WB_RA_D,
               DriveCache.OFF),))],
        ('"Model": "ServeRAID M5015 SAS/SATA Controller"', '"On Board Memory Size": "512MB"',
         '"Model": "iBBU08"', '"State": "Optimal"', '"Cache": "RWBD"', '"PDC": "dsbl"',
         '"Size": "58.207 TB"', '"Firmware Version": "2.130.403-4660"'),
    ),
    "storcli/cALL-show-all-J-nolog.mpt3sas-controllers-info.json": Recorded(
        _read_cards(storcli.parse),
        [Card("storcli", 0, "HBA 9500-8i", "28.00.00.00", 0, UNREPORTED)],
        ('"Model": "HBA 9500-8i"', '"On Board Memory Size": "0MB"',
         '"Firmware Version": "28.00.00.00"'),
    ),
    "storcli/call-show-J-nolog.json": Recorded(
        _read_cards(storcli.parse),
        [
            Card("storcli", 0, "AVAGO 3108 MegaRAID", "4.680.00-8290", None, CACHEVAULT, (
                Vd("/c0/v0", "RAID6", STORCLI_SIZE["55.881 TB"], None, None, WB_RA_D,
                   DriveCache.DEFAULT),)),
            Card("storcli", 1, "AVAGO 3108 MegaRAID", "4.680.00-8290", None, CACHEVAULT, (
                Vd("/c1/v0", "RAID6", STORCLI_SIZE["55.881 TB"], None, None, WB_RA_D,
                   DriveCache.DEFAULT),
                Vd("/c1/v234", "RAID1", STORCLI_SIZE["893.750 GB"], None, None, WB_RA_D,
                   DriveCache.DEFAULT))),
            Card("storcli", 2, "LSI3008-IR", "16.00.10.00", None, UNREPORTED),
        ],
        ('"Product Name" : "AVAGO 3108 MegaRAID"', '"Product Name" : "LSI3008-IR"',
         '"DG/VD" : "0/234"', '"Cache" : "RWBD"', '"FW Version" : "4.680.00-8290"',
         '"Model" : "CVPM02"', '"Controller" : 2'),
    ),
    "storcli/c0-v0-show-all-J-nolog.json": Recorded(
        lambda text: [_vd(vd) for vd in storcli.parse_vd(text)],
        [Vd("/c0/v0", "RAID10", STORCLI_SIZE["3.491 TB"], "/dev/sdb", WB_RA_D, WB_RA_D,
            DriveCache.DEFAULT)],
        ('"Write Cache(initial setting)" : "WriteBack"', '"Cache" : "RWBD"',
         '"OS Drive Name" : "/dev/sdb"', '"Disk Cache Policy" : "Disk\'s Default"',
         '"TYPE" : "RAID10"', '"Size" : "3.491 TB"'),
    ),
    "storcli/perccli-call-show-J-nolog.fail.json": Recorded(
        lambda text: storcli.parse(text, "perccli"),
        [],
        ('"Status" : "Failure"', '"Description" : "No Controller found"'),
    ),
    "megacli/mega-phys-drives-info.txt": Recorded(
        _read_cards(megacli.parse),
        [Card("MegaCli", 0, None, None, None, UNREPORTED, (
            Vd("-L0 -a0", "RAID1", round(3.491 * TIB), None, WB_RA_D, WB_RA_D,
               DriveCache.DEFAULT),))],
        ("Adapter #0", "Virtual Drive: 0 (Target Id: 0)",
         "Default Cache Policy: WriteBack, ReadAhead, Direct, No Write Cache if Bad BBU",
         "Current Cache Policy: WriteBack, ReadAhead, Direct, No Write Cache if Bad BBU",
         "RAID Level          : Primary-1, Secondary-0, RAID Level Qualifier-0",
         "Span Depth          : 1", "Size                : 3.491 TB",
         "Disk Cache Policy   : Disk's Default"),
    ),
    "megacli/mega-bbu-info-old.txt": Recorded(
        megacli.parse_bbu,
        {0: Battery(True, Health.OPTIMAL, "Optimal", "BBU")},
        ("BBU status for Adapter: 0", "BatteryType: BBU", "Battery State: Optimal",
         "Learn Cycle Active                      : No"),
    ),
    "megacli/mega-bbu-info-recent.txt": Recorded(
        megacli.parse_bbu,
        {0: Battery(True, Health.OPTIMAL, "Optimal", "BBU iBBU08")},
        ("BBU status for Adapter: 0", "BatteryType: iBBU08", "Battery State: Optimal",
         "Battery Pack Missing                    : No"),
    ),
    "ssacli/ssacli-P212_P410i.txt": Recorded(
        _read_cards(ssacli.parse),
        [
            Card("ssacli", 5, "Smart Array P212", "6.60-0", round(0.2 * GIB), UNREPORTED, (
                Vd("slot=5 ld 1", "RAID5", round(4.55 * TIB), "/dev/sdc",
                   (Write.THROUGH, Read.ADAPTIVE, None), (Write.THROUGH, Read.ADAPTIVE, None)),),
                 CacheRatio(100, 0), DriveCache.OFF),
            Card("ssacli", 0, "Smart Array P410i", "6.40-0", round(0.2 * GIB), UNREPORTED, (
                Vd("slot=0 ld 1", "RAID1", round(136.70 * GIB), "/dev/sda",
                   (Write.THROUGH, Read.ADAPTIVE, None), (Write.THROUGH, Read.ADAPTIVE, None)),
                Vd("slot=0 ld 2", "RAID10", round(273.40 * GIB), "/dev/sdb",
                   (Write.THROUGH, Read.ADAPTIVE, None), (Write.THROUGH, Read.ADAPTIVE, None))),
                 CacheRatio(100, 0), DriveCache.OFF),
        ],
        ("Smart Array P212 in Slot 5", "Smart Array P410i in Slot 0 (Embedded)",
         "Cache Ratio: 100% Read / 0% Write", "Total Cache Size: 0.2",
         "Drive Write Cache: Disabled", "Caching:  Enabled", "Fault Tolerance: 1+0",
         "Fault Tolerance: 5", "Disk Name: /dev/sdc", "Size: 4.55 TB", "Size: 136.70 GB",
         "Size: 273.40 GB", "Firmware Version: 6.60-0", "No-Battery Write Cache: Disabled"),
    ),
    "ssacli/ssacli-P400ar.txt": Recorded(
        _read_cards(ssacli.parse),
        [Card("ssacli", 0, "Smart Array P440ar", "3.56-0", 2 * GIB,
              Battery(True, Health.OPTIMAL, "OK", "Batteries"), (
            Vd("slot=0 ld 1", "RAID10", round(5.2 * TIB), "/dev/sda",
               (Write.ALWAYS_BACK, Read.ADAPTIVE, None), (Write.ALWAYS_BACK, Read.ADAPTIVE, None)),
            Vd("slot=0 ld 2", "RAID1", round(931.5 * GIB), "/dev/sdb",
               (Write.ALWAYS_BACK, Read.ADAPTIVE, None), (Write.ALWAYS_BACK, Read.ADAPTIVE, None))),
              CacheRatio(10, 90), DriveCache.ON)],
        ("Smart Array P440ar in Slot 0 (Embedded)", "Total Cache Size: 2.0 GB",
         "Cache Ratio: 10% Read / 90% Write", "Battery/Capacitor Status: OK",
         "No-Battery Write Cache: Enabled", "Drive Write Cache: Enabled", "Cache Status: OK",
         "Fault Tolerance: 1+0", "Fault Tolerance: 1\n", "Size: 5.2 TB", "Size: 931.5 GB",
         "Disk Name: /dev/sda", "Disk Name: /dev/sdb", "Cache Backup Power Source: Batteries"),
    ),
    "arcconf/getconfig-ld-current.txt": Recorded(
        _read_cards(arcconf.parse),
        [Card("arcconf", 1, None, None, None, UNREPORTED, (
            Vd("1 LOGICALDRIVE 0", "RAID10", 915446 * MIB, None,
               (Write.ALWAYS_BACK, Read.AHEAD, None), (Write.ALWAYS_BACK, Read.AHEAD, None)),))],
        ("Logical Device number 0", "RAID level                               : 10",
         "Size                                     : 915446 MB",
         "Read-cache setting                       : Enabled",
         "Read-cache status                        : On",
         "Write-cache setting                      : Enabled",
         "Write-cache status                       : On"),
    ),
    "arcconf/getconfig-ld-old.txt": Recorded(
        _read_cards(arcconf.parse),
        [Card("arcconf", 1, None, None, None, UNREPORTED, (
            Vd("1 LOGICALDRIVE 0", "RAID10", 915446 * MIB, None,
               (Write.ALWAYS_BACK, Read.AHEAD, None), (Write.ALWAYS_BACK, Read.AHEAD, None)),))],
        ("Controllers found: 1", "Logical device number 0",
         "Write-cache setting                      : Enabled",
         "Write-cache status                       : On",
         "Read-cache status                        : On"),
    ),
}

# fmt: on


def test_every_recorded_file_has_a_row() -> None:
    if not REFERENCE.is_dir():
        reference_absent()
    files = {
        str(path.relative_to(REFERENCE))
        for path in REFERENCE.rglob("*")
        if path.is_file() and path.name != "README.md"
    }
    assert files, f"no recorded output in {REFERENCE}"
    assert files <= set(RECORDED), (
        f"recorded outputs without a row: {sorted(files - set(RECORDED))}"
    )
    assert set(RECORDED) <= files, f"rows without a file: {sorted(set(RECORDED) - files)}"


@pytest.mark.parametrize("relative", sorted(RECORDED))
def test_recorded_output_parses_to_what_the_file_says(relative: str) -> None:
    text = recorded(relative)
    row = RECORDED[relative]
    for line in row.evidence:
        assert line in text, f"{relative} does not hold {line!r}: the row drifted from its file"
    assert row.parse(text) == row.expected


@pytest.mark.parametrize(
    ("relative", "tool"),
    [
        (name, "perccli" if "perccli" in name else "storcli")
        for name in sorted(RECORDED)
        if name.startswith("storcli/") and "v0-show" not in name
    ],
)
def test_storcli_controllers_survive_their_json(relative: str, tool: str) -> None:
    cards = storcli.parse(recorded(relative), tool)
    again = [codec.from_json(Controller, json.loads(json.dumps(card.to_json()))) for card in cards]
    assert again == cards


@pytest.mark.parametrize(
    ("relative", "parse"),
    [
        ("megacli/mega-phys-drives-info.txt", megacli.parse),
        ("ssacli/ssacli-P212_P410i.txt", ssacli.parse),
        ("ssacli/ssacli-P400ar.txt", ssacli.parse),
        ("arcconf/getconfig-ld-current.txt", arcconf.parse),
    ],
)
def test_text_tools_controllers_survive_their_json(
    relative: str, parse: Callable[[str], list[Controller]]
) -> None:
    cards = parse(recorded(relative))
    assert [
        codec.from_json(Controller, json.loads(json.dumps(c.to_json()))) for c in cards
    ] == cards


def test_megacli_joins_each_adapters_battery() -> None:
    (card,) = megacli.parse(
        recorded("megacli/mega-phys-drives-info.txt"),
        recorded("megacli/mega-bbu-info-recent.txt"),
    )
    assert card.battery == Battery(True, Health.OPTIMAL, "Optimal", "BBU iBBU08")


def test_storcli_vd_details_replace_the_listed_vd() -> None:
    (card,) = storcli.parse(recorded("storcli/cALL-show-all-J.praid-ep420i.json"))
    details = storcli.parse_vd(recorded("storcli/c0-v0-show-all-J-nolog.json"))
    (vd,) = storcli.with_details(card, details).drives
    assert vd.configured is not None
    assert vd.configured.parts() == WB_RA_D
    assert vd.block_device == "/dev/sdb"


# ------------------------------------------------------- the policy in effect differs


def _swap(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new)


# fmt: off
DIFFERS = [
    pytest.param(
        lambda: storcli.parse_vd(_swap(recorded("storcli/c0-v0-show-all-J-nolog.json"),
                                       '"Cache" : "RWBD"', '"Cache" : "RWTD"'))[0],
        None, "configured write-back, in effect write-through", id="storcli-wt-in-effect"),
    pytest.param(
        lambda: storcli.parse_vd(_swap(recorded("storcli/c0-v0-show-all-J-nolog.json"),
                                       '"Cache" : "RWBD"', '"Cache" : "NRWTC"'))[0],
        None, "configured write-back, in effect write-through", id="storcli-read-io-follow"),
    pytest.param(
        lambda: megacli.parse(_swap(
            recorded("megacli/mega-phys-drives-info.txt"),
            "Current Cache Policy: WriteBack", "Current Cache Policy: WriteThrough"))[0].drives[0],
        Battery(True, Health.LEARNING, "Optimal", "BBU"),
        "configured write-back, in effect write-through: the battery is learning",
        id="megacli-learning"),
    pytest.param(
        lambda: megacli.parse(_swap(
            recorded("megacli/mega-phys-drives-info.txt"),
            "Current Cache Policy: WriteBack, ReadAhead,",
            "Current Cache Policy: WriteThrough, ReadAheadNone,"))[0].drives[0],
        Battery(True, Health.FAILED, "Failed", "BBU"),
        "configured write-back, in effect write-through; configured read-ahead, in effect no "
        "read-ahead: the battery has failed", id="megacli-two-parts-failed"),
    pytest.param(
        lambda: arcconf.parse(_swap(
            recorded("arcconf/getconfig-ld-current.txt"),
            "Write-cache status                       : On",
            "Write-cache status                       : Off"))[0].drives[0],
        Battery(False, Health.UNKNOWN), "configured always-write-back, in effect write-through: "
        "the card has no battery", id="arcconf-off"),
    pytest.param(
        lambda: arcconf.parse(recorded("arcconf/getconfig-ld-current.txt"))[0].drives[0],
        Battery(True, Health.LEARNING), None, id="arcconf-same"),
    pytest.param(
        lambda: storcli.parse(recorded("storcli/cALL-show-all-J.praid-ep420i.json"))[0].drives[0],
        Battery(True, Health.LEARNING), None, id="storcli-no-configured"),
]

# fmt: on


@pytest.mark.parametrize(("make", "battery", "said"), DIFFERS)
def test_differs_says_how_and_why(
    make: Callable[[], VirtualDrive], battery: Battery | None, said: str | None
) -> None:
    vd = make()
    card = Controller("x", 0, None, None, None, None, battery) if battery else None
    assert differs(vd, card) == said


def test_ssacli_cache_disabled_runs_write_through() -> None:
    text = _swap(
        recorded("ssacli/ssacli-P400ar.txt"),
        "Cache Status: OK",
        "Cache Status: Temporarily Disabled",
    )
    text = _swap(text, "No-Battery Write Cache: Enabled", "No-Battery Write Cache: Disabled")
    (card,) = ssacli.parse(text)
    assert card.cache_ok is False
    said = [differs(vd, card) for vd in card.drives]
    assert (
        said
        == [
            "configured write-back, in effect write-through; configured adaptive, in "
            "effect no read-ahead: the card's cache is disabled"
        ]
        * 2
    )


def test_ssacli_failed_battery_turns_write_back_through() -> None:
    text = _swap(
        recorded("ssacli/ssacli-P400ar.txt"),
        "Battery/Capacitor Status: OK",
        "Battery/Capacitor Status: Failed (Replace Batteries/Capacitors)",
    )
    text = _swap(text, "No-Battery Write Cache: Enabled", "No-Battery Write Cache: Disabled")
    (card,) = ssacli.parse(text)
    assert card.battery.health is Health.FAILED
    assert {differs(vd, card) for vd in card.drives} == {
        "configured write-back, in effect write-through: the battery has failed"
    }


# ------------------------------------------------------------------- small readers

# fmt: off
SIZES = [("3.491 TB", "", round(3.491 * TIB)), ("2048MB", "", 2048 * MIB), ("0MB", "", 0),
         ("915446 MB", "", 915446 * MIB), ("2.0 GB", "", 2 * GIB), ("0.2", "G", round(0.2 * GIB)),
         ("0.2", "", None), ("512B", "", 512), ("8 KiB", "", 8 * KIB), ("NA", "", None),
         ("", "", None), ("-1 GB", "", None), ("1e9 GB", "", None), ("12 XB", "", None)]
# fmt: on


@pytest.mark.parametrize(("words", "bare", "size"), SIZES)
def test_sizes_are_binary(words: str, bare: str, size: int | None) -> None:
    assert common.size_bytes(words, bare) == size


# fmt: off
LEVELS = [("10", "RAID10"), ("1+0", "RAID10"), ("5", "RAID5"), ("RAID 6 (ADG)", "RAID6"),
          ("ADG", "RAID6"), ("Simple_volume", "Simple_volume"), (None, None), ("", None)]
# fmt: on


@pytest.mark.parametrize(("words", "level"), LEVELS)
def test_raid_levels(words: str | None, level: str | None) -> None:
    assert common.raid_level(words) == level


# fmt: off
HEALTH = [("Optimal", Health.OPTIMAL), ("OK", Health.OPTIMAL), ("Learning", Health.LEARNING),
          ("Recharging", Health.CHARGING), ("Failed (Replace Batteries)", Health.FAILED),
          ("Dgd (Needs Attention)", Health.DEGRADED), ("Broken", Health.FAILED),
          ("Wobbly", Health.UNKNOWN), (None, Health.UNKNOWN)]
# fmt: on


@pytest.mark.parametrize(("words", "health"), HEALTH)
def test_battery_words(words: str | None, health: Health) -> None:
    assert common.health(words) is health


# ------------------------------------------------------------------ damaged input

HOSTILE = "EVIL\x1b[31m<script>"  # must never come back in a message


def _json_edit(relative: str, edit: Callable[[dict[str, Any]], None]) -> Callable[[], str]:
    def make() -> str:
        document = json.loads(recorded(relative))
        edit(document)
        return json.dumps(document)

    return make


def _data(document: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = document["Controllers"][0]["Response Data"]
    return data


def _set_cache(value: object) -> Callable[[dict[str, Any]], None]:
    return lambda document: _data(document)["VD LIST"][0].update(Cache=value)


PRAID = "storcli/cALL-show-all-J.praid-ep420i.json"
VD_DOC = "storcli/c0-v0-show-all-J-nolog.json"


def _text(value: str) -> Callable[[], str]:
    return lambda: value


def _half(relative: str) -> Callable[[], str]:
    return lambda: (text := recorded(relative))[: len(text) // 2]


def _replace(relative: str, old: str, new: str) -> Callable[[], str]:
    return lambda: _swap(recorded(relative), old, new)


Parser = Callable[[str], object]
STORCLI: Parser = storcli.parse
STORCLI_VD: Parser = storcli.parse_vd
MEGA: Parser = megacli.parse
BBU: Parser = megacli.parse_bbu
SSA: Parser = ssacli.parse
ARC: Parser = arcconf.parse

# fmt: off
DAMAGED = [
    # empty, blank, binary
    *[pytest.param(p, _text(t), tool, "printed nothing", id=f"{tool}-{name}-{n}")
      for n, t in enumerate(("", "  \n\t\n"))
      for p, tool, name in ((STORCLI, "storcli", "show"), (STORCLI_VD, "storcli", "vd"),
                            (MEGA, "MegaCli", "ldpd"), (BBU, "MegaCli", "bbu"),
                            (SSA, "ssacli", "config"), (ARC, "arcconf", "ld"))],
    pytest.param(STORCLI, _text("\ufffd\ufffd\x00\x01PK"), "storcli", "no complete JSON",
                 id="storcli-binary"),
    # truncated JSON
    *[pytest.param(STORCLI if "v0-show" not in name else STORCLI_VD, _half(name), "storcli",
                   "no complete JSON", id=f"storcli-half-{Path(name).stem}")
      for name in sorted(RECORDED) if name.startswith("storcli/")],
    # another tool's output
    pytest.param(STORCLI, _text("Adapter #0\n\nNumber of Virtual Disks: 1\n"), "storcli",
                 "no complete JSON", id="storcli-given-megacli"),
    pytest.param(MEGA, lambda: recorded(PRAID), "MegaCli", "names no adapter",
                 id="megacli-given-storcli"),
    pytest.param(MEGA, lambda: recorded("ssacli/ssacli-P400ar.txt"), "MegaCli",
                 "names no adapter", id="megacli-given-ssacli"),
    pytest.param(BBU, lambda: recorded("megacli/mega-phys-drives-info.txt"), "MegaCli",
                 "names no adapter's battery", id="bbu-given-ldpdinfo"),
    pytest.param(SSA, lambda: recorded("arcconf/getconfig-ld-current.txt"), "ssacli",
                 "names no controller", id="ssacli-given-arcconf"),
    pytest.param(SSA, lambda: recorded(PRAID), "ssacli", "names no controller",
                 id="ssacli-given-storcli"),
    pytest.param(ARC, lambda: recorded("megacli/mega-phys-drives-info.txt"), "arcconf",
                 "names no logical device", id="arcconf-given-megacli"),
    pytest.param(ARC, lambda: recorded("ssacli/ssacli-P212_P410i.txt"), "arcconf",
                 "names no logical device", id="arcconf-given-ssacli"),
    # JSON of the wrong shape
    *[pytest.param(STORCLI, _text(t), "storcli", "without its Controllers list", id=f"shape-{i}")
      for i, t in enumerate(("[]", '"x"', "1", "null", '{"Controllers": {}}',
                             '{"Controllers": "x"}', '{"controllers": []}'))],
    pytest.param(STORCLI, _text('{"Controllers": [1]}'), "storcli", "no Command Status",
                 id="entry-not-object"),
    pytest.param(STORCLI, _text('{"Controllers": [{"Command Status": {"Status": "Success"}}]}'),
                 "storcli", "no Response Data", id="no-response-data"),
    pytest.param(STORCLI, _text("[" * 100_000 + "]" * 100_000), "storcli", "no complete JSON",
                 id="deep-nesting"),
    pytest.param(STORCLI, _json_edit(PRAID, lambda d: d["Controllers"][0]["Command Status"]
                                     .update(Status="Failure", Description=HOSTILE)),
                 "storcli", "Status other than Success", id="failure-status"),
    pytest.param(STORCLI, _json_edit(PRAID, lambda d: d["Controllers"][0]["Command Status"]
                                     .update(Controller=HOSTILE)),
                 "storcli", "Controller field is not a number", id="controller-words"),
    pytest.param(STORCLI, _json_edit(PRAID, lambda d: d["Controllers"][0]["Command Status"]
                                     .update(Controller=[0])),
                 "storcli", "Controller field is not a number", id="controller-list"),
    pytest.param(STORCLI, _json_edit(PRAID, lambda d: d["Controllers"][0]["Command Status"]
                                     .update(Controller=10**30)),
                 "storcli", "Controller field is not a number", id="controller-huge"),
    pytest.param(STORCLI, _json_edit(PRAID, lambda d: _data(d).update({"VD LIST": HOSTILE})),
                 "storcli", "VD LIST field is not a table", id="vd-list-text"),
    pytest.param(STORCLI, _json_edit(PRAID, lambda d: _data(d).update({"VD LIST": [1, 2]})),
                 "storcli", "VD LIST field is not a table", id="vd-list-numbers"),
    pytest.param(STORCLI, _json_edit(PRAID, lambda d: _data(d)["VD LIST"][0]
                                     .update({"DG/VD": HOSTILE})),
                 "storcli", "DG/VD field is not two numbers", id="dg-vd-words"),
    pytest.param(STORCLI, _json_edit(PRAID, lambda d: _data(d)["VD LIST"][0].pop("DG/VD")),
                 "storcli", "DG/VD field is not two numbers", id="dg-vd-missing"),
    *[pytest.param(STORCLI, _json_edit(PRAID, _set_cache(v)),
                   "storcli", "Cache field of /c0/v0", id=f"cache-{i}")
      for i, v in enumerate((HOSTILE, "", "RWB", "RXBD", "RWBDX", 7, None, ["RWBD"]))],
    pytest.param(STORCLI_VD, _json_edit(VD_DOC, lambda d: _data(d)["VD0 Properties"]
                                        .update({"Write Cache(initial setting)": HOSTILE})),
                 "storcli", "Write Cache(initial setting) of /c0/v0", id="initial-words"),
    pytest.param(STORCLI_VD, _json_edit(VD_DOC, lambda d: _data(d).update({"/c0/v0": {}})),
                 "storcli", "the /c0/v0 field is not a table", id="vd-not-table"),
    pytest.param(STORCLI_VD, _json_edit(VD_DOC, lambda d: _data(d).update({"/c0/v0": []})),
                 "storcli", "the /c0/v0 field is not a table", id="vd-empty-table"),
    # MegaCli text with fields it cannot read
    pytest.param(MEGA, _replace("megacli/mega-phys-drives-info.txt",
                                "Current Cache Policy: WriteBack",
                                f"Current Cache Policy: {HOSTILE}"),
                 "MegaCli", "Current Cache Policy of -L0 -a0 names no write", id="mega-current"),
    pytest.param(MEGA, _replace("megacli/mega-phys-drives-info.txt",
                                "Default Cache Policy: WriteBack,", "Default Cache Policy:"),
                 "MegaCli", "Default Cache Policy of -L0 -a0 names no write", id="mega-default"),
    pytest.param(MEGA, _text("Virtual Drive: 0 (Target Id: 0)\nSize: 1 GB\n"), "MegaCli",
                 "names no adapter", id="mega-no-adapter"),
    pytest.param(BBU, _text("BatteryType: BBU\nBattery State: Optimal\n"), "MegaCli",
                 "names no adapter's battery", id="bbu-no-header"),
    # ssacli
    pytest.param(SSA, _replace("ssacli/ssacli-P400ar.txt", "Caching:  Enabled",
                               f"Caching:  {HOSTILE}"),
                 "ssacli", "Caching field of logical drive 1", id="ssa-caching"),
    pytest.param(SSA, _text("   Slot: 0\n   Cache Ratio: 10% Read / 90% Write\n"), "ssacli",
                 "names no controller", id="ssa-no-header"),
    pytest.param(SSA, _text("Smart Array X in Slot 0\n"
                            + "".join(" " * n + "Logical Drive: 1\n" for n in range(1, 5000))),
                 "ssacli", "Caching field of logical drive 1", id="ssa-deep-nesting"),
    # arcconf
    pytest.param(ARC, _replace("arcconf/getconfig-ld-current.txt",
                               "Write-cache setting                      : Enabled",
                               f"Write-cache setting : {HOSTILE}"),
                 "arcconf", "Write-cache setting of 1 LOGICALDRIVE 0", id="arc-write-setting"),
    pytest.param(ARC, _replace("arcconf/getconfig-ld-current.txt",
                               "Read-cache status                        : On",
                               f"Read-cache status : {HOSTILE}"),
                 "arcconf", "Read-cache status of 1 LOGICALDRIVE 0", id="arc-read-status"),
    pytest.param(ARC, _text("Command completed successfully.\n"), "arcconf",
                 "names no logical device", id="arc-no-device"),
]
# fmt: on


@pytest.mark.parametrize(("parse", "make", "tool", "words"), DAMAGED)
def test_damaged_output_is_one_typed_error(
    parse: Parser, make: Callable[[], str], tool: str, words: str
) -> None:
    with pytest.raises(ControllerError) as caught:
        parse(make())
    message = str(caught.value)
    assert message.startswith(f"{tool}: "), message
    assert words in message, message
    assert "\n" not in message
    assert "EVIL" not in message
    assert "script" not in message


# fmt: off
TEXT_PARSERS = [
    ("megacli/mega-phys-drives-info.txt", MEGA),
    ("megacli/mega-bbu-info-old.txt", BBU),
    ("megacli/mega-bbu-info-recent.txt", BBU),
    ("ssacli/ssacli-P212_P410i.txt", SSA),
    ("ssacli/ssacli-P400ar.txt", SSA),
    ("arcconf/getconfig-ld-current.txt", ARC),
    ("arcconf/getconfig-ld-old.txt", ARC),
    *[(name, STORCLI_VD if "v0-show" in name else STORCLI)
      for name in sorted(RECORDED) if name.startswith("storcli/")],
]
# fmt: on
CUTS = 17  # places each recorded output is cut at


@pytest.mark.parametrize(("relative", "parse"), TEXT_PARSERS)
def test_any_cut_of_a_recorded_output_parses_or_is_one_typed_error(
    relative: str, parse: Parser
) -> None:
    """Cut at CUTS places, or with a line garbled: a result or a ControllerError, nothing else."""
    text = recorded(relative)
    lines = text.splitlines(keepends=True)
    variants = [text[: len(text) * n // CUTS] for n in range(CUTS)]
    variants += [
        "".join([*lines[:n], HOSTILE + "\n", *lines[n + 1 :]])
        for n in range(0, len(lines), max(1, len(lines) // CUTS))
    ]
    variants += [re.sub(r"\d", "9" * 40, text), text.replace(":", "")]
    for variant in variants:
        try:
            result: object = parse(variant)
        except ControllerError as error:
            result = str(error)
            assert "\n" not in result
            assert "EVIL" not in result
        assert isinstance(result, list | dict | str)
