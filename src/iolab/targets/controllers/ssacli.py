"""ssacli's text (also hpssacli's, hpacucli's): `ctrl all show config detail`.

Smart Array has no per-drive write or read-ahead switch: a logical drive's "Caching" (the
array accelerator) is on or off, and the card splits its cache between reads and writes by
its "Cache Ratio". So, as configured: no caching, or 0% write, is write-through; otherwise
write-back, or always-write-back where "No-Battery Write Cache" is enabled; read is adaptive
(the card's read cache reads ahead on sequential reads) where caching is on and the read
share is above 0%, else none. In effect: everything off while "Cache Status" is not OK (the
card disables its cache while its battery charges or after a fault), and write-through for
write-back while the battery is not healthy. Smart Array has no I/O policy (None).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from iolab.targets.controllers import common
from iolab.targets.controllers.model import (
    UNREPORTED,
    Battery,
    CachePolicy,
    CacheRatio,
    Controller,
    Health,
    Member,
    Read,
    VirtualDrive,
    Write,
)

TOOL = "ssacli"
COMMAND = "ctrl all show config detail"
_HEADER = re.compile(r"^(?P<model>\S.*?)\s+in\s+Slot\s+(?P<slot>\d{1,4})\b", re.ASCII)
_RATIO = re.compile(r"^\s*(\d{1,3})%\s*Read\s*/\s*(\d{1,3})%\s*Write\s*$", re.IGNORECASE | re.ASCII)
_DRIVE = re.compile(r"^physicaldrive\s+([0-9A-Za-z]{1,8}(?::[0-9A-Za-z]{1,8}){1,3})\b", re.ASCII)
_NONE_FOUND = re.compile(r"^Error:\s*No controllers detected", re.IGNORECASE | re.MULTILINE)


@dataclass
class _Node:
    """A line and the lines indented under it."""

    key: str
    value: str | None
    indent: int
    line: int = 0  # its line in the output, from 1
    children: list[_Node] = field(default_factory=list)

    def get(self, key: str) -> str | None:
        found = self.child(key)
        return found.value if found else None

    def child(self, key: str) -> _Node | None:
        return next((c for c in self.children if c.key == key and c.value), None)

    def walk(self) -> Iterator[_Node]:
        """Every node below, in order, without recursion (an output may nest deep)."""
        pending = list(reversed(self.children))
        while pending:
            node = pending.pop()
            yield node
            pending.extend(reversed(node.children))


def parse(text: str) -> list[Controller]:
    """Each Smart Array in the output, with its logical drives."""
    common.nonempty(text, TOOL, COMMAND)
    cards = [(node, found) for node in _tree(text) if (found := _HEADER.match(node.key))]
    if not cards and _NONE_FOUND.search(text):
        return []
    if not cards:
        raise common.fail(TOOL, f"`{COMMAND}` names no controller (no '... in Slot N' line)")
    return [_controller(card, header) for card, header in cards]


def _tree(text: str) -> list[_Node]:
    root = _Node("", None, -1)
    stack = [root]
    for number, line in enumerate(common.lines(text), start=1):
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        key, value = common.pair(line) or (line.strip(), None)
        node = _Node(key, value, indent, number)
        while stack[-1].indent >= indent:
            stack.pop()
        stack[-1].children.append(node)
        stack.append(node)
    return root.children


def _controller(card: _Node, header: re.Match[str]) -> Controller:
    slot = _slot(card, header)
    ratio = _ratio(card.get("Cache Ratio"))
    battery = _battery(card)
    status = card.get("Cache Status")
    ok = None if status is None else status.strip().upper() == "OK"
    no_battery_writes = (card.get("No-Battery Write Cache") or "").lower() == "enabled"
    members = _members(card)
    drives = tuple(
        replace(
            _drive(slot, node, ratio, no_battery_writes, status, battery),
            members=members.get(id(node), ()),
        )
        for node in card.walk()
        if node.key == "Logical Drive" and re.fullmatch(r"\d{1,6}", node.value or "", re.ASCII)
    )
    size = card.get("Total Cache Size")
    absent = (card.get("Cache Board Present") or "").lower() == "false"
    return Controller(
        tool=TOOL,
        index=slot,
        model=header.group("model"),
        firmware=card.get("Firmware Version"),
        serial=card.get("Serial Number"),
        cache_bytes=0 if absent and size is None else common.size_bytes(size, bare="G"),
        battery=battery,
        drives=drives,
        drive_cache=common.drive_cache(card.get("Drive Write Cache")),
        cache_ratio=ratio,
        cache_ok=ok,
    )


def _physical(node: _Node) -> str | None:
    """A "physicaldrive 2E:1:1 (...)" line's drive, as ssacli names it (port:box:bay)."""
    if not node.key.startswith("physicaldrive "):
        return None
    words = f"{node.key}:{node.value}" if node.value is not None else node.key
    found = _DRIVE.match(words)
    return found.group(1) if found else None


