"""Build a set-up on block devices (RAID, filesystem, mount, queue settings), then tear it down.

A layout becomes an ordered list of stages; each stage is what to run and what undoes it.
`commands()` lists them for a dry run without running anything; `build()` runs them, yields a
`Built`, and always undoes every stage it started, in reverse, also on failure and Ctrl-C.
Devices are checked by `safety.check` before the first command runs.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iolab.errors import TargetError
from iolab.model import Layout, stable_hash
from iolab.targets import devices as dv
from iolab.targets import environment, safety
from iolab.targets.path import TEST_FILE

LogEntry = tuple[str, int, str]

BTRFS_PROFILES = {
    "raid0",
    "raid1",
    "raid1c3",
    "raid1c4",
    "raid10",
    "raid5",
    "raid6",
    "single",
    "dup",
}
MD_LEVELS = {"0", "1", "4", "5", "6", "10"}
LVM_LEVELS = {"linear", "0", "1", "4", "5", "6", "10"}
QUEUE_NAME = re.compile(r"^[a-z_]+$")
LV_NAME = "bench"
HOOK_TIMEOUT_S = 900
UMOUNT_TRIES = 5
PACKAGES = {
    "mkfs.xfs": "xfsprogs",
    "xfs_info": "xfsprogs",
    "mkfs.ext4": "e2fsprogs",
    "mkfs.btrfs": "btrfs-progs",
    "btrfs": "btrfs-progs",
    "mdadm": "mdadm",
    "pvcreate": "lvm2",
    "vgcreate": "lvm2",
    "lvcreate": "lvm2",
    "vgremove": "lvm2",
    "pvremove": "lvm2",
    "wipefs": "util-linux",
    "blkdiscard": "util-linux",
    "mount": "mount",
    "umount": "mount",
    "bash": "bash",
}


@dataclass(frozen=True)
class Step:
    """One command (argv), or one write of `value` to a device's queue setting `key`."""

    argv: tuple[str, ...] = ()
    queue: tuple[str, str, str] | None = None  # (device path, key, value)
    hook: bool = False

    def shown(self) -> list[str]:
        """The command as a dry run lists it; a queue write as its shell equivalent."""
        if self.queue is None:
            return list(self.argv)
        dev, key, value = self.queue
        return ["sh", "-c", f"echo {shlex.quote(value)} > {queue_file(dev, key)}"]

    def text(self) -> str:
        """One line naming the step, for logs and error messages."""
        if self.hook:
            return f"hook {' '.join(self.argv[-1].split())!r}"
        shown = self.shown()
        return shown[-1] if self.queue else shlex.join(shown)


@dataclass(frozen=True)
class Stage:
    """Steps to run, and the steps that undo them (run in order, stages in reverse)."""

    do: tuple[Step, ...]
    undo: tuple[Step, ...] = ()


@dataclass
class Built:
    """A provisioned set-up: where fio goes, what ran, and what was built.

    path is the test file on the mounted filesystem, or the raw block device (raw=True);
    paths holds every raw device when several are used without RAID (fio joins them by ':').
    log gets teardown entries appended after the with-block ends.
    """

    path: Path
    raw: bool
    paths: tuple[Path, ...]
    mountpoint: Path | None
    log: list[LogEntry] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)


# -- the recipe -----------------------------------------------------------------------------


def queue_file(dev: str, key: str) -> str:
    """The sysfs queue file of a device's whole disk; a placeholder when it does not exist yet."""
    name = dv.try_kernel_name(dev)
    disk = dv.disk_of(name) if name else f"<{Path(dev).name}>"
    return f"/sys/block/{disk}/queue/{key}"


def _split_options(text: str, tool: str) -> list[str]:
    """Free-text options as words; a leading tool name ("mkfs.xfs -f ...") is dropped."""
    try:
        words = shlex.split(text)
    except ValueError as error:
        raise TargetError(f"layout: cannot parse options {text!r}: {error}") from None
    family = tool.split(".", maxsplit=1)[0]
    if words and (words[0] == family or words[0].startswith(family + ".")):
        if words[0] not in (family, tool):
            raise TargetError(f"layout: options start with {words[0]} but the tool is {tool}")
        words = words[1:]
    return words


