"""What an imported job's workload is called, as iolab names a plan's sweep points: fio's job
name where it names one workload and says the I/O it did; jobs of one name with other options
by the name and the options that tell them apart ("randread runtime=3"); and where the name
says other I/O than some of them did, by their pattern, block size, depth and jobs alone
("4k randwrite iodepth=16 numjobs=1"). fio-plot's sample trees named every job [random-read],
writes too, one name for 98 runs: one name per pattern now, never a job's name with its
file's beside it for one and the file's alone for another. bench-fio's FIOJOB is named by
its tree (benchfio.Place), the same way."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from iolab import names
from iolab.exchange.found_jobs import FoundJob
from iolab.fio import options as fio_options
from iolab.model import FioValue
from iolab.units import format_size

MIXED = ("rw", "readwrite", "randrw")
# What a name by options always says (block size, pattern, then iodepth and numjobs, as a
# plan's unnamed sweep says them); a mixed pattern's read share goes with its pattern.
NAMED = ("rw", "bs", "rwmixread", "rwmixwrite", "iodepth", "numjobs")
DEFAULTS: dict[str, FioValue] = {"rw": "read", "bs": "4k", "iodepth": 1, "numjobs": 1}  # fio's

RW_PATTERNS = {
    "read": ("seq", "read"),
    "write": ("seq", "write"),
    "rw": ("seq", "mixed"),
    "readwrite": ("seq", "mixed"),
    "randread": ("rand", "read"),
    "randwrite": ("rand", "write"),
    "randrw": ("rand", "mixed"),
}
MIXED_WORDS = ("rw", "readwrite", "mixed", "mix", "randrw", "rwmix")


def by_options(options: Mapping[str, FioValue], extra: Sequence[str] = ()) -> str | None:
    """A workload's name from its options: block size, pattern (and a mix's read share),
    iodepth, numjobs, then each option of `extra` it has ("4k randrw rwmixread=70 iodepth=4
    numjobs=1"); fio's default where the job left one out. None when the name would not be
    one by the rule of names (too long)."""
    rw, bs = str(options.get("rw", DEFAULTS["rw"])), options.get("bs", DEFAULTS["bs"])
    words = [format_size(bs) if isinstance(bs, int) else str(bs).split(",")[0] or "4k", rw]
    if rw in MIXED:
        words.append(f"rwmixread={_read_share(options)}")
    words += [f"{key}={options.get(key, DEFAULTS[key])}" for key in ("iodepth", "numjobs")]
    words += [f"{key}={options[key]}" for key in extra if key in options and key not in NAMED]
    try:
        return names.check(names.shown(" ".join(words)))
    except names.BadName:
        return None


def _read_share(options: Mapping[str, FioValue]) -> FioValue:
    if "rwmixread" in options:
        return options["rwmixread"]
    written = options.get("rwmixwrite")
    return 100 - written if isinstance(written, int) and 0 <= written <= 100 else 50


def workload_names(jobs: Sequence[FoundJob]) -> dict[int, str]:
    """Each fio job's workload name, by id(job): its job name where that names one workload
    and says the I/O it did (`truthful`). Jobs of one name with other options are named as a
    plan's sweep of that name is: the name, then the workload options that tell them apart
    ("randread runtime=3"); where the name says other I/O than some of them did, by their
    options alone (`by_options`). Jobs of other tools, and jobs without options (terse,
    logs), keep their names."""
    shared: dict[str, set[tuple[tuple[str, str], ...]]] = {}
    wrong: set[str] = set()
    for job in jobs:
        if _fio(job):
            shared.setdefault(job.name, set()).add(job.identity()[1])
            wrong |= {job.name} if truthful(job) != job.name else set()
    apart = {name: _apart(kinds) for name, kinds in shared.items() if len(kinds) > 1}
    out = {}
    for job in jobs:
        own = truthful(job)
        if _fio(job) and job.name in apart:
            keys = apart[job.name]
            named = by_options(job.options, keys) if job.name in wrong else None
            own = named or _swept(job.name, job.options, keys) or own
        out[id(job)] = own
    return out


def _swept(name: str, options: Mapping[str, FioValue], keys: Sequence[str]) -> str | None:
    """A sweep's point as a plan names one of a named workload: "NAME KEY=VALUE..."."""
    words = [name, *(f"{key}={options[key]}" for key in keys if key in options)]
    try:
        return names.check(names.shown(" ".join(words)))
    except names.BadName:
        return None


def _fio(job: FoundJob) -> bool:
    """A job of fio's output, with its options (not dd's, bonnie++'s or a table's)."""
    return bool(job.options) and not getattr(job, "tool", "")


def _apart(kinds: set[tuple[tuple[str, str], ...]]) -> list[str]:
    """The workload options whose values differ between the option sets `kinds`."""
    seen: dict[str, set[str | None]] = {}
    for kind in kinds:
        for key, value in kind:
            seen.setdefault(key, set()).add(value)
    for key, values in seen.items():  # a job that left an option out has fio's default
        values.update(None for kind in kinds if key not in dict(kind))
    return sorted(k for k, v in seen.items() if len(v) > 1 and fio_options.workload_axis(k))


def unique(first: str, job: FoundJob, taken: set[str]) -> str:
    """`first`, or, where another workload has that name, `first` with the job's file's name
    (then a number)."""
    name, number = first, 1
    while name in taken:
        number += 1
        stem = names.shown(job.file.stem)  # the file's name: the rule checked only the job's
        name = f"{first} ({stem})" if number == 2 else f"{first} ({number})"
    return name


def said_pattern(text: str) -> tuple[str | None, str] | None:
    """The I/O a name says: its rw=VALUE where it has one, else word by word (fio options
    written key=value aside): (random or sequential where it says which, read/write/mixed),
    or None when it names neither reads nor writes."""
    lower = text.lower()
    given = re.search(r"\brw=([a-z]+)", lower)
    if given and given.group(1) in RW_PATTERNS:
        return RW_PATTERNS[given.group(1)]
    words = re.findall(r"[a-z]+", re.sub(r"\b[a-z_]+=\S*", " ", lower))
    mixed = any(w.startswith(MIXED_WORDS) for w in words)
    reads = any(w.endswith(("read", "reads")) for w in words)
    writes = any(w.endswith(("write", "writes")) for w in words)
    if not (mixed or reads or writes):
        return None
    order = "rand" if any(w.startswith("rand") for w in words) else None
    order = order or ("seq" if any(w.startswith("seq") for w in words) else None)
    return order, "mixed" if mixed or (reads and writes) else "read" if reads else "write"


def truthful(job: FoundJob) -> str:
    """The job's name, unless it says other I/O than the job's rw did (fio-plot's early
    sample trees named every job [random-read], writes too): then its options' name."""
    did = RW_PATTERNS.get(str(job.options.get("rw", "")))
    said = said_pattern(job.name)
    if did is None or said is None or _agrees(said, did):
        return job.name
    return by_options(job.options) or job.name


def _agrees(said: tuple[str | None, str], did: tuple[str, str]) -> bool:
    """A name agrees unless it says reads of a writer, writes of a reader, a mix of either,
    or the other order; naming one side of a mix ("rewrite") is not wrong."""
    kind = said[1] == did[1] or did[1] == "mixed"
    return kind and said[0] in (None, did[0])


def in_order(jobs: Sequence[FoundJob]) -> list[FoundJob]:
    """The jobs with the files of each folder in natural order (randread-1-2.json before
    randread-1-16.json), the folders and each file's jobs as found: a tree's sweep in the
    order of its values, as a plan's is."""
    folders: dict[Path, int] = {}
    for number, job in enumerate(jobs):
        folders.setdefault(job.file.parent, number)
    return sorted(jobs, key=lambda job: (folders[job.file.parent], _natural(job.file.name)))


def _natural(text: str) -> tuple[tuple[int, int, str], ...]:
    """A file name's sort key: its runs of digits by their value, the rest as text."""
    parts = re.split(r"(\d+)", text)
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts if p)