def _numbers(card: _Node) -> dict[str, int]:
    """Each physical drive's place in the card's list of them, from 0 (first named first):
    the N of smartctl's `-d cciss,N`."""
    names = (_physical(node) for node in card.walk())
    return {name: n for n, name in enumerate(dict.fromkeys(x for x in names if x))}


def _members(card: _Node) -> dict[int, tuple[Member, ...]]:
    """Each logical drive's (by its node's id) physical drives: those its array names (beside
    its logical drives, or in their mirror groups), each once."""
    numbers = _numbers(card)
    found: dict[int, tuple[Member, ...]] = {}
    for array in (node for node in card.walk() if node.key == "Array"):
        named = dict.fromkeys(x for node in array.walk() if (x := _physical(node)))
        drives = tuple(Member(pd, f"cciss,{numbers[pd]}") for pd in named)
        found.update((id(n), drives) for n in array.walk() if n.key == "Logical Drive")
    return found


def _slot(card: _Node, header: re.Match[str]) -> int:
    """The card's "Slot:" (its header's slot where the card prints none): the number
    `ctrl slot=N` takes."""
    found = card.child("Slot")
    if found is None or found.value is None:
        return int(header.group("slot"))
    if not re.fullmatch(r"\d{1,4}", found.value, re.ASCII):
        raise common.fail(TOOL, f"line {found.line} (Slot) of `{COMMAND}` is not a slot number")
    return int(found.value)


def _battery(card: _Node) -> Battery:
    count, status = card.get("Battery/Capacitor Count"), card.get("Battery/Capacitor Status")
    kind = card.get("Cache Backup Power Source")
    if count is not None and count.strip() == "0":
        return Battery(present=False, health=Health.UNKNOWN, words=status, kind=kind)
    if count is None and status is None:
        return UNREPORTED
    return Battery(present=True, health=common.health(status), words=status, kind=kind)


def _ratio(words: str | None) -> CacheRatio | None:
    found = _RATIO.match(words or "")
    return CacheRatio(int(found.group(1)), int(found.group(2))) if found else None


def _drive(
    slot: int,
    node: _Node,
    ratio: CacheRatio | None,
    no_battery_writes: bool,
    status: str | None,
    battery: Battery,
) -> VirtualDrive:
    caching = (node.get("Caching") or "").lower()
    if caching not in ("enabled", "disabled"):
        raise common.fail(TOOL, f"the Caching field of logical drive {node.value} is unread")
    configured = _configured(caching == "enabled", ratio, no_battery_writes)
    return VirtualDrive(
        id=f"slot={slot} ld {node.value}",
        raid_level=common.raid_level(node.get("Fault Tolerance")),
        size_bytes=common.size_bytes(node.get("Size")),
        block_device=node.get("Disk Name"),
        configured=configured,
        effective=_effective(configured, status, battery),
        name=node.get("Logical Drive Label"),
        state=node.get("Status"),
    )


def _configured(caching: bool, ratio: CacheRatio | None, no_battery_writes: bool) -> CachePolicy:
    writes = caching and ratio is not None and ratio.write > 0
    reads = caching and ratio is not None and ratio.read > 0
    write = (Write.ALWAYS_BACK if no_battery_writes else Write.BACK) if writes else Write.THROUGH
    words = f"Caching {'Enabled' if caching else 'Disabled'}"
    if ratio is not None:
        words += f", Cache Ratio {ratio.summary()}"
    words += f", No-Battery Write Cache {'Enabled' if no_battery_writes else 'Disabled'}"
    return CachePolicy(write, Read.ADAPTIVE if reads else Read.NONE, None, words)


def _effective(configured: CachePolicy, status: str | None, battery: Battery) -> CachePolicy:
    words = f"{configured.words}, Cache Status {status}" if status else configured.words
    if status is not None and status.strip().upper() != "OK":
        return CachePolicy(Write.THROUGH, Read.NONE, None, words)
    unprotected = battery.present is False or battery.health not in (
        Health.OPTIMAL,
        Health.UNKNOWN,
    )
    write = Write.THROUGH if configured.write is Write.BACK and unprotected else configured.write
    return CachePolicy(write, configured.read, None, words)