def mount_args(text: str) -> list[str]:
    """Mount options as free text: "noatime,logbufs=8" or "-o noatime,logbufs=8"."""
    words = _split_options(text, "mount")
    if words and not any(w.startswith("-") for w in words):
        return ["-o", ",".join(words)]
    return words


def _profile(value: str | None, what: str) -> str | None:
    if value is None:
        return None
    profile = value.lower()
    profile = f"raid{profile}" if profile.isdigit() else profile
    if profile not in BTRFS_PROFILES:
        raise TargetError(
            f"layout: btrfs {what} profile {value!r} is not one of {sorted(BTRFS_PROFILES)}"
        )
    return profile


def _level(value: str | None, known: set[str], tool: str) -> str:
    level = (value or "").lower().removeprefix("raid")
    if tool == "lvm" and level in ("", "striped", "stripe"):
        level = "0" if level else "linear"
    if level not in known:
        raise TargetError(f"layout: {tool} level {value!r} is not one of {sorted(known)}")
    return level


def validate(layout: Layout) -> None:
    """Refuse layouts that cannot be built, with one line saying what to change."""
    if not layout.devices:
        raise TargetError("layout: no devices; name at least one block device")
    if layout.raid == "btrfs" and layout.filesystem not in ("btrfs", "none"):
        raise TargetError(
            f"layout: raid btrfs is a btrfs filesystem; drop filesystem {layout.filesystem!r}"
        )
    if layout.raid == "none" and layout.filesystem != "none" and len(layout.devices) > 1:
        raise TargetError(
            f"layout: one {layout.filesystem} filesystem over {len(layout.devices)} devices "
            "needs a raid (btrfs, mdadm or lvm), or one device"
        )
    if layout.md_layout and layout.raid != "mdadm":
        raise TargetError("layout: md_layout applies to raid mdadm only")
    if layout.raid != "btrfs" and (layout.metadata or (layout.level and layout.raid == "none")):
        raise TargetError("layout: level and metadata need a raid; set raid or drop them")
    for key in layout.queue:
        if not QUEUE_NAME.match(key):
            raise TargetError(f"layout: queue setting {key!r} is not a sysfs queue file name")


# Share of the devices' raw capacity a layout leaves usable: (data copies, parity devices).
_REDUNDANCY: dict[str, tuple[int, int]] = {
    "1": (0, 0), "raid1": (2, 0), "10": (2, 0), "raid10": (2, 0), "4": (1, 1), "5": (1, 1),
    "raid5": (1, 1), "6": (1, 2), "raid6": (1, 2),
}  # fmt: skip


def capacity(layout: Layout) -> int | None:
    """Roughly how many bytes a layout offers, from its devices' sizes; None if unknown."""
    sizes = []
    for dev in layout.devices:
        name = dv.try_kernel_name(dev)
        size = dv.facts(name).size_bytes if name else None
        if size is None:
            return None
        sizes.append(size)
    count, smallest = len(sizes), min(sizes)
    copies, parity = _REDUNDANCY.get(layout.level or "", (1, 0))
    if copies == 0:  # md / lvm raid1: a mirror of the smallest
        return smallest
    if parity:
        return (count - parity) * smallest
    return sum(sizes) // copies


def md_device() -> str:
    """The first free /dev/mdN, from 127 down, as mdadm numbers arrays it names itself."""
    for number in range(127, -1, -1):
        if not (dv.SYS_BLOCK / f"md{number}").exists():
            return f"/dev/md{number}"
    raise TargetError("no free md device number; stop an array (mdadm --stop)")


def vg_name(layout: Layout) -> str:
    return "iolab" + stable_hash(list(layout.devices))[:8]


