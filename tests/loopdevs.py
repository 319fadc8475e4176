"""Loop devices over sparse files for tests, always torn down (unmounted, swapoff, detached).

Use the `loops` fixture: `loops.make(256)` gives "/dev/loopN" over a sparse 256 MiB file under
/var/tmp (or $IOLAB_TEST_DIR). Its finalizer unmounts everything on the test's loop devices
(and their partitions and stacked loops), turns swap off, makes the kernel forget btrfs
members, detaches them and removes the files, also when the test failed, and fails the test
if anything could not be cleaned.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import struct
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from conftest import require_root
from iolab.targets import devices as dv

IMAGE_DIR = Path(os.environ.get("IOLAB_TEST_DIR", "/var/tmp"))
MIB = 1024**2
SECTOR = 512


def sh(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a command; on failure raise with its output (tests want to see why)."""
    done = subprocess.run(
        list(argv), capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL
    )
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr}")
    return done


def write_mbr(image: Path, partitions: Sequence[tuple[int, int]]) -> None:
    """Write a DOS partition table: (start sector, sector count) per Linux partition."""
    table = bytearray(SECTOR)
    for index, (start, count) in enumerate(partitions):
        entry = struct.pack("<B3sB3sII", 0, b"\xfe\xff\xff", 0x83, b"\xfe\xff\xff", start, count)
        table[446 + 16 * index : 446 + 16 * (index + 1)] = entry
    table[510:512] = b"\x55\xaa"
    with image.open("r+b") as handle:
        handle.write(table)


def device_sha256(dev: str) -> str:
    """A checksum of a whole block device, read past any stale cache."""
    sh("blockdev", "--flushbufs", dev)
    digest = hashlib.sha256()
    with open(dev, "rb", buffering=0) as handle:
        while chunk := handle.read(4 * MIB):
            digest.update(chunk)
    return digest.hexdigest()


def is_mounted(target: Path | str) -> bool:
    return sh("findmnt", "--mountpoint", str(target), check=False).returncode == 0


class LoopDevs:
    """The loop devices, mounts and swaps one test made; cleaned up by `cleanup`."""

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.loops: list[tuple[str, Path | None]] = []
        self.mounts: list[Path] = []

    def make(
        self,
        size_mib: int = 256,
        *,
        partitions: Sequence[tuple[int, int]] = (),
        read_only: bool = False,
        backing: str | None = None,
    ) -> str:
        """A new loop device over a fresh sparse file (or over `backing`, a block device)."""
        image: Path | None = None
        if backing is None:
            image = IMAGE_DIR / f"iolab-loop-{self.tag}-{os.getpid()}-{len(self.loops)}.img"
            with image.open("wb") as handle:
                handle.truncate(size_mib * MIB)
            if partitions:
                write_mbr(image, partitions)
        args = ["losetup", "--find", "--show"]
        args += ["--partscan"] if partitions else []
        args += ["--read-only"] if read_only else []
        try:
            dev = sh(*args, str(image or backing)).stdout.strip()
        except AssertionError:
            if image is not None:
                image.unlink()
            raise
        self.loops.append((dev, image))
        if partitions:
            sh("partx", "--update", dev)  # the kernel does not always pick them up by itself
            _wait_for(lambda: all(Path(f"{dev}p{i + 1}").exists() for i in range(len(partitions))))
        return dev

    def mount(self, dev: str, target: Path, *options: str) -> None:
        target.mkdir(parents=True, exist_ok=True)
        sh("mount", *options, dev, str(target))
        self.mounts.append(target)

    def image(self, dev: str) -> Path:
        return next(img for d, img in self.loops if d == dev and img is not None)

    def cleanup(self) -> list[str]:
        """Undo everything; return what could not be undone."""
        problems: list[str] = []
        for target in reversed(self.mounts):
            _umount(target, problems)
        for dev, _ in reversed(self.loops):
            _release(dev, problems)
        for dev, image in reversed(self.loops):
            done = sh("losetup", "--detach", dev, check=False)
            if done.returncode != 0 and Path(f"/sys/block/{Path(dev).name}/loop").exists():
                problems.append(f"losetup -d {dev}: {done.stderr.strip()}")
            if image is not None:
                image.unlink(missing_ok=True)
        return problems


def _wait_for(condition: Callable[[], bool], timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("partition device nodes did not appear")
        time.sleep(0.05)


def _umount(target: Path | str, problems: list[str]) -> None:
    if not is_mounted(target):
        return
    if sh("umount", str(target), check=False).returncode != 0:
        sh("umount", "--lazy", str(target), check=False)
        problems.append(f"{target} was busy; unmounted lazily")


def _release(dev: str, problems: list[str]) -> None:
    """Unmount and swapoff whatever uses the device, and make btrfs forget it."""
    name = dv.try_kernel_name(dev)
    if name is None:
        return
    family = set(dv.family(name))
    btrfs = {d for n in family if (fs := dv.btrfs_of(n)) for d in fs.devices}
    for mount in reversed(dv.mounts()):
        if family & set(mount.devices) or btrfs & set(mount.devices):
            problems.append(f"{mount.target} was still mounted on {dev}")
            _umount(mount.target, problems)
    for member in family & set(dv.swap_devices()):
        sh("swapoff", dv.dev_path(member), check=False)
    sh("btrfs", "device", "scan", "--forget", dev, check=False)


def reap_stale() -> list[str]:
    """Tear down loop devices (and their mounts) left by test processes that are gone.

    A suite killed mid-test (a timeout, a closed session) cannot run its finalizers; its loop
    devices stay attached and mounted, and the next suite's set-up would find the mount point
    taken. Only images this module names, of processes no longer alive, are touched.
    """
    listed = sh("losetup", "--list", "--json", "-O", "NAME,BACK-FILE", check=False).stdout
    stale = LoopDevs("stale")
    for entry in json.loads(listed or '{"loopdevices": []}')["loopdevices"]:
        image = Path((entry.get("back-file") or "").removesuffix(" (deleted)"))
        found = re.fullmatch(r"iolab-loop-.*-(\d+)-\d+\.img", image.name)
        if image.parent == IMAGE_DIR and found and not _alive(int(found.group(1))):
            stale.loops.append((entry["name"], image))
    stale.cleanup()
    return [dev for dev, _ in stale.loops]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@pytest.fixture(name="loops")
def loops_fixture(request: pytest.FixtureRequest) -> Iterator[LoopDevs]:
    """Loop devices for one test, guaranteed gone afterwards: before the test's `workdir` is
    removed, where it has one (a filesystem mounted in it would keep it)."""
    require_root()
    if "workdir" in request.fixturenames:
        request.getfixturevalue("workdir")  # set up first, so torn down after these
    tag = "".join(c if c.isalnum() else "-" for c in request.node.name[:40])
    made = LoopDevs(tag)
    try:
        yield made
    finally:
        problems = made.cleanup()
    assert not problems, "left behind: " + "; ".join(problems)
