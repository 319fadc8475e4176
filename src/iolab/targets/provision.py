"""Build a set-up on block devices (RAID, filesystem, mount, queue settings), then tear it down.

`build()` runs a layout's recipe (see `recipe`), yields a `Built`, and always undoes every
stage it started, in reverse, also on failure and Ctrl-C. Devices are checked by
`safety.check_erasable` before the first command runs. `commands()` and `validate()` are the
recipe's.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from iolab import layouts
from iolab.errors import STOP_SIGNALS, Stopped, TargetError
from iolab.model import Layout, codec
from iolab.model.facts import JSONDict, LayoutFacts, QueueChange
from iolab.targets import devices as dv
from iolab.targets import environment, safety
from iolab.targets.path import TEST_FILE, several_files
from iolab.targets.recipe import (
    Stage,
    Step,
    commands,
    current,
    md_device,
    queue_file,
    recipe,
    top_device,
    validate,
)

log = logging.getLogger(__name__)  # `iolab -v` shows what it ran

__all__ = ["Built", "LogEntry", "build", "capacity", "commands", "validate"]

LogEntry = tuple[str, int, str]
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


@dataclass
class Built:
    """A provisioned set-up: where fio goes, what ran, and what was built.

    path is the test file on the mounted filesystem, or the raw block device (raw=True);
    paths holds every raw device when several are used without RAID (fio joins them by ':').
    log gets teardown entries appended after the with-block ends; layout is what was built.
    """

    path: Path
    raw: bool
    paths: tuple[Path, ...]
    mountpoint: Path | None
    log: list[LogEntry]
    layout: LayoutFacts

    @property
    def facts(self) -> JSONDict:
        """The layout facts as the JSON the store keeps."""
        return codec.to_object(self.layout)

    def at_end(self) -> JSONDict:
        """The layout facts with the RAID read again now, after the set-up's cases, as
        `raid_at_end`: a member that failed while they ran shows there (md: `degraded`,
        `member_states`), beside `raid` as it was built."""
        raid, top = self.layout.raid, self.layout.top
        if raid.kind == "none":
            return self.facts
        top_name = top.name if top else None
        now = environment.raid_facts(raid.kind, raid.members, top_name, self.mountpoint)
        return codec.to_object(replace(self.layout, raid_at_end=now))


def capacity(layout: Layout) -> int | None:
    """Roughly how many bytes a layout offers, from its devices' sizes; None if unknown. A
    device a degraded layout leaves out counts as large as the smallest present one."""
    sizes = []
    for dev in layouts.present(layout):
        name = dv.try_kernel_name(dev)
        size = dv.facts(name).size_bytes if name else None
        if size is None:
            return None
        sizes.append(size)
    return layouts.capacity(layout, sizes + [min(sizes)] * layout.degraded) if sizes else None


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
        log.info("ran: %s", shlex.join(step.argv))
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
        previous = current(dev, key)
        if previous is not None:
            restores.append(Step(queue=(dev, key, previous)))
            before.setdefault(dev, {})[key] = previous
    return tuple(restores)


@contextlib.contextmanager
def sigint_deferred() -> Iterator[list[int]]:
    """Hold Ctrl-C (and SIGTERM, SIGHUP, SIGQUIT, which stop iolab as it does) while tearing
    down; the caller re-raises the first once teardown is done."""
    caught: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return
    held = (signal.SIGINT, *STOP_SIGNALS)
    previous = {s: signal.signal(s, lambda signum, _frame: caught.append(signum)) for s in held}
    try:
        yield caught
    finally:
        for held_signal, handler in previous.items():
            signal.signal(held_signal, handler)


def _teardown(undo: list[tuple[Step, ...]], runner: _Runner) -> list[str]:
    errors = []
    for steps in reversed(undo):
        for step in steps:
            try:
                _run_teardown_step(step, runner)
            except TargetError as error:
                errors.append(str(error))
    return errors


# teardown steps that meet a device a moment too early (a mount still in use; a member
# that udev still probes after its array stopped), and the words they then fail with
RETRIED = {("umount",): ("busy",), ("mdadm", "--zero-superblock"): ("busy", "Couldn't open")}


def _run_teardown_step(step: Step, runner: _Runner) -> None:
    transient = next((w for k, w in RETRIED.items() if step.argv[: len(k)] == k), ())
    tries = UMOUNT_TRIES if transient else 1
    for attempt in range(1, tries + 1):
        try:
            runner.run(step, "teardown")
            return
        except TargetError as error:
            if attempt == tries or not any(word in str(error) for word in transient):
                raise
            time.sleep(1)
            _stop_rebuilt_arrays(step, runner)


def _stop_rebuilt_arrays(step: Step, runner: _Runner) -> None:
    """Before wiping the superblocks again, stop an array udev assembled from them after
    iolab's own was stopped (it holds the members open, and would stay)."""
    if step.argv[:2] != ("mdadm", "--zero-superblock"):
        return
    for array in safety.rebuilt_arrays(step.argv[2:]):
        with contextlib.suppress(TargetError):  # logged; the wipe's own failure is said
            runner.run(Step(("mdadm", "--stop", array)), "teardown")