def top_device(layout: Layout, md: str) -> str:
    """The one block device a filesystem (or raw fio) goes on."""
    if layout.raid == "mdadm":
        return md
    if layout.raid == "lvm":
        return f"/dev/mapper/{vg_name(layout)}-{LV_NAME}"
    return layout.devices[0]


def _is_btrfs(layout: Layout) -> bool:
    return layout.raid == "btrfs" or layout.filesystem == "btrfs"


def _hook_stage(layout: Layout) -> list[Stage]:
    if not (layout.setup_hook or layout.teardown_hook):
        return []
    do = (Step(("bash", "-c", layout.setup_hook), hook=True),) if layout.setup_hook else ()
    undo = (Step(("bash", "-c", layout.teardown_hook), hook=True),) if layout.teardown_hook else ()
    return [Stage(do, undo)]


def _wipe_stage(layout: Layout) -> list[Stage]:
    steps = []
    for dev in layout.devices:
        name = dv.try_kernel_name(dev)
        for part in dv.partitions(name) if name else ():
            steps.append(Step(("wipefs", "-a", dv.dev_path(part))))
        steps.append(Step(("wipefs", "-a", dev)))
    return [Stage(tuple(steps))]


def _discard_stage(layout: Layout) -> list[Stage]:
    return [Stage(tuple(Step(("blkdiscard", "-f", dev)) for dev in layout.devices))]


def _btrfs_stage(layout: Layout) -> Stage:
    devs = layout.devices
    argv = ["mkfs.btrfs", *_with_flag(_split_options(layout.mkfs_options, "mkfs.btrfs"), "-f")]
    data = _profile(layout.level, "data") if layout.raid == "btrfs" else None
    meta = _profile(layout.metadata, "metadata") if layout.raid == "btrfs" else None
    argv += ["-d", data] if data else []
    argv += ["-m", meta] if meta else []
    return Stage(
        (Step((*argv, *devs)), Step(("btrfs", "device", "scan", *devs))),
        (Step(("btrfs", "device", "scan", "--forget", *devs)), Step(("wipefs", "-a", *devs))),
    )


def _with_flag(words: list[str], flag: str) -> list[str]:
    return words if flag in words or "--force" in words else [flag, *words]


def _md_stage(layout: Layout, md: str) -> Stage:
    level = _level(layout.level, MD_LEVELS, "mdadm")
    argv = ["mdadm", "--create", md, "--run", "--metadata=1.2", f"--level={level}"]
    argv.append(f"--raid-devices={len(layout.devices)}")
    argv += [f"--chunk={layout.chunk}"] if layout.chunk else []
    argv += [f"--layout={layout.md_layout}"] if layout.md_layout else []
    argv += ["--assume-clean"] if level != "0" else []
    return Stage(
        (Step((*argv, *layout.devices)),),
        (Step(("mdadm", "--stop", md)), Step(("mdadm", "--zero-superblock", *layout.devices))),
    )


