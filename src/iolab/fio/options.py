"""Every fio option, classified: an allow-list of what reaches a job file.

Each option of fio 3.33 (and each of its aliases) is one of:
- safe: I/O shape, timing, buffers, randomness, reporting; a plan or job file may set it;
- iolab's own: iolab sets it (the file fio uses, the sample logs it reads); a plan may not;
- refused: it names files or devices other than the target, runs commands, changes the host,
  reaches other hosts or programs (engines iolab does not run), or does nothing (deprecated).

An option not classified here (a newer fio's) is refused: fio options reach a job file only
from this table. The table covers what `fio --cmdhelp=all` lists, what fio accepts but does
not list (options under an alias, deprecated ones, the tiobench and act profiles' options)
and every engine's options (`fio --enghelp=ENGINE`); tests/test_fio_options.py checks the
installed fio against it.
"""

from __future__ import annotations

import difflib
import functools
from dataclasses import dataclass
from typing import Literal

Kind = Literal["safe", "iolab", "refused"]
CLASSIFIED = "fio-3.33"  # the fio whose options this table classifies

_SHAPE = (
    "rw",
    "rw_sequencer",
    "bs",
    "ba",
    "bsrange",
    "bssplit",
    "bs_unaligned",
    "bs_is_seq_rand",
    "size",
    "io_size",
    "filesize",
    "offset",
    "offset_increment",
    "offset_align",
    "number_ios",
    "rwmixread",
    "rwmixwrite",
    "iodepth",
    "iodepth_batch",
    "iodepth_batch_complete_min",
    "iodepth_batch_complete_max",
    "iodepth_low",
    "serialize_overlap",
    "io_submit_mode",
    "ioengine",
    "direct",
    "buffered",
    "atomic",
    "sync",
    "overwrite",
    "invalidate",
    "pre_read",
    "fsync",
    "fdatasync",
    "write_barrier",
    "sync_file_range",
    "end_fsync",
    "fsync_on_close",
    "fallocate",
    "fadvise_hint",
    "write_hint",
    "create_serialize",
    "create_fsync",
    "create_on_open",
    "create_only",
    "allow_file_create",
    "lockfile",
    "openfiles",
    "file_service_type",
    "zonemode",
    "zonesize",
    "zonecapacity",
    "zonerange",
    "zoneskip",
    "read_beyond_wp",
    "max_open_zones",
    "job_max_open_zones",
    "ignore_zone_limits",
    "zone_reset_threshold",
    "zone_reset_frequency",
)
_TIMING = (
    "runtime",
    "time_based",
    "ramp_time",
    "startdelay",
    "loops",
    "numjobs",
    "thread",
    "thinktime",
    "thinktime_spin",
    "thinktime_blocks",
    "thinktime_blocks_type",
    "thinktime_iotime",
    "rate",
    "rate_min",
    "rate_process",
    "rate_cycle",
    "rate_ignore_thinktime",
    "rate_iops",
    "rate_iops_min",
    "max_latency",
    "latency_target",
    "latency_window",
    "latency_percentile",
    "latency_run",
    "steadystate",
    "steadystate_duration",
    "steadystate_ramp_time",
    "stonewall",
    "new_group",
    "wait_for",
    "exitall",
    "exit_what",
    "exitall_on_error",
    "flow_id",
    "flow",
    "flow_sleep",
    "continue_on_error",
    "ignore_error",
    "error_dump",
)
_BUFFERS = (
    "mem",
    "iomem_align",
    "hugepage-size",
    "lockmem",
    "zero_buffers",
    "refill_buffers",
    "scramble_buffers",
    "buffer_pattern",
    "buffer_compress_percentage",
    "buffer_compress_chunk",
    "dedupe_percentage",
    "dedupe_mode",
    "dedupe_working_set_percentage",
    "dedupe_global",
    "verify",
    "do_verify",
    "verify_interval",
    "verify_offset",
    "verify_pattern",
    "verify_fatal",
    "verify_async",
    "verify_async_cpus",
    "verify_backlog",
    "verify_backlog_batch",
    "verify_only",
    "experimental_verify",
    "verify_state_save",
    "trim_percentage",
    "trim_verify_zero",
    "trim_backlog",
    "trim_backlog_batch",
)
_RANDOM = (
    "randrepeat",
    "randseed",
    "allrandrepeat",
    "norandommap",
    "softrandommap",
    "random_generator",
    "random_distribution",
    "percentage_random",
)
_PLACEMENT = (  # where fio's own processes run, and at what priority: fio's, not the host's
    "cpumask",
    "cpus_allowed",
    "cpus_allowed_policy",
    "numa_cpu_nodes",
    "numa_mem_policy",
    "nice",
    "prio",
    "prioclass",
    "gtod_cpu",
    "clocksource",
)
_REPORTING = (
    "description",
    "group_reporting",
    "stats",
    "clat_percentiles",
    "lat_percentiles",
    "slat_percentiles",
    "percentile_list",
    "significant_figures",
    "block_error_percentiles",
    "disk_util",
    "gtod_reduce",
    "disable_lat",
    "disable_clat",
    "disable_slat",
    "disable_bw_measurement",
    "unified_rw_reporting",
    "kb_base",
    "unit_base",
    "log_avg_msec",
    "bwavgtime",
    "iopsavgtime",
    "log_entries",
    "log_max_value",
    "log_offset",
    "log_prio",
    "log_compression",
    "log_compression_cpus",
)
# Options of the engines iolab runs (libaio, io_uring, pvsync2, mmap): submission and polling.
_ENGINE = (
    "userspace_reap",
    "cmdprio_percentage",
    "cmdprio_class",
    "cmdprio",
    "cmdprio_bssplit",
    "nowait",
    "hipri",
    "hipri_percentage",
    "uncached",
    "fixedbufs",
    "registerfiles",
    "sqthread_poll",
    "sqthread_poll_cpu",
    "nonvectored",
    "force_async",
    "thp",
)
SAFE = frozenset((*_SHAPE, *_TIMING, *_BUFFERS, *_RANDOM, *_PLACEMENT, *_REPORTING, *_ENGINE))

