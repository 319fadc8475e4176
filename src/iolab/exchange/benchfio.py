"""The folder trees that bench-fio (of the fio-plot package) writes and fio-plot reads:

    OUTPUT/TARGET/BS/MODE-IODEPTH-NUMJOBS.json              fio's JSON of one benchmark
    OUTPUT/TARGET/MODE<RWMIXREAD>/BS/MODE-...json           the mixed modes (rw, readwrite, randrw)
    OUTPUT/TARGET/BS/MODE-iodepth-IODEPTH-numjobs-NUMJOBS_bw.1.log   (_iops, _lat, _clat, _slat)
    ...log.HOST                                             the same logs through client/server

TARGET is the base name of the device, file or directory bench-fio tested: it names the set-up.
Every job in the files is named FIOJOB, so its workload is named after the tree instead, as
iolab names a plan's sweep points ("4k randread iodepth=1 numjobs=2"); the options themselves
are fio's own, from the JSON. A folder `run-N` below BS holds bench-fio's preconditioning
before benchmark N, and iolab's own fio-plot export puts repetitions in `repetition-N` folders
there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from iolab.exchange import logs, naming
from iolab.exchange.found_jobs import FoundJob
from iolab.exchange.named_jobs import placed
from iolab.fio import parse
from iolab.model import FioValue

MIXED = ("readwrite", "rw", "randrw")
BENCH_FIO_JOB = "FIOJOB"
_FILE = re.compile(r"^(?P<mode>[a-z]+)-(?P<iodepth>\d+)-(?P<numjobs>\d+)\.json$")
_BS = re.compile(r"^\d+[kmgtp]?(?:i?b)?$", re.IGNORECASE)
_BELOW_BS = re.compile(r"^(?P<kind>run|repetition)-\d+$")
_LOG_PREFIX = re.compile(r"^(?P<mode>[a-z]+)-iodepth-(?P<iodepth>\d+)-numjobs-(?P<numjobs>\d+)$")
HOST_LOG = re.compile(r"^(?P<prefix>.+)_(?P<kind>bw|iops|lat|clat|slat)(?:\.\d+)?\.log\.[^/]+$")


@dataclass(frozen=True)
class Place:
    """Where a file sits in a bench-fio tree, and what the tree says of it."""

    setup: str
    folder: Path  # OUTPUT/TARGET
    mode: str
    bs: str
    iodepth: int
    numjobs: int
    rwmixread: int | None
    precondition: bool

    @property
    def workload(self) -> str:
        """As iolab names a plan's sweep points (naming.by_options): "4k randread iodepth=1
        numjobs=2", "4k randrw rwmixread=70 iodepth=4 numjobs=1"."""
        said: dict[str, FioValue] = {
            "rw": self.mode,
            "bs": self.bs,
            "iodepth": self.iodepth,
            "numjobs": self.numjobs,
        }
        if self.rwmixread is not None:
            said["rwmixread"] = self.rwmixread
        name = naming.by_options(said) or f"{self.mode} {self.bs}"
        return f"precondition {name}" if self.precondition else name


def place(path: Path) -> Place | None:
    """The file's place in a bench-fio tree, or None when its name and folders are not one."""
    found = _FILE.match(path.name)
    if not found:
        return None
    folder = path.resolve().parent
    below = _BELOW_BS.match(folder.name)
    if below:
        folder = folder.parent
    if not _BS.match(folder.name):
        return None
    bs, folder = folder.name, folder.parent
    mode, mix = found.group("mode"), None
    if mode in MIXED:
        share = re.fullmatch(rf"{mode}(\d+)", folder.name)
        if not share:
            return None
        mix, folder = int(share.group(1)), folder.parent
    if not folder.name:
        return None
    return Place(
        folder.name,
        folder,
        mode,
        bs,
        int(found.group("iodepth")),
        int(found.group("numjobs")),
        mix,
        below is not None and below.group("kind") == "run",
    )


def placed_jobs(path: Path, jobs: list[FoundJob]) -> list[FoundJob]:
    """fio's jobs of one file, set-up (and bench-fio's FIOJOB, workload) named by the tree;
    unchanged when the file is not in one, or its options say another mode than its name."""
    where = place(path)
    if where is None or any(str(j.options.get("rw", where.mode)) != where.mode for j in jobs):
        return jobs
    return [
        placed(
            job,
            setup=where.setup,
            setup_path=str(where.folder),
            name=where.workload if job.name == BENCH_FIO_JOB else job.name,
        )
        for job in jobs
    ]


def is_host_log(path: Path) -> bool:
    """A log fio's client wrote for one server: fio's log name, then "." and the host."""
    return HOST_LOG.match(path.name) is not None and not logs.NAME.match(path.name)


def log_prefix(path: Path) -> str:
    found = HOST_LOG.match(path.name) or logs.NAME.match(path.name)
    assert found is not None
    return found.group("prefix")


def owner(folder: Path, prefix: str, jobs: list[FoundJob]) -> FoundJob | None:
    """The job whose logs bench-fio named PREFIX in FOLDER: MODE-iodepth-D-numjobs-N's is the
    job of MODE-D-N.json beside them."""
    found = _LOG_PREFIX.match(prefix)
    if not found:
        return None
    name = "{mode}-{iodepth}-{numjobs}.json".format(**found.groupdict())
    mine = [j for j in jobs if j.file.parent == folder and j.file.name == name]
    return mine[0] if len(mine) == 1 else None


def attach_host_logs(job: FoundJob, files: list[Path]) -> None:
    """Client/server logs as the job's samples: every host's logs together, as fio's logs of
    more jobs (bandwidth and IOPS added, latency averaged), like the job's figures."""
    asked = job.options.get("log_avg_msec")
    interval = asked if isinstance(asked, int) and asked > 0 else logs.interval_of(files)
    kinds = {m.group("kind") for f in files if (m := HOST_LOG.match(f.name))}
    latency = "clat" if "clat" in kinds or "lat" not in kinds else "lat"
    named = [cast(Path, _FioNamed(f)) for f in files]  # parse.samples reads .name, read_text()
    job.samples = parse.samples(named, interval, latency)


class _FioNamed:
    """A client/server log under the name fio gives the log on the server (the host left off),
    so that fio's log reader reads it as it reads any log."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = path.name[: path.name.rindex(".log.") + len(".log")]

    def read_text(self) -> str:
        return self.path.read_text()
