"""`virtual-cache`: writes on a virtual disk whose cache is write back, well above its reads.

A guest's disk (virtio, Xen, VMware, Hyper-V, a cloud's block device) whose write cache the
guest sees as "write back" may be backed by the hypervisor's own page cache: writes are
acknowledged from the host's memory and run far above what the disk can do (the quick preset
on such a disk wrote 1 MiB blocks at 4,129-7,310 MB/s and read them at 1,919-3,126 MB/s). No
single case shows it; a run does: a write figure well above the reads of the same shape (block
size, queue depth, jobs, random or sequential) on the same set-up. Each such write case gets
the warning, so its cell carries ⚑ in every format.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from iolab.model import CheckWarning, Code, FioValue
from iolab.model.facts import DeviceFacts

CODE = Code.VIRTUAL_CACHE
ABOVE_READS = 1.3  # writes this much faster than the same shape's reads
VIRTUAL_TRANSPORTS = ("virtio", "xen")
VIRTUAL_MODELS = re.compile(
    r"qemu|vmware|virtual|vbox|elastic block store|persistentdisk|msft", re.IGNORECASE
)
VIRTUAL_NAMES = re.compile(r"^(vd|xvd)[a-z]+$")
READS = ("read", "randread")
WRITES = ("write", "randwrite")


def virtual_write_back(devices: Iterable[DeviceFacts]) -> str:
    """'vda (virtio, write cache: write back)' for the first virtual disk under the target
    whose write cache is write back; '' when there is none."""
    for device in devices:
        if (device.write_cache or "").strip().lower() != "write back":
            continue
        model = f"{device.vendor or ''} {device.model or ''}"
        if device.transport in VIRTUAL_TRANSPORTS:
            kind = device.transport
        elif VIRTUAL_MODELS.search(model):
            kind = model.strip()
        elif VIRTUAL_NAMES.match(device.disk or device.name):
            kind = "a virtual disk"
        else:
            continue
        return f"{device.disk or device.name} ({kind}, write cache: write back)"
    return ""


@dataclass(frozen=True)
class CachedFigure:
    """One case of a set-up as the check reads it: its options and its MB/s."""

    workload: str
    options: Mapping[str, FioValue]
    mb_s: float


def _shape(options: Mapping[str, FioValue]) -> tuple[str, str, str, bool]:
    rw = str(options.get("rw", "read"))
    numbers = tuple(str(options.get(k, 1)) for k in ("iodepth", "numjobs"))
    return str(options.get("bs", "4k")), numbers[0], numbers[1], rw.startswith("rand")


def warnings(disk: str, figures: Sequence[CachedFigure]) -> dict[str, CheckWarning]:
    """By workload: the write cases that ran well above the reads of their shape."""
    if not disk:
        return {}
    reads: dict[tuple[str, str, str, bool], list[float]] = {}
    for figure in figures:
        if str(figure.options.get("rw")) in READS:
            reads.setdefault(_shape(figure.options), []).append(figure.mb_s)
    out = {}
    for figure in figures:
        if str(figure.options.get("rw")) not in WRITES:
            continue
        found = reads.get(_shape(figure.options))
        if not found or figure.mb_s <= ABOVE_READS * max(found):
            continue
        out[figure.workload] = CheckWarning(
            CODE,
            f"writes ran at {figure.mb_s:,.0f} MB/s, {figure.mb_s / max(found):.1f}x the "
            f"{max(found):,.0f} MB/s of reads of the same shape, on {disk}: the hypervisor "
            "likely acknowledged them from its host's cache, so this is not the disk's figure.",
            "Measure on a disk the hypervisor opens with cache=none or directsync (or on the "
            "host itself), or read these writes as the cache's speed.",
        )
    return out
