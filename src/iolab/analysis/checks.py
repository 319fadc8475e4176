"""Methodology checks on one finished case: typed warnings that say what to do next.

Each check reads a `Context`: the case's fio options, what fio measured, the limits of the
host that ran it and what iolab knew of the target before the case. A check returns a
CheckWarning (code, what was seen, what to do) or None. Every code is listed in CODES.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from iolab.fio.parse import SteadyState
from iolab.model import CaseMetrics, CheckWarning, FioValue
from iolab.targets.environment import parse_cpulist
from iolab.units import human_bytes, parse_seconds, parse_size
from iolab.usage import CPU, Telemetry

ENDED_EARLY_SHARE = 0.95
CPU_BOUND_SHARE = 0.9  # of the cores the jobs may use
CPU_STEAL_PCT = 10.0  # of the allowed CPUs' time, stolen by the hypervisor (a VM shares)
DEVICE_SATURATED_PCT = 95.0  # a device's utilisation (iostat's %util)
DEVICE_SATURATED_QUEUE = 2.0  # and I/Os queued: one at a time keeps %util full unsaturated
TOO_SHORT_MS = 900  # a 1 s case that ran 0.99 s measured what it was asked to
TOO_FEW_IOS = 1000
WRITTEN_ENOUGH = 0.99
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


def case_warnings(context: Context) -> list[CheckWarning]:
    """Every check's warning for one case, in CODES order."""
    return [found for check in CHECKS.values() if (found := check(context))]


def failed(code: str, error: Exception) -> CheckWarning:
    """A check that could not judge this case, said (the others still ran)."""
    return CheckWarning(
        "check-failed",
        f"the {code} check could not judge this case ({type(error).__name__}: "
        f"{str(error)[:200]}): whether its trap is here is not known.",
        "Report this as a bug of iolab's, with the case's fio JSON (iolab export).",
    )


def _rw(context: Context) -> str:
    return str(context.options.get("rw", "read"))


def _numjobs(context: Context) -> int:
    value = context.options.get("numjobs", 1)
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def _cores(context: Context) -> int:
    """The cores fio's jobs may run on: the host's, or those cpus_allowed names."""
    named = set(parse_cpulist(str(context.options.get("cpus_allowed", ""))))
    return min(len(named), context.cpus) if named else context.cpus


def ended_early(context: Context) -> CheckWarning | None:
    options, metrics = context.options, context.metrics
    if options.get("time_based") != 1 or (context.steady and context.steady.attained):
        return None  # fio stops a job that reached steady state: that is no early end
    runtime_ms = parse_seconds(options.get("runtime", 0)) * 1000
    if metrics.runtime_ms >= runtime_ms * ENDED_EARLY_SHARE:
        return None
    return CheckWarning(
        "ended-early",
        f"fio ran {metrics.runtime_ms / 1000:.1f} s of the {runtime_ms / 1000:.0f} s asked.",
        "Look for errors, a too-small size, or a target that stopped accepting I/O.",
    )


def too_short(context: Context) -> CheckWarning | None:
    """A case that ran too little time, or did too few I/Os, to mean much: judged by how long
    it ran and what it moved, not by its size; the advice fits how the case was bounded."""
    metrics = context.metrics
    moved = sum(d.io_bytes for d in metrics.directions)
    ios = moved / max(1, parse_size(str(context.options.get("bs", "4k")).split(",")[0]))
    if metrics.runtime_ms >= TOO_SHORT_MS and ios >= TOO_FEW_IOS:
        return None
    if context.options.get("time_based") == 1:  # fio stopped at the runtime it was given
        advice = "Give a runtime of several seconds (runtime = 10, say)."
    else:  # fio stopped when it had gone through its size
        advice = "Use time_based = 1 with a runtime of several seconds, or a larger size."
    return CheckWarning(
        "too-short",
        f"the case measured {metrics.runtime_ms / 1000:.2f} s and about {ios:,.0f} I/Os "
        f"({human_bytes(moved)} moved): too little for a stable figure.",
        advice,
    )


OVERRAN_SHARE = 1.5  # of the runtime asked (plus ramp_time)
OVERRAN_SLACK_MS = 500  # fio's start and stop, on a short case


