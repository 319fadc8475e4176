"""The two kernels the lab (`targets.lab`) boots, each as the command that starts it and the
names its disks get inside.

- `Uml`: Debian's user-mode Linux (`linux.uml`), an ordinary process that mounts the host's
  root through hostfs; its disks are /dev/ubda, /dev/ubdb, ... It starts in a second, but on
  some hosts it cannot run at all (its CPU's register state: `LabHostError`).
- `Qemu`: Debian's own kernel (linux-image-amd64) under qemu-system-x86_64, with KVM where
  /dev/kvm works and software emulation (TCG) where it does not: no ptrace, so it runs where
  user-mode Linux cannot. A small initramfs, built at each boot from this host's busybox and
  the kernel's modules, mounts the host's root over 9p (virtio) and hands over to the same
  init as user-mode Linux's. Its disks are virtio disks (/dev/vda, ...), and a plan's NVMe
  names (/dev/nvme0n1, ...) become emulated NVMe controllers, one each, bound in the order of
  their numbers so that the kernel names them as the plan does.
"""

from __future__ import annotations

import glob
import lzma
import os
import re
import shlex
import shutil
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

UML = "/usr/bin/linux.uml"
UML_MODULES = Path("/usr/lib/uml/modules")  # the package's modules, one folder per version
UML_INSTALL = "apt-get install user-mode-linux"
QEMU = "qemu-system-x86_64"
BUSYBOX = "/bin/busybox"
QEMU_INSTALL = "apt-get install qemu-system-x86 linux-image-amd64 busybox-static"
KVM_STALL_S = 8.0
MAX_NVME = 16  # controllers at PCI slots 0x10 to 0x1f
NVME_SLOT = 0x10
FILLER_BYTES = 1024**2  # a controller no plan device names, so the next get their numbers
NVME_NAME = re.compile(r"/dev/nvme(\d+)n1")
# the modules the initramfs loads to reach the host's root and the virtio disks
INITRAMFS_MODULES = ("virtio_pci", "virtio_blk", "9pnet_virtio", "9p", "crc32c_generic")
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

INITRAMFS_INIT = """#!/bin/busybox sh
# the lab's initramfs: load virtio and 9p, mount the host's root, hand over to the lab's init
b=/bin/busybox
$b mkdir -p /proc /sys /dev /root
$b mount -t proc proc /proc
$b mount -t sysfs sys /sys
$b mount -t devtmpfs dev /dev
for module in {modules}; do $b insmod "/modules/$module" || echo "iolab: no module $module"; done
{nvme}nine="-t 9p -o trans=virtio,version=9p2000.L,msize=512000,{access}"
if ! $b mount $nine,cache=loose hostroot /root; then
    echo "iolab: the host's root could not be mounted over 9p"
    $b poweroff -f
fi
{shares}$b umount /proc /sys /dev
exec $b switch_root /root {init}
"""


@dataclass(frozen=True)
class Drive:
    """One image the kernel gets as a disk: the device the plan names (None: a plain disk),
    its image file, and the name the kernel gives it."""

    image: Path
    device: str | None
    inside: str  # /dev/ubda, /dev/vda, /dev/nvme0n1 ...


def letters(index: int) -> str:
    return chr(ord("a") + index)


