"""A set-up's cache policy on a RAID card (or a plain disk's own write cache): set, read back,
recorded, restored.

`check()` reads the card before anything runs (the VD exists, its output can be read, it is
the set-up's device, each asked part is printed). Before a set-up's cases `applied()` reads
the VD's policy through the card's own tool, runs one set command per asked part (argv lists,
never a shell, each with a time limit, in a session of its own, in a scratch directory
for the tools' logs), reads it back, checks the VD is still the device it was, and refuses the
set-up in one line when the card did not take it. What was there is written to the run's
record first (kind "controller", its path the JSON of what to restore), restored and read back
after the set-up (also on failure and Ctrl-C), and after a kill by the next run
(`restore_from`). A restore that fails is kept as a pending restore (`pending`), said until
one succeeds: a later set-up on the VD puts back the first values, `retry_pending()` the rest.

A plain disk's write cache is sysfs' `cache_type` ("write back" / "write through") of its
SCSI disk, or an NVMe controller's volatile write cache (feature 06h, through nvme-cli:
`nvme_cache`), set, read back and restored the same way; devices without one (loop devices,
an NVMe controller whose identify says it has no volatile write cache) are refused before
anything runs.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import signal
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from iolab.errors import ControllerError, Stopped
from iolab.model import JSON, CardPolicy, Setup, codec
from iolab.model.drive import CacheSetting
from iolab.model.facts import JSONDict
from iolab.targets.controllers import nvme_cache, pending
from iolab.targets.controllers.card_commands import (
    FAMILY,
    SYSFS_WORDS,
    problem,
    program,
    set_commands,
)
from iolab.targets.controllers.model import (
    Controller,
    DriveCache,
    VirtualDrive,
    differs,
    member_name,
)
from iolab.targets.controllers.pending import PendingRestore
from iolab.targets.controllers.probe import (
    READERS,
    answer_limit,
    call,
    gone,
    label_of,
    run_tool,
    scratch,
)
from iolab.targets.provision import sigint_deferred

TIMEOUT_S = 60.0
KIND = "controller"  # the ledger's kind for what to restore
DISK_CACHE = ("write-back", "write-through")  # a plain disk's own, sysfs cache_type
_DRIVE_WORDS = {DriveCache.ON: "on", DriveCache.OFF: "off", DriveCache.DEFAULT: "default"}

Hold = Callable[[str, str], contextlib.AbstractContextManager[None]]


# -- the commands ---------------------------------------------------------------------------


# -- running --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Card:
    """What a set-up's cases ran under: the card and VD as read back after the set; and the
    VD's physical drives, as smartctl reaches them through the card: (the card's name for
    the drive, smartctl's -d value), on `device`, the VD's block device."""

    facts: JSONDict
    differs: str | None = None
    cache_bytes: int = 0
    members: tuple[tuple[str, str], ...] = ()
    device: str = ""


def _run(argv: list[str], label: str, cwd: Path) -> None:
    """Run one set command; a ControllerError when it fails (its output is not quoted)."""
    code, _ = call(argv, label, cwd, answer_limit(TIMEOUT_S))
    if code != 0:
        raise ControllerError(f"{label} refused `{' '.join(argv[1:])}` (exit status {code})")


def read(policy: CardPolicy, cwd: Path) -> tuple[Controller, VirtualDrive]:
    """The card and the VD as the tool prints them now."""
    prog = program(policy.tool)
    if prog is None:
        raise ControllerError(f"{policy.tool} is not installed (not on PATH); install it")
    family = FAMILY[policy.tool]
    label = label_of(family, prog)

    limit = answer_limit(TIMEOUT_S)

    def run(args: list[str]) -> str:
        return run_tool(prog, args, label, cwd, limit)

    problems: list[str] = []
    for card in READERS[family](label, run, problems):
        for vd in card.drives:
            if vd.id.lower() == policy.vd.lower():
                return card, vd
    raise ControllerError(f"{policy.tool} lists no virtual drive {policy.vd!r}; check vd")


def current(card: Controller, vd: VirtualDrive, key: str) -> str | None:
    """One part of the VD's configured policy, in the plan's words; None if not printed."""
    configured = vd.configured
    if key == "cache_ratio":
        ratio = card.cache_ratio
        return f"{ratio.read}/{ratio.write}" if ratio else None
    if key == "drive_cache":
        found = vd.drive_cache or card.drive_cache
        return _DRIVE_WORDS.get(found) if found else None
    part = {
        "write_cache": configured.write if configured else None,
        "read_ahead": configured.read if configured else None,
        "io_policy": configured.io if configured else None,
    }[key]
    return str(part) if part is not None else None


def _set_all(policy: CardPolicy, values: dict[str, str], cwd: Path) -> None:
    prog = program(policy.tool)
    if prog is None:
        raise ControllerError(f"{policy.tool} is not installed (not on PATH); install it")
    for key, value in values.items():
        for argv in set_commands(policy, key, value, prog):
            _run(argv, policy.tool, cwd)


def _not_taken(policy: CardPolicy, card: Controller, vd: VirtualDrive) -> str | None:
    for key, value in policy.fields().items():
        now = current(card, vd, key)
        if now != value:
            return (
                f"the card did not take {key} = {value} on {policy.vd} (read back: "
                f"{now or 'not printed'}); nothing was measured under it"
            )
    return None


def _facts(
    policy: CardPolicy, card: Controller, vd: VirtualDrive, before: dict[str, str]
) -> JSONDict:
    own = card.to_json()
    own.pop("drives", None)
    return {
        **own,
        "vd": {**codec.to_object(vd), "differs": differs(vd, card)},
        "asked": dict[str, JSON](policy.fields()),
        "before": dict[str, JSON](before),
        "configured": vd.configured.summary() if vd.configured else "not read",
        "effective": vd.effective.summary() if vd.effective else "not read",
        "battery_state": card.battery.summary(),
    }


@dataclass(frozen=True)
class Applied:
    """What a set-up's policies are while its cases run: the card's (None: it asks for no
    card policy) and each plain disk's own write cache as set and read back."""

    card: Card | None = None
    disks: tuple[CacheSetting, ...] = ()


