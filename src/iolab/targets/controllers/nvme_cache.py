"""An NVMe controller's volatile write cache (Volatile Write Cache, feature 06h) through
nvme-cli: whether the controller has one (identify's `vwc`, bit 0), what it is set to, and
setting it. Its states are said in sysfs' words ("write back", "write through"), as a SCSI
disk's `cache_type`, so that a plain disk's write cache is one thing to the rest of iolab.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

from iolab.errors import ControllerError
from iolab.targets.controllers.probe import call

DEVICE = re.compile(r"/dev/nvme\d{1,4}n\d{1,4}")
FEATURE = "6"  # Volatile Write Cache
# the controller's feature, not a namespace's: QEMU refuses the namespace's own id ("Feature
# Not Namespace Specific"), which nvme-cli sends by default when given a namespace
ALL_NAMESPACES = "--namespace-id=0xffffffff"
TIMEOUT_S = 30.0
INSTALL = "apt-get install nvme-cli"
# nvme-cli prints the value with printf's %#x: "0x00000001", but "00000000" for 0
_CURRENT = re.compile(r"Current value:\s*(?:0x)?([0-9a-fA-F]+)")
_BITS = {"write back": "1", "write through": "0"}


def device_of(device: str) -> str | None:
    """The NVMe namespace a device path is (its real path), or None for any other device."""
    real = os.path.realpath(device)
    return real if DEVICE.fullmatch(real) else None


def program() -> str | None:
    return shutil.which("nvme")


def _nvme(args: list[str], cwd: Path) -> str:
    prog = program()
    if prog is None:
        raise ControllerError(f"nvme-cli is not installed (no nvme on PATH); {INSTALL}")
    code, text = call([prog, *args], "nvme", cwd, TIMEOUT_S)
    if code != 0:
        raise ControllerError(f"nvme refused `{' '.join(args)}` (exit status {code})")
    return text


def has_cache(device: str, cwd: Path) -> bool:
    """Whether the device's controller has a volatile write cache (identify's vwc bit 0)."""
    text = _nvme(["id-ctrl", device, "--output-format=json"], cwd)
    try:
        vwc = json.loads(text).get("vwc")
    except (ValueError, AttributeError, RecursionError):
        vwc = None
    if not isinstance(vwc, int) or isinstance(vwc, bool):
        raise ControllerError(f"nvme id-ctrl {device} printed no vwc field iolab could read")
    return bool(vwc & 1)


def read(device: str, cwd: Path) -> str:
    """The volatile write cache's state now: "write back" (enabled) or "write through"."""
    text = _nvme(["get-feature", device, f"--feature-id={FEATURE}", ALL_NAMESPACES], cwd)
    found = _CURRENT.search(text)
    if found is None:
        raise ControllerError(f"nvme get-feature -f {FEATURE} {device} printed no current value")
    return "write back" if int(found.group(1), 16) & 1 else "write through"


def argv(device: str, words: str) -> list[str]:
    """nvme-cli's command that sets the cache to `words` (sysfs' words)."""
    feature = f"--feature-id={FEATURE}"
    return ["nvme", "set-feature", device, feature, ALL_NAMESPACES, f"--value={_BITS[words]}"]


def write(device: str, words: str, cwd: Path) -> None:
    _nvme(argv(device, words)[1:], cwd)