class Uml:
    name = "uml"
    max_disks = 16  # ubda to ubdp
    stall_s: float | None = None
    boot_timeout_s = 120.0

    def kernel(self) -> str:
        return shutil.which("linux.uml") or UML

    def missing(self) -> str | None:
        lacking = next((p for p in (self.kernel(), UML_MODULES) if not Path(p).exists()), None)
        if lacking is None and UML_MODULES.is_dir() and any(UML_MODULES.iterdir()):
            return None
        return (
            f"user-mode Linux is not installed (no {lacking or UML_MODULES}); install it "
            f"with: {UML_INSTALL}"
        )

    def modules(self) -> Path:
        return sorted(UML_MODULES.iterdir())[-1]

    def drives(self, images: Sequence[Path], devices: Sequence[str | None]) -> list[Drive]:
        return [
            Drive(image, device, f"/dev/ubd{letters(i)}")
            for i, (image, device) in enumerate(zip(images, devices, strict=True))
        ]

    def command(
        self, drives: Sequence[Drive], init: Path, memory_mib: int, shares: Sequence[Path]
    ) -> list[str]:
        return [
            self.kernel(),
            f"mem={memory_mib}M",
            "root=/dev/root",
            "rootfstype=hostfs",
            "rootflags=/",
            "rw",
            *(f"ubd{i}={d.image}" for i, d in enumerate(drives)),
            f"init={init}",
            "con=null",
            "con0=null,fd:1",
        ]

    def load_modules(self, moddir: Path) -> str:
        return (
            f'for module in {" ".join(GUEST_MODULES)}; do modprobe -d {moddir} "$module" '
            '|| echo "no module $module"; done'
        )

    def words(self, console: Sequence[str]) -> str:
        return f"user-mode Linux {self.modules().name}"


def kvm_works() -> bool:
    try:
        os.close(os.open("/dev/kvm", os.O_RDWR))
    except OSError:
        return False
    return True