def _lvm_stage(layout: Layout) -> Stage:
    level = _level(layout.level, LVM_LEVELS, "lvm")
    count, vg = len(layout.devices), vg_name(layout)
    shape: list[str] = {
        "linear": ["--type", "linear"],
        "0": ["--type", "striped", "-i", str(count)],
        "1": ["--type", "raid1", "-m", str(count - 1), "--nosync"],
        "10": ["--type", "raid10", "-i", str(count // 2), "-m", "1", "--nosync"],
        "4": ["--type", "raid4", "-i", str(count - 1)],
        "5": ["--type", "raid5", "-i", str(count - 1)],
        "6": ["--type", "raid6", "-i", str(count - 2)],
    }[level]
    shape += ["-I", layout.chunk] if layout.chunk and level not in ("linear", "1") else []
    lvcreate = ["lvcreate", "--yes", "--wipesignatures", "y", "-n", LV_NAME, "-l", "100%FREE"]
    return Stage(
        (
            Step(("pvcreate", "--yes", "-ff", *layout.devices)),
            Step(("vgcreate", vg, *layout.devices)),
            Step((*lvcreate, *shape, vg)),
        ),
        (
            Step(("vgremove", "--yes", "-f", vg)),
            Step(("pvremove", "--yes", "-ff", *layout.devices)),
        ),
    )


def _mkfs_stage(layout: Layout, top: str) -> list[Stage]:
    if layout.filesystem == "none":
        return []
    tool = f"mkfs.{layout.filesystem}"
    words = _split_options(layout.mkfs_options, tool)
    words = _with_flag(words, "-f" if layout.filesystem == "xfs" else "-F")
    return [Stage((Step((tool, *words, top)),), (Step(("wipefs", "-a", top)),))]


def _raid_stages(layout: Layout, md: str) -> list[Stage]:
    if _is_btrfs(layout):
        return [_btrfs_stage(layout)]
    if layout.raid == "mdadm":
        return [_md_stage(layout, md), *_mkfs_stage(layout, md)]
    if layout.raid == "lvm":
        return [_lvm_stage(layout), *_mkfs_stage(layout, top_device(layout, md))]
    return _mkfs_stage(layout, layout.devices[0])


def _mount_stages(layout: Layout, top: str, mountpoint: Path) -> list[Stage]:
    if layout.filesystem == "none" and layout.raid != "btrfs":
        return []
    mnt = str(mountpoint)
    stages = (
        []
        if mountpoint.exists()
        else [Stage((Step(("mkdir", "-p", mnt)),), (Step(("rmdir", mnt)),))]
    )
    fstype = "btrfs" if _is_btrfs(layout) else layout.filesystem
    argv = ("mount", "-t", fstype, *mount_args(layout.mount_options), top, mnt)
    return [*stages, Stage((Step(argv),), (Step(("umount", mnt)),))]


def _queue_order(queue: dict[str, str]) -> list[tuple[str, str]]:
    """The scheduler first: changing it resets nr_requests."""
    return sorted(queue.items(), key=lambda kv: kv[0] != "scheduler")


def _current(dev: str, key: str) -> str | None:
    text = dv.read(queue_file(dev, key))
    return dv.active_scheduler(text) if key == "scheduler" else text


def _queue_stages(layout: Layout, top: str) -> list[Stage]:
    settings = _queue_order(dict(layout.queue))
    if not settings:
        return []
    targets = list(dict.fromkeys(layout.devices))
    stages = [_queue_stage(dev, settings) for dev in targets]
    ahead = dict(settings).get("read_ahead_kb")
    if top not in targets and ahead is not None:
        stages.append(_queue_stage(top, [("read_ahead_kb", ahead)]))
    return stages


def _queue_stage(dev: str, settings: list[tuple[str, str]]) -> Stage:
    do = tuple(Step(queue=(dev, key, value)) for key, value in settings)
    undo = tuple(
        Step(queue=(dev, key, _current(dev, key) or "<previous value>")) for key, _ in settings
    )
    return Stage(do, undo)


def stages(layout: Layout, mountpoint: Path, *, wipe_signatures: bool = False) -> list[Stage]:
    """The whole recipe: hooks, wipe, discard, RAID, mkfs, mount, queue settings."""
    validate(layout)
    md = md_device() if layout.raid == "mdadm" else ""
    return _recipe(layout, mountpoint, md, wipe_signatures)


def _recipe(layout: Layout, mountpoint: Path, md: str, wipe_signatures: bool) -> list[Stage]:
    top = top_device(layout, md)
    return [
        *_hook_stage(layout),
        *(_wipe_stage(layout) if wipe_signatures else []),
        *(_discard_stage(layout) if layout.discard else []),
        *_raid_stages(layout, md),
        *_mount_stages(layout, top, mountpoint),
        *_queue_stages(layout, top),
    ]


def commands(layout: Layout, mountpoint: Path, *, wipe_signatures: bool = False) -> list[list[str]]:
    """Every command build() would run, set-up then teardown, without running any.

    Queue writes appear as their `sh -c 'echo VALUE > /sys/...'` equivalent; the teardown
    restores the values the queue files hold now.
    """
    plan = stages(layout, mountpoint, wipe_signatures=wipe_signatures)
    setup = [step.shown() for stage in plan for step in stage.do]
    teardown = [step.shown() for stage in reversed(plan) for step in stage.undo]
    return setup + teardown


# -- running --------------------------------------------------------------------------------


class _Runner:
    """Runs steps, logs (command, returncode, output), and raises TargetError on failure."""

    def __init__(self, env: dict[str, str]) -> None:
        self.log: list[LogEntry] = []
        self.env = env
        self.queue_before: dict[str, dict[str, str]] = {}

    def run(self, step: Step, phase: str) -> None:
        if step.queue is not None:
            self._write(step, phase)
            return
        try:
            done = subprocess.run(
                list(step.argv),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                check=False,
                env={**self.env, "IOLAB_PHASE": phase} if step.hook else None,
                timeout=HOOK_TIMEOUT_S if step.hook else None,
                process_group=0 if phase == "teardown" else None,
            )
        except FileNotFoundError:
            tool = step.argv[0]
            package = PACKAGES.get(tool, tool)
            self.log.append((step.text(), 127, f"{tool}: not found"))
            raise TargetError(
                f"{phase} step failed: {step.text()}: {tool} is not installed; install {package}"
            ) from None
        except subprocess.TimeoutExpired:
            self.log.append((step.text(), 124, f"timed out after {HOOK_TIMEOUT_S} s"))
            raise TargetError(
                f"{phase} step failed: {step.text()}: timed out after {HOOK_TIMEOUT_S} s"
            ) from None
        output = "\n".join(x for x in (done.stdout.strip(), done.stderr.strip()) if x)
        self.log.append((step.text(), done.returncode, output))
        if done.returncode != 0:
            reason = dv.last_line(done.stderr) or dv.last_line(done.stdout)
            reason = reason or f"exit status {done.returncode}"
            raise TargetError(f"{phase} step failed: {step.text()}: {reason}")

    def _write(self, step: Step, phase: str) -> None:
        assert step.queue is not None
        dev, key, value = step.queue
        path = queue_file(dev, key)
        try:
            Path(path).write_text(value)
        except OSError as error:
            self.log.append((step.text(), 1, error.strerror or str(error)))
            raise TargetError(
                f"{phase} step failed: {step.text()}: {error.strerror or error}"
            ) from None
        self.log.append((step.text(), 0, ""))


def _undo_now(stage: Stage, before: dict[str, dict[str, str]]) -> tuple[Step, ...]:
    """A stage's undo steps; queue restores take the values the files hold right now."""
    if not stage.do or stage.do[0].queue is None:
        return stage.undo
    restores = []
    for step in stage.do:
        assert step.queue is not None
        dev, key, _ = step.queue
        previous = _current(dev, key)
        if previous is not None:
            restores.append(Step(queue=(dev, key, previous)))
            before.setdefault(dev, {})[key] = previous
    return tuple(restores)


@contextlib.contextmanager
def _sigint_deferred() -> Iterator[list[int]]:
    """Hold Ctrl-C while tearing down; the caller re-raises it once teardown is done."""
    caught: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return
    previous = signal.signal(signal.SIGINT, lambda signum, _frame: caught.append(signum))
    try:
        yield caught
    finally:
        signal.signal(signal.SIGINT, previous)


def _teardown(undo: list[tuple[Step, ...]], runner: _Runner) -> list[str]:
    errors = []
    for steps in reversed(undo):
        for step in steps:
            try:
                _run_teardown_step(step, runner)
            except TargetError as error:
                errors.append(str(error))
    return errors


def _run_teardown_step(step: Step, runner: _Runner) -> None:
    tries = UMOUNT_TRIES if step.argv[:1] == ("umount",) else 1
    for attempt in range(1, tries + 1):
        try:
            runner.run(step, "teardown")
            return
        except TargetError as error:
            if attempt == tries or "busy" not in str(error):
                raise
            time.sleep(1)


def _check_mountpoint(layout: Layout, mountpoint: Path) -> None:
    if layout.filesystem == "none" and layout.raid != "btrfs":
        return
    if mountpoint.exists() and not mountpoint.is_dir():
        raise TargetError(f"mount point {mountpoint} is not a directory; choose another")
    if mountpoint.is_dir() and os.path.ismount(mountpoint):
        raise TargetError(f"{mountpoint} is already a mount point; unmount it or choose another")


def _check_queue_keys(layout: Layout) -> None:
    for dev in layout.devices:
        for key in layout.queue:
            if not Path(queue_file(dev, key)).exists():
                raise TargetError(
                    f"layout: {dev} has no queue setting {key!r} ({queue_file(dev, key)}); "
                    "use scheduler, read_ahead_kb, nr_requests or rq_affinity"
                )


@contextlib.contextmanager
def build(
    layout: Layout,
    mountpoint: Path,
    *,
    confirmed: Collection[str],
    wipe_signatures: bool = False,
) -> Iterator[Built]:
    """Check the devices, build the layout, yield what fio uses, and always tear it down.

    Teardown undoes every started stage in reverse (queue values restored, unmount, RAID
    stopped, signatures iolab wrote wiped, teardown hook last), on success, failure or Ctrl-C.
    A failing set-up step raises TargetError with the command's own last error line. A
    failing teardown step raises TargetError after a good run, is appended to a set-up
    TargetError's message, and is added as a note to any other exception (Ctrl-C included).
    """
    validate(layout)
    safety.check(layout.devices, confirmed, wipe_signatures)
    md = md_device() if layout.raid == "mdadm" else ""
    plan = _recipe(layout, mountpoint, md, wipe_signatures)
    _check_mountpoint(layout, mountpoint)
    _check_queue_keys(layout)
    env = {
        **os.environ,
        "IOLAB_DEVICES": " ".join(layout.devices),
        "IOLAB_MOUNTPOINT": str(mountpoint),
    }
    runner = _Runner(env)
    undo: list[tuple[Step, ...]] = []
    primary: BaseException | None = None
    try:
        for stage in plan:
            undo.append(_undo_now(stage, runner.queue_before))
            for step in stage.do:
                runner.run(step, "set-up")
        yield _built(layout, mountpoint, top_device(layout, md), runner)
    except BaseException as error:
        primary = error
        raise
    finally:
        with _sigint_deferred() as caught:
            errors = _teardown(undo, runner)
        _after_teardown(primary, errors, bool(caught))


def _after_teardown(primary: BaseException | None, errors: list[str], interrupted: bool) -> None:
    """Report a failed teardown without hiding what failed first; re-raise a held Ctrl-C."""
    if errors:
        message = f"{errors[0]}; check findmnt and losetup -a and clean up by hand"
        if primary is None:
            raise TargetError(message)
        if isinstance(primary, TargetError):
            raise TargetError(f"{primary}; and {message}") from primary
        primary.add_note(message)
    if primary is None and interrupted:
        raise KeyboardInterrupt


def _built(layout: Layout, mountpoint: Path, top: str, runner: _Runner) -> Built:
    mounted = layout.filesystem != "none" or layout.raid == "btrfs"
    paths: tuple[Path, ...] = (Path(top),)
    if mounted:
        paths = (mountpoint / TEST_FILE,)
    elif layout.raid == "none":
        paths = tuple(Path(d) for d in layout.devices)
    path = paths[0]
    facts = environment.layout_facts(layout, top, mountpoint if mounted else None)
    facts["queue"] = {
        dev: {key: {"before": value, "after": _current(dev, key)} for key, value in keys.items()}
        for dev, keys in runner.queue_before.items()
    }
    return Built(path, not mounted, paths, mountpoint if mounted else None, runner.log, facts)