def overran(context: Context) -> CheckWarning | None:
    """fio ran well past the runtime it was asked for: a long I/O, a thinktime or a stalled
    device held it, and the figure is not the asked window's."""
    options, ran = context.options, context.metrics.runtime_ms
    if "runtime" not in options:
        return None
    asked_ms = parse_seconds(options["runtime"]) + parse_seconds(options.get("ramp_time", 0))
    asked_ms *= 1000
    if not asked_ms or ran <= OVERRAN_SHARE * asked_ms + OVERRAN_SLACK_MS:
        return None
    return CheckWarning(
        "overran",
        f"the case ran {ran / 1000:.2f} s where {asked_ms / 1000:g} s were asked (runtime"
        f"{' + ramp_time' if options.get('ramp_time') else ''}): fio could not stop on time, "
        "so its figures cover I/O that outlasted the window.",
        "Look for I/Os that take seconds (a stalled device, a huge bs, thinktime), and keep "
        "each I/O well under the runtime.",
    )


def cpu_bound(context: Context) -> CheckWarning | None:
    """The CPUs the jobs may run on were nearly saturated, whoever used them (the sampled
    telemetry), or by fio's own usr + sys count (all an import has; and a short case's
    samples include fio's start-up) (study D's question)."""
    per_job = context.metrics.usr_cpu + context.metrics.sys_cpu
    used = per_job / 100 * _numjobs(context)
    cores = _cores(context)
    if not cores or used < CPU_BOUND_SHARE * cores:  # no cores known: fio ran elsewhere
        seen = context.telemetry
        return _cpus_saturated(context, seen) if seen is not None else None
    return CheckWarning(
        "cpu-bound",
        f"fio's {_numjobs(context)} jobs kept {used:.1f} of the {cores} cores they may use busy: "
        "the load generator may be the limit, not the device.",
        "Use an asynchronous ioengine with a deeper iodepth, fewer jobs, or more cores.",
    )


def _cpus_saturated(context: Context, seen: Telemetry) -> CheckWarning | None:
    busy, fio = seen.mean(CPU, "busy"), seen.mean(CPU, "fio")
    if busy is None or busy < CPU_BOUND_SHARE * 100 or _foreign_cpu(seen) is not None:
        return None  # busy with other processes' work: foreign-load says so, not "the CPU"
    cpus = len(seen.cpus)
    where = f"CPU {seen.cpus[0]}, the one" if cpus == 1 else f"the {cpus} CPUs"
    irq = seen.mean(CPU, "softirq") or 0.0
    return CheckWarning(
        "cpu-bound",
        f"{where} the jobs may use, {'was' if cpus == 1 else 'were'} {busy:.0f}% busy, fio's "
        f"own share {fio or 0:.0f}% "
        f"(softirq {irq:.0f}%, the rest other processes and the kernel): the CPU may be "
        "the limit, not the device.",
        "Give fio CPUs nothing else uses (cpus_allowed), fewer jobs or an asynchronous "
        "ioengine with a deeper iodepth, and keep other work off the host.",
    )


def cpu_steal(context: Context) -> CheckWarning | None:
    """The hypervisor took a material share of the CPUs the jobs may use."""
    steal = context.telemetry.mean(CPU, "steal") if context.telemetry else None
    if steal is None or steal < CPU_STEAL_PCT:
        return None
    return CheckWarning(
        "cpu-steal",
        f"the hypervisor stole {steal:.0f}% of the CPUs' time the jobs may use: other guests "
        "shared this host's CPUs, so the figures depend on them.",
        "Run on a host (or VM) with dedicated CPUs, or repeat at a quiet time and compare.",
    )


