"""The commands that set and read a virtual drive's cache policy, per RAID tool family: the
values each part takes, which program, the argv lists."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path

from iolab.model import CardPolicy, Setup
from iolab.targets.controllers import nvme_cache

# sysfs cache_type words for a plain disk's write cache
SYSFS_WORDS = {"write-back": "write back", "write-through": "write through"}
SYSFS_FILE = re.compile(r"/sys/block/[a-z0-9]{1,32}/device/scsi_disk/[0-9:]{7,40}/cache_type")


WRITE = ("write-back", "write-through", "always-write-back")


READ = ("read-ahead", "none", "adaptive")


IO = ("direct", "cached")


DRIVE = ("on", "off", "default")


FIELDS = ("write_cache", "read_ahead", "io_policy", "drive_cache", "cache_ratio")


RATIOS = tuple(f"{read}/{100 - read}" for read in range(0, 101, 5))  # Smart Array's, read/write


# Per tool: the VD's pattern, the program names searched on PATH, and the values each part
# takes (a part a tool has no set command for is absent).
TOOLS: dict[str, tuple[str, tuple[str, ...], dict[str, tuple[str, ...]]]] = {
    "storcli": (
        r"/c\d{1,3}/v\d{1,4}",
        ("storcli64", "storcli"),
        {
            "write_cache": WRITE,
            "read_ahead": ("read-ahead", "none"),
            "io_policy": IO,
            "drive_cache": DRIVE,
        },
    ),
    "perccli": (
        r"/c\d{1,3}/v\d{1,4}",
        ("perccli64", "perccli"),
        {
            "write_cache": WRITE,
            "read_ahead": ("read-ahead", "none"),
            "io_policy": IO,
            "drive_cache": DRIVE,
        },
    ),
    "megacli": (
        r"-L\d{1,4} -a\d{1,3}",
        ("MegaCli64", "MegaCli", "megacli"),
        {"write_cache": WRITE, "read_ahead": READ, "io_policy": IO, "drive_cache": ("on", "off")},
    ),
    "ssacli": (
        r"slot=\d{1,3} ld \d{1,4}",
        ("ssacli", "hpssacli", "hpacucli"),
        {"write_cache": WRITE, "cache_ratio": RATIOS},
    ),
    "arcconf": (
        r"\d{1,3} LOGICALDRIVE \d{1,4}",
        ("arcconf",),
        {"write_cache": WRITE, "read_ahead": ("read-ahead", "none")},
    ),
}


FAMILY = {
    "storcli": "storcli",
    "perccli": "storcli",
    "megacli": "MegaCli",
    "ssacli": "ssacli",
    "arcconf": "arcconf",
}


_STORCLI = {
    "write-back": "wb",
    "write-through": "wt",
    "always-write-back": "awb",
    "read-ahead": "ra",
    "none": "nora",
    "direct": "direct",
    "cached": "cached",
    "on": "on",
    "off": "off",
    "default": "default",
}


_STORCLI_KEY = {
    "write_cache": "wrcache",
    "read_ahead": "rdcache",
    "io_policy": "iopolicy",
    "drive_cache": "pdcache",
}


_MEGA = {
    "write-back": ("WB", "NoCachedBadBBU"),
    "always-write-back": ("WB", "CachedBadBBU"),
    "write-through": ("WT",),
    "read-ahead": ("RA",),
    "none": ("NORA",),
    "adaptive": ("ADRA",),
    "direct": ("Direct",),
    "cached": ("Cached",),
    "on": ("-EnDskCache",),
    "off": ("-DisDskCache",),
}


_ARC = {
    "write-back": "wbb",
    "always-write-back": "wb",
    "write-through": "wt",
    "read-ahead": "ron",
    "none": "roff",
}


_SSA = {
    "write-back": ("enable", "disable"),
    "always-write-back": ("enable", "enable"),
    "write-through": ("disable", None),
}


def problem(tool: object, vd: object, fields: Mapping[str, object]) -> tuple[str, str] | None:
    """(key, words) for the first value a controller table may not hold; None if all fit."""
    if tool not in TOOLS:
        return "tool", f"tool = {tool!r} is not one of {', '.join(TOOLS)}"
    assert isinstance(tool, str)
    pattern, _, takes = TOOLS[tool]
    if not isinstance(vd, str) or not re.fullmatch(pattern, vd, re.ASCII):
        example = {
            "storcli": "/c0/v0",
            "perccli": "/c0/v0",
            "megacli": "-L0 -a0",
            "ssacli": "slot=0 ld 1",
            "arcconf": "1 LOGICALDRIVE 0",
        }[tool]
        return (
            "vd",
            f"vd = {vd!r} is not a {tool} virtual drive; name it as {tool} does: {example!r}",
        )
    for key, value in fields.items():
        if key not in takes:
            return key, f"{tool} has no set command for {key} here; leave it out"
        if value not in takes[key]:
            choices = "READ/WRITE percentages in steps of 5 that add up to 100, e.g. '25/75'"
            choose = choices if key == "cache_ratio" else ", ".join(takes[key])
            return key, f"{key} = {value!r} is not allowed; choose one of {choose}"
    return None


def program(tool: str) -> str | None:
    """The tool's program on PATH, by the first of its names found."""
    return next((found for name in TOOLS[tool][1] if (found := shutil.which(name))), None)


