"""storcli's and perccli's JSON (the `J` suffix): `/cALL show all J`, `/call show J`, and a
VD's own `/cN/vM show all J`.

A VD's `Cache` string ("RWBD": R read-ahead or NR none, WB / AWB / FWB / WT, D direct or C
cached I/O) is the policy in effect. The policy configured is in the VD's own document:
"Write Cache(initial setting)" is its write policy, and its read-ahead and I/O policy are
the Cache string's (the card overrides only the write policy when its battery cannot
protect the cache). A controller document alone gives no configured policy (None).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from iolab.targets.controllers import common
from iolab.targets.controllers.model import (
    UNREPORTED,
    Battery,
    CachePolicy,
    Controller,
    DriveCache,
    Health,
    Io,
    Member,
    Read,
    VirtualDrive,
    Write,
)

_CACHE = re.compile(r"^(NR|R|AR)?(AWB|FWB|WB|WT)(D|C)$")
_READ = {"R": Read.AHEAD, "NR": Read.NONE, "AR": Read.ADAPTIVE}
_WRITE = {"WB": Write.BACK, "AWB": Write.ALWAYS_BACK, "FWB": Write.ALWAYS_BACK, "WT": Write.THROUGH}
_IO = {"D": Io.DIRECT, "C": Io.CACHED}
_INITIAL = {
    "writeback": Write.BACK,
    "writethrough": Write.THROUGH,
    "alwayswriteback": Write.ALWAYS_BACK,
    "forcedwriteback": Write.ALWAYS_BACK,
    "forcewriteback": Write.ALWAYS_BACK,
}
_VD_KEY = re.compile(r"^/c(\d{1,6})/v(\d{1,6})$", re.ASCII)
_NO_CONTROLLER = re.compile(r"no controller", re.IGNORECASE)


def parse(text: str, tool: str = "storcli") -> list[Controller]:
    """The controllers of a `/cALL show all J` or `/call show J` document (each with its VD
    list); none for the "No Controller found" failure."""
    return [
        _controller(data, index, tool)
        for index, data in _responses(text, tool, "/cALL show all J")
        if not any(_VD_KEY.match(key) for key in data)
    ]


def parse_vd(text: str, tool: str = "storcli") -> list[VirtualDrive]:
    """The VDs of a `/cN/vM show all J` document (or `/cN/vALL`), with the configured policy."""
    drives: list[VirtualDrive] = []
    for _, data in _responses(text, tool, "/cN/vM show all J"):
        for key, rows in data.items():
            found = _VD_KEY.match(key)
            if found:
                vd = int(found.group(2))
                drives.append(_detailed(key, _first(rows, key, tool), data, vd, tool))
    return drives


def with_details(controller: Controller, details: list[VirtualDrive]) -> Controller:
    """`controller` with each VD replaced by its own document's fuller version (its members
    the controller document's where its own lists none)."""
    by_id = {vd.id: vd for vd in details}
    return replace(
        controller,
        drives=tuple(_fuller(vd, by_id.get(vd.id)) for vd in controller.drives),
    )


def _fuller(listed: VirtualDrive, detailed: VirtualDrive | None) -> VirtualDrive:
    if detailed is None:
        return listed
    return detailed if detailed.members else replace(detailed, members=listed.members)


def _load(text: str, tool: str, command: str) -> Any:
    common.nonempty(text, tool, command)
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise common.fail(tool, f"`{command}` printed no complete JSON document") from None


def _responses(text: str, tool: str, command: str) -> list[tuple[int, Mapping[str, Any]]]:
    """(controller number, Response Data) of each successful entry of "Controllers"."""
    document = _load(text, tool, command)
    entries = document.get("Controllers") if isinstance(document, Mapping) else None
    if not isinstance(entries, list):
        raise common.fail(tool, f"`{command}` printed JSON without its Controllers list")
    found: list[tuple[int, Mapping[str, Any]]] = []
    for entry in entries:
        status = _mapping(entry, "Command Status", tool)
        if status.get("Status") != "Success":
            if _NO_CONTROLLER.search(_text(status.get("Description")) or ""):
                continue
            raise common.fail(tool, f"`{command}` reports a Status other than Success")
        data = _mapping(entry, "Response Data", tool)
        found.append((_index(status, data, tool), data))
    return found


def _controller(data: Mapping[str, Any], index: int, tool: str) -> Controller:
    basics = _sub(data, "Basics")
    version = _sub(data, "Version")
    hardware = _sub(data, "HwCfg")
    return Controller(
        tool=tool,
        index=index,
        model=_text(basics.get("Model")) or _text(data.get("Product Name")),
        firmware=_text(version.get("Firmware Version")) or _text(data.get("FW Version")),
        serial=_text(basics.get("Serial Number")) or _text(data.get("Serial Number")),
        cache_bytes=common.size_bytes(_text(hardware.get("On Board Memory Size"))),
        battery=_battery(data, hardware),
        drives=tuple(_listed(row, data, index, tool) for row in _rows(data, "VD LIST", tool)),
    )


def _battery(data: Mapping[str, Any], hardware: Mapping[str, Any]) -> Battery:
    for key, kind in (("Cachevault_Info", "CacheVault"), ("BBU_Info", "BBU")):
        rows = data.get(key)
        if isinstance(rows, list) and rows and isinstance(rows[0], Mapping):
            state = _text(rows[0].get("State"))
            model = _text(rows[0].get("Model"))
            named = f"{kind} {model}" if model else kind
            return Battery(present=True, health=common.health(state), words=state, kind=named)
    fitted = _text(hardware.get("BBU"))
    if fitted == "Absent":
        return Battery(present=False, health=Health.UNKNOWN, words=fitted)
    if fitted == "Present":
        return Battery(present=True, health=Health.UNKNOWN, words=fitted)
    return UNREPORTED