def device_busy(context: Context) -> CheckWarning | None:
    """A note, not a ⚑: a device of the set-up was busy all the time with I/Os queued. %util
    cannot show the limit of a device that serves requests in parallel (an SSD, NVMe, virtio,
    a RAID array: iostat's manual), so one case says "busy", never "saturated"; a sweep whose
    throughput stops growing while latency grows does (flat-scaling). Not said when the load
    on the device was not fio's (foreign-load)."""
    seen = context.telemetry
    top = seen.busiest() if seen else None
    if seen is None or top is None or top[1] < DEVICE_SATURATED_PCT:
        return None
    name, util = top
    queue = seen.mean(name, "queue") or 0.0
    if queue < DEVICE_SATURATED_QUEUE or foreign_device(context) is not None:
        return None
    return CheckWarning(
        "device-busy",
        f"{name} was {util:.0f}% busy (queue depth {queue:.1f}) during the case: a note, not a "
        "fault; %util alone does not say whether this is the device's limit.",
        "To find its limit, sweep iodepth or numjobs: where throughput stops growing while "
        "latency grows, the findings name the device as the limit.",
    )


FOREIGN_CPU_PCT = 20.0  # other processes' share of the allowed CPUs' time that is material
FOREIGN_IO_ONE = 1.5  # a lone device doing this many times fio's I/O did other work too
FOREIGN_IO_STACK = 3.0  # under a stack (copies, parity, a loop's backing disk): more allowed
FOREIGN_IO_SLACK = (200.0, 5.0)  # and at least this many IOPS and MB/s more


def _foreign_cpu(seen: Telemetry) -> float | None:
    """Other user processes' share of the allowed CPUs, where it is material."""
    share = seen.others_cpu_pct
    return share if share is not None and share >= FOREIGN_CPU_PCT else None


def foreign_device(context: Context) -> str | None:
    """'vda did 160,543 read IOPS (657.6 MB/s) where fio's jobs did 4,512 (18.5 MB/s)': a
    device of the set-up that did far more I/O than fio's jobs, in a direction, by count and
    by bytes (so that neither a split large I/O nor a read-ahead counts); judged on direct
    I/O only (the page cache reshapes buffered I/O)."""
    seen = context.telemetry
    if seen is None or context.options.get("direct") != 1:
        return None
    allowed = FOREIGN_IO_ONE if len(seen.devices) == 1 else FOREIGN_IO_STACK
    for direction in context.metrics.directions:
        key = "r" if direction.direction == "read" else "w"
        fio_mbps = direction.bw_bytes / 1e6
        for name in seen.devices:
            iops, mbps = seen.mean(name, f"{key}_iops"), seen.mean(name, f"{key}_mbps")
            if iops is None or mbps is None:
                continue
            if (iops > allowed * direction.iops + FOREIGN_IO_SLACK[0]
                    and mbps > allowed * fio_mbps + FOREIGN_IO_SLACK[1]):  # fmt: skip
                return (
                    f"{name} did {iops:,.0f} {direction.direction} IOPS ({mbps:,.1f} MB/s) "
                    f"where fio's jobs did {direction.iops:,.0f} ({fio_mbps:,.1f} MB/s)"
                )
    return None


def foreign_load(context: Context) -> CheckWarning | None:
    """Other work on the host while the case ran: other processes took a material share of
    the CPUs the jobs may use, or a device of the set-up did far more I/O than fio's jobs.
    The figure is the set-up's under that load; no limit is named as the set-up's."""
    seen = context.telemetry
    if seen is None:
        return None
    said = []
    cpu = _foreign_cpu(seen)
    if cpu is not None:
        said.append(f"other processes used {cpu:.0f}% of the CPUs the jobs may use")
    device = foreign_device(context)
    if device is not None:
        said.append(device)
    if not said:
        return None
    busiest = "; ".join(o.said() for o in seen.others)
    return CheckWarning(
        "foreign-load",
        f"other work shared the host during this case: {'; '.join(said)}"
        f"{f' (the busiest: {busiest})' if busiest else ''}. The figure is this set-up's "
        "under that load, not its own.",
        "Run it again on a quiet host, or give fio CPUs (cpus_allowed) and a device that "
        "nothing else uses; iolab history and check mark this run.",
    )


def page_cache(context: Context) -> CheckWarning | None:
    """Buffered I/O over less data than the memory measures the page cache (study C's trap)."""
    options, memory = context.options, context.memory_bytes
    if options.get("direct") != 0 or "size" not in options:
        return None
    size = parse_size(options["size"])
    if not memory or size >= 2 * memory:
        return None
    return CheckWarning(
        "page-cache",
        f"direct=0 over {human_bytes(size)}, and this host has {human_bytes(memory)} of "
        "memory: much of the I/O may hit the page cache, not the device.",
        "Use direct=1, or a size of at least twice the memory.",
    )