def set_commands(policy: CardPolicy, key: str, value: str, prog: str = "") -> list[list[str]]:
    """The argv lists that set one part of the policy (`prog`: the program, else its name);
    a value that is not one (a placeholder, for `iolab show`) goes in as it is."""
    exe = prog or TOOLS[policy.tool][1][0]
    numbers = [int(n) for n in re.findall(r"\d+", policy.vd)]
    if policy.tool in ("storcli", "perccli"):
        return [
            [exe, policy.vd, "set", f"{_STORCLI_KEY[key]}={_STORCLI.get(value, value)}", "nolog"]
        ]
    if policy.tool == "megacli":
        where = [f"-L{numbers[0]}", f"-a{numbers[1]}"]
        return [[exe, "-LDSetProp", word, *where, "-NoLog"] for word in _MEGA.get(value, (value,))]
    if policy.tool == "arcconf":
        mode = _ARC.get(value, value)
        return [
            [exe, "SETCACHE", str(numbers[0]), "LOGICALDRIVE", str(numbers[1]), mode, "noprompt"]
        ]
    slot = f"slot={numbers[0]}"
    if key == "cache_ratio":
        return [[exe, "ctrl", slot, "modify", f"cacheratio={value}"]]
    accelerator, unprotected = _SSA.get(value, (value, None))
    out = [[exe, "ctrl", slot, "ld", str(numbers[1]), "modify", f"arrayaccelerator={accelerator}"]]
    if unprotected is not None:
        out.append([exe, "ctrl", slot, "modify", f"nobatterywritecache={unprotected}"])
    return out


def read_commands(policy: CardPolicy, prog: str = "") -> list[list[str]]:
    """What reading the card's policy runs (as `probe` asks, per family)."""
    exe = prog or TOOLS[policy.tool][1][0]
    return {
        "storcli": [
            [exe, "/cALL", "show", "all", "J", "nolog"],
            [exe, "<each VD>", "show", "all", "J", "nolog"],
        ],
        "MegaCli": [[exe, "-LDPDInfo", "-aAll", "-NoLog"], [exe, "-AdpBbuCmd", "-aAll", "-NoLog"]],
        "ssacli": [[exe, "ctrl", "all", "show", "config", "detail"]],
        "arcconf": [[exe, "GETCONFIG", "1", "LD"]],
    }[FAMILY[policy.tool]]


def commands(setup: Setup) -> list[list[str]]:
    """Every command a set-up's policy runs, in order: read, set, read back, restore (as
    `# restore: ...`, with the values read at run time), for `iolab show`."""
    out: list[list[str]] = []
    if setup.controller is not None:
        policy = setup.controller
        out += read_commands(policy)
        for key, value in policy.fields().items():
            out += set_commands(policy, key, value)
        out += read_commands(policy)
        for key in reversed(policy.fields()):
            out += set_commands(policy, key, f"<{key} as read before>")
    if setup.drive_cache is not None and setup.layout is not None:
        for device in setup.layout.devices:
            value = SYSFS_WORDS[setup.drive_cache]
            nvme = nvme_cache.device_of(device)
            if nvme is not None:
                out += [
                    nvme_cache.argv(nvme, value),
                    [*nvme_cache.argv(nvme, value)[:-1], "--value=<as read before>"],
                ]
                continue
            name = Path(os.path.realpath(device)).name
            where = f"/sys/block/{name}/device/scsi_disk/*/cache_type"
            out += [["echo", value, ">", where], ["echo", "<as read before>", ">", where]]
    return out
