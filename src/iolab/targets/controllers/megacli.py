"""MegaCli's text: `-LDPDInfo -aAll -NoLog` (each VD's "Default Cache Policy", as configured,
and "Current Cache Policy", in effect) and `-AdpBbuCmd -aAll -NoLog` (the battery).

A policy reads "WriteBack, ReadAhead, Direct, No Write Cache if Bad BBU"; write-back with
"Write Cache OK if Bad BBU" is always-write-back. These commands name no card model, firmware
or cache size: those are None.
"""

from __future__ import annotations

import re

from iolab.targets.controllers import common
from iolab.targets.controllers.model import (
    UNREPORTED,
    Battery,
    CachePolicy,
    Controller,
    Health,
    Io,
    Member,
    Read,
    VirtualDrive,
    Write,
)

TOOL = "MegaCli"
_ADAPTER = re.compile(r"^Adapter\s*#\s*(\d{1,4})\s*$")
_VD = re.compile(r"^Virtual Drive:\s*(\d{1,6})\b")
_PD = re.compile(r"^PD:\s*\d+\s+Information")
_BBU = re.compile(r"^BBU status for Adapter:\s*(\d{1,4})\s*$")
_BBU_FAILED = re.compile(r"^Adapter\s*(\d{1,4}):\s*Get BBU Status Failed", re.IGNORECASE)
_TOKENS: dict[str, Write | Read | Io] = {
    "writeback": Write.BACK,
    "writethrough": Write.THROUGH,
    "readahead": Read.AHEAD,
    "readaheadnone": Read.NONE,
    "noreadahead": Read.NONE,
    "readadaptive": Read.ADAPTIVE,
    "adaptive": Read.ADAPTIVE,
    "adaptivereadahead": Read.ADAPTIVE,
    "direct": Io.DIRECT,
    "cached": Io.CACHED,
}
_LEVEL = re.compile(r"Primary-(\d+)(?:,\s*Secondary-(\d+))?")
Fields = dict[str, str]


def parse(ldpdinfo: str, bbu: str | None = None) -> list[Controller]:
    """The adapters of `-LDPDInfo` with their VDs, and each one's battery from `-AdpBbuCmd`
    where that output is given."""
    batteries = parse_bbu(bbu) if bbu is not None else {}
    return [
        Controller(
            tool=TOOL,
            index=adapter,
            model=None,
            firmware=None,
            serial=None,
            cache_bytes=None,
            battery=batteries.get(adapter, UNREPORTED),
            drives=tuple(_drive(adapter, vd, fields, pds) for vd, fields, pds in drives),
        )
        for adapter, drives in _adapters(ldpdinfo).items()
    ]


def parse_bbu(text: str) -> dict[int, Battery]:
    """Each adapter's battery in `-AdpBbuCmd -aAll` output."""
    common.nonempty(text, TOOL, "-AdpBbuCmd -aAll")
    found: dict[int, Fields] = {}
    unread: set[int] = set()
    current: Fields | None = None
    for line in common.lines(text):
        header, failed = _BBU.match(line), _BBU_FAILED.match(line)
        if header:
            current = found.setdefault(int(header.group(1)), {})
        elif failed:
            unread.add(int(failed.group(1)))
        elif current is not None and (kv := common.pair(line)) and kv[0] not in current:
            current[kv[0]] = kv[1]
    if not found and not unread:
        raise common.fail(TOOL, "`-AdpBbuCmd -aAll` names no adapter's battery")
    return {**dict.fromkeys(unread, UNREPORTED), **{a: _battery(f) for a, f in found.items()}}


def _battery(fields: Fields) -> Battery:
    state = fields.get("Battery State")
    health = common.health(state)
    if fields.get("Learn Cycle Active", "").lower() == "yes":
        health = Health.LEARNING
    if fields.get("Battery Replacement required", "").lower() == "yes":
        health = Health.FAILED
    missing = fields.get("Battery Pack Missing", "").lower() == "yes"
    return Battery(
        present=not missing,
        health=health,
        words=state,
        kind=" ".join(dict.fromkeys(("BBU", fields.get("BatteryType") or "BBU"))),
    )