@contextlib.contextmanager
def applied(setup: Setup, hold: Hold) -> Iterator[Applied]:
    """The set-up's policies in effect while the with-block runs; what was there restored
    after."""
    with contextlib.ExitStack() as stack:
        card: Card | None = None
        disks: tuple[CacheSetting, ...] = ()
        if setup.drive_cache is not None and setup.layout is not None:
            disks = stack.enter_context(_disk_cache(setup.layout.devices, setup.drive_cache, hold))
        if setup.controller is not None:
            devices = setup.layout.devices if setup.layout is not None else ()
            card = stack.enter_context(_card(setup.controller, devices, hold))
        yield Applied(card, disks)


@contextlib.contextmanager
def _card(policy: CardPolicy, devices: tuple[str, ...], hold: Hold) -> Iterator[Card]:
    with scratch() as cwd:
        card, vd = read(policy, cwd)
        _check_device(policy, vd, devices)
        before = _before(policy, card, vd)
        number = _device_number(vd.block_device)
        ledger = json.dumps(
            {
                "tool": policy.tool,
                "vd": policy.vd,
                "restore": before,
                "left": policy.fields(),
                "run": pending.current_run(),
            }
        )
        with hold(KIND, ledger), _restoring(policy, before, cwd):
            _set_all(policy, policy.fields(), cwd)
            card, now = read(policy, cwd)
            refused = _not_taken(policy, card, now) or _moved(policy, vd, now, number)
            if refused:
                raise ControllerError(refused)
            _check_device(policy, now, devices)
            yield Card(
                _facts(policy, card, now, before),
                differs(now, card),
                card.cache_bytes or 0,
                tuple((member_name(card, m), m.smart) for m in now.members),
                now.block_device or (devices[0] if devices else ""),
            )


def _before(policy: CardPolicy, card: Controller, vd: VirtualDrive) -> dict[str, str]:
    """What to put back after the set-up: the VD's policy now, and, where an earlier restore
    of this VD failed, what it had before iolab changed it (which a restore then puts back)."""
    before: dict[str, str] = {}
    for key in policy.fields():
        now = current(card, vd, key)
        if now is None:
            raise ControllerError(
                f"{policy.tool} does not print {key} of {policy.vd}, so iolab could not "
                "restore it; leave it out"
            )
        before[key] = now
    return {**before, **_owed(policy)}


def _owed(policy: CardPolicy) -> dict[str, str]:
    """The values an earlier run could not put back on this VD (none if none, or if its
    record holds what iolab could not set)."""
    for entry in pending.pending():
        if not entry.here():
            continue
        owed = dict(entry.restore)
        same = (FAMILY.get(entry.tool), entry.where.lower()) == (
            FAMILY[policy.tool],
            policy.vd.lower(),
        )
        if same and problem(policy.tool, policy.vd, owed) is None:
            return owed
    return {}


