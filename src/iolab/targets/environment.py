"""What the host and a target are: recorded with every run so results can be compared honestly.

Everything here is best effort: a fact that cannot be read is None (or left out), never an
error, and optional tools (nvme-cli, smartctl) are used only when installed.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import socket
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from iolab import layouts
from iolab.errors import ControllerError
from iolab.model import JSON, Layout, RaidKind, codec
from iolab.model.facts import (
    DeviceFacts,
    JSONDict,
    Layer,
    LayoutFacts,
    MountFacts,
    RaidFacts,
    TargetFacts,
)
from iolab.model.host import checked
from iolab.targets import devices as dv
from iolab.targets import drive_health
from iolab.targets import stack as stk

SYS_CPU = Path("/sys/devices/system/cpu")
SYS_NODE = Path("/sys/devices/system/node")
TOOL_TIMEOUT_S = 30

_read = dv.sysfs_text
_int = dv.read_int


def _cpuinfo(field: str) -> str | None:
    for line in (_read("/proc/cpuinfo") or "").splitlines():
        if line.startswith(field):
            return line.split(":", 1)[1].strip()
    return None


def _cpu_model() -> str:
    return _cpuinfo("model name") or platform.processor() or "unknown"


def _distro() -> str:
    for line in (_read("/etc/os-release") or "").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip('"')
    return platform.system()


def memory_bytes() -> int:
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    return 0


def parse_cpulist(text: str | None) -> list[int]:
    """ "0-3,8,10-11" -> [0, 1, 2, 3, 8, 10, 11]."""
    out: list[int] = []
    for part in (text or "").split(","):
        lo, _, hi = part.strip().partition("-")
        if lo.isdigit():
            out.extend(range(int(lo), int(hi if hi.isdigit() else lo) + 1))
    return out


def cpu_topology() -> JSONDict:
    """Sockets, physical cores and hardware threads of the online CPUs, from sysfs."""
    online = parse_cpulist(_read(SYS_CPU / "online")) or list(range(os.cpu_count() or 0))
    packages: set[int] = set()
    cores: set[tuple[int, int]] = set()
    for cpu in online:
        topo = SYS_CPU / f"cpu{cpu}" / "topology"
        package, core = _int(topo / "physical_package_id"), _int(topo / "core_id")
        if package is None or core is None:
            return {"sockets": None, "cores": None, "threads": len(online)}
        packages.add(package)
        cores.add((package, core))
    return {"sockets": len(packages), "cores": len(cores), "threads": len(online)}


def numa_nodes() -> list[JSONDict]:
    """Each NUMA node with its CPUs and memory."""
    nodes: list[JSONDict] = []
    for node in sorted(SYS_NODE.glob("node[0-9]*"), key=lambda p: int(p.name[4:])):
        memory = None
        for line in (_read(node / "meminfo") or "").splitlines():
            if "MemTotal:" in line:
                memory = int(line.split()[-2]) * 1024
        cpus = parse_cpulist(_read(node / "cpulist"))
        nodes.append({"node": int(node.name[4:]), "cpus": list[JSON](cpus), "memory_bytes": memory})
    return nodes


def cpu_frequency() -> JSONDict:
    """Frequency governor(s), scaling driver and limits; None where cpufreq is not exposed."""
    governors = sorted({g for g in _per_cpu("cpufreq/scaling_governor") if g})
    mins = [int(x) for x in _per_cpu("cpufreq/cpuinfo_min_freq") if x and x.isdigit()]
    maxs = [int(x) for x in _per_cpu("cpufreq/cpuinfo_max_freq") if x and x.isdigit()]
    return {
        "governor": ",".join(governors) or None,
        "scaling_driver": next(iter(_per_cpu("cpufreq/scaling_driver")), None),
        "min_mhz": min(mins) // 1000 if mins else None,
        "max_mhz": max(maxs) // 1000 if maxs else None,
        "boost": _read(SYS_CPU / "cpufreq" / "boost"),
    }


def _per_cpu(relative: str) -> list[str | None]:
    return [_read(cpu / relative) for cpu in sorted(SYS_CPU.glob("cpu[0-9]*"))]


def host(fio_version: str) -> JSONDict:
    """The host facts every run records, each key held to its type, unit and check
    (model.host)."""
    topology = cpu_topology()
    numa = numa_nodes()
    flags = (_cpuinfo("flags") or "").split()
    return checked(
        {
            "hostname": socket.gethostname(),
            "cpu_model": _cpu_model(),
            "cpu_count": os.cpu_count() or 0,
            **topology,
            "numa_nodes": len(numa) or None,
            "numa": list[JSON](numa),
            **cpu_frequency(),
            "virtualized": "hypervisor" in flags,
            "smt": _read(SYS_CPU / "smt" / "active"),
            "memory_bytes": memory_bytes(),
            "kernel": platform.release(),
            "distro": _distro(),
            "fio_version": fio_version,
            "python": platform.python_version(),
        }
    )


# -- tools ----------------------------------------------------------------------------------


def run_tool(argv: Sequence[str]) -> subprocess.CompletedProcess[str] | None:
    """Run a read-only probe; None when the tool is missing or hangs."""
    if shutil.which(argv[0]) is None:
        return None
    try:
        return subprocess.run(
            list(argv),
            capture_output=True,
            text=True,
            check=False,
            stdin=subprocess.DEVNULL,
            timeout=TOOL_TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def _tool_text(argv: Sequence[str]) -> JSONDict:
    done = run_tool(argv)
    if done is None:
        return {"error": f"{argv[0]} not installed"}
    if done.returncode != 0:
        return {"error": dv.last_line(done.stderr) or f"{argv[0]} exit {done.returncode}"}
    return {"output": done.stdout}


# -- filesystems ----------------------------------------------------------------------------

_PAIR = re.compile(r"([A-Za-z][\w-]*)=([^\s,]+)")


def _number(text: str) -> int | str:
    return int(text) if text.isdigit() else text


def parse_xfs_info(text: str) -> JSONDict:
    """xfs_info's sections as "section.key" -> value ("data.bsize": 4096, "log": "internal log")."""
    params: JSONDict = {}
    section = ""
    for line in text.splitlines():
        head, sep, rest = line.partition("=")
        if not sep:
            continue
        section = head.strip() or section
        first = _PAIR.search(rest)
        value = (rest[: first.start()] if first else rest).strip()
        if head.strip() and value:
            params[section] = value
        for key, val in _PAIR.findall(rest):
            params[f"{section}.{key}"] = _number(val)
    return params


