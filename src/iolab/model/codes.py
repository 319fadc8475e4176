"""Every code a warning or a note can carry, one member each. A member is the string it
names ("cpu-bound"), so what is stored, exported and printed is that string; code compares
and builds warnings with the members, never with the literals. docs/methods.md (and the
pages it links) says what each means; tests/test_house.py holds both lists equal."""

from __future__ import annotations

from enum import StrEnum, unique


@unique
class Code(StrEnum):
    """A warning's (or a note's) code."""

    # The checks on one case (analysis/checks.py, analysis/load_checks.py)
    ENDED_EARLY = "ended-early"  # a time-based case ran under 95% of its runtime
    TOO_SHORT = "too-short"  # under 0.9 s or 1,000 I/Os measured
    OVERRAN = "overran"  # the case ran far past its runtime: its figures are not the window's
    CPU_BOUND = "cpu-bound"  # the CPUs the jobs may use were busy with fio's own load
    CPU_STEAL = "cpu-steal"  # the hypervisor stole the CPUs' time
    FOREIGN_LOAD = "foreign-load"  # other work shared the host (CPU or the set-up's devices)
    DEVICE_BUSY = "device-busy"  # a note: a device of the set-up was busy with a queue
    PAGE_CACHE = "page-cache"  # buffered I/O over less than twice the host's memory
    LOOP_CACHE = "loop-cache"  # the target sits on a loop device doing buffered I/O
    RAM_TARGET = "ram-target"  # the target is memory (tmpfs, zram, a RAM disk)
    UNWRITTEN_READ = "unwritten-read"  # reads over blocks never written (zeros, no disk)
    COMPRESSIBLE = "compressible"  # writes of zero, compressible or dedupable buffers
    RANDREPEAT = "randrepeat"  # repetitions read the same random offsets in the same order
    MISALIGNED = "misaligned"  # an offset that is not a multiple of 4 KiB
    STEADY_STATE = "steady-state"  # fio did not see the steady state it was asked for
    FRESH_DEVICE = "fresh-device"  # writes to a device never written since it was built
    CACHE_SIZE = "cache-size"  # a test area under four times a cache of the set-up
    CACHE_POLICY = "cache-policy"  # the RAID card's cache policy in effect differs
    RATE_NOT_DELIVERED = "rate-not-delivered"  # fio delivered under 95% of the rate asked
    ABOVE_CEILING = "above-ceiling"  # above what the devices behind can deliver: a cache
    DRIVE_HOT = "drive-hot"  # a drive spent time above its warning temperature, or throttled
    DRIVE_ERRORS = "drive-errors"  # a drive's media, CRC or reallocation counter moved
    DRIVE_WORN = "drive-worn"  # a drive's spare is below its threshold, or its endurance used
    CHECK_FAILED = "check-failed"  # a check could not judge the case (a bug of iolab's)
    # Over several cases (analysis/scaling.py, levels.py, virtual_cache.py, comparison.py)
    FLAT_SCALING = "flat-scaling"  # doubling the load gained under 10%: where the limit is
    MIXED_SPEEDS = "mixed-speeds"  # the case's speed changed for good part way through
    VIRTUAL_CACHE = "virtual-cache"  # a virtual disk's writes answered by its host's cache
    MIXED_VERSIONS = "mixed-versions"  # the figures were made with different software
    FEW_REPEATS = "few-repeats"  # too few repetitions to see small differences
    # Several hosts (runner/executing.py, report/views/hosts_view.py, fleet_view.py)
    HOST_LOST = "host-lost"  # a host sent no result for the case
    SLOW_HOST = "slow-host"  # a host delivered well under the others on a workload
    HOST_OUTLIER = "host-outlier"  # a host lies far from its fleet (robust z)
    # Where the figures came from (exchange/, the virtual lab)
    PUBLISHED = "published"  # a published figure, imported as printed: not measured here
    LOGS_ONLY = "logs-only"  # no fio result beside the logs: the figures are their means
    VIRTUAL_LAB = "virtual-lab"  # measured in iolab's virtual lab, not on real hardware
