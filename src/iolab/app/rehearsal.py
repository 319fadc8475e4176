"""`iolab rehearse`: every set-up of a plan built, run briefly and torn down in the lab kernel
(`targets.lab`), on sparse image files, before the real devices are touched.

The plan's devices become the kernel's disks in the order the plan first names them
(/dev/nvme0n1 -> /dev/ubda, ...), each image as large as the real device where this host has
it (else `DEFAULT_IMAGE`), and keep their names inside the kernel (a udev rule links each name
to its disk), so every command and message reads as it will on the real host. Each set-up runs
as a plan of its own through `iolab run` inside the kernel: its first workload point, for 1 s
over a small size, without its hooks and preconditioning (they would drive a RAID card that is
not there, and fill whole images); what it did is read back from its exit status, its output
and its database.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from iolab import layouts
from iolab.errors import TargetError
from iolab.model import Plan, Setup, Workload
from iolab.targets import devices as dv
from iolab.targets import lab, scratch
from iolab.units import format_size, human_bytes, parse_size

DEFAULT_IMAGE = 1024**3  # a device this host does not have
RUN_SIZE = 64 * 1024**2  # what fio covers in a rehearsal (at least twice the block size)
RUN_SECONDS = 1
SETUP_TIMEOUT_S = 900
_SAFE_NAME = re.compile(r"^/dev/[A-Za-z0-9._:+/-]+$")

Cases = list[tuple[str, str | None]]  # (status, error) of each case stored
Stored = Callable[[Path], Cases]  # what a database holds


@dataclass(frozen=True)
class Disk:
    """One plan device and the lab kernel's disk that stands in for it."""

    device: str
    size: int
    real: bool  # sized after this host's device of that name


@dataclass(frozen=True)
class RehearsalVerdict:
    """What a set-up's rehearsal did, in one line."""

    setup: str
    ok: bool
    text: str


def disks(plan: Plan) -> list[Disk]:
    """The plan's devices in the order it first names them, each with its stand-in disk."""
    named = dict.fromkeys(d for s in plan.setups if s.layout for d in s.layout.devices)
    if len(named) > lab.MAX_DISKS:
        raise TargetError(
            f"the plan names {len(named)} devices; a rehearsal has at most {lab.MAX_DISKS}"
        )
    out = []
    for device in named:
        if not _SAFE_NAME.match(device) or "/../" in device:
            raise TargetError(f"{device}: a rehearsal cannot give a disk this name")
        name = dv.try_kernel_name(device)
        sectors = dv.read_int(dv.sys_dir(name) / "size") if name else None
        size = sectors * 512 if sectors else DEFAULT_IMAGE
        out.append(Disk(device, size, bool(sectors)))
    return out


def booted(folder: Path, found: Sequence[Disk], plan: Plan) -> lab.Kernel:
    """The lab kernel for the plan's disks, each named as the plan names it (QEMU's, where a
    set-up's drive_cache needs an NVMe controller)."""
    cached = [d for s in plan.setups if s.layout and s.drive_cache for d in s.layout.devices]
    return lab.Kernel(
        folder,
        [d.size for d in found],
        cwd=folder,
        devices=[d.device for d in found],
        nvme=lab.needs_nvme(cached),
    )


def udev_rules(found: Sequence[Disk], inside: Sequence[str]) -> str:
    """Inside the kernel: each plan device's name as a link to its stand-in disk (none for
    a disk the kernel names as the plan does: QEMU's NVMe controllers)."""
    rules = "".join(
        f'KERNEL=="{Path(disk).name}", SYMLINK+="{d.device.removeprefix("/dev/")}"\n'
        for d, disk in zip(found, inside, strict=True)
        if disk != d.device
    )
    return (
        "mkdir -p /run/udev/rules.d && cat > /run/udev/rules.d/90-iolab-rehearsal.rules <<'EOF'\n"
        f"{rules}EOF\nudevadm control --reload && udevadm trigger --subsystem-match=block "
        "&& udevadm settle"
    )


def toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        inner = ", ".join(f"{_key(k)} = {toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    return json.dumps(str(value), ensure_ascii=False)


def _key(key: object) -> str:
    text = str(key)
    return text if re.fullmatch(r"[A-Za-z0-9_-]+", text) else json.dumps(text)


def table(header: str, values: Mapping[str, object]) -> str:
    return header + "\n" + "".join(f"{_key(k)} = {toml_value(v)}\n" for k, v in values.items())


def run_size(workload: Workload) -> int:
    """A small test area that still holds two blocks of the workload's largest block size."""
    try:
        block = max(parse_size(b) for b in re.split(r"[-,:]", str(workload.get("bs", "4k"))) if b)
    except ValueError:
        block = 0
    return max(RUN_SIZE, 2 * block)


def plan_text(plan: Plan, setup: Setup) -> str:
    """A plan of one set-up (hooks left out) and the plan's first workload point, shortened."""
    assert setup.layout is not None
    built = {
        k: v
        for k, v in setup.layout.definition().items()
        if k not in ("setup_hook", "teardown_hook")
    }
    first = plan.workloads[0]
    options = {k: v for k, v in first.options.items() if k != "name"}
    options.update(runtime=RUN_SECONDS, ramp_time=0, time_based=1)
    options["size"] = format_size(run_size(first))
    return "\n".join(
        (
            f"name = {toml_value(f'rehearsal of {setup.name}')}\n",
            table("[[setup]]", {"name": setup.name, **built}),
            table("[[workload]]", {"name": first.name, **options}),
        )
    )


def last_said(output: str) -> str:
    """iolab's own last message in an output, or its last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    told = [line for line in lines if line.startswith("iolab: ")]
    line = told[-1] if told else lines[-1] if lines else "no output"
    return line.removeprefix("iolab: ").removeprefix("error: ")


def verdict(name: str, returncode: int, output: str, cases: Cases) -> RehearsalVerdict:
    """What one set-up's `iolab run` did, from its exit status, output and stored cases."""
    if returncode == 0:
        return RehearsalVerdict(name, True, "built, ran and torn down")
    errors = [error for status, error in cases if status != "ok" and error]
    if errors:
        error = errors[0]
        failed = f"set-up {name!r} failed: "
        if not error.startswith(failed):
            return RehearsalVerdict(name, False, f"built; fio failed: {error}; torn down")
        error = error.removeprefix(failed).removeprefix("set-up step failed: ")
        error = error.replace("; and teardown step failed: ", "; and its teardown failed: ")
        return RehearsalVerdict(name, False, f"did not build: {error}")
    said = last_said(output)
    if cases and "teardown step failed: " in said:
        return RehearsalVerdict(
            name, False, f"built and ran; teardown failed: {said.split(': ', 1)[1]}"
        )
    return RehearsalVerdict(name, False, f"did not run: {said}")


def mapping_line(found: Sequence[Disk], kernel: lab.Kernel) -> str:
    disks = ", ".join(
        f"{d.device} -> {disk} ({human_bytes(d.size)}{'' if d.real else ', no such device here'})"
        for d, disk in zip(found, kernel.disks, strict=True)
    )
    return f"{disks}, in {kernel.backend_words}"


def rehearse(plan: Plan, say: Callable[[str], None], stored: Stored) -> list[RehearsalVerdict]:
    """Rehearse every set-up built on devices, one line each through `say`; path set-ups are
    only mentioned. TargetError (one line) when there is nothing to rehearse or no kernel."""
    problem = lab.missing()
    if problem:
        raise TargetError(problem)
    chosen = [s for s in plan.setups if s.layout is not None]
    if not chosen:
        raise TargetError("the plan builds no set-up on devices; there is nothing to rehearse")
    found = disks(plan)
    with scratch.folder(say) as folder, booted(folder, found, plan) as kernel:
        say(f"rehearsing {len(chosen)} set-up(s) on sparse images: {mapping_line(found, kernel)}")
        ready = kernel.run(udev_rules(found, kernel.disks))
        if ready.returncode != 0:
            raise TargetError(f"the lab kernel could not name its disks: {last_said(ready.output)}")
        return [_one(plan, setup, kernel, folder, say, stored) for setup in plan.setups]


def _one(
    plan: Plan,
    setup: Setup,
    kernel: lab.Kernel,
    folder: Path,
    say: Callable[[str], None],
    stored: Stored,
) -> RehearsalVerdict:
    if setup.layout is None:
        said = RehearsalVerdict(
            setup.name, True, f"not rehearsed: a path ({setup.path}), nothing to build"
        )
        say(f"{setup.name}: {said.text}")
        return said
    index = plan.setups.index(setup)
    plan_file, db = folder / f"setup{index}.toml", folder / f"setup{index}.db"
    plan_file.write_text(plan_text(plan, setup))
    confirm = [w for d in layouts.present(setup.layout) for w in ("--yes-destroy", d)]
    path = os.environ.get("PYTHONPATH")
    command = ("" if path is None else f"PYTHONPATH={shlex.quote(path)} ") + shlex.join(
        [sys.executable, "-m", "iolab", "run", str(plan_file), "--db", str(db), "--new", *confirm]
    )
    done = kernel.run(command, SETUP_TIMEOUT_S)
    result = verdict(setup.name, done.returncode, done.output, stored(db) if db.exists() else [])
    hooks = setup.layout.setup_hook or setup.layout.teardown_hook
    note = " (its hooks were not run)" if hooks else ""
    say(f"{setup.name}: {result.text}{note}")
    return result