def xfs_summary(params: JSONDict) -> JSONDict:
    """The figures that matter when comparing XFS set-ups."""

    def num(key: str) -> int | None:
        value = params.get(key)
        return value if isinstance(value, int) else None

    log_blocks, log_bsize = num("log.blocks"), num("log.bsize")
    return {
        "block_size": num("data.bsize"),
        "inode_size": num("meta-data.isize"),
        "ag_count": num("meta-data.agcount"),
        "sunit_blocks": num("data.sunit"),
        "swidth_blocks": num("data.swidth"),
        "log": params.get("log"),
        "log_bytes": log_blocks * log_bsize if log_blocks and log_bsize else None,
        "sector_size": num("meta-data.sectsz"),
        "crc": num("meta-data.crc"),
        "reflink": num("meta-data.reflink"),
    }


def parse_tune2fs(text: str) -> JSONDict:
    """tune2fs -l's "Key: value" lines as a dict."""
    params: JSONDict = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith("tune2fs"):
            params[key.strip()] = value.strip()
    return params


def ext_summary(params: JSONDict) -> JSONDict:
    def num(key: str) -> int | None:
        value = str(params.get(key, ""))
        return int(value) if value.isdigit() else None

    return {
        "block_size": num("Block size"),
        "inode_size": num("Inode size"),
        "block_count": num("Block count"),
        "inode_count": num("Inode count"),
        "features": list[JSON](str(params.get("Filesystem features", "")).split()),
        "raid_stride": num("RAID stride"),
        "raid_stripe_width": num("RAID stripe width"),
        "reserved_blocks": num("Reserved block count"),
    }


def parse_btrfs_df(text: str) -> JSONDict:
    """`btrfs filesystem df` lines ("Data, RAID0: total=...") -> {"data": "RAID0", ...}."""
    profiles: JSONDict = {}
    for line in text.splitlines():
        kind, sep, rest = line.partition(",")
        profile = rest.split(":", 1)[0].strip()
        if sep and profile:
            profiles[kind.strip().lower()] = profile
    return profiles


def parse_btrfs_show(text: str) -> JSONDict:
    uuid = re.search(r"uuid:\s*(\S+)", text)
    members = re.findall(r"devid\s+(\d+)\s+size\s+(\d+)\s+used\s+(\d+)\s+path\s+(\S+)", text)
    return {
        "uuid": uuid.group(1) if uuid else None,
        "devices": [
            {"devid": int(d), "size_bytes": int(s), "used_bytes": int(u), "path": p}
            for d, s, u, p in members
        ],
    }