class Qemu:
    name = "qemu"
    max_disks = 16

    def __init__(self, accel: str = "tcg") -> None:
        self.accel = accel  # "kvm" or "tcg" (software emulation)
        # a boot under KVM that prints nothing in this time is taken for a KVM that does not
        # work here (a nested one that hangs), and QEMU is tried again without it
        self.stall_s = KVM_STALL_S if accel == "kvm" else None
        self.boot_timeout_s = 120.0 if accel == "kvm" else 600.0

    def load_modules(self, moddir: Path) -> str:
        return "# the modules: loaded by the initramfs"

    def vmlinuz(self) -> Path | None:
        found = sorted(glob.glob("/boot/vmlinuz-*"), key=_version_key)
        return Path(found[-1]) if found else None

    def version(self) -> str:
        vmlinuz = self.vmlinuz()
        return vmlinuz.name.removeprefix("vmlinuz-") if vmlinuz else "?"

    def missing(self) -> str | None:
        vmlinuz = self.vmlinuz()
        lacking = (
            f"no {QEMU}"
            if shutil.which(QEMU) is None
            else "no Debian kernel in /boot"
            if vmlinuz is None
            else f"no modules for it in /lib/modules/{self.version()}"
            if not (Path("/lib/modules") / self.version() / "modules.dep").is_file()
            else f"no {BUSYBOX}"
            if not Path(BUSYBOX).is_file()
            else f"cannot read {vmlinuz}"
            if not os.access(vmlinuz, os.R_OK)
            else None
        )
        if lacking is None:
            return None
        return f"QEMU's lab is not installed ({lacking}); install it with: {QEMU_INSTALL}"

    def modules(self) -> Path:
        return Path("/lib/modules") / self.version()

    def drives(self, images: Sequence[Path], devices: Sequence[str | None]) -> list[Drive]:
        """NVMe names as themselves (the controllers are bound in their numbers' order), and
        every other device a virtio disk, in order; a filler controller for each number below
        the largest that the plan does not name."""
        out, plain = [], 0
        for image, device in zip(images, devices, strict=True):
            if nvme_number(device) is not None:
                assert device is not None
                out.append(Drive(image, device, device))
            else:
                out.append(Drive(image, device, f"/dev/vd{letters(plain)}"))
                plain += 1
        return out

    def controllers(self, drives: Sequence[Drive]) -> dict[int, Drive | None]:
        """Each NVMe controller's number and the drive behind it (None: a filler)."""
        named = {nvme_number(d.device): d for d in drives if nvme_number(d.device) is not None}
        top = max((n for n in named if n is not None), default=-1)
        return {n: named.get(n) for n in range(top + 1)}

    def filler(self, folder: Path, number: int) -> Path:
        image = folder / f"filler{number}.img"
        with image.open("wb") as handle:
            handle.truncate(FILLER_BYTES)
        return image

    def command(
        self, drives: Sequence[Drive], init: Path, memory_mib: int, shares: Sequence[Path]
    ) -> list[str]:
        """The host's root reaches the guest over 9p with the guest's page cache (its
        programs and libraries, read many times), and the folders where the host and the
        guest both write (`shares`: the lab's own, its commands', /tmp, /var/tmp) over 9p of
        their own without it, so that each sees the other's writes at once."""
        folder = init.parent
        shared = writable_shares([*shares, Path("/tmp"), Path("/var/tmp")])
        initrd = build_initramfs(
            folder, self.modules(), init, self.bind_nvme(drives), mount_shares(shared)
        )
        args = [
            QEMU,
            *self._accel(),
            "-m",
            str(memory_mib),
            "-smp",
            str(min(2, os.cpu_count() or 1)),
            "-nodefaults",
            "-no-user-config",
            "-display",
            "none",
            "-vga",
            "none",
            "-no-reboot",
            "-serial",
            "stdio",
            "-kernel",
            str(self.vmlinuz()),
            "-initrd",
            str(initrd),
            "-append",
            "console=ttyS0 panic=-1",
        ]
        for number, drive in self.controllers(drives).items():  # first: their slots are fixed
            image = drive.image if drive else self.filler(folder, number)
            args += [
                "-drive",
                f"file={_option(image)},format=raw,if=none,id=nvme{number},cache=writeback",
                "-device",
                f"nvme,serial=iolab-nvme{number},drive=nvme{number},addr={NVME_SLOT + number:#x}",
            ]
        for i, drive in enumerate(d for d in drives if nvme_number(d.device) is None):
            args += [
                "-drive",
                f"file={_option(drive.image)},format=raw,if=virtio,cache=writeback,index={i}",
            ]
        for tag, path in (
            ("hostroot", Path("/")),
            *((f"share{i}", p) for i, p in enumerate(shared)),
        ):
            args += [
                "-virtfs",
                f"local,path={_option(path)},mount_tag={tag},security_model={_model()},"
                f"multidevs=remap,id={tag}",
            ]
        return args

    def _accel(self) -> list[str]:
        if self.accel == "kvm":
            return ["-accel", "kvm", "-cpu", "host"]
        return ["-accel", "tcg", "-cpu", "max"]

    def bind_nvme(self, drives: Sequence[Drive]) -> str:
        """In the initramfs: load nvme and bind its controllers one by one in their numbers'
        order (the kernel numbers them as they bind), then check each is the one asked for."""
        numbers = list(self.controllers(drives))
        if not numbers:
            return ""
        slots = " ".join(f"0000:00:{NVME_SLOT + n:02x}.0" for n in numbers)
        checks = " ".join(str(n) for n in numbers)
        return (
            "echo 0 > /sys/bus/pci/drivers_autoprobe\n"
            "$b insmod /modules/nvme.ko || echo 'iolab: no module nvme'\n"
            f"for slot in {slots}; do echo $slot > /sys/bus/pci/drivers/nvme/bind; done\n"
            "echo 1 > /sys/bus/pci/drivers_autoprobe\n"
            f"for n in {checks}; do\n"
            "    for i in $($b seq 300); do\n"
            '        [ "$($b cat /sys/class/nvme/nvme$n/state 2>/dev/null)" = live ] && break\n'
            "        $b sleep 0.1\n"
            "    done\n"
            '    serial=$($b tr -d " " < /sys/class/nvme/nvme$n/serial)\n'
            '    if [ "$serial" != "iolab-nvme$n" ]; then\n'
            '        echo "iolab: NVMe controller nvme$n is not the one asked for ($serial)"\n'
            "        $b poweroff -f\n"
            "    fi\n"
            "done\n"
        )

    def words(self, console: Sequence[str]) -> str:
        how = "KVM" if self.accel == "kvm" else "software emulation, TCG"
        return f"QEMU ({how}) with Debian's kernel {self.version()}"


def writable_shares(paths: Sequence[Path]) -> list[Path]:
    """The folders (that exist) none of the others holds, each once."""
    real = sorted({Path(os.path.realpath(p)) for p in paths if Path(p).is_dir()})
    return [p for p in real if p != Path("/") and not any(o in p.parents for o in real)]