OWN: dict[str, str] = {
    **dict.fromkeys(
        ("filename", "directory", "filename_format", "unique_filename", "opendir", "nrfiles"),
        "iolab names the file fio uses (the set-up's target); drop it",
    ),
    **dict.fromkeys(
        (
            "write_bw_log",
            "write_lat_log",
            "write_iops_log",
            "per_job_logs",
            "log_store_compressed",
            "log_unix_epoch",
            "log_alternate_epoch",
            "log_alternate_epoch_clock_id",
        ),
        "iolab writes and reads fio's sample logs itself; set their interval with log_avg_msec",
    ),
    "name": "iolab names each job after its workload; give the workload a name instead",
}
# Of its own, the ones iolab writes into a job file: the target, and the sample logs it reads.
IOLAB_SETS = ("filename", "write_bw_log", "write_lat_log", "write_iops_log")

_COMMAND = "it runs a command; run commands as a set-up's hooks (with --allow-hooks) instead"
_OTHER_FILE = "it names a file outside the target; iolab lets fio touch only the set-up's target"
_IOLOG = "it replays or records an I/O log file; iolab lets fio touch only the set-up's target"
_HOST = "it changes this host beyond the target"
_ENGINE_REFUSED = "it belongs to an ioengine iolab does not run ("
_PROFILE = "it belongs to fio's built-in profiles (--profile), which iolab does not run"
_DEPRECATED = "fio ignores it (deprecated); drop it"
REFUSED: dict[str, str] = {
    **dict.fromkeys(("exec_prerun", "exec_postrun"), _COMMAND),
    **dict.fromkeys(
        (
            "write_iolog",
            "read_iolog",
            "read_iolog_chunked",
            "replay_no_stall",
            "replay_redirect",
            "replay_scale",
            "replay_align",
            "replay_time_scale",
            "replay_skip",
            "merge_blktrace_file",
            "merge_blktrace_scalars",
            "merge_blktrace_iters",
        ),
        _IOLOG,
    ),
    **dict.fromkeys(("verify_state_load", "write_hist_log"), _OTHER_FILE),
    **dict.fromkeys(
        ("log_hist_msec", "log_hist_coarseness"),
        "it goes with write_hist_log, which names a file; iolab records latency percentiles "
        "from fio's JSON",
    ),
    "verify_dump": "it writes files of the blocks that failed verification beside the target",
    "unlink": "it deletes the file fio used, which may be yours; iolab removes its own test file",
    "unlink_each_loop": "it deletes the file fio used, which may be yours; iolab removes its own "
    "test file",
    "fill_device": "it writes until the filesystem or device is full, past the size iolab "
    "checked room for; give size instead",
    "file_append": "it writes past the end of the file, beyond the size iolab checked room for",
    "allow_mounted_write": "it lets fio write to a mounted device; iolab refuses mounted devices",
    "ioscheduler": "it changes the device's scheduler; use the set-up's queue = { scheduler }",
    **dict.fromkeys(
        ("cgroup", "cgroup_weight", "cgroup_nodelete"),
        f"{_HOST} (it creates cgroups); run iolab inside the cgroup instead",
    ),
    "uid": "it switches fio to another user, which may not reach the target",
    "gid": "it switches fio to another group, which may not reach the target",
    "profile": _PROFILE,
    **dict.fromkeys(
        (
            "block",
            "numruns",
            "dir",
            "threads",
            "device-names",
            "load",
            "test-duration",
            "threads-per-queue",
            "read-req-num-512-blocks",
            "large-block-op-kbytes",
            "prep",
        ),
        _PROFILE,
    ),
    **dict.fromkeys(
        ("flow_watermark", "percentage_sequential", "rwmixcycle", "verifysort", "verifysort_nr"),
        _DEPRECATED,
    ),
    "gpu_dev_id": _ENGINE_REFUSED + "GPU memory for RDMA)",
    **dict.fromkeys(("program", "arguments", "grace_time", "std_redirect"), _COMMAND),
    **dict.fromkeys(
        (
            "hostname",
            "port",
            "protocol",
            "nodelay",
            "listen",
            "pingpong",
            "interface",
            "ttl",
            "window_size",
            "mss",
            "bindname",
            "verb",
            "uri",
            "volume",
            "brick",
            "single-instance",
            "clustername",
            "pool",
            "clientname",
            "conf",
            "busy_poll",
            "touch_objects",
            "rbdname",
        ),
        _ENGINE_REFUSED + "one reaching other hosts or programs)",
    ),
    **dict.fromkeys(
        (
            "cpuload",
            "cpuchunks",
            "cpumode",
            "exit_on_io_done",
            "stat_type",
            "donorname",
            "inplace",
            "skip_bad",
            "readfua",
            "writefua",
            "sg_write_mode",
            "stream_id",
            "cmd_type",
        ),
        _ENGINE_REFUSED + "CPU burners, SCSI commands, defragmenters, metadata engines)",
    ),
    # Not an option: a job file's directive that reads another file as job options.
    "include": "it makes fio read another file as job options; put the options here instead",
}

