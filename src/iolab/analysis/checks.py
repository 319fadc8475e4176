"""Methodology checks on one finished case: typed warnings that say what to do next.

Each check reads a `Context`: the case's fio options, what fio measured, the limits of the
host that ran it and what iolab knew of the target before the case. A check returns a
CheckWarning (code, what was seen, what to do) or None. Every code is listed in CODES.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from iolab.analysis.check_context import (
    RANDOM,
    READS,
    WRITES,
    Context,
    Options,
    numjobs_of,
    rw_of,
)
from iolab.analysis.load_checks import cpu_bound, cpu_steal, device_busy, foreign_load
from iolab.model import CaseMetrics, CheckWarning, Code
from iolab.units import human_bytes, parse_seconds, parse_size

ENDED_EARLY_SHARE = 0.95
TOO_SHORT_MS = 900  # a 1 s case that ran 0.99 s measured what it was asked to
TOO_FEW_IOS = 1000
WRITTEN_ENOUGH = 0.99


def case_warnings(context: Context) -> list[CheckWarning]:
    """Every check's warning for one case, in CODES order."""
    return [found for check in CHECKS.values() if (found := check(context))]


def failed(code: str, error: Exception) -> CheckWarning:
    """A check that could not judge this case, said (the others still ran)."""
    return CheckWarning(
        Code.CHECK_FAILED,
        f"the {code} check could not judge this case ({type(error).__name__}: "
        f"{str(error)[:200]}): whether its trap is here is not known.",
        "Report this as a bug of iolab's, with the case's fio JSON (iolab export).",
    )


def ended_early(context: Context) -> CheckWarning | None:
    options, metrics = context.options, context.metrics
    if options.get("time_based") != 1 or (context.steady and context.steady.attained):
        return None  # fio stops a job that reached steady state: that is no early end
    runtime_ms = parse_seconds(options.get("runtime", 0)) * 1000
    if metrics.runtime_ms >= runtime_ms * ENDED_EARLY_SHARE:
        return None
    return CheckWarning(
        Code.ENDED_EARLY,
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
        Code.TOO_SHORT,
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
        Code.OVERRAN,
        f"the case ran {ran / 1000:.2f} s where {asked_ms / 1000:g} s were asked (runtime"
        f"{' + ramp_time' if options.get('ramp_time') else ''}): fio could not stop on time, "
        "so its figures cover I/O that outlasted the window.",
        "Look for I/Os that take seconds (a stalled device, a huge bs, thinktime), and keep "
        "each I/O well under the runtime.",
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
        Code.PAGE_CACHE,
        f"direct=0 over {human_bytes(size)}, and this host has {human_bytes(memory)} of "
        "memory: much of the I/O may hit the page cache, not the device.",
        "Use direct=1, or a size of at least twice the memory.",
    )


def loop_cache(context: Context) -> CheckWarning | None:
    if not context.loop_cache:
        return None
    return CheckWarning(
        Code.LOOP_CACHE,
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
        Code.RAM_TARGET,
        f"the target is on {context.ram_target}: {_figures(context.metrics)} are "
        "memory's figures, not storage's.",
        "Put the target on the device under test (a directory on its filesystem, or the "
        "device in a set-up).",
    )


def unwritten_read(context: Context) -> CheckWarning | None:
    share = context.written_share
    if rw_of(context) not in READS or share is None or share >= WRITTEN_ENOUGH:
        return None
    return CheckWarning(
        Code.UNWRITTEN_READ,
        f"only {share:.0%} of the area read had ever been written (holes, fallocated or fresh "
        "blocks): the device returns zeros without reading, so reads look far too fast.",
        'Precondition the target (precondition = "sequential") or write the file first.',
    )


def compressible(context: Context) -> CheckWarning | None:
    options = context.options
    if rw_of(context) not in WRITES:
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
        Code.COMPRESSIBLE,
        f"writes with {', '.join(said)}: a device or filesystem that compresses or "
        "deduplicates stores far less than fio writes.",
        "Drop these options (fio's default buffers are random) unless that is the point.",
    )


def randrepeat(context: Context) -> CheckWarning | None:
    options = context.options
    if context.repeat < 2 or rw_of(context) not in RANDOM:
        return None
    if options.get("randrepeat") in (0, "0") or "randseed" in options:
        return None
    return CheckWarning(
        Code.RANDREPEAT,
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
        Code.MISALIGNED,
        f"offset={raw} is not a multiple of 4 KiB: every I/O straddles physical blocks "
        "(and RAID chunks), which costs read-modify-write cycles.",
        "Use an offset that is a multiple of the device's physical block and the RAID chunk.",
    )


