"""The recorded environment for people to read.

When runs are compared, what can change a result is said in a few lines: fio, the kernel, the
host's CPU and memory, each set-up's options, its devices' model, firmware and queue settings,
its filesystem and mount options, its RAID profile. Every other recorded fact that differs is
volatile (new filesystem UUIDs, times, whole mkfs logs, loop device numbers): it is counted in
those lines and listed only in the HTML page's details.

Each set-up also gets a compact account of what it was built on, for Markdown and HTML: the
filesystem's parameters (xfs_info, tune2fs, btrfs), the device stack and the command log.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from iolab.analysis.environment import EnvDifference
from iolab.model import Code, JSONObject, codec
from iolab.model.drive import CacheSetting
from iolab.model.facts import DeviceFacts, Layer, LogLine, RaidFacts, SetupFacts, TargetFacts
from iolab.report import drives
from iolab.report.cells import utc
from iolab.report.data import DataCase, Dataset, SetupInfo
from iolab.store import RunRow
from iolab.units import decimal_bytes, human_bytes

HOST: tuple[tuple[str, str], ...] = (
    ("host", "hostname"),
    ("CPU", "cpu_model"),
    ("CPU threads", "threads"),
    ("memory", "memory_bytes"),
    ("virtualised", "virtualized"),
    ("CPU governor", "governor"),
    ("kernel", "kernel"),
    ("distribution", "distro"),
    ("fio", "fio_version"),
)
DEVICE: tuple[tuple[str, str], ...] = (
    ("model", "model"),
    ("vendor", "vendor"),
    ("firmware", "firmware"),
    ("transport", "transport"),
    ("rotational", "rotational"),
    ("size", "size_bytes"),
    ("logical block size", "logical_block_size"),
    ("physical block size", "physical_block_size"),
    ("scheduler", "scheduler"),
    ("read-ahead (KiB)", "read_ahead_kb"),
    ("nr_requests", "nr_requests"),
    ("write cache", "write_cache"),
)
# Filesystem figures that are the same for the same mkfs: identity and usage left out.
FS_SKIPPED = frozenset({"tool", "uuid", "devices", "params", "raw", "label"})
VALUE_CHARS = 80
COVERED = frozenset(
    {key for _, key in HOST}
    | {key for _, key in DEVICE}
    | {"fstype", "options", "profiles", "level", "chunk_bytes", "layout", "raid_disks"}
)


def plain(value: Any) -> str:
    """A recorded value as words: never a Python dict or list."""
    if value is None or value == "":
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Mapping):
        return ", ".join(f"{k} {plain(v)}" for k, v in value.items() if v not in (None, "", [], {}))
    if isinstance(value, list | tuple):
        return ", ".join(plain(v) for v in value)
    return str(value)


def _short(text: str, chars: int = VALUE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= chars else text[: chars - 1] + "…"


# ---------------------------------------------------------------- facts that matter


def host_facts(environment: JSONObject) -> dict[str, str]:
    out = {}
    for name, key in HOST:
        value = environment.get(key)
        if key == "memory_bytes" and isinstance(value, int | float):
            out[name] = human_bytes(value)
        else:
            out[name] = plain(value)
    return out


def _devices(facts: SetupFacts) -> list[DeviceFacts]:
    """The set-up's own devices: the layout's members (in order), else the target's device."""
    if facts.layout is not None and facts.layout.devices:
        return list(facts.layout.devices.values())
    target = facts.target
    return [target.device] if target is not None and target.device is not None else []


def options_text(definition: JSONObject) -> str:
    """A set-up's definition as asked for, less its name and where it is (paths, devices)."""
    shown = {k: v for k, v in definition.items() if k not in ("name", "kind", "path", "devices")}
    return " ".join(f"{k}={plain(v)}" for k, v in shown.items() if v not in (None, "", {}, []))


def raid_text(raid: RaidFacts | None) -> str:
    """'btrfs: data RAID1, metadata RAID1, system RAID1; over loop2, loop3'."""
    if raid is None or raid.kind == "none":
        return "—"
    details = raid.details
    parts = []
    profiles = details.get("profiles")
    if isinstance(profiles, Mapping):
        parts += [f"{k} {v}" for k, v in profiles.items() if k != "globalreserve"]
    for key in ("level", "raid_disks", "degraded", "array_state", "lv_layout", "stripes"):
        if details.get(key) not in (None, ""):
            parts.append(f"{key.replace('_', ' ')} {plain(details[key])}")
    if isinstance(chunk := details.get("chunk_bytes"), int | float | str) and chunk:
        parts.append(f"chunk {human_bytes(int(chunk))}")
    members = f"; over {', '.join(raid.members)}" if raid.members else ""
    return f"{raid.kind}: {', '.join(parts) or 'no details'}{members}"


