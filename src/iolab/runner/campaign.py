"""The campaign: a plan checked against where it runs, before anything is written.

Every target is prepared and checked (room, consent, device safety, hooks), every job is
parsed by fio itself and checked against the host's limits; what comes out is the ordered list
of steps that `execute` runs.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from iolab import layouts
from iolab.errors import PlanError, TargetError
from iolab.fio import hosts, jobfile
from iolab.fio import reach as fio_reach
from iolab.fio.executor import Executor, HostLimits, Local
from iolab.fio.hosts import Cluster
from iolab.fio.info import FioInfo
from iolab.model import Case, FioValue, Plan, Setup, Workload
from iolab.targets import drive_health, lock, provision, remote_env, safety
from iolab.targets.controllers import apply
from iolab.targets.environment import parse_cpulist
from iolab.targets.path import FREE_SPACE_MARGIN, TEST_FILE, Prepared, prepare, writes
from iolab.targets.remote_env import SSH_ENV
from iolab.units import human_bytes, parse_seconds

MOUNT_ROOT = Path("/run/iolab")


@dataclass(frozen=True)
class CampaignStep:
    """One case in the matrix: its workload options, with "auto" values still to resolve."""

    case: Case
    position: int

    @property
    def planned_s(self) -> float:
        options = self.case.workload.options
        if options.get("time_based") != 1:
            return 0.0
        return float(
            parse_seconds(options.get("runtime", 0)) + parse_seconds(options.get("ramp_time", 0))
        )

    def job(self, target: Prepared, fio: FioInfo, built: bool = True) -> jobfile.Job:
        """The fio job for this case on a target (not yet `built`: size "auto" stays)."""
        case = self.case
        comment = (
            f"iolab case {case.key}: set-up {case.setup.name!r}, "
            f"workload {case.workload.name!r}, repetition {case.repetition}"
        )
        return jobfile.Job(case.workload.name, resolve(case, target, fio, built), comment)


@dataclass(frozen=True)
class Consent:
    """What the user allowed: devices (and files of their own) that may be overwritten,
    signature wiping, running a plan's hook commands, writing to failing drives."""

    devices: frozenset[str] = frozenset()
    wipe_signatures: bool = False
    hooks: bool = False
    failing_drives: bool = False  # write to drives whose SMART status fails


@dataclass
class Campaign:
    """A plan checked against where it runs: path targets prepared, device set-ups vetted."""

    plan: Plan
    fio: FioInfo
    executor: Executor
    consent: Consent
    paths: dict[str, Prepared]
    steps: list[CampaignStep] = field(default_factory=list)
    # each disk's smartctl -a as the pre-flight asked it: the first set-up's environment and
    # drives read it, not smartctl again (one a disk); cleared once a set-up has run
    answers: dict[str, drive_health.Answered] = field(default_factory=dict)

    def executor_for(self, setup: Setup) -> Executor:
        """Who runs the set-up's cases: on hosts, the first `host_count` of them."""
        if isinstance(self.executor, Cluster) and setup.host_count:
            return replace(self.executor, hosts=self.executor.hosts[: setup.host_count])
        return self.executor

    def preview(self, step: CampaignStep) -> jobfile.Job:
        """The job as it will run; on a set-up still to build, its planned file and sizes."""
        setup = step.case.setup
        if setup.name in self.paths:
            return step.job(self.paths[setup.name], self.fio)
        planned = Prepared(setup, mountpoint(setup) / TEST_FILE, owned=True, free_bytes=0)
        return step.job(planned, self.fio, built=False)


def mountpoint(setup: Setup) -> Path:
    """Where a set-up built on devices is mounted while its cases run."""
    return MOUNT_ROOT / jobfile.section_name(setup.name)


