"""Preconditioning a set-up's target before its cases, and the state the target is in.

SNIA's PTS fills a device before measuring, because flash that was never written (or was
just trimmed) is faster than the same flash in use. A set-up's `precondition` chooses:
- "sequential": write the test area twice over in 128 KiB blocks (the PTS's
  workload-independent preconditioning);
- "random": write twice the test area's size in 4 KiB blocks at random offsets;
- "both": sequential, then random; "none": nothing.

The target's state travels with every result: "fresh" (a set-up built on devices, never
written; not a device used as it is, whose past iolab cannot know), "trimmed" (built with
discard), "sequential", "random", "sequential+random", or
"written" (by earlier cases of the set-up); "" for a path set-up, whose history iolab cannot
know.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from iolab.fio import jobfile
from iolab.model import FioValue, Setup
from iolab.targets import caches
from iolab.targets.path import Prepared, writes
from iolab.units import parse_size

FILLS: dict[str, tuple[str, ...]] = {
    "none": (),
    "sequential": ("sequential",),
    "random": ("random",),
    "both": ("sequential", "random"),
}
FILL_OPTIONS: dict[str, dict[str, FioValue]] = {
    "sequential": {"rw": "write", "bs": "128k", "loops": 2},
    "random": {"rw": "randwrite", "bs": "4k", "randrepeat": 0, "norandommap": 1},
}


def initial_state(setup: Setup, target: Prepared | None = None) -> str:
    """The state of a target just placed: a built layout is fresh (or trimmed); a device
    used as it is (no RAID, no filesystem, not discarded) holds whatever it held: unknown,
    unless it is a loop device over an image that holds no data yet."""
    layout = setup.layout
    if layout is None:
        return ""
    if layout.discard:
        return "trimmed"
    if layout.raid != "none" or layout.filesystem != "none":
        return "fresh"
    raw = target.paths() if target is not None and target.raw else []
    return "fresh" if caches.never_written(raw) else ""


def after(state: str, options: Mapping[str, FioValue]) -> str:
    """The state after a case with these options ran on a target in `state`."""
    if writes(options) and state in ("fresh", "trimmed"):
        return "written"
    return state


def filled(state: str, kinds: tuple[str, ...]) -> str:
    return "+".join(kinds) if kinds else state


def _area(options: Mapping[str, FioValue], target: Prepared) -> int:
    """Bytes of the test area: the case's size, or a raw device's whole size."""
    if "size" in options:
        return parse_size(options["size"])
    fd = os.open(Path(str(options["filename"]).split(":")[0]), os.O_RDONLY)
    try:
        return os.lseek(fd, 0, os.SEEK_END)
    finally:
        os.close(fd)


def fill_jobs(setup: Setup, first: jobfile.Job, target: Prepared) -> list[jobfile.Job]:
    """The fio jobs that precondition the area the set-up's first case will use."""
    area = _area(first.options, target)
    keep = ("filename", "size", "ioengine", "direct")
    base: dict[str, FioValue] = {k: first.options[k] for k in keep if k in first.options}
    base.update({"direct": 1, "iodepth": 32, "group_reporting": 1})
    jobs = []
    for kind in FILLS[setup.precondition]:
        options = {**base, **FILL_OPTIONS[kind]}
        if kind == "random":
            options["io_size"] = 2 * area
        comment = f"iolab precondition of set-up {setup.name!r}: {kind} fill"
        jobs.append(jobfile.Job(f"precondition-{kind}", options, comment))
    return jobs
