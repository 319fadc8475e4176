"""The environment (`iolab env`) as text a person reads: one line per host, layer and device."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iolab.units import human_bytes

DEVICE_KEYS = (
    "transport", "model", "vendor", "firmware", "serial", "wwn", "size_bytes", "rotational",
    "logical_block_size", "physical_block_size", "scheduler", "read_ahead_kb", "nr_requests",
    "rq_affinity", "write_cache", "start_bytes", "aligned_1mib", "backing_file",
)  # fmt: skip


def _value(key: str, value: Any) -> str:
    if key.endswith("bytes") and isinstance(value, int):
        return human_bytes(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _pairs(facts: Mapping[str, Any], keys: tuple[str, ...]) -> str:
    shown = [f"{k}={_value(k, facts[k])}" for k in keys if facts.get(k) not in (None, "", [])]
    return " ".join(shown)


def _host(host: Mapping[str, Any]) -> list[str]:
    return [
        f"host      {host.get('hostname')}: {host.get('cpu_model')}, {host.get('sockets')} "
        f"socket(s), {host.get('cores')} cores, {host.get('threads')} threads, "
        f"{host.get('numa_nodes')} NUMA node(s), {human_bytes(host.get('memory_bytes', 0))}",
        f"          {host.get('distro')}, kernel {host.get('kernel')}, {host.get('fio_version')}, "
        f"governor {host.get('governor') or '-'}",
    ]


def _layer(node: Mapping[str, Any]) -> str:
    kind = node.get("layer", "?")
    if kind == "filesystem":
        return f"{node.get('fstype')} {node.get('source')} on {node.get('mountpoint')}"
    name = node.get("device") or node.get("path") or node.get("name") or ""
    return f"{kind} {name}".strip()


def _stack(node: Mapping[str, Any] | None) -> list[str]:
    """The resolution chain, one layer per line, indented by depth."""
    lines: list[str] = []

    def walk(item: Mapping[str, Any], depth: int) -> None:
        lines.append("  " * depth + _layer(item))
        for child in item.get("below", []):
            walk(child, depth + 1)

    if node:
        walk(node, 0)
    return lines


def render(facts: Mapping[str, Any]) -> str:
    target = facts.get("target", {})
    lines = _host(facts.get("host", {}))
    fs = target.get("filesystem", {})
    lines.append(f"target    {target.get('path')}")
    lines.append(f"mount     {fs.get('source')} {fs.get('fstype')} on {fs.get('mountpoint')} "
                 f"({fs.get('options')})")  # fmt: skip
    lines += [f"stack     {line}" for line in _stack(target.get("stack"))]
    for name, device in (target.get("devices") or {}).items():
        lines.append(f"device    {name}: {_pairs(device, DEVICE_KEYS)}")
    if target.get("raid"):
        lines.append(f"raid      {target['raid']}")
    params = target.get("filesystem_params") or {}
    if params:
        shown = ", ".join(f"{k}={v}" for k, v in params.items() if k != "raw")
        lines.append(f"fs params {shown}")
    return "\n".join(lines) + "\n"