def _moved(
    policy: CardPolicy, was: VirtualDrive, now: VirtualDrive, number: int | None
) -> str | None:
    """Why the VD is no longer the block device the set-up checked before the set (the tool
    names another, or that name is now another device); None while it is the same."""
    if now.block_device == was.block_device and _device_number(now.block_device) == number:
        return None
    return (
        f"{policy.tool} says {policy.vd} is {now.block_device or 'no block device'} after the "
        f"set, not {was.block_device or 'no block device'} as before; nothing was measured "
        "under it"
    )


def _device_number(path: str | None) -> int | None:
    try:
        return os.stat(path).st_rdev if path else None
    except OSError:
        return None


def _check_device(policy: CardPolicy, vd: VirtualDrive, devices: tuple[str, ...]) -> None:
    """The VD is the set-up's device, where the tool names the VD's block device (storcli's
    "OS Drive Name", ssacli's "Disk Name"): a policy set on one disk while fio measures
    another would record a policy that was never measured."""
    if vd.block_device is None or not devices:
        return
    if any(_same_device(vd.block_device, device) for device in devices):
        return
    named = ", ".join(devices)
    raise ControllerError(
        f"{policy.tool} says {policy.vd} is {vd.block_device}, but the set-up measures {named}; "
        "name the VD's device in devices, or the VD of your device in controller.vd"
    )


def _same_device(one: str, other: str) -> bool:
    """The same block device (by device number), or the same path where either is absent."""
    try:
        first, second = os.stat(one), os.stat(other)
    except OSError:
        return os.path.realpath(one) == os.path.realpath(other)
    return first.st_rdev == second.st_rdev and first.st_rdev != 0


@contextlib.contextmanager
def _restoring(policy: CardPolicy, before: dict[str, str], cwd: Path) -> Iterator[None]:
    """Restore `before` after the block, also on failure and Ctrl-C (held while it runs). A
    restore that fails is kept as a pending restore (said at the run's end and by every later
    command, with the commands to put it back) and said in the set-up's error."""
    try:
        yield
    except ControllerError as error:
        failed, _ = _put_back(policy, before, cwd)
        if failed:
            raise ControllerError(f"{error}; {failed}") from None
        raise
    except BaseException:
        _put_back(policy, before, cwd)  # kept as a pending restore if it fails
        raise
    failed, caught = _put_back(policy, before, cwd)
    if failed:
        raise ControllerError(failed)
    if caught:
        if caught[0] == signal.SIGINT:
            raise KeyboardInterrupt
        raise Stopped(caught[0], signal.Signals(caught[0]).name)


def _put_back(
    policy: CardPolicy, before: dict[str, str], cwd: Path
) -> tuple[str | None, list[int]]:
    """Set `before` again; (what failed, in words, or None; the stop signals held meanwhile)."""
    with sigint_deferred() as caught:
        try:
            _set_all(policy, before, cwd)
            _taken_back(policy, before, cwd)
        except ControllerError as error:
            return _owe_card(
                policy, before, policy.fields(), str(error), pending.current_run()
            ), caught
    pending.drop(policy.tool, policy.vd)
    return None, caught


def _taken_back(policy: CardPolicy, before: dict[str, str], cwd: Path) -> None:
    """The card reads back what was put back; a ControllerError where it does not."""
    card, vd = read(policy, cwd)
    for key, value in before.items():
        now = current(card, vd, key)
        if now != value:
            raise ControllerError(
                f"the card did not take back {key} = {value} on {policy.vd} (read back: "
                f"{now or 'not printed'})"
            )


def _owe_card(
    policy: CardPolicy, before: dict[str, str], left: dict[str, str], error: str, run: int | None
) -> str:
    """Keep a failed restore of a card's VD as pending; the words for the set-up's error."""
    entry = PendingRestore(
        policy.tool,
        policy.vd,
        tuple(before.items()),
        tuple(left.items()),
        error,
        time.time(),
        run,
        os.getpid(),
        socket.gethostname(),
    )
    return _owe(entry)


def _owe(entry: PendingRestore) -> str:
    kept = ""
    try:
        pending.add(entry)
    except ControllerError as error:
        kept = f"; and iolab could not keep this to say it again: {error}"
    return f"restoring failed: {entry.said()}{kept}"


def cache_type_file(device: str) -> Path | None:
    """sysfs' write cache switch of a SCSI/SATA disk; None for a device without one."""
    name = Path(os.path.realpath(device)).name
    found = sorted(glob.glob(f"/sys/block/{glob.escape(name)}/device/scsi_disk/*/cache_type"))
    return Path(found[0]) if found else None


