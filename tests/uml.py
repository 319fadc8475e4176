"""A Linux kernel with md and device-mapper for the tests, on a host whose kernel lacks them.

The kernel is the product's own lab kernel (`iolab.targets.lab`, which `iolab rehearse` boots
too): Debian's user-mode-linux, booted with the host's root filesystem (hostfs), so it sees the
host's mdadm, lvm, fio and this project's virtual environment; image files become its disks
(/dev/ubda, /dev/ubdb, ...); under QEMU, virtio disks (/dev/vda, ...). The session boots it
once (conftest.lab_kernel) and runs shell commands inside it. Where the host kernel has md
and device-mapper itself, `Host` offers the same interface over loop devices, so the same
tests run directly.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Protocol

import pytest

from conftest import needs_root
from iolab.targets.lab import Done

__all__ = ["Done", "Host", "Machine", "host_has_md", "lab_marks"]

MIB = 1024**2


class Machine(Protocol):
    """Somewhere with md and device-mapper, and disks iolab may destroy."""

    disks: list[str]

    def run(self, command: str, timeout_s: float = 300) -> Done: ...


def host_has_md() -> bool:
    return Path("/proc/mdstat").exists() and Path("/sys/class/misc/device-mapper").exists()


def lab_marks() -> list[pytest.MarkDecorator]:
    """A test module's marks for tests that boot the lab kernel themselves: kernel and root;
    where no lab kernel is installed or none runs here, they fail with the reason
    (conftest.lab_host), never skip."""
    return [pytest.mark.kernel, pytest.mark.usefixtures("lab_host"), pytest.mark.root, needs_root()]


class Host:
    """This host, when its kernel has md and device-mapper: disks are loop devices."""

    def __init__(self, folder: Path, count: int, size_mib: int) -> None:
        self.folder, self.count, self.size_mib = folder, count, size_mib
        self.disks: list[str] = []

    def start(self) -> None:
        for i in range(self.count):
            image = self.folder / f"disk{i}.img"
            with image.open("wb") as handle:
                handle.truncate(self.size_mib * MIB)
            done = subprocess.run(
                ["losetup", "-f", "--show", str(image)], capture_output=True, text=True, check=True
            )
            self.disks.append(done.stdout.strip())

    def run(self, command: str, timeout_s: float = 300) -> Done:
        done = subprocess.run(
            ["sh", "-c", command], capture_output=True, text=True, timeout=timeout_s, check=False
        )
        return Done(done.returncode, done.stdout + done.stderr)

    def stop(self) -> None:
        for disk in self.disks:
            subprocess.run(["losetup", "-d", disk], check=False)
        self.disks = []
