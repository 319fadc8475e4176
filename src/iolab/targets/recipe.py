"""A layout's recipe: the stages that build it, each what to run and what undoes it.

`commands()` lists them for a dry run without running anything; `provision.build` runs them.
What a layout may be is `iolab.layouts`; here it becomes commands (mkfs.btrfs, mdadm,
lvcreate, mkfs, mount) and queue writes.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from iolab import layouts
from iolab.errors import TargetError
from iolab.layouts import LayoutError
from iolab.model import Layout, stable_hash
from iolab.targets import devices as dv
from iolab.targets import tool_options
from iolab.units import parse_size

LV_NAME = "bench"


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


def queue_file(dev: str, key: str) -> str:
    """The sysfs queue file of a device's whole disk; a placeholder when it does not exist yet."""
    name = dv.try_kernel_name(dev)
    disk = dv.disk_of(name) if name else f"<{Path(dev).name}>"
    return f"/sys/block/{disk}/queue/{key}"


def validate(layout: Layout) -> Layout:
    """The layout, its levels as the tools spell them, if it can be built; TargetError with one
    line saying what to change if not (the rules are `layouts.check_layout`)."""
    try:
        return layouts.check_layout(layout)
    except LayoutError as error:
        raise TargetError(f"layout: {error}") from None


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


def _hook_stage(layout: Layout) -> list[Stage]:
    if not (layout.setup_hook or layout.teardown_hook):
        return []
    do = (Step(("bash", "-c", layout.setup_hook), hook=True),) if layout.setup_hook else ()
    undo = (Step(("bash", "-c", layout.teardown_hook), hook=True),) if layout.teardown_hook else ()
    return [Stage(do, undo)]


def _wipe_stage(layout: Layout) -> list[Stage]:
    steps = []
    for dev in layouts.present(layout):
        name = dv.try_kernel_name(dev)
        for part in dv.partitions(name) if name else ():
            steps.append(Step(("wipefs", "-a", dv.dev_path(part))))
        steps.append(Step(("wipefs", "-a", dev)))
    return [Stage(tuple(steps))]


def _discard_stage(layout: Layout) -> list[Stage]:
    return [Stage(tuple(Step(("blkdiscard", "-f", dev)) for dev in layouts.present(layout)))]


def _btrfs_stage(layout: Layout) -> Stage:
    devs = layout.devices
    words = tool_options.mkfs_args(layout)
    argv = ["mkfs.btrfs", *_with_flag(words, "-f")]
    data = layout.level if layout.raid == "btrfs" else None
    meta = layout.metadata if layout.raid == "btrfs" else None
    argv += ["-d", data] if data else []
    argv += ["-m", meta] if meta else []
    return Stage(
        (Step((*argv, *devs)), Step(("btrfs", "device", "scan", *devs))),
        (Step(("btrfs", "device", "scan", "--forget", *devs)), Step(("wipefs", "-a", *devs))),
    )


def _with_flag(words: list[str], flag: str) -> list[str]:
    return words if flag in words or "--force" in words else [flag, *words]


def chunk_kib(chunk: str) -> int:
    """A chunk size as mdadm takes it: a number of KiB ("256k" and "1m" are not accepted by
    every mdadm version)."""
    return parse_size(chunk) // 1024


def _md_stage(layout: Layout, md: str) -> Stage:
    """mdadm --create; a degraded layout names "missing" in place of its last devices."""
    level, members = layout.level, layouts.present(layout)
    options = ["--run", "--metadata=1.2", f"--level={level}"]
    options.append(f"--raid-devices={len(layout.devices)}")
    options += [f"--chunk={chunk_kib(layout.chunk)}"] if layout.chunk else []
    options += [f"--layout={layout.md_layout}"] if layout.md_layout else []
    options += ["--assume-clean"] if level != "0" else []
    argv = ["mdadm", "--create", md, *tool_options.mdadm_args(options)]
    return Stage(
        (Step((*argv, *members, *["missing"] * layout.degraded)),),
        (Step(("mdadm", "--stop", md)), Step(("mdadm", "--zero-superblock", *members))),
    )