@dataclass(frozen=True)
class Switch:
    """A plain disk's own write cache switch: a SCSI disk's sysfs cache_type file (tool
    "sysfs"), or an NVMe namespace whose controller's feature 06h nvme-cli sets ("nvme")."""

    tool: str
    where: str

    def read(self) -> str | None:
        """Its state in sysfs' words, or None where it cannot be read."""
        try:
            if self.tool == "nvme":
                with scratch() as cwd:
                    return nvme_cache.read(self.where, cwd)
            return Path(self.where).read_text().strip()
        except (OSError, ControllerError):
            return None

    def write(self, words: str) -> None:
        if self.tool == "nvme":
            with scratch() as cwd:
                nvme_cache.write(self.where, words, cwd)
            return
        try:
            Path(self.where).write_text(words)
        except OSError as error:
            raise ControllerError(f"could not write {self.where}: {error.strerror}") from None

    def words(self) -> str:
        """The switch in words: "nvme-cli feature 06h of /dev/nvme0n1", "sysfs ..."."""
        if self.tool == "nvme":
            return f"nvme-cli feature 06h (volatile write cache) of {self.where}"
        return f"sysfs {self.where}"

    def command(self, words: str) -> tuple[str, ...]:
        """The shell line that sets it to `words`, for a person to run."""
        if self.tool == "nvme":
            return tuple(nvme_cache.argv(self.where, words))
        return ("echo", words, ">", self.where)

    def valid(self) -> bool:
        """Whether its place is one iolab may act on (a record may have been edited)."""
        pattern = pending.DISK_SWITCHES.get(self.tool)
        return pattern is not None and bool(pattern.fullmatch(self.where))


def switch_of(device: str) -> Switch | None:
    nvme = nvme_cache.device_of(device)
    if nvme is not None:
        return Switch("nvme", nvme)
    found = cache_type_file(device)
    return Switch("sysfs", str(found)) if found is not None else None


def check(setup: Setup) -> dict[str, tuple[str, str]]:
    """Refuse, before anything runs, a policy iolab could not set here: the tool is not
    installed, or what it prints (read-only) names no such VD, cannot be read, puts the VD on
    another device than the set-up's, or does not print a part asked for; a drive_cache on a
    device without a write cache switch. The VD's drives, as smartctl reaches them through
    the card (the card's name for each -> the VD's device, smartctl's -d value)."""
    behind: dict[str, tuple[str, str]] = {}
    if setup.controller is not None and program(setup.controller.tool) is None:
        raise ControllerError(
            f"set-up {setup.name!r}: {setup.controller.tool} is not installed (not on PATH); "
            "install it, or remove the controller table"
        )
    if setup.controller is not None:
        devices = setup.layout.devices if setup.layout is not None else ()
        try:
            with scratch() as cwd:
                card, vd = read(setup.controller, cwd)
                _check_device(setup.controller, vd, devices)
                _before(setup.controller, card, vd)
        except ControllerError as error:
            raise ControllerError(f"set-up {setup.name!r}: {error}") from None
        on = vd.block_device or (devices[0] if devices else "")
        behind = {member_name(card, m): (on, m.smart) for m in vd.members if on}
    if setup.drive_cache is None or setup.layout is None:
        return behind
    for device in setup.layout.devices:
        try:
            _check_switch(device)
        except ControllerError as error:
            raise ControllerError(f"set-up {setup.name!r}: {error}; remove drive_cache") from None
    return behind


def _check_switch(device: str) -> None:
    name = Path(os.path.realpath(device)).name
    switch = switch_of(device)
    if switch is None:
        raise ControllerError(
            f"drive_cache needs a SCSI/SATA disk's sysfs cache_type or an NVMe controller's "
            f"volatile write cache, and {name} has neither"
        )
    if switch.tool == "nvme":
        with scratch() as cwd:
            if not nvme_cache.has_cache(switch.where, cwd):
                raise ControllerError(
                    f"drive_cache needs a volatile write cache, which {name}'s controller does "
                    "not have (identify's vwc bit 0 is 0)"
                )


@contextlib.contextmanager
def _disk_cache(
    devices: tuple[str, ...], value: str, hold: Hold
) -> Iterator[tuple[CacheSetting, ...]]:
    """Each device's write cache set to `value` and read back (refused in one line where it
    reads otherwise); each put back after."""
    with contextlib.ExitStack() as stack:
        settings: list[CacheSetting] = []
        for device in devices:
            switch = switch_of(device)
            if switch is None:
                raise ControllerError(f"{device} has no write cache switch; remove drive_cache")
            before = switch.read()
            if before is None or before not in SYSFS_WORDS.values():
                raise ControllerError(f"could not read {device}'s write cache ({switch.where})")
            record = {switch.tool: switch.where, "value": before, "left": value}
            stack.enter_context(hold(KIND, json.dumps({**record, "run": pending.current_run()})))
            stack.callback(_put_back_disk, switch, before, value)
            switch.write(SYSFS_WORDS[value])
            now = switch.read()
            if now != SYSFS_WORDS[value]:
                raise ControllerError(
                    f"{device} did not take drive_cache = {value} (its write cache reads "
                    f"{now or 'nothing'}); nothing was measured under it"
                )
            settings.append(CacheSetting(device, switch.words(), before, value, now))
        yield tuple(settings)


