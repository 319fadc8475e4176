"""A fake device for the peak search and the curve: output fio really printed
(tests/fixtures/fio/randread-jsonplus: 4k random reads), scaled to what a device of known
shape would deliver at the job's numjobs, iodepth and rate_iops. Runs nothing.

The shape: IOPS grow with the I/Os in flight (numjobs x iodepth) up to 64, then fall a little
per doubling (a queue too deep); a second job helps (two cores), more contend. Under a fixed
rate the device delivers at most 93% of what it could unthrottled (fio's pacing), and its
latency grows as 1 / (1 - load): the knee of a queue. The workloads named in `cpu_bound`
report fio's jobs keeping 97% of the host's cores busy (fio's usr_cpu): iolab's cpu-bound check
fires on them, and on no other.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fakes import recorded
from iolab.fio.executor import HostLimits
from iolab.fio.outcome import Outcome
from iolab.fio.parse import Status

PACED_SHARE = 0.93  # of the unthrottled rate, the most a paced job delivers
BUSY_SHARE = 0.97  # of the host's cores, fio's jobs keep busy on a cpu_bound workload
WORKLOAD = re.compile(r"^# iolab case .*?, workload '(.*)', repetition \d+$", re.MULTILINE)


def shaped(numjobs: int, iodepth: int) -> float:
    """The fake device's IOPS at a point: best at numjobs 2 x iodepth 32."""
    flight = numjobs * iodepth
    useful = min(flight, 64)
    iops = 100_000 * useful / (useful + 8)
    iops *= math.pow(0.95, max(0.0, math.log2(flight / 64)))
    return iops * (1.0 if numjobs == 1 else 1.1 * math.pow(0.85, numjobs - 2))


def options_of(job_text: str) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in job_text.splitlines() if "=" in line)
    return {key: value for key, value in pairs if not key.startswith("#")}


@dataclass
class FakeDevice:
    """Each run: the recorded randread output scaled to `shape` at the job's point, times a
    noise factor (a normal draw of relative spread `noise`); `interrupt_at` raises Ctrl-C at
    that run (1-based)."""

    shape: Callable[[int, int], float] = shaped
    noise: float = 0.0
    seed: int = 1
    interrupt_at: int | None = None
    cpu_bound: Collection[str] = ()  # workloads whose jobs keep the cores busy
    jobs: list[str] = field(default_factory=list)
    limits_: HostLimits = field(
        default_factory=lambda: HostLimits(cpus=64, memory_bytes=8 * 1024**3, aio_room=65536)
    )

    def __post_init__(self) -> None:
        self.random = random.Random(self.seed)

    def limits(self) -> HostLimits:
        return self.limits_

    def run(
        self,
        job_text: str,
        workdir: Path,
        on_status: Callable[[Status], None] | None,
        timeout_s: float | None,
    ) -> Outcome:
        self.jobs.append(job_text)
        if self.interrupt_at is not None and len(self.jobs) == self.interrupt_at:
            raise KeyboardInterrupt
        options = options_of(job_text)
        jobs, depth = int(options.get("numjobs", 1)), int(options.get("iodepth", 1))
        able = self.shape(jobs, depth) * (1 + self.random.gauss(0, self.noise))
        rate = options.get("rate_iops")
        iops, slower = able, max(1.0, jobs * depth / 8)  # unthrottled: the queue is full
        if rate:
            asked = float(rate.split(",")[0]) * jobs
            iops = min(asked, able * PACED_SHARE)
            slower = 1 / (1 - min(iops / able, 0.97))
        base = recorded("randread-jsonplus")
        named = WORKLOAD.search(job_text)
        busy = named is not None and named.group(1) in self.cpu_bound
        cpu = 100 * BUSY_SHARE * self.limits_.cpus / jobs if busy else None
        return Outcome(base.returncode, _scaled(base.json_text, iops, slower, cpu), base.stderr, ())


def _scaled(text: str, iops: float, slower: float, cpu: float | None = None) -> str:
    """The recorded JSON with its reads at `iops`, its latencies `slower` times longer, and
    each job's CPU use (usr_cpu, percent of a core) at `cpu` where given."""
    document: dict[str, Any] = json.loads(text)
    if cpu is not None:
        document["jobs"][0]["usr_cpu"], document["jobs"][0]["sys_cpu"] = cpu, 0.0
    read = document["jobs"][0]["read"]
    factor = iops / read["iops"]
    for key in ("iops", "bw_bytes", "bw", "io_bytes", "io_kbytes", "total_ios"):
        read[key] = type(read[key])(read[key] * factor)
    clat = read["clat_ns"]
    clat["percentile"] = {p: int(v * slower) for p, v in clat["percentile"].items()}
    clat["mean"] *= slower
    return json.dumps(document)