def fs_text(params: JSONObject | None) -> str:
    """A filesystem's parameters in one line (xfs_info, tune2fs -l, btrfs), identity left out."""
    if not params:
        return "—"
    shown = []
    for key, value in params.items():
        if key in FS_SKIPPED or value in (None, "", [], {}):
            continue
        if key.endswith("bytes") and isinstance(value, int):
            shown.append(f"{key.removesuffix('_bytes')} {human_bytes(value)}")
        else:
            shown.append(f"{key.replace('_', ' ')} {plain(value)}")
    tool = params.get("tool")
    return f"{tool}: {', '.join(shown)}" if tool else ", ".join(shown)


def setup_facts(setup: SetupInfo) -> dict[str, str]:
    """What can change a set-up's results, by readable name."""
    facts = setup.facts
    target = facts.target
    fs = target.filesystem if target else None
    out = {"options": options_text(setup.definition) or "—"}
    out["filesystem"] = plain(fs.fstype) if fs else "—"
    out["mount options"] = plain(fs.options) if fs else "—"
    params = (facts.layout.filesystem if facts.layout else None) or (
        target.filesystem_params if target else None
    )
    out["filesystem parameters"] = fs_text(params)
    out["RAID"] = raid_text(target.raid if target and target.raid else None)
    devices = _devices(facts)
    out["devices"] = str(len(devices))
    for number, device in enumerate(devices, 1):
        data = codec.to_object(device)
        for name, key in DEVICE:
            value = data.get(key)
            sized = key == "size_bytes" and isinstance(value, int | float) and value
            text = human_bytes(sized) if sized else plain(value)
            out[f"device {number} {name}" if len(devices) > 1 else f"device {name}"] = text
    queue = facts.layout.queue if facts.layout else None
    if queue:
        out["queue settings"] = "; ".join(
            f"{dev} {name} {change.after}"
            for dev, changes in queue.items()
            for name, change in changes.items()
        )
    out.update(card_facts(setup.environment.get("controller")))
    out.update(cache_facts(setup.record.drive_cache))
    return out


def cache_facts(settings: Sequence[CacheSetting]) -> dict[str, str]:
    """Each plain disk's own write cache as the set-up set it and read it back."""
    return {
        f"drive write cache of {s.device}" if len(settings) > 1 else "drive write cache": (
            f"set {s.asked}; read back: {s.read_back} (was {s.before}; {s.switch})"
        )
        for s in settings
    }


def card_facts(card: object) -> dict[str, str]:
    """A RAID card's facts as a set-up recorded them (targets.controllers.apply), by name."""
    if not isinstance(card, Mapping):
        return {}
    found = card.get("vd")
    vd: JSONObject = found if isinstance(found, Mapping) else {}
    size = card.get("cache_bytes")
    return {
        "RAID card": f"{plain(card.get('tool'))} {plain(card.get('model'))}, firmware "
        f"{plain(card.get('firmware'))}",
        "card cache": human_bytes(size) if isinstance(size, int) and size else "not reported",
        "card battery": plain(card.get("battery_state")),
        "cache policy configured": f"{plain(vd.get('id'))}: {plain(card.get('configured'))}",
        "cache policy in effect": plain(card.get("effective")),
    }


def _changed(where: str, facts: Sequence[Mapping[str, str]], ids: Sequence[int]) -> list[str]:
    lines = []
    for name in dict.fromkeys(k for f in facts for k in f):
        values = [f.get(name, "—") for f in facts]
        if len(set(values)) > 1:
            said = "; ".join(
                f"run {run}: {_short(value)}" for run, value in zip(ids, values, strict=True)
            )
            lines.append(f"{where}: {name} differs ({said})")
    return lines


def pairs(data: Dataset) -> list[tuple[str, list[SetupInfo]]]:
    """Same-named set-ups of several runs, to compare with each other."""
    out = []
    for name in dict.fromkeys(s.name for s in data.setups):
        same = [s for s in data.setups if s.name == name]
        if len(same) > 1:
            out.append((name, same))
    return out