def plan_campaign(
    plan: Plan,
    fio: FioInfo,
    consent: Consent | None = None,
    probe_write: bool = True,
    executor: Executor | None = None,
) -> Campaign:
    """Check every target before anything is written: paths, room, consent and device safety.

    `executor` runs the cases (default: fio as a child process of this host).
    """
    consent = consent or Consent()
    if plan.hosts is not None:
        return _on_hosts(plan, fio, consent, executor)
    answers: dict[str, drive_health.Answered] = {}
    if probe_write:
        _refuse_failing_drives(plan, consent, answers)
    paths = {s.name: prepare(s, probe_write) for s in plan.setups if s.layout is None}
    for setup in plan.setups:
        if setup.layout is not None:
            provision.validate(setup.layout)
            _check_hooks(setup, consent)
            if probe_write:
                # the card's tool is here; a disk's write cache is settable
                behind = apply.check(setup)
                _refuse_failing_members(setup, behind, consent)
                present = layouts.present(setup.layout)  # a degraded one's missing: untouched
                safety.check_erasable(present, consent.devices, consent.wipe_signatures)
    local = executor or Local(fio.path)
    campaign = _with_steps(Campaign(plan, fio, local, consent, paths, answers=answers))
    for setup in plan.setups:
        _check_room(setup, plan.workloads, paths.get(setup.name), consent, probe_write)
    return campaign


def _with_steps(campaign: Campaign) -> Campaign:
    positions = {w.name: i for i, w in enumerate(campaign.plan.workloads)}
    campaign.steps = [CampaignStep(c, positions[c.workload.name]) for c in campaign.plan.cases()]
    return campaign


def _on_hosts(plan: Plan, fio: FioInfo, consent: Consent, executor: Executor | None) -> Campaign:
    """A plan on fio servers: its set-ups are directories there, which fio fills itself."""
    assert plan.hosts is not None
    if plan.hosts.env_command and plan.hosts.env_command != SSH_ENV and not consent.hooks:
        raise PlanError(
            "host_env names a command, which runs as this user: a plan with commands is code; "
            "read it, then pass --allow-hooks to run it"
        )
    sizeless = next((w for w in plan.workloads if w.options.get("size", "auto") == "auto"), None)
    if sizeless is not None:
        raise PlanError(
            f'workload {sizeless.name!r}: give size (e.g. size = "1g") when running on hosts; '
            "iolab cannot see how much room they have"
        )
    paths = {
        s.name: Prepared(s, Path(s.path) / TEST_FILE, owned=True, free_bytes=0, remote=True)
        for s in plan.setups
    }
    moved = tuple(
        (str(paths[s.name].filename), host, str(Path(own) / TEST_FILE))
        for s in plan.setups
        for host, own in s.host_paths
    )
    cluster = Cluster(fio.path, plan.hosts.addresses, plan.hosts.lost_after_s, moved)
    return _with_steps(Campaign(plan, fio, executor or cluster, consent, paths))


def ask_hosts(
    campaign: Campaign, told: Callable[[str], None] | None = None
) -> tuple[list[dict[str, Any]], list[str]]:
    """Every host asked before anything runs (HostError naming one that does not answer):
    what each says of itself (and its inventory, host_env), and the warnings: fio versions
    that differ, hosts whose inventory could not be read. `told` hears a counting line as
    each host answers ("asking the hosts: 48 of 128 answered")."""

    def counting(what: str) -> Callable[[int, int], None]:
        return lambda done, of: told(f"{what}: {done} of {of} answered") if told else None

    if campaign.plan.hosts is None:
        return [], []
    with tempfile.TemporaryDirectory(prefix="iolab-hosts-") as workdir:
        infos = hosts.probe(
            campaign.fio.path,
            campaign.plan.hosts.addresses,
            campaign.plan.hosts.lost_after_s,
            Path(workdir),
            counting(f"asking the hosts ({hosts.PROBE_PARALLEL} at a time)"),
        )
    facts = [info.facts() for info in infos]
    warned = [said for said in [hosts.versions(infos, campaign.fio.version)] if said]
    command = campaign.plan.hosts.env_command
    if not command:
        return [
            {**f, "environment_from": "fio's server only (host_env not set)"} for f in facts
        ], warned
    setup = campaign.plan.setups[0]
    paths = [(info.host, dict(setup.host_paths).get(info.host, setup.path)) for info in infos]
    said = f"reading their inventory ({remote_env.PARALLEL} at a time)"
    found = remote_env.read_all(command, paths, told=counting(said))
    warned += [said for said in [remote_env.missing_line(found)] if said]
    return [{**f, **env.facts()} for f, env in zip(facts, found, strict=True)], warned