def mount_shares(shares: Sequence[Path]) -> str:
    """Initramfs lines: each share over its place in the host's root, uncached."""
    return "".join(
        f"$b mount $nine,cache=mmap share{i} {shlex.quote(f'/root{path}')} || "
        f"{{ echo {shlex.quote(f'iolab: {path} could not be mounted over 9p')}; "
        "$b poweroff -f; }\n"
        for i, path in enumerate(shares)
    )


def nvme_number(device: str | None) -> int | None:
    found = NVME_NAME.fullmatch(device or "")
    return int(found.group(1)) if found and int(found.group(1)) < MAX_NVME else None


def _option(path: Path) -> str:
    """A path as one QEMU option's value (a comma is written twice)."""
    return str(path).replace(",", ",,")


def _model() -> str:
    """9p's security model: the guest's owners and modes as they are where QEMU runs as root,
    and files owned by whoever runs it otherwise."""
    return "passthrough" if os.geteuid() == 0 else "none"


def _version_key(path: str) -> list[int]:
    return [int(part) for part in re.findall(r"\d+", Path(path).name)]


# -- the initramfs --------------------------------------------------------------------------


def module_order(moddir: Path, wanted: Sequence[str]) -> list[Path]:
    """The module files to load for `wanted`, each after what it depends on (modules.dep)."""
    deps: dict[str, list[str]] = {}
    by_name: dict[str, str] = {}
    for line in (moddir / "modules.dep").read_text().splitlines():
        path, _, needs = line.partition(":")
        deps[path] = needs.split()
        by_name[_module_name(path)] = path
    order: list[str] = []

    def visit(path: str) -> None:
        if path in order:
            return
        for need in deps.get(path, []):
            visit(need)
        order.append(path)

    for name in wanted:
        found = by_name.get(name.replace("-", "_"))
        if found is not None:
            visit(found)
    return [moddir / path for path in order]


def _module_name(path: str) -> str:
    name = Path(path).name
    for end in (".ko", ".ko.xz", ".ko.zst", ".ko.gz"):
        if name.endswith(end):
            name = name.removesuffix(end)
    return name.replace("-", "_")


def _module_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    return lzma.decompress(data) if path.name.endswith(".xz") else data


def build_initramfs(folder: Path, moddir: Path, init: Path, nvme: str, shares: str) -> Path:
    """A newc cpio archive: busybox, the modules (those that reach the host's root, md's and
    dm's, and nvme where `nvme`, the lines that bind its controllers), and an init."""
    wanted = (*INITRAMFS_MODULES, *GUEST_MODULES, *(("nvme",) if nvme else ()))
    modules = module_order(moddir, wanted)
    names = [f"{_module_name(str(p))}.ko" for p in modules]
    script = INITRAMFS_INIT.format(
        modules=" ".join(n for n in names if n != "nvme.ko"),
        nvme=nvme,
        shares=shares,
        access="access=client" if os.geteuid() == 0 else "access=any",
        init=init,
    )
    entries: list[tuple[str, int, bytes]] = [
        ("bin", stat.S_IFDIR | 0o755, b""),
        ("modules", stat.S_IFDIR | 0o755, b""),
        ("bin/busybox", stat.S_IFREG | 0o755, Path(BUSYBOX).read_bytes()),
        ("init", stat.S_IFREG | 0o755, script.encode()),
        *(
            (f"modules/{n}", stat.S_IFREG | 0o644, _module_bytes(p))
            for n, p in zip(names, modules, strict=True)
        ),
    ]
    archive = folder / "initramfs.cpio"
    archive.write_bytes(cpio(entries))
    return archive


def cpio(entries: Sequence[tuple[str, int, bytes]]) -> bytes:
    """The newc ("070701") archive the kernel unpacks as its first root."""
    out = bytearray()
    for number, (name, mode, data) in enumerate([*entries, ("TRAILER!!!", 0, b"")], 1):
        encoded = name.encode() + b"\0"
        fields = (number, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(encoded), 0)
        out += b"070701" + b"".join(b"%08x" % f for f in fields) + encoded
        out += b"\0" * (-len(out) % 4) + data + b"\0" * (-len(data) % 4)
    return bytes(out)
