"""What the host and a target are: recorded with every run so results can be compared honestly."""

from __future__ import annotations

import json
import os
import platform
import socket
import subprocess
from pathlib import Path
from typing import Any

JSONDict = dict[str, Any]


def _read(path: str | Path) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _cpu_model() -> str:
    for line in (_read("/proc/cpuinfo") or "").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _distro() -> str:
    for line in (_read("/etc/os-release") or "").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip('"')
    return platform.system()


def _memory_bytes() -> int:
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    return 0


def host(fio_version: str) -> JSONDict:
    """The host facts every run records."""
    return {
        "hostname": socket.gethostname(),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count() or 0,
        "memory_bytes": _memory_bytes(),
        "kernel": platform.release(),
        "distro": _distro(),
        "fio_version": fio_version,
        "python": platform.python_version(),
    }


def mount_of(path: Path) -> JSONDict:
    """The filesystem holding `path`: source, type, mount point and options (findmnt)."""
    done = subprocess.run(
        ["findmnt", "-J", "-T", str(path), "-o", "SOURCE,FSTYPE,TARGET,OPTIONS"],
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        found = json.loads(done.stdout)["filesystems"][0]
    except (ValueError, KeyError, IndexError):
        return {}
    return {
        "source": found.get("source"),
        "fstype": found.get("fstype"),
        "mountpoint": found.get("target"),
        "options": found.get("options"),
    }


def block_device(source: str | None) -> JSONDict:
    """Basic facts of the block device behind a mount source, from sysfs."""
    if not source or not source.startswith("/dev/"):
        return {}
    name = Path(os.path.realpath(source.split("[")[0])).name
    sys = Path("/sys/class/block") / name
    if not sys.exists():
        return {"name": name}
    disk = sys if (sys / "queue").exists() else sys.parent
    queue = disk / "queue"
    sectors = _read(sys / "size")
    scheduler = _read(queue / "scheduler") or ""
    active = next((w.strip("[]") for w in scheduler.split() if w.startswith("[")), scheduler)
    return {
        "name": name,
        "disk": disk.name,
        "model": _read(disk / "device" / "model"),
        "size_bytes": int(sectors) * 512 if sectors and sectors.isdigit() else None,
        "rotational": _read(queue / "rotational") == "1",
        "scheduler": active or None,
        "logical_block_size": _int(_read(queue / "logical_block_size")),
        "physical_block_size": _int(_read(queue / "physical_block_size")),
        "read_ahead_kb": _int(_read(queue / "read_ahead_kb")),
        "nr_requests": _int(_read(queue / "nr_requests")),
    }


def _int(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() else None


def target(path: Path) -> JSONDict:
    """The filesystem and device a target path lives on."""
    mount = mount_of(path)
    return {"path": str(path), "filesystem": mount, "device": block_device(mount.get("source"))}