def loop_cache(context: Context) -> CheckWarning | None:
    if not context.loop_cache:
        return None
    return CheckWarning(
        "loop-cache",
        f"the target is on {context.loop_cache}: the host's page cache sits under it, so "
        "this measures memory as much as the disk.",
        "Test the disk itself, or set the loop device to direct I/O (losetup --direct-io=on).",
    )


def _figures(metrics: CaseMetrics) -> str:
    """'199,827 IOPS, 2,136 MB/s, p99 177 µs': what the case measured, as the terminal says."""
    p99 = max((d.percentiles_ns.get("99", 0.0) for d in metrics.directions), default=0.0)
    mb = metrics.total_bw_bytes / 1e6
    return (
        f"{metrics.total_iops:,.0f} IOPS, {mb:,.{0 if mb >= 100 else 1}f} MB/s, "
        f"p99 {p99 / 1000:,.0f} µs"
    )


def ram_target(context: Context) -> CheckWarning | None:
    """The target is memory: tmpfs, ramfs, a zram or brd RAM disk, or a loop over a file in
    one. Whatever the I/O pattern, the figures are RAM's and the kernel's, not a device's."""
    if not context.ram_target:
        return None
    return CheckWarning(
        "ram-target",
        f"the target is on {context.ram_target}: {_figures(context.metrics)} are "
        "memory's figures, not storage's.",
        "Put the target on the device under test (a directory on its filesystem, or the "
        "device in a set-up).",
    )


def unwritten_read(context: Context) -> CheckWarning | None:
    share = context.written_share
    if _rw(context) not in READS or share is None or share >= WRITTEN_ENOUGH:
        return None
    return CheckWarning(
        "unwritten-read",
        f"only {share:.0%} of the area read had ever been written (holes, fallocated or fresh "
        "blocks): the device returns zeros without reading, so reads look far too fast.",
        'Precondition the target (precondition = "sequential") or write the file first.',
    )


def compressible(context: Context) -> CheckWarning | None:
    options = context.options
    if _rw(context) not in WRITES:
        return None
    said = [
        f"{key}={options[key]}"
        for key in ("zero_buffers", "buffer_compress_percentage", "dedupe_percentage")
        if options.get(key) not in (None, 0, "0")
    ]
    if options.get("scramble_buffers") == 0 and options.get("refill_buffers") != 1:
        said.append("scramble_buffers=0")
    if not said:
        return None
    return CheckWarning(
        "compressible",
        f"writes with {', '.join(said)}: a device or filesystem that compresses or "
        "deduplicates stores far less than fio writes.",
        "Drop these options (fio's default buffers are random) unless that is the point.",
    )


def randrepeat(context: Context) -> CheckWarning | None:
    options = context.options
    if context.repeat < 2 or _rw(context) not in RANDOM:
        return None
    if options.get("randrepeat") in (0, "0") or "randseed" in options:
        return None
    return CheckWarning(
        "randrepeat",
        f"{context.repeat} repetitions of a random workload with fio's default randrepeat=1 "
        "visit the same offsets in the same order: caches remember them.",
        "Set randrepeat = 0 so every repetition draws new offsets.",
    )


def misaligned(context: Context) -> CheckWarning | None:
    options = context.options
    raw = str(options.get("offset", "0"))
    try:
        offset = parse_size(raw)
    except ValueError:
        return None  # a percentage: fio aligns it to the block size
    block = parse_size(str(options.get("bs", "4k")).split(",")[0])
    if not offset or offset % 4096 == 0 or (block < 4096 and offset % block == 0):
        return None
    return CheckWarning(
        "misaligned",
        f"offset={raw} is not a multiple of 4 KiB: every I/O straddles physical blocks "
        "(and RAID chunks), which costs read-modify-write cycles.",
        "Use an offset that is a multiple of the device's physical block and the RAID chunk.",
    )