def _check_mountpoint(layout: Layout, mountpoint: Path) -> None:
    if not layouts.mounted(layout):
        return
    if mountpoint.exists() and not mountpoint.is_dir():
        raise TargetError(f"mount point {mountpoint} is not a directory; choose another")
    if mountpoint.is_dir() and os.path.ismount(mountpoint):
        raise TargetError(f"{mountpoint} is already a mount point; unmount it or choose another")


def _check_queue_keys(layout: Layout) -> None:
    for dev in layouts.present(layout):
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
    mounting: Callable[[str], None] | None = None,
) -> Iterator[Built]:
    """Check the devices, build the layout, yield what fio uses, and always tear it down.

    Teardown undoes every started stage in reverse (queue values restored, unmount, RAID
    stopped, signatures iolab wrote wiped, teardown hook last), on success, failure or Ctrl-C.
    A failing set-up step raises TargetError with the command's own last error line. A
    failing teardown step raises TargetError after a good run, is appended to a set-up
    TargetError's message, and is added as a note to any other exception (Ctrl-C included).
    `mounting` hears the source of the set-up's mount before it is mounted (the run's record
    notes it, so that what a killed run mounted can be unmounted on proof).
    """
    layout = validate(layout)
    safety.check_erasable(layouts.present(layout), confirmed, wipe_signatures)
    md = md_device() if layout.raid == "mdadm" else ""
    plan = recipe(layout, mountpoint, md, wipe_signatures)
    _check_mountpoint(layout, mountpoint)
    _check_queue_keys(layout)
    env = {
        **os.environ,
        "IOLAB_DEVICES": " ".join(layouts.present(layout)),
        "IOLAB_MOUNTPOINT": str(mountpoint),
    }
    runner = _Runner(env)
    undo: list[tuple[Step, ...]] = []
    primary: BaseException | None = None
    try:
        for stage in plan:
            for step in stage.do:
                if mounting is not None and step.argv[:1] == ("mount",):
                    mounting(step.argv[-2])
            _run_stage(stage, _undo_now(stage, runner.queue_before), undo, runner)
        yield _built(layout, mountpoint, top_device(layout, md), runner)
    except BaseException as error:
        primary = error
        raise
    finally:
        with sigint_deferred() as caught:
            errors = _teardown(undo, runner)
        _after_teardown(primary, errors, caught)


def _run_stage(
    stage: Stage, pending: tuple[Step, ...], undo: list[tuple[Step, ...]], runner: _Runner
) -> None:
    """Run a stage's steps; its undo steps join `undo` once something may have been made.

    A first command that fails cleanly (mdadm --create refused) made nothing, so nothing is
    undone for it; a hook, or any step cut short (Ctrl-C), may have made something.
    """
    registered = False

    def register() -> None:
        nonlocal registered
        if not registered:
            undo.append(pending)
            registered = True

    if not stage.do:
        register()  # a stage that only undoes (the teardown hook)
    for step in stage.do:
        try:
            runner.run(step, "set-up")
        except TargetError:
            if registered or step.hook:
                register()
            raise
        except BaseException:
            register()
            raise
        register()


def _after_teardown(primary: BaseException | None, errors: list[str], caught: list[int]) -> None:
    """Report a failed teardown without hiding what failed first; re-raise a held Ctrl-C."""
    if errors:
        message = f"{errors[0]}; check findmnt and losetup -a and clean up by hand"
        if primary is None:
            raise TargetError(message)
        if isinstance(primary, TargetError):
            raise TargetError(f"{primary}; and {message}") from primary
        primary.add_note(message)
    if primary is None and caught:
        if caught[0] == signal.SIGINT:
            raise KeyboardInterrupt
        raise Stopped(caught[0], signal.Signals(caught[0]).name)


def _built(layout: Layout, mountpoint: Path, top: str, runner: _Runner) -> Built:
    mounted = layouts.mounted(layout)
    paths: tuple[Path, ...] = (Path(top),)
    if mounted:
        paths = (mountpoint / TEST_FILE,)
    elif layout.raid == "none":
        # the kernel's node (/dev/sdb): fio splits filename= at each ':', which names under
        # /dev/disk/by-path have; a node still named so is refused
        paths = tuple(Path(os.path.realpath(d)) for d in layout.devices)
    for device in paths:
        problem = several_files(device)
        if problem:
            raise TargetError(f"device {str(device)!r} {problem}; name it by its kernel node")
    path = paths[0]
    facts = environment.layout_facts(layout, top, mountpoint if mounted else None)
    queue = {
        dev: {key: QueueChange(value, current(dev, key)) for key, value in keys.items()}
        for dev, keys in runner.queue_before.items()
    }
    built = replace(facts, queue=queue)
    return Built(path, not mounted, paths, mountpoint if mounted else None, runner.log, built)