def differences_that_matter(data: Dataset) -> list[str]:
    """One line per fact that can change results and is not the same in every run."""
    if len(data.runs) < 2:
        return []
    ids = [r.id for r in data.runs]
    lines = _changed("host", [host_facts(r.environment) for r in data.runs], ids)
    for name, same in pairs(data):
        found = [setup_facts(s) for s in same]
        lines += _changed(f"set-up {name!r}", found, [s.run_id for s in same])
    return lines


# ---------------------------------------------------------------- volatile facts


def volatile_differences(found: Sequence[tuple[EnvDifference, Sequence[int]]]) -> list[str]:
    """Every other recorded fact that differs between the runs (UUIDs, times, logs, device
    names; report.judged.environment_differences), one line each, values cut short: for the
    HTML page's details."""
    lines = []
    for diff, runs in found:
        if diff.key.rsplit(".", 1)[-1] in COVERED:
            continue
        said = "; ".join(
            f"run {run}: {_short(value, 160)}" for run, value in zip(runs, diff.values, strict=True)
        )
        lines.append(f"{diff.where}: {diff.key} differs ({said})")
    return lines


def volatile_summary(lines: Sequence[str]) -> str:
    """'6 more recorded facts differ that do not change results (uuid 5, log 1): ...'."""
    if not lines:
        return ""
    kinds = Counter(
        line.split(": ", 1)[1].split(" differs", 1)[0].rsplit(".", 1)[-1] for line in lines
    )
    named = ", ".join(f"{kind} {count}" for kind, count in kinds.most_common(6))
    more = "" if len(kinds) <= 6 else ", …"
    return (
        f"{len(lines)} more recorded facts differ, volatile ones that do not change results "
        f"({named}{more}): listed in the HTML report's details."
    )


# ---------------------------------------------------------------- set-up details


def _layer(node: Layer) -> str:
    get = node.details.get
    if node.layer == "filesystem":
        return f"{get('fstype')} on {get('source')}"
    if node.layer == "file":
        return f"file {node.path}"
    return f"{node.layer} {node.name}".strip()


def stack_text(node: Layer) -> str:
    """The resolution chain on one line: 'file … → xfs on /dev/loop2 → loop loop2 → …'; a
    layer over several (a RAID) lists them in brackets, joined by '|'."""
    text = _layer(node)
    if len(node.below) == 1:
        return f"{text} → {stack_text(node.below[0])}"
    if node.below:
        return f"{text} → [{' | '.join(stack_text(child) for child in node.below)}]"
    return text


def log_text(log: Iterable[LogLine]) -> str:
    """The set-up and teardown commands, each with ✓ or its exit status and last line."""
    parts = []
    for line in log:
        if line.returncode == 0:
            parts.append(f"`{line.command}` ✓")
        else:
            last = next((x for x in reversed(line.output.splitlines()) if x.strip()), "")
            parts.append(f"`{line.command}` ✗ exit {line.returncode}: {_short(last, 100)}")
    return "; ".join(parts)


def setup_details(data: Dataset) -> list[str]:
    """Per set-up, a compact filesystem, stack and command-log line (what `iolab env` and the
    HTML page's JSON hold in full)."""
    lines = []
    seen: dict[tuple[str, tuple[str, ...]], str] = {}
    for setup in data.setups:
        facts = setup.facts
        target: TargetFacts | None = facts.target
        params = (facts.layout.filesystem if facts.layout else None) or (
            target.filesystem_params if target else None
        )
        own = []
        if params and "error" not in params:
            own.append(f"filesystem {fs_text(params)}")
        if target is not None:
            own.append(f"stack {stack_text(target.stack)}")
        card = card_facts(setup.environment.get("controller"))
        if card:
            own.append("; ".join(f"{name} {value}" for name, value in card.items()))
        if facts.log:
            own.append(f"commands {log_text(facts.log)}")
        key = (setup.name, tuple(own))
        if own and key in seen:  # a later run's set-up built the same way
            lines.append(f"{setup.label}: the same filesystem, stack and commands as {seen[key]}")
            continue
        seen.setdefault(key, setup.label)
        lines += [f"{setup.label}: {line}" for line in own]
    return lines


# ---------------------------------------------------------------- the drives' own account


