"""A Linux kernel with md and device-mapper for the tests, on a host whose kernel lacks them.

Debian's user-mode-linux package is a Linux kernel that runs as an ordinary process. Booted
with the host's root filesystem (hostfs), it sees the host's mdadm, lvm, fio and this
project's virtual environment; image files become its disks (/dev/ubda, /dev/ubdb, ...).

`Kernel` boots it once (per test module) and runs shell commands inside it through a spool
folder: the host writes `N.cmd`, the guest runs it as root and leaves `N.out` and `N.rc`.
Where the host kernel has md and device-mapper itself, `Host` offers the same interface over
loop devices, so the same tests run directly.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

UML = shutil.which("linux.uml") or "/usr/bin/linux.uml"
MODULES = Path("/usr/lib/uml/modules")
GUEST_MODULES = (
    "md-mod", "raid0", "raid1", "raid10", "raid456", "faulty", "dm-mod", "dm-raid",
    "dm-flakey", "dm-delay", "dm-snapshot", "dm-thin-pool",
)  # fmt: skip
BOOT_TIMEOUT_S = 120
MIB = 1024**2

INIT = """#!/bin/sh
# init of the test kernel: mount what the tools need, load md and dm, then run commands
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm && mount -t devpts devpts /dev/pts && mount -t tmpfs shm /dev/shm
mount -t tmpfs run /run
mount -t tmpfs tmp /tmp
for module in {modules}; do modprobe -d {moddir} "$module" || echo "no module $module"; done
/lib/systemd/systemd-udevd --daemon >/dev/null 2>&1 && udevadm trigger && udevadm settle
spool={spool}
touch "$spool/ready"
while [ ! -e "$spool/poweroff" ]; do
    for job in "$spool"/*.cmd; do
        [ -e "$job" ] || continue
        name="${{job%.cmd}}"
        mv "$job" "$name.running"
        (cd {cwd} && sh "$name.running") > "$name.out" 2>&1 < /dev/null
        echo $? > "$name.rc.tmp" && mv "$name.rc.tmp" "$name.rc"
    done
    sleep 0.05
done
sync
echo o > /proc/sysrq-trigger
sleep 30
"""


@dataclass(frozen=True)
class Done:
    returncode: int
    output: str


class Machine(Protocol):
    """Somewhere with md and device-mapper, and disks iolab may destroy."""

    disks: list[str]

    def run(self, command: str, timeout_s: float = 300) -> Done: ...


def host_has_md() -> bool:
    return Path("/proc/mdstat").exists() and Path("/sys/class/misc/device-mapper").exists()


def uml_available() -> bool:
    return Path(UML).exists() and MODULES.is_dir()


class Kernel:
    """A user-mode Linux kernel, booted with `count` image disks of `size_mib` each."""

    def __init__(self, folder: Path, count: int, size_mib: int, memory_mib: int = 1024) -> None:
        self.folder, self.count, self.size_mib, self.memory_mib = (
            folder,
            count,
            size_mib,
            memory_mib,
        )
        self.spool = folder / "spool"
        self.disks = [f"/dev/ubd{chr(ord('a') + i)}" for i in range(count)]
        self.images = [folder / f"disk{i}.img" for i in range(count)]
        self.process: subprocess.Popen[bytes] | None = None
        self.serial = 0

    def start(self) -> None:
        self.spool.mkdir(parents=True)
        for image in self.images:
            with image.open("wb") as handle:
                handle.truncate(self.size_mib * MIB)
        versions = sorted(MODULES.iterdir())
        moddir = self.folder / "modules"
        (moddir / "lib" / "modules").mkdir(parents=True)
        (moddir / "lib" / "modules" / versions[-1].name).symlink_to(versions[-1])
        init = self.folder / "init.sh"
        init.write_text(
            INIT.format(
                modules=" ".join(GUEST_MODULES), moddir=moddir, spool=self.spool, cwd=Path.cwd()
            )
        )
        init.chmod(0o755)
        disks = [f"ubd{i}={image}" for i, image in enumerate(self.images)]
        command = [
            UML, f"mem={self.memory_mib}M", "root=/dev/root", "rootfstype=hostfs",
            "rootflags=/", "rw", *disks, f"init={init}", "con=null", "con0=null,fd:1",
        ]  # fmt: skip
        log = (self.folder / "console.log").open("wb")
        self.process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + BOOT_TIMEOUT_S
        while not (self.spool / "ready").exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                tail = (self.folder / "console.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"the test kernel did not boot:\n{tail}")
            time.sleep(0.1)

    def run(self, command: str, timeout_s: float = 300) -> Done:
        """Run a shell command inside, as root, in the host's current directory."""
        self.serial += 1
        name = self.spool / f"{self.serial:04d}"
        draft = name.with_suffix(".draft")
        draft.write_text(command + "\n")
        draft.rename(name.with_suffix(".cmd"))
        deadline = time.monotonic() + timeout_s
        rc = name.with_suffix(".rc")
        while not rc.exists():
            if self.process is None or self.process.poll() is not None:
                raise RuntimeError(f"the test kernel died running: {command}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"no answer in {timeout_s:.0f} s from: {command}")
            time.sleep(0.05)
        return Done(int(rc.read_text().strip()), name.with_suffix(".out").read_text())

    def stop(self) -> None:
        if self.process is None:
            return
        (self.spool / "poweroff").touch()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, 9)
            self.process.wait()
        self.process = None


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
            done = subprocess.run(["losetup", "-f", "--show", str(image)], capture_output=True,
                                  text=True, check=True)  # fmt: skip
            self.disks.append(done.stdout.strip())

    def run(self, command: str, timeout_s: float = 300) -> Done:
        done = subprocess.run(["sh", "-c", command], capture_output=True, text=True,
                              timeout=timeout_s, check=False)  # fmt: skip
        return Done(done.returncode, done.stdout + done.stderr)

    def stop(self) -> None:
        for disk in self.disks:
            subprocess.run(["losetup", "-d", disk], check=False)
        self.disks = []
