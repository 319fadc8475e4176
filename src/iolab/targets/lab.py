"""A Linux kernel with md and device-mapper, run as an ordinary process: Debian's user-mode
Linux (`apt-get install user-mode-linux`), for hosts whose own kernel lacks them, and for
trying set-ups on image files before real disks (`iolab rehearse`, and the tests).

Booted with the host's root filesystem (hostfs), it sees the host's mdadm, lvm, fio and iolab
itself; writes to any file go to the host's files. Sparse image files become its disks
(/dev/ubda, /dev/ubdb, ...). It runs shell commands as its root through a spool folder: the
host writes `N.cmd`, the guest runs it and leaves `N.out` and `N.rc`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from iolab.errors import LabHostError, TargetError

UML = "/usr/bin/linux.uml"
MODULES = Path("/usr/lib/uml/modules")  # the package's modules, one folder per kernel version
INSTALL = "apt-get install user-mode-linux"
GUEST_MODULES = (
    "md-mod",
    "raid0",
    "raid1",
    "raid10",
    "raid456",
    "faulty",
    "dm-mod",
    "dm-raid",
    "dm-flakey",
    "dm-delay",
    "dm-snapshot",
    "dm-thin-pool",
)
MAX_DISKS = 16  # ubda to ubdp
BOOT_TIMEOUT_S = 120
POLL_S = 0.05
# the console's line that says why a boot died (a crash ends in a call trace naming nothing;
# every boot prints some harmless "failed" lines, such as mmapper_init's)
TELLING = re.compile(r"Kernel panic|ptrace .*failed")
# user-mode Linux 6.1 saves its processes' registers in an XSAVE buffer of a size the host's
# kernel refuses on some CPUs (errno 14, EFAULT): then it cannot run here at all
HOST_REFUSES = re.compile(r"ptrace set fp regs failed")

INIT = """#!/bin/sh
# init of the lab kernel: mount what the tools need, load md and dm, then run commands
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm && mount -t devpts devpts /dev/pts && mount -t tmpfs shm /dev/shm
mount -t tmpfs run /run
export IOLAB_STATE_DIR=/run/iolab-state  # the guest's own: / is the host's
{tmp}
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
    sleep {poll}
done
sync
echo o > /proc/sysrq-trigger
sleep 30
"""


@dataclass(frozen=True)
class Done:
    """A command's exit status and its output (stdout and stderr together)."""

    returncode: int
    output: str


def _fresh_tmp(cwd: Path | str) -> str:
    """The guest's own /tmp, unless what it runs lives under the host's /tmp (a checkout
    there, its Python): then the host's stays in sight."""
    used = (str(cwd), sys.executable, sys.prefix)
    if any(path == "/tmp" or path.startswith("/tmp/") for path in used):
        return "# /tmp: the host's (what runs here lives there)"
    return "mount -t tmpfs tmp /tmp"


def kernel() -> str:
    return shutil.which("linux.uml") or UML


def missing() -> str | None:
    """One line saying what this host lacks to boot the lab kernel, or None."""
    lacking = next((p for p in (kernel(), MODULES) if not Path(p).exists()), None)
    if lacking is None and MODULES.is_dir() and any(MODULES.iterdir()):
        return None
    return f"user-mode Linux is not installed (no {lacking or MODULES}); install it with: {INSTALL}"


def disk_name(index: int) -> str:
    """The lab kernel's name of its index-th disk: ubda, ubdb, ..."""
    return f"ubd{chr(ord('a') + index)}"


