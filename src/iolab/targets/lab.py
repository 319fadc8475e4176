"""A Linux kernel with md and device-mapper, run beside this host's: for hosts whose own
kernel lacks them, and for trying set-ups on image files before real disks (`iolab
rehearse`, `iolab run --lab`, and the tests). Two backends (`targets.lab_backends`): Debian's
user-mode Linux (`apt-get install user-mode-linux`), an ordinary process, and, where that
cannot run or the plan needs an NVMe controller, Debian's own kernel under QEMU (`apt-get
install qemu-system-x86 linux-image-amd64 busybox-static`). IOLAB_LAB_BACKEND=uml, qemu or
qemu-tcg (QEMU without KVM) chooses one.

Booted with the host's root filesystem (hostfs; 9p under QEMU), it sees the host's mdadm,
lvm, fio and iolab itself; writes to any file go to the host's files. Sparse image files
become its disks (/dev/ubda, ... or /dev/vda, ...; /dev/nvme0n1, ... where the plan names
NVMe devices, under QEMU). It runs shell commands as its root through a spool folder: the
host writes `N.cmd`, the guest runs it and leaves `N.out` and `N.rc`.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from iolab.errors import LabHostError, TargetError
from iolab.targets.lab_backends import Drive, Qemu, Uml, kvm_works, nvme_number

Backend = Uml | Qemu
SETTING = "IOLAB_LAB_BACKEND"
CHOICES = ("uml", "qemu", "qemu-tcg")
MAX_DISKS = 16
POLL_S = 0.05
IDLE_POLL_S = 0.5  # the guest's poll once it has had no command for BUSY_POLLS polls
BUSY_POLLS = 40
# the console's line that says why a boot died (a crash ends in a call trace naming nothing;
# every boot prints some harmless "failed" lines, such as mmapper_init's)
TELLING = re.compile(r"Kernel panic|ptrace .*failed|^iolab: ")
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
{modules}
/lib/systemd/systemd-udevd --daemon >/dev/null 2>&1 && udevadm trigger && udevadm settle
spool={spool}
touch "$spool/ready"
# an idle lab polls slowly: under QEMU without KVM each poll (a sleep started) is emulated
idle=0
while [ ! -e "$spool/poweroff" ]; do
    idle=$((idle + 1))
    for job in "$spool"/*.cmd; do
        [ -e "$job" ] || continue
        name="${{job%.cmd}}"
        mv "$job" "$name.running"
        (cd {cwd} && sh "$name.running") > "$name.out" 2>&1 < /dev/null
        echo $? > "$name.rc.tmp" && mv "$name.rc.tmp" "$name.rc"
        idle=0
    done
    if [ "$idle" -gt {busy_polls} ]; then sleep {idle_poll}; else sleep {poll}; fi
done
sync
echo o > /proc/sysrq-trigger
sleep 30
"""


def _tied() -> list[str]:
    """How the kernel is started so that it dies with the process that started it, even by
    SIGKILL (a test's timeout, the OOM killer): its own session keeps it from Ctrl-C, so
    nothing else would end it. A parent-death signal reaches its first process only; as root
    that process is the first of a PID namespace of its own, and the kernel ends every
    process of a namespace whose first one dies (user-mode Linux runs several)."""
    tied = ["setpriv", "--pdeathsig", "KILL"]
    if _own_pid_namespace():
        tied += ["unshare", "--pid", "--kill-child=KILL"]
    return tied


@functools.cache
def _own_pid_namespace() -> bool:
    """Whether this process may start one in a PID namespace of its own: root, and not in a
    container that withholds it (there the kernel's first process alone dies with iolab)."""
    if os.geteuid() != 0:
        return False
    try:
        tried = subprocess.run(
            ["unshare", "--pid", "--fork", "true"], capture_output=True, check=False, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):  # no unshare, or held: the kernel alone
        return False
    return tried.returncode == 0


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


def backends(nvme: bool = False) -> list[Backend]:
    """The backends to try, in order: the one IOLAB_LAB_BACKEND names; QEMU alone where the
    plan needs an NVMe controller (`nvme`); else user-mode Linux, then QEMU."""
    asked = os.environ.get(SETTING, "").strip()
    if asked and asked not in CHOICES:
        raise TargetError(
            f"{SETTING}={asked!r} is not a lab backend; use one of {', '.join(CHOICES)}"
        )
    qemu: list[Backend] = (
        [Qemu("kvm"), Qemu("tcg")] if asked != "qemu-tcg" and kvm_works() else [Qemu("tcg")]
    )
    if asked:
        return [Uml()] if asked == "uml" else qemu
    return qemu if nvme else [Uml(), *qemu]


