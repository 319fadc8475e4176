"""The environment (`iolab env`) as text a person reads: one line per host, layer and device."""

from __future__ import annotations

from typing import Any

from iolab.model import JSON, JSONObject, codec
from iolab.model.facts import DeviceFacts, Layer, MountFacts, TargetFacts
from iolab.names import one_line
from iolab.report import drives
from iolab.report.text import controllers_text
from iolab.units import human_bytes

DEVICE_KEYS = (
    "transport",
    "model",
    "vendor",
    "firmware",
    "serial",
    "wwn",
    "size_bytes",
    "rotational",
    "logical_block_size",
    "physical_block_size",
    "scheduler",
    "read_ahead_kb",
    "nr_requests",
    "rq_affinity",
    "write_cache",
    "start_bytes",
    "aligned_1mib",
    "backing_file",
)


def _value(key: str, value: Any) -> str:
    if key.endswith("bytes") and isinstance(value, int):
        return human_bytes(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _pairs(device: DeviceFacts, keys: tuple[str, ...]) -> str:
    facts = codec.to_object(device)
    shown = [f"{k}={_value(k, facts[k])}" for k in keys if facts.get(k) not in (None, "", [])]
    return " ".join(shown)


def _number(value: JSON) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def _host(host: JSONObject) -> list[str]:
    return [
        f"host      {host.get('hostname')}: {host.get('cpu_model')}, {host.get('sockets')} "
        f"socket(s), {host.get('cores')} cores, {host.get('threads')} threads, "
        f"{host.get('numa_nodes')} NUMA node(s), {human_bytes(_number(host.get('memory_bytes')))}",
        f"          {host.get('distro')}, kernel {host.get('kernel')}, {host.get('fio_version')}, "
        f"governor {host.get('governor') or '-'}",
    ]


def _layer(node: Layer) -> str:
    if node.layer == "filesystem":
        get = node.details.get
        return f"{get('fstype')} {get('source')} on {get('mountpoint')}"
    return f"{node.layer} {node.name}".strip()


def _stack(node: Layer) -> list[str]:
    """The resolution chain, one layer per line, indented by depth."""
    lines: list[str] = []

    def walk(item: Layer, depth: int) -> None:
        lines.append("  " * depth + _layer(item))
        for child in item.below:
            walk(child, depth + 1)

    walk(node, 0)
    return lines


def _mount(fs: MountFacts | None) -> str:
    source, fstype, mountpoint, options = (
        (fs.source, fs.fstype, fs.mountpoint, fs.options) if fs else (None, None, None, None)
    )
    return f"mount     {source} {fstype} on {mountpoint} ({options})"


def render(facts: JSONObject) -> str:
    """`facts` as `iolab env` gathers them: {"host": host facts, "target": target facts}."""
    stored, host = facts.get("target"), facts.get("host")
    target = codec.from_json(TargetFacts, stored if isinstance(stored, dict) else {})
    lines = _host(host if isinstance(host, dict) else {})
    lines.append(f"target    {target.path}")
    lines.append(_mount(target.filesystem))
    lines += [f"stack     {line}" for line in _stack(target.stack)]
    for name, device in target.devices.items():
        lines.append(f"device    {name}: {_pairs(device, DEVICE_KEYS)}")
    for name, device in target.devices.items():
        if device.health is not None:
            lines.append(f"drive     {name}: {drives.said(device.health)}")
        elif device.health_problem:
            lines.append(f"drive     {name}: not read: {device.health_problem}")
    if target.raid:
        lines.append(f"raid      {codec.to_object(target.raid)}")
    if target.filesystem_params:
        shown = ", ".join(f"{k}={v}" for k, v in target.filesystem_params.items() if k != "raw")
        lines.append(f"fs params {shown}")
    lines += controllers_text.lines(facts)
    return "".join(f"{one_line(line)}\n" for line in lines)  # a device's strings are not ours