def steady_state(context: Context) -> CheckWarning | None:
    steady = context.steady
    if steady is None or steady.attained:
        return None
    return CheckWarning(
        Code.STEADY_STATE,
        f"fio did not see steady state ({steady.criterion} over {steady.window_s} s) within "
        "the runtime: the figure is the whole run's, still settling.",
        "Run longer, precondition the device, or loosen the steady-state criterion.",
    )


def cache_policy(context: Context) -> CheckWarning | None:
    """The RAID card ran another cache policy than the one configured (a learning battery)."""
    if not context.cache_policy:
        return None
    return CheckWarning(
        Code.CACHE_POLICY,
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
        Code.CACHE_SIZE,
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


FRESH_LIFETIME = 1.0  # a drive that wrote less than its capacity in its life is fresh


def _lifetime(share: float | None) -> str:
    """'this drive had written 0.4% of its capacity in its life' (or '11.8 times')."""
    if share is None:
        return ""
    much = f"{share:.1f} times its capacity" if share >= 1 else f"{share:.1%} of its capacity"
    return f"this drive had written {much} in its life"


def fresh_device(context: Context) -> CheckWarning | None:
    """Writes to a set-up never written since it was built, or (where smartctl reads its
    drives) to a target of unknown state on drives that have hardly written in their life."""
    share, state = context.drive_written, context.target_state
    if rw_of(context) not in WRITES:
        return None
    lifetime = _lifetime(share)
    if state in ("fresh", "trimmed"):
        said = f" ({lifetime})" if lifetime else ""
        why = f"writes to a {state} device{said}"
    elif state == "" and share is not None and share < FRESH_LIFETIME:
        why = f"{lifetime}: fresh"
    else:
        return None
    return CheckWarning(
        Code.FRESH_DEVICE,
        f"{why}: a device never written since it was built (or just trimmed), fresh flash "
        "or a sparse image's unallocated blocks, does not write as it will once in use.",
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
    metrics, writes = context.metrics, rw_of(context) in WRITES and rw_of(context) not in READS
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
    return (rw_of(context) in RANDOM) == context.rated_random and block <= context.rated_block


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
                if count != context.devices
                else ""
            )
            return CheckWarning(
                Code.ABOVE_CEILING,
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
    rw = rw_of(context)
    asked = (reads if rw in READS else 0.0) + (writes if rw in WRITES else 0.0)
    return asked * numjobs_of(context) or None


def rate_not_delivered(context: Context) -> CheckWarning | None:
    """fio was asked for a fixed rate (rate_iops) and the target did not keep up with it."""
    asked = _asked_iops(context)
    delivered = context.metrics.total_iops
    if asked is None or delivered >= asked * RATE_DELIVERED_SHARE:
        return None
    return CheckWarning(
        Code.RATE_NOT_DELIVERED,
        f"fio was asked for {asked:,.0f} IOPS (rate_iops) and delivered {delivered:,.0f} "
        f"({delivered / asked:.0%}): the target could not sustain that rate.",
        "Read this point as saturated, not as its asked load; lower the rate to measure "
        "latency below saturation.",
    )


CHECKS: dict[Code, Callable[[Context], CheckWarning | None]] = {
    Code.ENDED_EARLY: ended_early,
    Code.TOO_SHORT: too_short,
    Code.OVERRAN: overran,
    Code.CPU_BOUND: cpu_bound,
    Code.CPU_STEAL: cpu_steal,
    Code.FOREIGN_LOAD: foreign_load,
    Code.DEVICE_BUSY: device_busy,
    Code.PAGE_CACHE: page_cache,
    Code.LOOP_CACHE: loop_cache,
    Code.RAM_TARGET: ram_target,
    Code.UNWRITTEN_READ: unwritten_read,
    Code.COMPRESSIBLE: compressible,
    Code.RANDREPEAT: randrepeat,
    Code.MISALIGNED: misaligned,
    Code.STEADY_STATE: steady_state,
    Code.FRESH_DEVICE: fresh_device,
    Code.CACHE_SIZE: cache_size,
    Code.CACHE_POLICY: cache_policy,
    Code.RATE_NOT_DELIVERED: rate_not_delivered,
    Code.ABOVE_CEILING: above_ceiling,
}
CODES = tuple(CHECKS)