def missing(nvme: bool = False) -> str | None:
    """One line saying what this host lacks to boot a lab kernel, or None."""
    problems = [backend.missing() for backend in backends(nvme)]
    if any(problem is None for problem in problems):
        return None
    return "; and ".join(dict.fromkeys(p for p in problems if p))  # QEMU's said once


def needs_nvme(devices: Sequence[str]) -> bool:
    """Whether a set-up's drive_cache on these devices needs an NVMe controller (QEMU's)."""
    return any(nvme_number(device) is not None for device in devices)


class Kernel:
    """The lab kernel, booted over one sparse image file per size in `sizes` (bytes), kept in
    `folder` (which also holds its spool, init script and console log), each standing in for
    the device of that place in `devices` (None: a plain disk). Commands run in `cwd`
    (default: this process's current directory). `nvme`: boot only a backend that gives NVMe
    controllers. Use it as a context manager, or call start() and stop(); once started,
    `disks` are the disks' names inside and `backend_words` says which kernel it is."""

    def __init__(
        self,
        folder: Path,
        sizes: Sequence[int],
        memory_mib: int = 1024,
        cwd: Path | None = None,
        devices: Sequence[str | None] | None = None,
        nvme: bool = False,
    ) -> None:
        if len(sizes) > MAX_DISKS:
            raise TargetError(f"the lab kernel has at most {MAX_DISKS} disks, not {len(sizes)}")
        self.folder, self.sizes, self.memory_mib = folder, list(sizes), memory_mib
        self.cwd = cwd or Path.cwd()
        self.spool = folder / "spool"
        self.devices = list(devices) if devices is not None else [None] * len(self.sizes)
        self.nvme = nvme
        self.images = [folder / f"disk{i}.img" for i in range(len(sizes))]
        self.disks: list[str] = []
        self.backend_words = ""
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

    def _init(self, backend: Backend, drives: Sequence[Drive]) -> Path:
        moddir = self.folder / backend.name / "modules"
        (moddir / "lib" / "modules").mkdir(parents=True, exist_ok=True)
        link = moddir / "lib" / "modules" / backend.modules().name
        if not link.is_symlink():
            link.symlink_to(backend.modules())
        shared = self.folder / "modules"  # where the tests load more modules from
        if shared.is_symlink():
            shared.unlink()
        shared.symlink_to(moddir)
        init = self.folder / backend.name / "init.sh"
        init.write_text(
            INIT.format(
                modules=backend.load_modules(moddir),
                spool=self.spool,
                cwd=self.cwd,
                poll=POLL_S,
                idle_poll=IDLE_POLL_S,
                busy_polls=BUSY_POLLS,
                tmp=_fresh_tmp(self.cwd),
            )
        )
        init.chmod(0o755)
        return init

    def start(self) -> None:
        """Make the images and boot the first backend that runs here; TargetError if none
        is installed or the kernel does not boot, LabHostError if none can run here."""
        problem = missing(self.nvme)
        if problem:
            raise TargetError(problem)
        self.spool.mkdir(parents=True)
        self._images()
        refused: list[str] = []
        for backend in backends(self.nvme):
            lacking = backend.missing()
            if lacking:
                refused.append(lacking)
                continue
            try:
                self._boot(backend)
            except TargetError as error:
                if not isinstance(error, LabHostError) and backend.stall_s is None:
                    raise
                refused.append(str(error))  # the next backend (QEMU without KVM) may run
                continue
            return
        raise LabHostError("; and ".join(refused))

    def _boot(self, backend: Backend) -> None:
        drives = backend.drives(self.images, self.devices)
        init = self._init(backend, drives)
        command = backend.command(drives, init, self.memory_mib, [self.folder, self.cwd])
        command = [*_tied(), *command]
        with (self.folder / "console.log").open("wb") as log:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        began = time.monotonic()
        while not (self.spool / "ready").exists():
            if self.process.poll() is not None or time.monotonic() > began + backend.boot_timeout_s:
                self._kill()
                raise self._boot_error()
            stalled = backend.stall_s and time.monotonic() > began + backend.stall_s
            if stalled and not self._console():
                self._kill()
                raise LabHostError(
                    f"{backend.words([])} printed nothing in {backend.stall_s:.0f} s"
                )
            time.sleep(POLL_S)
        self.disks = [drive.inside for drive in drives]
        self.backend_words = backend.words(self._console())

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
            self._kill()
        self.process = None

    def _kill(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            os.killpg(self.process.pid, 9)
        self.process.wait()
        self.process = None