def steady_state(context: Context) -> CheckWarning | None:
    steady = context.steady
    if steady is None or steady.attained:
        return None
    return CheckWarning(
        "steady-state",
        f"fio did not see steady state ({steady.criterion} over {steady.window_s} s) within "
        "the runtime: the figure is the whole run's, still settling.",
        "Run longer, precondition the device, or loosen the steady-state criterion.",
    )


def cache_policy(context: Context) -> CheckWarning | None:
    """The RAID card ran another cache policy than the one configured (a learning battery)."""
    if not context.cache_policy:
        return None
    return CheckWarning(
        "cache-policy",
        f"the RAID card's cache policy in effect differs from the one configured: "
        f"{context.cache_policy}; this case measured the policy in effect.",
        "Wait for the battery's learn cycle or charge to end (or replace it), then run again.",
    )


CACHE_SHARE = 4  # a working set under 4x a declared cache is largely served from it


def cache_size(context: Context) -> CheckWarning | None:
    """The working set fits (mostly) in a cache the plan declares: study C's 2 GB test."""
    size = context.options.get("size")
    if not context.cache_bytes or size is None:
        return None
    area = parse_size(size)
    needed = CACHE_SHARE * context.cache_bytes
    if area >= needed:
        return None
    area_text, needed_text = _apart(area, needed)
    return CheckWarning(
        "cache-size",
        f"the test area ({area_text}) is under {CACHE_SHARE}x the "
        f"{human_bytes(context.cache_bytes)} cache in front of the set-up (declared, or its "
        "RAID card's): much of the I/O is served by the cache, not the disks.",
        f"Use a size of at least {needed_text}.",
    )


def _apart(small: float, large: float) -> tuple[str, str]:
    """Two sizes as people read them, in MiB where one decimal of the larger unit would make
    them look equal (2,000 MB and 2 GiB are both "2.0 GiB")."""
    said = human_bytes(small), human_bytes(large)
    if said[0] != said[1]:
        return said
    return f"{small / 2**20:,.0f} MiB", f"{large / 2**20:,.0f} MiB"


def fresh_device(context: Context) -> CheckWarning | None:
    if _rw(context) not in WRITES or context.target_state not in ("fresh", "trimmed"):
        return None
    return CheckWarning(
        "fresh-device",
        f"writes to a {context.target_state} device: flash that was never written (or was "
        "just trimmed) writes far faster than it will once in use.",
        'Precondition the set-up (precondition = "sequential", or "both" for random writes).',
    )


CEILING_MARGIN = 1.05  # measurement noise allowed above devices x rated speed
BTRFS_SECTOR = 4096  # mkfs.btrfs's default sector size (--sectorsize changes it)
CEILING_ADVICE = (
    "Make the test area larger than every cache (card, drive, page cache), or use direct=1."
)


def btrfs_sector(mkfs_options: str) -> int:
    """The sector size a btrfs was made with: mkfs.btrfs's -s/--sectorsize, else 4 KiB."""
    words = mkfs_options.replace("=", " ").split()
    for flag, value in itertools.pairwise(words):
        if flag in ("-s", "--sectorsize"):
            try:
                return parse_size(value)
            except ValueError:
                break
    return BTRFS_SECTOR


def ceiling_advice(options: Options, filesystem: str = "", sector: int = BTRFS_SECTOR) -> str:
    """What to do about a figure above its devices' ceiling, fitting the case: direct=1 only
    where it was not set; on btrfs below its sector size, that direct=1 did not hold."""
    if options.get("direct") != 1:
        return CEILING_ADVICE
    try:
        block = parse_size(str(options.get("bs", "4k")).split(",")[0])
    except ValueError:
        block = sector
    if filesystem == "btrfs" and block < sector:
        return (
            f"direct=1 was set, but btrfs does buffered I/O for blocks under its sector size "
            f"(bs={options.get('bs')} < {human_bytes(sector)}): the page cache answered. Use "
            f"bs of at least {human_bytes(sector)} on btrfs, or test the devices themselves."
        )
    return "Make the test area larger than every cache (card, drive): direct=1 was set."