def footprint(workloads: Iterable[Workload], target: Prepared | None) -> int:
    """The size fio's file reaches under the largest of these workloads, from the one model of
    what fio lays out (`fio.reach`): size, offsets, increments, alignment, every job.

    On a target not built yet (None) the file is new and size "auto" is left out (it is sized
    from the free space once built). A value that cannot be bounded raises PlanError.
    """
    have = _file_size(target)
    return max((_reach(w, target, have) for w in workloads), default=0)


def _file_size(target: Prepared | None) -> int:
    if target is None or target.raw:
        return 0
    with contextlib.suppress(FileNotFoundError):
        return os.lstat(target.filename).st_size
    return 0


def _reach(workload: Workload, target: Prepared | None, have: int) -> int:
    options = dict(workload.options)
    if options.get("size") == "auto":
        if target is not None and target.owned and not target.raw:
            options["size"] = target.auto_size()
        else:
            del options["size"]  # a user's file (or a device): read from offset to its end
    try:
        return fio_reach.reach(options, have)
    except fio_reach.Unreadable as error:
        raise PlanError(
            f"workload {workload.name!r}: {error}; iolab must know how far fio's I/O reaches "
            "before it runs"
        ) from None


def _refuse_failing_drives(
    plan: Plan, consent: Consent, answers: dict[str, drive_health.Answered]
) -> None:
    """A drive whose SMART status says it is failing is written to only when the user insists
    (--failing-drives): said in one line before anything is made (no test file, no mkfs).
    Each disk's answer is kept in `answers`, by name."""
    if consent.failing_drives:
        return
    written = any(writes(w.options) for w in plan.workloads)
    said: dict[str, bool] = {}  # each disk asked once, however many set-ups reach it
    for setup in plan.setups:
        # a set-up built on devices writes to them (mkfs, RAID) whatever its workloads do
        if not (written or setup.layout is not None or setup.precondition != "none"):
            continue
        disks = drive_health.disks_before_built(setup)
        for disk in disks:
            if disk not in said:
                said[disk] = bool(drive_health.failing([disk], answers=answers))
        bad = [d for d in disks if said[d]]
        if bad:
            raise TargetError(_failing_words(setup, bad))


def _refuse_failing_members(
    setup: Setup, behind: Mapping[str, tuple[str, str]], consent: Consent
) -> None:
    """The drives behind a set-up's RAID card, refused as a failing disk is (the set-up is
    built on them) unless the user insists."""
    bad = [] if consent.failing_drives else drive_health.failing((), behind=behind)
    if bad:
        raise TargetError(_failing_words(setup, bad))


def _failing_words(setup: Setup, bad: list[str]) -> str:
    return (
        f"set-up {setup.name!r}: {', '.join(bad)}: its SMART status says the drive is "
        "failing; iolab does not write to it (--failing-drives to write anyway)"
    )


def _check_hooks(setup: Setup, consent: Consent) -> None:
    layout = setup.layout
    if layout is None or consent.hooks or not (layout.setup_hook or layout.teardown_hook):
        return
    raise PlanError(
        f"set-up {setup.name!r} has hooks, which run shell commands as this user: a plan with "
        "hooks is code; read it, then pass --allow-hooks to run it"
    )


def _check_room(
    setup: Setup,
    workloads: tuple[Workload, ...],
    target: Prepared | None,
    consent: Consent,
    probe_write: bool,
) -> None:
    """The test area fits where it goes, and a user's own file is neither grown nor written
    without consent; the same rule for every kind of target."""
    size = footprint(workloads, target)
    if target is None:
        if setup.layout is not None and probe_write:
            capacity = provision.capacity(setup.layout)
            if capacity is not None and size > capacity * FREE_SPACE_MARGIN:
                raise TargetError(
                    f"set-up {setup.name!r}: size {human_bytes(size)} does not fit in the about "
                    f"{human_bytes(int(capacity * FREE_SPACE_MARGIN))} usable on "
                    f"{', '.join(setup.layout.devices)}; lower it with --size"
                )
        return
    target.check_room(size)
    if target.owned:
        return
    writer = next((w for w in workloads if writes(w.options)), None)
    confirmed = {os.path.realpath(d) for d in consent.devices}
    if writer is not None and str(target.filename) not in confirmed:
        raise TargetError(
            f"set-up {setup.name!r}: workload {writer.name!r} writes to your file "
            f"{target.filename}; confirm with --yes-destroy {target.filename}, or give a "
            "directory (iolab then makes and removes its own test file)"
        )