def _lvm_stage(layout: Layout) -> Stage:
    level = layout.level or "linear"
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
    lvcreate = ["--yes", "--wipesignatures", "y", "-n", LV_NAME, "-l", "100%FREE", *shape]
    return Stage(
        (
            Step(("pvcreate", "--yes", "-ff", *layout.devices)),
            Step(("vgcreate", vg, *layout.devices)),
            Step(("lvcreate", *tool_options.lvcreate_args(lvcreate), vg)),
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
    words = _with_flag(tool_options.mkfs_args(layout), "-f" if layout.filesystem == "xfs" else "-F")
    return [Stage((Step((tool, *words, top)),), (Step(("wipefs", "-a", top)),))]


def _raid_stages(layout: Layout, md: str) -> list[Stage]:
    if layouts.is_btrfs(layout):
        return [_btrfs_stage(layout)]
    if layout.raid == "mdadm":
        return [_md_stage(layout, md), *_mkfs_stage(layout, md)]
    if layout.raid == "lvm":
        return [_lvm_stage(layout), *_mkfs_stage(layout, top_device(layout, md))]
    return _mkfs_stage(layout, layout.devices[0])


def _mount_stages(layout: Layout, top: str, mountpoint: Path) -> list[Stage]:
    if not layouts.mounted(layout):
        return []
    mnt = str(mountpoint)
    stages = (
        []
        if mountpoint.exists()
        else [Stage((Step(("mkdir", "-p", mnt)),), (Step(("rmdir", mnt)),))]
    )
    fstype = "btrfs" if layouts.is_btrfs(layout) else layout.filesystem
    argv = ("mount", "-t", fstype, *tool_options.mount_args(layout), top, mnt)
    return [*stages, Stage((Step(argv),), (Step(("umount", mnt)),))]


def _queue_order(queue: dict[str, str]) -> list[tuple[str, str]]:
    """The scheduler first: changing it resets nr_requests."""
    return sorted(queue.items(), key=lambda kv: kv[0] != "scheduler")


def current(dev: str, key: str) -> str | None:
    text = dv.sysfs_text(queue_file(dev, key))
    return dv.active_scheduler(text) if key == "scheduler" else text


def _queue_stages(layout: Layout, top: str) -> list[Stage]:
    settings = _queue_order(dict(layout.queue))
    if not settings:
        return []
    targets = list(dict.fromkeys(layouts.present(layout)))
    stages = [_queue_stage(dev, settings) for dev in targets]
    ahead = dict(settings).get("read_ahead_kb")
    if top not in targets and ahead is not None:
        stages.append(_queue_stage(top, [("read_ahead_kb", ahead)]))
    return stages


def _queue_stage(dev: str, settings: list[tuple[str, str]]) -> Stage:
    do = tuple(Step(queue=(dev, key, value)) for key, value in settings)
    undo = tuple(
        Step(queue=(dev, key, current(dev, key) or "<previous value>")) for key, _ in settings
    )
    return Stage(do, undo)


def stages(layout: Layout, mountpoint: Path, *, wipe_signatures: bool = False) -> list[Stage]:
    """The whole recipe: hooks, wipe, discard, RAID, mkfs, mount, queue settings."""
    layout = validate(layout)
    md = md_device() if layout.raid == "mdadm" else ""
    return recipe(layout, mountpoint, md, wipe_signatures)


def recipe(layout: Layout, mountpoint: Path, md: str, wipe_signatures: bool) -> list[Stage]:
    """The stages of a validated layout, its md array named `md` (see `md_device`)."""
    top = top_device(layout, md)
    built = [
        *_hook_stage(layout),
        *(_wipe_stage(layout) if wipe_signatures else []),
        *(_discard_stage(layout) if layout.discard else []),
        *_raid_stages(layout, md),
        *_mount_stages(layout, top, mountpoint),
        *_queue_stages(layout, top),
    ]
    _names_only(built, _named(layout, md, mountpoint))
    return built


def _named(layout: Layout, md: str, mountpoint: Path) -> set[str]:
    """The paths a set-up's commands may name: its devices and their partitions, the array or
    volume it builds, and its mount point."""
    named = {*layout.devices, top_device(layout, md), str(mountpoint)}
    for dev in layouts.present(layout):
        name = dv.try_kernel_name(dev)
        named.update(dv.dev_path(part) for part in (dv.partitions(name) if name else ()))
    return named


def _names_only(stages: list[Stage], named: set[str]) -> None:
    """TargetError when a command (hooks aside: they are code, run only with --allow-hooks)
    would name a path the set-up does not: a second check behind the options' allow-list."""
    for stage in stages:
        for step in (*stage.do, *stage.undo):
            if step.hook or step.queue is not None:
                continue
            stray = next((w for w in step.argv[1:] if w.startswith("/") and w not in named), None)
            if stray is not None:
                raise TargetError(
                    f"{step.argv[0]} would name {stray!r}, which the set-up does not list; "
                    "iolab runs only commands on the devices a plan names"
                )


def commands(layout: Layout, mountpoint: Path, *, wipe_signatures: bool = False) -> list[list[str]]:
    """Every command build() would run, set-up then teardown, without running any.

    Queue writes appear as their `sh -c 'echo VALUE > /sys/...'` equivalent; the teardown
    restores the values the queue files hold now.
    """
    plan = stages(layout, mountpoint, wipe_signatures=wipe_signatures)
    setup = [step.shown() for stage in plan for step in stage.do]
    teardown = [step.shown() for stage in reversed(plan) for step in stage.undo]
    return setup + teardown