def fio_written(data: Dataset, setup: SetupInfo) -> int:
    """The bytes fio wrote on a set-up: its preconditioning and its cases."""
    cases = [c for c in data.cases if c.run_id == setup.run_id and c.setup == setup.label]
    written = sum(m.io_bytes for c in cases for d, m in c.metrics.items() if d == "write")
    return written + sum(fill.written_bytes for fill in setup.record.precondition)


def drive_lines(data: Dataset) -> list[str]:
    """Per set-up and drive: its own write cache as set and read back (drive_cache), its
    account before the set-up's cases, and what moved over them beside what fio wrote (the
    drive's host writes, write amplification, heat, errors)."""
    lines = []
    for setup in data.setups:
        cache = cache_facts(setup.record.drive_cache)
        lines += [f"{setup.label}: {name}: {value}" for name, value in cache.items()]
        log = setup.record.drives
        if log is None or log.before is None:
            continue
        lines += [f"{setup.label}: not read: {problem}" for problem in log.before.problems]
        lines += [
            f"{setup.label}: {name} before: {drives.said(health)}"
            for name, health in log.before.drives.items()
        ]
        fio = decimal_bytes(fio_written(data, setup))
        lines += [
            f"{setup.label}: {name} over its cases: {drives.moved(change)}; fio wrote {fio}"
            for name, change in log.changes().items()
        ]
        if log.interval:
            lines.append(f"{setup.label}: drives read {log.interval}")
    return lines


# ---------------------------------------------------------------- the report's header

LAB_CODE = Code.VIRTUAL_LAB  # the warning every case measured in the lab carries
LAB_WORDS = "measured in iolab's virtual lab (a kernel of its own, image files)"


def in_lab(run: RunRow, cases: Sequence[DataCase]) -> bool:
    """Whether a run was measured in iolab's virtual lab: its origin says so, or (a run
    stored before origins named the lab) every case of it carries the virtual-lab warning."""
    if run.origin.kind == "lab":
        return True
    own = [c for c in cases if c.run_id == run.id]
    return bool(own) and all(any(w.code == LAB_CODE for w in c.warnings) for c in own)


def host_of(run: RunRow, lab: bool) -> str:
    """The host a run's figures come from; a lab run's is the host its lab ran on (the lab
    kernel calls itself "(none)")."""
    if lab:
        outer = run.origin.hostname
        return f"{outer}, in iolab's virtual lab" if outer else "iolab's virtual lab"
    return str(run.environment.get("hostname") or run.origin.hostname or "?")


def run_lines(data: Dataset) -> list[str]:
    """The header's line per run: plan (and its file), when, how it went, host, fio; a lab
    run's first says where it was measured."""
    lines = []
    for run in data.runs:
        lab = in_lab(run, data.cases)
        if lab:
            kernel = f" ({run.origin.lab})" if run.origin.lab else ""
            lines.append(
                f"run {run.id} ran in the lab's kernel{kernel} on image files: its figures "
                "show how the RAID software behaves, not how fast the real devices are"
            )
        ended = f", ended {utc(run.ended_at)}" if run.ended_at else ""
        lines.append(
            f"run {run.id}: plan {run.plan_name!r} ({run.plan_source}), started "
            f"{utc(run.started_at)}{ended}, {run.status}, {run.tally(run.done)} cases, "
            f"host {host_of(run, lab)}, {run.environment.get('fio_version', 'fio')}"
            f"{own_words(run)}"
        )
    return lines


def own_words(run: RunRow) -> str:
    """What iolab cost around fio in the run, as its process measured it ("" if unsaid)."""
    if run.own_s is None:
        return ""
    own, cases = run.own_s
    laid = f"; laying out its test file {run.laid_s:.2f} s more" if run.laid_s else ""
    return f", iolab's own time outside fio {own:.2f} s ({own / cases:.3f} s a case{laid})"


def title_note(data: Dataset) -> str:
    """What a report's title adds for runs measured in the lab ("" for none), so that every
    format, the terminal's too, says it at the top."""
    labs = [run.id for run in data.runs if in_lab(run, data.cases)]
    if not labs:
        return ""
    if len(labs) == len(data.runs):
        return f", {LAB_WORDS}"
    which = f"run {labs[0]}" if len(labs) == 1 else f"runs {', '.join(map(str, labs))}"
    return f"; {which} {LAB_WORDS}"