def resolve(case: Case, target: Prepared, fio: FioInfo, built: bool = True) -> dict[str, FioValue]:
    """A case's fio options with nothing left to decide: file, size, engine, logs.

    On a target not yet built, size "auto" stays: its free space is not known.
    """
    options: dict[str, FioValue] = {"filename": str(target.filename)}
    options.update(case.workload.options)
    if options.get("size") == "auto" and built:
        if target.raw or not target.owned:
            del options["size"]  # the whole device or file from its offset on, never more
        else:
            options["size"] = f"{target.auto_size() // 1024**2}m"
    if options.get("ioengine") == "auto":
        options["ioengine"] = fio.default_engine
    return jobfile.with_logs(options, "samples")


def check(campaign: Campaign) -> None:
    """fio's own parse of every job, so a bad pass-through option stops the run before it starts,
    and the limits fio only meets at run time (this host's CPUs, engines, AIO contexts).

    Raises jobfile.Rejected; `rejected_workload` says which workload it was about.
    """
    limits = campaign.executor.limits()
    for workload in campaign.plan.workloads:
        problem = host_problem(workload.options, campaign.fio, limits)
        if problem:
            key, reason = problem
            first = next(i for i, s in enumerate(campaign.steps) if s.case.workload == workload)
            raise jobfile.Rejected(first, key, reason)
    jobs = []
    for step in campaign.steps:
        job = campaign.preview(step)
        if job.options.get("size") == "auto":
            job = jobfile.Job(job.name, {**job.options, "size": "1m"})
        jobs.append(job)
    jobfile.fio_accepts(jobs, campaign.fio.path)


def host_problem(
    options: Mapping[str, FioValue], fio: FioInfo, limits: HostLimits
) -> tuple[str, str] | None:
    """(key, reason) for a value the host cannot run, which fio's parse-only lets through."""
    engine = options.get("ioengine")
    if engine not in (None, "auto") and engine not in fio.engines:
        return "ioengine", f"ioengine {engine!r} is not built into {fio.version} on this host"
    count = limits.cpus or 1 << 16  # no count known: the hosts' own fio will say
    for key in ("cpus_allowed", "verify_async_cpus", "log_compression_cpus"):
        wanted = parse_cpulist(str(options.get(key, "")))
        if wanted and max(wanted) >= count:
            return key, f"{key} names CPU {max(wanted)}, and this host has CPUs 0-{count - 1}"
    if (engine == "libaio" or (engine == "auto" and fio.default_engine == "libaio")) and (
        depth := int(options.get("iodepth", 1)) * int(options.get("numjobs", 1))
    ) > (room := limits.aio_room):
        return "iodepth", (
            f"iodepth x numjobs = {depth:,} AIO contexts, and this host allows {room:,} "
            "(/proc/sys/fs/aio-max-nr); lower them or use ioengine io_uring"
        )
    return None


def rejected_workload(campaign: Campaign, rejected: jobfile.Rejected) -> Workload:
    return campaign.steps[rejected.index].case.workload


def targets(campaign: Campaign) -> list[tuple[str, str]]:
    """What a campaign writes to on this host, as (real path, description) for locking (a
    fleet's directory on its hosts is not this host's to lock: it may not exist here)."""
    out = []
    for setup in campaign.plan.setups:
        if setup.layout is None and campaign.paths[setup.name].remote:
            continue
        if setup.layout is None:
            file = campaign.paths[setup.name].filename
            out.append((str(file), f"set-up {setup.name!r}: target {file}"))
        else:
            out += [
                (os.path.realpath(d), f"set-up {setup.name!r}: device {d}")
                for d in setup.layout.devices
            ]
    return out


def locked(campaign: Campaign) -> contextlib.AbstractContextManager[None]:
    """Hold every target of the campaign for this process; refuse if another iolab has one."""
    return lock.held(targets(campaign))