def _listed(row: Mapping[str, Any], data: Mapping[str, Any], index: int, tool: str) -> VirtualDrive:
    """A VD LIST row: the policy in effect (configured: None, this document does not say)."""
    group, vd = _dg_vd(row, tool)
    return VirtualDrive(
        id=f"/c{index}/v{vd}",
        raid_level=_text(row.get("TYPE")),
        size_bytes=common.size_bytes(_text(row.get("Size"))),
        block_device=None,
        configured=None,
        effective=_policy(row, f"/c{index}/v{vd}", tool),
        drive_cache=_topology_cache(data, group),
        name=_text(row.get("Name")),
        state=_text(row.get("State")),
        members=_members(
            row
            for row in _table(data, "PD LIST") or _table(data, "TOPOLOGY")
            if row.get("DG") == group
        ),
    )


def _detailed(
    key: str, row: Mapping[str, Any], data: Mapping[str, Any], vd: int, tool: str
) -> VirtualDrive:
    props = _sub(data, f"VD{vd} Properties")
    effective = _policy(row, key, tool)
    initial = _text(props.get("Write Cache(initial setting)"))
    configured = None
    if initial is not None:
        write = _INITIAL.get(re.sub(r"[\s_-]", "", initial.lower()))
        if write is None:
            raise common.fail(tool, f"the Write Cache(initial setting) of {key} is not one it has")
        words = f"Write Cache(initial setting) {initial}, Cache {effective.words}"
        configured = CachePolicy(write, effective.read, effective.io, words)
    return VirtualDrive(
        id=key,
        raid_level=_text(row.get("TYPE")),
        size_bytes=common.size_bytes(_text(row.get("Size"))),
        block_device=_text(props.get("OS Drive Name")),
        configured=configured,
        effective=effective,
        drive_cache=common.drive_cache(_text(props.get("Disk Cache Policy"))),
        name=_text(row.get("Name")),
        state=_text(row.get("State")),
        members=_members(_table(data, f"PDs for VD {vd}")),
    )


def _table(data: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    """A table's rows (none where the document has no such table, or it is not one)."""
    rows = data.get(key)
    return [r for r in rows if isinstance(r, Mapping)] if isinstance(rows, list) else []


def _members(rows: Iterable[Mapping[str, Any]]) -> tuple[Member, ...]:
    """The physical drives of PD rows (or TOPOLOGY's DRIVE rows): slot and device id; a row
    without a device id ("-": a drive group's own row) is none."""
    found: dict[str, Member] = {}
    for row in rows:
        did, slot = row.get("DID"), _text(row.get("EID:Slt") or row.get("EID:Slot"))
        if isinstance(did, int) and not isinstance(did, bool) and 0 <= did < 1 << 16 and slot:
            found.setdefault(slot, Member(slot, f"megaraid,{did}"))
    return tuple(found.values())


def _policy(row: Mapping[str, Any], vd: str, tool: str) -> CachePolicy:
    words = _text(row.get("Cache"))
    found = _CACHE.match(words or "")
    if words is None or found is None:
        raise common.fail(tool, f"the Cache field of {vd} is not a cache policy it prints")
    read, write, io = found.groups()
    return CachePolicy(
        write=_WRITE[write],
        read=_READ[read] if read else None,
        io=_IO[io],
        words=words,
    )


def _topology_cache(data: Mapping[str, Any], group: int) -> DriveCache | None:
    """The drive group's PDC (drive cache) from the TOPOLOGY table's row for the group."""
    rows = data.get("TOPOLOGY")
    for row in rows if isinstance(rows, list) else ():
        if isinstance(row, Mapping) and row.get("DG") == group and row.get("Arr") == "-":
            return common.drive_cache(_text(row.get("PDC")))
    return None


def _dg_vd(row: Mapping[str, Any], tool: str) -> tuple[int, int]:
    found = re.fullmatch(r"(\d{1,6})/(\d{1,6})", _text(row.get("DG/VD")) or "")
    if found is None:
        raise common.fail(tool, "a VD LIST row's DG/VD field is not two numbers")
    return int(found.group(1)), int(found.group(2))


def _index(status: Mapping[str, Any], data: Mapping[str, Any], tool: str) -> int:
    number = status.get("Controller", _sub(data, "Basics").get("Controller"))
    if isinstance(number, bool) or not isinstance(number, int | str):
        raise common.fail(tool, "a document's Controller field is not a number")
    text = str(number).strip()
    if not re.fullmatch(r"\d{1,6}", text, re.ASCII):
        raise common.fail(tool, "a document's Controller field is not a number")
    return int(text)


def _rows(data: Mapping[str, Any], key: str, tool: str) -> list[Mapping[str, Any]]:
    rows = data.get(key, [])
    if not isinstance(rows, list) or not all(isinstance(row, Mapping) for row in rows):
        raise common.fail(tool, f"the {key} field is not a table")
    return rows


def _first(rows: object, key: str, tool: str) -> Mapping[str, Any]:
    if not isinstance(rows, list) or not rows or not isinstance(rows[0], Mapping):
        raise common.fail(tool, f"the {key} field is not a table")
    return rows[0]


def _mapping(entry: object, key: str, tool: str) -> Mapping[str, Any]:
    value = entry.get(key) if isinstance(entry, Mapping) else None
    if not isinstance(value, Mapping):
        raise common.fail(tool, f"a Controllers entry has no {key} object")
    return value


def _sub(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key)
    return value if isinstance(value, Mapping) else {}


def _text(value: object) -> str | None:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    return str(value).strip() or None