ALIASES: dict[str, str] = {
    "readwrite": "rw",
    "blocksize": "bs",
    "blockalign": "ba",
    "blocksize_range": "bsrange",
    "blocksize_unaligned": "bs_unaligned",
    "iodepth_batch_submit": "iodepth_batch",
    "iodepth_batch_complete": "iodepth_batch_complete_min",
    "io_limit": "io_size",
    "fill_fs": "fill_device",
    "fileoffset": "offset",
    "nr_files": "nrfiles",
    "timeout": "runtime",
    "iomem": "mem",
    "mem_align": "iomem_align",
    "ratemin": "rate_min",
    "ratecycle": "rate_cycle",
    "wait_for_previous": "stonewall",
    "disable_bw": "disable_bw_measurement",
    "ss": "steadystate",
    "ss_dur": "steadystate_duration",
    "ss_ramp": "steadystate_ramp_time",
    "proto": "protocol",
}

# mem / iomem: the kinds of buffer memory that name no file (mmap:FILE and mmaphuge:FILE do).
MEMORY = ("malloc", "shm", "shmhuge", "mmap", "mmaphuge", "mmapshared")


@dataclass(frozen=True)
class Option:
    """One fio option as iolab sees it: its name (an alias resolved), kind and, unless it is
    safe, why a plan may not set it."""

    name: str
    kind: Kind
    reason: str = ""