def _ceilings(context: Context) -> list[tuple[float, float, str, int]]:
    """(measured, rated devices x rated, unit, those devices) for each rated speed the set-up's
    facts give: a write gets the devices its RAID level leaves (a mirror writes every copy)."""
    metrics, writes = context.metrics, _rw(context) in WRITES and _rw(context) not in READS
    count = (context.write_devices or context.devices) if writes else context.devices
    alike = _rated_alike(context)
    pairs = (
        (metrics.total_iops, context.rated_iops[int(writes)] if alike else 0.0, "IOPS", 1.0),
        (metrics.total_bw_bytes, context.rated_bps[int(writes)], "MB/s", 1e6),
    )
    return [
        (measured / scale, count * rated / scale, unit, count)
        for measured, rated, unit, scale in pairs
        if rated > 0
    ]


def _rated_alike(context: Context) -> bool:
    """Whether the case is like the rated IOPS: the same pattern (random or sequential), at a
    block no larger (a datasheet's 4 KiB random IOPS say nothing of 8 KiB sequential blocks,
    which a drive merges and prefetches)."""
    try:
        block = parse_size(str(context.options.get("bs", "4k")).split(",")[0])
    except ValueError:
        return False
    return (_rw(context) in RANDOM) == context.rated_random and block <= context.rated_block


def above_ceiling(context: Context) -> CheckWarning | None:
    """More than the set-up's devices can deliver at their rated speed (study C's 4 X25-E
    wrote 821 MB/s, each rated 170 MB/s): a cache answered, not the devices."""
    if context.devices < 1:
        return None
    for measured, most, unit, count in _ceilings(context):
        if measured > CEILING_MARGIN * most:
            each = most / count
            level = (
                f": its RAID level leaves {count} of its {context.devices} devices' worth of "
                "writes, after copies or parity"
                if count != context.devices else ""
            )  # fmt: skip
            return CheckWarning(
                "above-ceiling",
                f"{measured:,.0f} {unit} measured, above the {most:,.0f} {unit} its "
                f"{context.devices} devices are rated for ({count} x {each:,.0f} "
                f"{unit}{level}): a cache, not the devices, answered.",
                ceiling_advice(context.options),
            )
    return None


RATE_DELIVERED_SHARE = 0.95


def _asked_iops(context: Context) -> float | None:
    """The IOPS fio was held to: rate_iops per job ("reads,writes" or one value for both)
    over the directions the workload does, times numjobs; None without a plain rate."""
    parts = str(context.options.get("rate_iops", "")).split(",")
    try:
        reads, writes = float(parts[0]), float(parts[1] if len(parts) > 1 else parts[0])
    except ValueError:
        return None
    rw = _rw(context)
    asked = (reads if rw in READS else 0.0) + (writes if rw in WRITES else 0.0)
    return asked * _numjobs(context) or None


def rate_not_delivered(context: Context) -> CheckWarning | None:
    """fio was asked for a fixed rate (rate_iops) and the target did not keep up with it."""
    asked = _asked_iops(context)
    delivered = context.metrics.total_iops
    if asked is None or delivered >= asked * RATE_DELIVERED_SHARE:
        return None
    return CheckWarning(
        "rate-not-delivered",
        f"fio was asked for {asked:,.0f} IOPS (rate_iops) and delivered {delivered:,.0f} "
        f"({delivered / asked:.0%}): the target could not sustain that rate.",
        "Read this point as saturated, not as its asked load; lower the rate to measure "
        "latency below saturation.",
    )


CHECKS: dict[str, Callable[[Context], CheckWarning | None]] = {
    "ended-early": ended_early,
    "too-short": too_short,
    "overran": overran,
    "cpu-bound": cpu_bound,
    "cpu-steal": cpu_steal,
    "foreign-load": foreign_load,
    "device-busy": device_busy,
    "page-cache": page_cache,
    "loop-cache": loop_cache,
    "ram-target": ram_target,
    "unwritten-read": unwritten_read,
    "compressible": compressible,
    "randrepeat": randrepeat,
    "misaligned": misaligned,
    "steady-state": steady_state,
    "fresh-device": fresh_device,
    "cache-size": cache_size,
    "cache-policy": cache_policy,
    "rate-not-delivered": rate_not_delivered,
    "above-ceiling": above_ceiling,
}
CODES = tuple(CHECKS)