def filesystem_params(fstype: str, device: str | None, mountpoint: str | Path | None) -> JSONDict:
    """mkfs parameters as the filesystem reports them (xfs_info, tune2fs -l, btrfs)."""
    where = str(mountpoint or device or "")
    if fstype == "xfs" and where:
        got = _tool_text(["xfs_info", where])
        if "output" not in got:
            return {"tool": "xfs_info", **got}
        params = parse_xfs_info(str(got["output"]))
        return {"tool": "xfs_info", **xfs_summary(params), "params": params}
    if fstype in ("ext2", "ext3", "ext4") and device:
        got = _tool_text(["tune2fs", "-l", device])
        if "output" not in got:
            return {"tool": "tune2fs", **got}
        params = parse_tune2fs(str(got["output"]))
        return {"tool": "tune2fs", **ext_summary(params), "params": params}
    if fstype == "btrfs" and mountpoint:
        return btrfs_params(mountpoint)
    return {}


def btrfs_params(mountpoint: str | Path) -> JSONDict:
    """Profiles (btrfs filesystem df) and member devices (btrfs filesystem show)."""
    df = _tool_text(["btrfs", "filesystem", "df", "-b", str(mountpoint)])
    show = _tool_text(["btrfs", "filesystem", "show", "--raw", str(mountpoint)])
    out: JSONDict = {"tool": "btrfs"}
    if "output" in df:
        out["profiles"] = parse_btrfs_df(str(df["output"]))
    if "output" in show:
        out.update(parse_btrfs_show(str(show["output"])))
    errors = [got["error"] for got in (df, show) if "error" in got]
    if errors:
        out["error"] = errors[0]
    return out


# -- RAID -----------------------------------------------------------------------------------


def lvm_facts(dm_name: str | None) -> JSONDict:
    """Segment type, stripes and stripe size of an LVM volume (lvs), when lvm2 is installed."""
    fields = "vg_name,lv_name,lv_dm_path,segtype,stripes,stripe_size,devices,sync_percent"
    done = run_tool(["lvs", "--reportformat", "json", "--units", "b", "--nosuffix", "-o", fields])
    if done is None or done.returncode != 0 or not dm_name:
        return {}
    try:
        rows = json.loads(done.stdout)["report"][0]["lv"]
    except (ValueError, KeyError, IndexError):
        return {}
    return next((r for r in rows if str(r.get("lv_dm_path", "")).endswith("/" + dm_name)), {})


_LAYER_RAIDS: dict[str, RaidKind] = {"md": "mdadm", "dm": "lvm"}


def raid_facts(
    kind: str, members: Sequence[str], top: str | None, mountpoint: str | Path | None
) -> RaidFacts:
    """What a RAID of this kind is, from its own tools: btrfs (mounted), md sysfs, dm and lvs.

    The one place that asks per kind; members are the kernel names of the devices under it
    (md and dm read theirs from sysfs, under `top`, the array or volume).
    """
    if kind == "btrfs" and mountpoint is not None:
        return RaidFacts("btrfs", tuple(members), btrfs_params(mountpoint))
    if kind in ("mdadm", "lvm") and top:
        details = stk.md_facts(top) if kind == "mdadm" else stk.dm_facts(top)
        listed = details.pop("members")
        below = tuple(str(m) for m in listed) if isinstance(listed, list) else ()
        if kind == "lvm":
            dm_name = details.get("dm_name")
            details.update(lvm_facts(dm_name if isinstance(dm_name, str) else None))
        return RaidFacts(kind, below, details)
    return RaidFacts("none", tuple(members))


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def raid_of(tree: Layer) -> RaidFacts | None:
    """The first RAID layer of a resolved target: btrfs, md or LVM/dm, with its members."""
    for node in tree.walk():
        if node.layer == "filesystem" and node.details.get("fstype") == "btrfs":
            members = [child.device for child in node.below if child.device]
            if len(members) > 1:
                return raid_facts("btrfs", members, None, _text(node.details.get("mountpoint")))
        kind = _LAYER_RAIDS.get(node.layer)
        if kind and node.device and (kind == "mdadm" or dv.slaves(node.device)):
            return raid_facts(kind, (), node.device, None)
    return None


def layout_facts(layout: Layout, top: str, mountpoint: Path | None) -> LayoutFacts:
    """What a freshly built layout is: members, RAID, filesystem parameters, mount options."""
    names = [dv.try_kernel_name(d) for d in layouts.present(layout)]
    members = [n for n in names if n]
    top_name = dv.try_kernel_name(top)
    facts = LayoutFacts(
        devices={n: dv.facts(n) for n in members},
        raid=raid_facts(layout.raid, members, top_name, mountpoint),
        top=dv.facts(top_name) if top_name and top_name not in members else None,
    )
    if mountpoint is None:
        return facts
    mount = dv.mount_of_target(str(mountpoint))
    fstype = mount.fstype if mount else layout.filesystem
    found = (
        MountFacts(mount.source, fstype, options=mount.options)
        if mount
        else MountFacts(None, fstype)
    )
    return replace(facts, mount=found, filesystem=filesystem_params(fstype, top, mountpoint))