def canonical(key: str) -> str:
    """fio's own name for an option given by an alias; any other key as it is."""
    return ALIASES.get(key, key)


def classify(key: str) -> Option | None:
    """The option `key` names (by its name or an alias); None if iolab has not classified it.
    fio reads any line that starts with "include" as an include: refused whatever follows."""
    if key.startswith("include"):
        return Option("include", "refused", REFUSED["include"])
    name = canonical(key)
    if name in SAFE:
        return Option(name, "safe")
    if name in OWN:
        return Option(name, "iolab", OWN[name])
    if name in REFUSED:
        return Option(name, "refused", REFUSED[name])
    return None


@functools.lru_cache(maxsize=4096)
def workload_axis(key: str) -> bool:
    """Whether an option changes the workload fio runs, so that cases which differ in it are
    different points of a sweep (a chart's axis, a name's part): a safe option but for those
    of reporting (log_avg_msec, percentiles, description...). Never the file fio used, its
    logs or its job's name (iolab's own), nor an option iolab has not classified.

    Asked of every option of every case by each view of a report: each name is classified
    once (a report of 10,000 cases asked a million times; issue 47)."""
    option = classify(key)
    return option is not None and option.kind == "safe" and option.name not in _REPORTING


def classified() -> frozenset[str]:
    """Every name and alias in the table."""
    return frozenset((*SAFE, *OWN, *REFUSED, *ALIASES))


def suggestion(key: str) -> str:
    """' (did you mean 'X'?)' for the nearest safe option, or ''."""
    near = difflib.get_close_matches(key, sorted({*SAFE, *_safe_aliases()}), n=1, cutoff=0.75)
    return f" (did you mean {near[0]!r}?)" if near else ""


def _safe_aliases() -> list[str]:
    return [alias for alias, name in ALIASES.items() if name in SAFE]


# fio replaces these in any option's line as it reads a job file (its "reserved keywords"),
# and then hands a line holding + - * or / to bc to work out.
KEYWORDS = ("$pagesize", "$mb_memory", "$ncpus")
EXPANDED = (
    "holds '$', which fio expands (${NAME}: an environment variable, then stored and exported "
    f"with the results; {', '.join(KEYWORDS)}: this host's figures); write the value itself"
)


def expansion(value: object) -> str | None:
    """Words after "KEY = VALUE" when fio would not read the value as written: it replaces
    ${NAME} with an environment variable and $pagesize, $mb_memory and $ncpus with the host's
    figures, with no way to write a '$' it leaves alone. Any '$' is refused, so that no value
    of iolab's environment (or a host's) reaches a job, its results or their exports."""
    return EXPANDED if "$" in str(value) else None


def value_problem(key: str, value: object) -> str | None:
    """Words after "KEY = VALUE" when a safe option's value would not reach fio as written
    (see expansion), or would make fio open a file: mem=mmap:FILE, a buffer or verify pattern
    holding 'FILE'."""
    name, text = canonical(key), str(value)
    expanded = expansion(text)
    if expanded:
        return expanded
    if name == "mem":
        if ":" in text:
            return "names a file; iolab lets fio touch only the set-up's target"
        return None if text in MEMORY else f"is not fio memory; choose one of {', '.join(MEMORY)}"
    if name in ("buffer_pattern", "verify_pattern") and "'" in text:
        return "names a file (in '...'); iolab lets fio touch only the set-up's target"
    return None


def passable(key: str) -> bool:
    """Whether `key` may go into a job file iolab writes: a safe option, or one iolab sets."""
    option = classify(key)
    return option is not None and (option.kind == "safe" or key in IOLAB_SETS)