def _adapters(text: str) -> dict[int, list[tuple[int, Fields, list[Fields]]]]:
    """adapter -> [(VD number, its fields, its physical drives' fields)]."""
    common.nonempty(text, TOOL, "-LDPDInfo -aAll")
    adapters: dict[int, list[tuple[int, Fields, list[Fields]]]] = {}
    drives: list[tuple[int, Fields, list[Fields]]] | None = None
    fields: Fields | None = None
    for line in common.lines(text):
        if (adapter := _ADAPTER.match(line)) is not None:
            drives, fields = adapters.setdefault(int(adapter.group(1)), []), None
        elif drives is not None and (vd := _VD.match(line)) is not None:
            fields = {}
            drives.append((int(vd.group(1)), fields, []))
        elif _PD.match(line):
            fields = {}
            if drives:
                drives[-1][2].append(fields)
            else:
                fields = None
        elif fields is not None and (kv := common.pair(line)) and kv[0] not in fields:
            fields[kv[0]] = kv[1]
    if not adapters:
        raise common.fail(TOOL, "`-LDPDInfo -aAll` names no adapter (no 'Adapter #N' line)")
    return adapters


def _members(pds: list[Fields]) -> tuple[Member, ...]:
    """A VD's physical drives: enclosure:slot and the Device Id smartctl's megaraid,N takes."""
    found: dict[str, Member] = {}
    for pd in pds:
        did, slot = pd.get("Device Id", ""), pd.get("Slot Number", "")
        enclosure = pd.get("Enclosure Device ID", "")
        if re.fullmatch(r"\d{1,5}", did, re.ASCII) and re.fullmatch(r"\d{1,5}", slot, re.ASCII):
            where = f"{enclosure}:{slot}" if enclosure.isdigit() else slot
            found.setdefault(where, Member(where, f"megaraid,{int(did)}"))
    return tuple(found.values())


def _drive(adapter: int, number: int, fields: Fields, pds: list[Fields]) -> VirtualDrive:
    vd = f"-L{number} -a{adapter}"
    return VirtualDrive(
        id=vd,
        raid_level=_level(fields),
        size_bytes=common.size_bytes(fields.get("Size")),
        block_device=None,
        configured=_policy(fields, "Default Cache Policy", vd),
        effective=_policy(fields, "Current Cache Policy", vd),
        drive_cache=common.drive_cache(fields.get("Disk Cache Policy")),
        name=fields.get("Name") or None,
        state=fields.get("State") or None,
        members=_members(pds),
    )


def _policy(fields: Fields, key: str, vd: str) -> CachePolicy | None:
    words = fields.get(key)
    if words is None:
        return None
    parts = [re.sub(r"[\s_-]", "", token.lower()) for token in words.split(",")]
    found = [_TOKENS[part] for part in parts if part in _TOKENS]
    write = next((p for p in found if isinstance(p, Write)), None)
    if write is None:
        raise common.fail(TOOL, f"the {key} of {vd} names no write policy")
    if write is Write.BACK and "writecacheokifbadbbu" in parts:
        write = Write.ALWAYS_BACK
    read = next((p for p in found if isinstance(p, Read)), None)
    io = next((p for p in found if isinstance(p, Io)), None)
    return CachePolicy(write=write, read=read, io=io, words=words)


def _level(fields: Fields) -> str | None:
    """ "Primary-1, Secondary-0" over one span is RAID1, over more RAID10 (MegaRAID's way)."""
    found = _LEVEL.search(fields.get("RAID Level", ""))
    if found is None:
        return None
    primary, secondary = found.group(1), found.group(2)
    spans = fields.get("Span Depth", "1").strip()
    counted = re.fullmatch(r"\d{1,4}", spans, re.ASCII)
    spanned = (counted is not None and int(spans) > 1) or secondary == "3"
    return f"RAID{primary}0" if spanned and primary != "0" else f"RAID{primary}"