def _put_back_disk(switch: Switch, before: str, value: str) -> None:
    """Put `before` back, unless the switch still reads it (a set that was refused changed
    nothing, and a switch that cannot be written must not leave a restore owed)."""
    try:
        if switch.read() != before:
            switch.write(before)
    except ControllerError as error:
        said = _owe_disk(switch, before, value, str(error), pending.current_run())
        raise ControllerError(said) from None
    pending.drop(switch.tool, switch.where)


def _owe_disk(switch: Switch, before: str, value: str, error: str, run: int | None) -> str:
    entry = PendingRestore(
        switch.tool,
        switch.where,
        (("value", before),),
        (("drive_cache", value),),
        error,
        time.time(),
        run,
        os.getpid(),
        socket.gethostname(),
    )
    return _owe(entry)


def restored_words(text: str) -> str:
    """What restoring a ledger entry did, in words (never the entry's own text)."""
    try:
        saved = json.loads(text)
    except json.JSONDecodeError:
        return "a RAID card's cache policy"
    for tool in ("sysfs", "nvme"):
        if isinstance(saved, dict) and isinstance(saved.get(tool), str):
            return f"restored {saved[tool]}"
    vd = saved.get("vd") if isinstance(saved, dict) else None
    return f"restored the cache policy of {vd}" if isinstance(vd, str) else "a cache policy"


def restore_from(text: str) -> bool:
    """Restore what a killed run's ledger says was there; True when done. A restore that
    fails is kept as a pending restore, said by every later command until it is done."""
    try:
        saved = json.loads(text)
    except (ValueError, RecursionError):
        return False
    if not isinstance(saved, dict):
        return False
    run = saved.get("run") if isinstance(saved.get("run"), int) else None
    tool = next((t for t in ("sysfs", "nvme") if isinstance(saved.get(t), str)), None)
    if tool is not None and saved.get("value") in SYSFS_WORDS.values():
        switch = Switch(tool, str(saved[tool]))
        if not switch.valid():
            return False
        left = saved.get("left") if saved.get("left") in DISK_CACHE else "a changed write cache"
        try:
            _put_back_disk(switch, str(saved["value"]), str(left))
        except ControllerError:
            return False
        return True
    restore = saved.get("restore")
    fields = restore if isinstance(restore, dict) else {}
    if problem(saved.get("tool"), saved.get("vd"), fields) is not None or not fields:
        return False
    policy = replace(CardPolicy(str(saved["tool"]), str(saved["vd"])), **fields)
    left = saved.get("left")
    set_there = (
        left if isinstance(left, dict) and problem(policy.tool, policy.vd, left) is None else {}
    )
    try:
        with scratch() as cwd:
            _set_all(policy, policy.fields(), cwd)
    except ControllerError as error:
        _owe_card(policy, policy.fields(), set_there or {"policy": "changed"}, str(error), run)
        return False
    pending.drop(policy.tool, policy.vd)
    return True


def retry_pending() -> list[str]:
    """`iolab run`: put back what earlier runs on this host, whose iolab is gone, could not;
    a line for each one tried, done or not (a record of another host is only said)."""
    return [_retry(entry) for entry in pending.pending() if entry.here() and gone(entry.pid)]


def _retry(entry: PendingRestore) -> str:
    values = entry.values()
    name = f"{entry.tool} {entry.where}"
    by = f"run {entry.run}" if entry.run is not None else f"iolab (pid {entry.pid})"
    if values is None:
        return (
            f"a record in {pending.folder()} is not one iolab can act on (it names no tool, "
            "device and values iolab would set); check the card or disk by hand, then remove it"
        )
    try:
        if entry.tool in ("sysfs", "nvme"):
            Switch(entry.tool, entry.where).write(values["value"])
        else:
            policy = replace(CardPolicy(entry.tool, entry.where), **values)
            with scratch() as cwd:
                _set_all(policy, values, cwd)
    except ControllerError as error:
        return f"could not yet restore {name}, changed by {by} ({error})"
    pending.drop(entry.tool, entry.where)
    put = ", ".join(f"{key} = {value}" for key, value in values.items())
    return f"restored {name} to {put} (changed by {by}, whose restore had failed)"
