"""The checks on what else ran while a case did: fio's own CPU use (cpu-bound), a
hypervisor's steal (cpu-steal), other processes' CPU and device I/O (foreign-load), and a
device busy throughout (device-busy, a note)."""

from __future__ import annotations

from iolab.analysis.check_context import (
    Context,
    cores_of,
    numjobs_of,
)
from iolab.model import CheckWarning, Code
from iolab.model.telemetry import CPU, Telemetry

CPU_BOUND_SHARE = 0.9  # of the cores the jobs may use


CPU_STEAL_PCT = 10.0  # of the allowed CPUs' time, stolen by the hypervisor (a VM shares)


DEVICE_SATURATED_PCT = 95.0  # a device's utilisation (iostat's %util)


DEVICE_SATURATED_QUEUE = 2.0  # and I/Os queued: one at a time keeps %util full unsaturated


def cpu_bound(context: Context) -> CheckWarning | None:
    """The CPUs the jobs may run on were nearly saturated, whoever used them (the sampled
    telemetry), or by fio's own usr + sys count (all an import has; and a short case's
    samples include fio's start-up) (study D's question)."""
    per_job = context.metrics.usr_cpu + context.metrics.sys_cpu
    used = per_job / 100 * numjobs_of(context)
    cores = cores_of(context)
    if not cores or used < CPU_BOUND_SHARE * cores:  # no cores known: fio ran elsewhere
        seen = context.telemetry
        return _cpus_saturated(context, seen) if seen is not None else None
    return CheckWarning(
        Code.CPU_BOUND,
        f"fio's {numjobs_of(context)} jobs kept {used:.1f} of the {cores} cores they may use busy: "
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
        Code.CPU_BOUND,
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
        Code.CPU_STEAL,
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
        Code.DEVICE_BUSY,
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
            if (
                iops > allowed * direction.iops + FOREIGN_IO_SLACK[0]
                and mbps > allowed * fio_mbps + FOREIGN_IO_SLACK[1]
            ):
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
        Code.FOREIGN_LOAD,
        f"other work shared the host during this case: {'; '.join(said)}"
        f"{f' (the busiest: {busiest})' if busiest else ''}. The figure is this set-up's "
        "under that load, not its own.",
        "Run it again on a quiet host, or give fio CPUs (cpus_allowed) and a device that "
        "nothing else uses; iolab history and check mark this run.",
    )
