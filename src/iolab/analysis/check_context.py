"""What the methodology checks know of one case (Context), and the plain facts of its
options they share: its pattern, its jobs, the cores they may use."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from iolab.fio.parse import SteadyState
from iolab.model import CaseMetrics, FioValue
from iolab.model.telemetry import Telemetry
from iolab.targets.environment import parse_cpulist

READS = ("read", "randread", "rw", "readwrite", "randrw")


WRITES = ("write", "randwrite", "rw", "readwrite", "randrw", "trimwrite", "randtrimwrite")


RANDOM = ("randread", "randwrite", "randrw", "randtrim", "randtrimwrite")


Options = Mapping[str, FioValue]


RATED_BLOCK = 4096  # datasheets give IOPS at 4 KiB random unless they say otherwise


@dataclass(frozen=True, kw_only=True)
class Context:
    """What the checks know of one case, each field by its name; the runner and the importer
    build it in one place (`analysis.reading.context`)."""

    options: Options
    metrics: CaseMetrics
    cpus: int = 1  # cores of the host that ran fio
    memory_bytes: int = 0
    repeat: int = 1  # repetitions of this case in the plan
    written_share: float | None = None  # of the test area, before the case (None: unknown)
    loop_cache: str = ""  # the loop device over a host-cached file the target sits on, if any
    steady: SteadyState | None = None  # fio's steady-state result, when the case asked for it
    target_state: str = ""  # fresh, trimmed, sequential, random, ... (runner.precondition)
    cache_bytes: int = 0  # a cache in front of the target that the plan declares
    ram_target: str = ""  # the memory the target is on (tmpfs, zram1, ...), if it is memory
    devices: int = 0  # the set-up's device count, where known (an import's facts)
    write_devices: int = 0  # the devices' worth of writes its RAID level leaves (0: all)
    rated_iops: tuple[float, float] = (0.0, 0.0)  # one member's rated (read, write) IOPS
    rated_bps: tuple[float, float] = (0.0, 0.0)  # one member's rated (read, write) bytes/s
    rated_block: int = RATED_BLOCK  # the block size the rated IOPS hold at
    rated_random: bool = True  # and whether at random offsets (False: sequential)
    cache_policy: str = ""  # how a RAID card's policy in effect differs from the configured
    telemetry: Telemetry | None = None  # the allowed CPUs and the devices, sampled (local)
    drive_written: float | None = None  # the least its drives wrote in their life / capacity


def rw_of(context: Context) -> str:
    return str(context.options.get("rw", "read"))


def numjobs_of(context: Context) -> int:
    value = context.options.get("numjobs", 1)
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def cores_of(context: Context) -> int:
    """The cores fio's jobs may run on: the host's, or those cpus_allowed names."""
    named = set(parse_cpulist(str(context.options.get("cpus_allowed", ""))))
    return min(len(named), context.cpus) if named else context.cpus