# -- optional device tools ------------------------------------------------------------------


def smart_facts(code: int, text: str) -> JSONDict:
    """Identity and health from what `smartctl -j -a` printed (its exit status `code`)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        return {"error": "smartctl printed no JSON"}
    status = _object(data.get("smart_status"))
    return {
        "model": data.get("model_name"),
        "serial": data.get("serial_number"),
        "firmware": data.get("firmware_version"),
        "rotation_rate": data.get("rotation_rate"),
        "form_factor": _object(data.get("form_factor")).get("name"),
        "interface_speed": _object(_object(data.get("interface_speed")).get("current")).get(
            "string"
        ),
        "smart_passed": status.get("passed"),
        "exit_status": code,
    }


def _object(value: object) -> dict[str, JSON]:
    return value if isinstance(value, dict) else {}


def nvme_facts(name: str) -> JSONDict | None:
    """Controller identity from `nvme id-ctrl -o json`, for NVMe disks when nvme-cli exists."""
    if not name.startswith("nvme"):
        return None
    done = run_tool(["nvme", "id-ctrl", "-o", "json", dv.dev_path(name)])
    if done is None:
        return None
    try:
        data = json.loads(done.stdout)
    except ValueError:
        return {"error": dv.last_line(done.stderr) or "nvme printed no JSON"}
    keys = ("mn", "sn", "fr", "ver", "mdts", "nn", "vwc", "oncs")
    return {key: str(data[key]).strip() for key in keys if key in data}


def device_facts(name: str, known: drive_health.Answered | None = None) -> DeviceFacts:
    """sysfs facts of one device, with smartctl and nvme-cli facts for whole disks, and the
    drive's own account (its health, temperature, lifetime writes) where smartctl reads it:
    one `smartctl -j -a` a disk gives both (`known`: the one the pre-flight asked)."""
    facts = dv.facts(name)
    if facts.kind != "disk":
        return facts
    facts = replace(facts, nvme=nvme_facts(name))
    if not drive_health.installed():
        return facts
    try:  # asked once: its identity and its account read from the one answer
        code, text = drive_health.answered(name, known)
        facts = replace(facts, smart=smart_facts(code, text))
        return replace(facts, health=drive_health.parse(text))
    except (drive_health.DriveError, ControllerError) as error:
        return replace(facts, health_problem=str(error))


# -- targets --------------------------------------------------------------------------------


def mount_of(path: Path) -> MountFacts | None:
    """The filesystem holding `path`: source, type, mount point and options."""
    mount = stk.mount_containing(path)
    if mount is None:
        return None
    return MountFacts(mount.source, mount.fstype, mountpoint=mount.target, options=mount.options)


def block_device(source: str | None) -> DeviceFacts | None:
    """Facts of the block device behind a mount source (None when it is not a block device)."""
    if not source or not source.startswith("/dev/"):
        return None
    name = dv.try_kernel_name(source.split("[")[0])
    return dv.facts(name) if name else codec.from_json(DeviceFacts, {"name": Path(source).name})


def target_facts(
    path: Path, answers: Mapping[str, drive_health.Answered] | None = None
) -> TargetFacts:
    """The filesystem and devices a target path lives on, down to the member disks: its
    mount, the mount source's facts, the stack (file -> filesystem -> btrfs/md/dm/loop ->
    disks), every block device in it, the disks at the bottom, the RAID, and the mkfs
    parameters (xfs_info / tune2fs -l / btrfs). `answers`: the disks' smartctl answers the
    pre-flight had, by name (none: each disk asked now)."""
    known = answers or {}
    mount = mount_of(path)
    stack = stk.resolve(path)
    source = mount.source if mount else None
    return TargetFacts(
        path=str(path),
        filesystem=mount,
        device=block_device(source),
        stack=stack,
        devices={name: device_facts(name, known.get(name)) for name in stk.tree_devices(stack)},
        disks=tuple(stk.tree_disks(stack)),
        raid=raid_of(stack),
        filesystem_params=filesystem_params(
            (mount.fstype if mount else None) or "",
            (source or "").split("[")[0] or None,
            mount.mountpoint if mount else None,
        ),
    )


def target(path: Path) -> JSONDict:
    """`target_facts` as the JSON the store keeps."""
    return codec.to_object(target_facts(path))
