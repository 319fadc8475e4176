"""arcconf's text: `GETCONFIG <controller> LD`, each logical device's cache "setting" (as
configured) and "status" (in effect).

The write modes are arcconf's SETCACHE modes: `wbb`, write-back while the battery or ZMM
protects the cache ("Enabled (write-back) when protected by battery/ZMM"), is iolab's
write-back; `wb`, write-back whatever protects it (a plain "Enabled"), is always-write-back;
`wt` ("Disabled") is write-through. The read cache (`ron`/`roff`) reads ahead, so "Enabled"
is read-ahead and "Disabled" none. arcconf has no I/O policy (None). The command names no
card model, firmware or cache size: those are None.
"""

from __future__ import annotations

import re

from iolab.targets.controllers import common
from iolab.targets.controllers.model import (
    UNREPORTED,
    CachePolicy,
    Controller,
    Read,
    VirtualDrive,
    Write,
)

TOOL = "arcconf"
_FOUND = re.compile(r"^Controllers found:\s*(\d{1,4})\s*$", re.MULTILINE)
_LD = re.compile(r"^Logical device number\s+(\d{1,6})\s*$", re.IGNORECASE)
_PROTECTED = re.compile(r"protected by (battery|zmm)", re.IGNORECASE)
Fields = dict[str, str]


def controllers_found(text: str) -> int | None:
    """ "Controllers found: N", where the output says it."""
    found = _FOUND.search(text)
    return int(found.group(1)) if found else None


def parse(text: str, controller: int = 1) -> list[Controller]:
    """The card `controller` (the number the command asked for) with its logical devices;
    none when arcconf says it found no controller."""
    command = f"GETCONFIG {controller} LD"
    common.nonempty(text, TOOL, command)
    devices = _devices(text)
    if not devices and controllers_found(text) is None:
        raise common.fail(TOOL, f"`{command}` names no logical device and no controller count")
    if not devices and controllers_found(text) == 0:
        return []
    drives = tuple(_drive(controller, number, fields) for number, fields in devices)
    return [Controller(TOOL, controller, None, None, None, None, UNREPORTED, drives)]


def _devices(text: str) -> list[tuple[int, Fields]]:
    devices: list[tuple[int, Fields]] = []
    fields: Fields | None = None
    for line in common.lines(text):
        if (header := _LD.match(line.strip())) is not None:
            fields = {}
            devices.append((int(header.group(1)), fields))
        elif fields is not None and (kv := common.pair(line)) and kv[0].lower() not in fields:
            fields[kv[0].lower()] = kv[1]
    return devices


def _drive(controller: int, number: int, fields: Fields) -> VirtualDrive:
    ld = f"{controller} LOGICALDRIVE {number}"
    read_set, read_now = fields.get("read-cache setting"), fields.get("read-cache status")
    write_set, write_now = fields.get("write-cache setting"), fields.get("write-cache status")
    configured = _policy(ld, "setting", read_set, write_set, None)
    effective = _policy(ld, "status", read_now, write_now, configured)
    return VirtualDrive(
        id=ld,
        raid_level=common.raid_level(fields.get("raid level")),
        size_bytes=common.size_bytes(fields.get("size")),
        block_device=None,
        configured=configured,
        effective=effective,
        name=fields.get("logical device name") or None,
        state=fields.get("status of logical device") or None,
    )


def _policy(
    ld: str, kind: str, read: str | None, write: str | None, configured: CachePolicy | None
) -> CachePolicy | None:
    if read is None and write is None:
        return None
    words = f"Read-cache {kind} {read or '-'}, Write-cache {kind} {write or '-'}"
    return CachePolicy(
        write=_write(ld, kind, write, configured) if write is not None else None,
        read=_read(ld, kind, read) if read is not None else None,
        io=None,
        words=words,
    )


def _read(ld: str, kind: str, words: str) -> Read:
    low = words.strip().lower()
    if low.startswith(("enabled", "on")):
        return Read.AHEAD
    if low.startswith(("disabled", "off")):
        return Read.NONE
    raise common.fail(TOOL, f"the Read-cache {kind} of {ld} is not one arcconf prints")


def _write(ld: str, kind: str, words: str, configured: CachePolicy | None) -> Write:
    low = words.strip().lower()
    if low.startswith(("disabled", "off")):
        return Write.THROUGH
    if not low.startswith(("enabled", "on")):
        raise common.fail(TOOL, f"the Write-cache {kind} of {ld} is not one arcconf prints")
    if _PROTECTED.search(low):
        return Write.BACK
    if kind == "status":  # "On": whatever the setting asked for, it writes back now
        asked = configured.write if configured else None
        return asked if asked in (Write.BACK, Write.ALWAYS_BACK) else Write.ALWAYS_BACK
    return Write.ALWAYS_BACK