class Kernel:
    """The lab kernel, booted over one sparse image file per size in `sizes` (bytes), kept in
    `folder` (which also holds its spool, init script and console log). Commands run in `cwd`
    (default: this process's current directory). Use it as a context manager, or call
    start() and stop()."""

    def __init__(
        self,
        folder: Path,
        sizes: Sequence[int],
        memory_mib: int = 1024,
        cwd: Path | None = None,
    ) -> None:
        if len(sizes) > MAX_DISKS:
            raise TargetError(f"the lab kernel has at most {MAX_DISKS} disks, not {len(sizes)}")
        self.folder, self.sizes, self.memory_mib = folder, list(sizes), memory_mib
        self.cwd = cwd or Path.cwd()
        self.spool = folder / "spool"
        self.disks = [f"/dev/{disk_name(i)}" for i in range(len(sizes))]
        self.images = [folder / f"disk{i}.img" for i in range(len(sizes))]
        self.process: subprocess.Popen[bytes] | None = None
        self.serial = 0

    def __enter__(self) -> Kernel:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()

    def _images(self) -> None:
        for image, size in zip(self.images, self.sizes, strict=True):
            try:
                with image.open("wb") as handle:
                    handle.truncate(size)
            except OSError as error:
                raise TargetError(
                    f"cannot make a sparse image of {size:,} bytes at {image}: "
                    f"{error.strerror or error}"
                ) from None

    def _init(self) -> Path:
        versions = sorted(MODULES.iterdir())
        moddir = self.folder / "modules"
        (moddir / "lib" / "modules").mkdir(parents=True, exist_ok=True)
        link = moddir / "lib" / "modules" / versions[-1].name
        if not link.is_symlink():
            link.symlink_to(versions[-1])
        init = self.folder / "init.sh"
        init.write_text(
            INIT.format(
                modules=" ".join(GUEST_MODULES),
                moddir=moddir,
                spool=self.spool,
                cwd=self.cwd,
                poll=POLL_S,
                tmp=_fresh_tmp(self.cwd),
            )
        )
        init.chmod(0o755)
        return init

    def start(self) -> None:
        """Make the images and boot; TargetError if the kernel is missing or does not boot."""
        problem = missing()
        if problem:
            raise TargetError(problem)
        self.spool.mkdir(parents=True)
        self._images()
        init = self._init()
        disks = [f"ubd{i}={image}" for i, image in enumerate(self.images)]
        command = [
            kernel(),
            f"mem={self.memory_mib}M",
            "root=/dev/root",
            "rootfstype=hostfs",
            "rootflags=/",
            "rw",
            *disks,
            f"init={init}",
            "con=null",
            "con0=null,fd:1",
        ]
        with (self.folder / "console.log").open("wb") as log:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + BOOT_TIMEOUT_S
        while not (self.spool / "ready").exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise self._boot_error()
            time.sleep(POLL_S)

    def _console(self) -> list[str]:
        try:
            text = (self.folder / "console.log").read_text(errors="replace")
        except OSError:
            return []
        return [line.strip() for line in text.splitlines() if line.strip()]

    def console_tail(self, found: list[str] | None = None) -> str:
        """The console's first line that says why the kernel died, then its last line (of
        `found`, the console's lines, when they were read already)."""
        lines = self._console() if found is None else found
        telling = next((line for line in lines if TELLING.search(line)), None)
        shown = [*([telling] if telling else []), *(x for x in lines[-1:] if x != telling)]
        return " ... ".join(shown) or "no console output"

    def _boot_error(self) -> TargetError:
        lines = self._console()
        said = self.console_tail(lines)
        if any(HOST_REFUSES.search(line) for line in lines):
            return LabHostError(
                f"the lab kernel cannot run on this host: this user-mode Linux cannot save "
                f"this CPU's register state ({said}); use the lab on another machine, or a "
                f"newer user-mode Linux"
            )
        return TargetError(f"the lab kernel did not boot: {said}")

    def run(self, command: str, timeout_s: float = 300) -> Done:
        """Run a shell command inside, as root, in `cwd`; TargetError if the kernel died or
        the command did not finish in time."""
        self.serial += 1
        name = self.spool / f"{self.serial:04d}"
        draft = name.with_suffix(".draft")
        draft.write_text(command + "\n")
        draft.rename(name.with_suffix(".cmd"))
        deadline = time.monotonic() + timeout_s
        rc = name.with_suffix(".rc")
        while not rc.exists():
            if self.process is None or self.process.poll() is not None:
                raise TargetError(
                    f"the lab kernel stopped running: {command} ({self.console_tail()})"
                )
            if time.monotonic() > deadline:
                raise TargetError(f"the lab kernel gave no answer in {timeout_s:.0f} s: {command}")
            time.sleep(POLL_S)
        return Done(int(rc.read_text().strip()), name.with_suffix(".out").read_text())

    def stop(self) -> None:
        """Power off (kill it if it does not go within 30 s)."""
        if self.process is None:
            return
        (self.spool / "poweroff").touch()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, 9)
            self.process.wait()
        self.process = None
