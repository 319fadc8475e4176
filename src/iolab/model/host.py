"""The host's environment as a run records it, typed key by key as pyperf's metadata is: each
key's type, unit and check written once here (`HOST_KEYS`), and `checked` holds every
environment targets.environment builds to them before it is stored. A value of the wrong type
or out of its range is a `HostKeyError` naming the key; a key written nowhere here is one too,
so a new fact is added here first, with its type, unit and check."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from iolab.model.common import JSON


class HostKeyError(ValueError):
    """An environment key that is unknown, or whose value is not of its type or range."""


def _whole(value: JSON) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _text(value: JSON) -> bool:
    return isinstance(value, str) and "\n" not in value


def _flag(value: JSON) -> bool:
    return isinstance(value, bool)


def _nodes(value: JSON) -> bool:
    """NUMA nodes: [{"node": 0, "cpus": [0, 1], "memory_bytes": 8589934592 or null}, ...]."""
    return isinstance(value, list) and all(
        isinstance(node, dict)
        and _whole(node.get("node"))
        and isinstance(cpus := node.get("cpus"), list)
        and all(_whole(cpu) for cpu in cpus)
        and (node.get("memory_bytes") is None or _whole(node.get("memory_bytes")))
        for node in value
    )


def _hosts(value: JSON) -> bool:
    """What fio's servers said of themselves: one JSON object per host."""
    return isinstance(value, list) and all(isinstance(host, dict) for host in value)


@dataclass(frozen=True)
class HostKey:
    """One key of the host's environment: what it says, its unit ("" for none), the check its
    value passes, and whether it may be null (the host did not say)."""

    name: str
    about: str
    check: Callable[[JSON], bool]
    unit: str = ""
    nullable: bool = False

    def holds(self, value: JSON) -> bool:
        return (value is None and self.nullable) or (value is not None and self.check(value))


HOST_KEYS: tuple[HostKey, ...] = (
    HostKey("hostname", "the host's name", _text),
    HostKey("cpu_model", "the CPU's model name", _text),
    HostKey("cpu_count", "CPUs the kernel offers", _whole, "CPUs"),
    HostKey("sockets", "CPU packages", _whole, "sockets", nullable=True),
    HostKey("cores", "physical cores", _whole, "cores", nullable=True),
    HostKey("threads", "online hardware threads", _whole, "threads"),
    HostKey("numa_nodes", "NUMA nodes", _whole, "nodes", nullable=True),
    HostKey("numa", "each NUMA node's CPUs and memory", _nodes),
    HostKey("governor", "the CPU frequency governors", _text, nullable=True),
    HostKey("scaling_driver", "the CPU frequency driver", _text, nullable=True),
    HostKey("min_mhz", "the lowest CPU frequency", _whole, "MHz", nullable=True),
    HostKey("max_mhz", "the highest CPU frequency", _whole, "MHz", nullable=True),
    HostKey("boost", "frequency boost, as sysfs says it", _text, nullable=True),
    HostKey("virtualized", "a hypervisor under the host", _flag),
    HostKey("smt", "simultaneous multithreading active, as sysfs says it", _text, nullable=True),
    HostKey("memory_bytes", "the host's memory", _whole, "bytes"),
    HostKey("kernel", "the kernel's release", _text),
    HostKey("distro", "the distribution", _text),
    HostKey("fio_version", "fio's version", _text),
    HostKey("python", "Python's version", _text),
    HostKey("hosts", "what fio's servers said of themselves (a run on hosts)", _hosts),
)
KEYS: Mapping[str, HostKey] = {key.name: key for key in HOST_KEYS}


def checked(environment: Mapping[str, JSON]) -> dict[str, JSON]:
    """The environment as it is stored, each key known and its value holding to its type
    and check (HostKeyError naming the first that does not)."""
    for name, value in environment.items():
        key = KEYS.get(name)
        if key is None:
            raise HostKeyError(f"host environment key {name!r} is not one of model.host's")
        if not key.holds(value):
            raise HostKeyError(f"host environment key {name!r}: {value!r} is not {key.about}")
    return dict(environment)


def unit_of(name: str) -> str:
    """A key's unit ("" for none, or for a key iolab does not know)."""
    key = KEYS.get(name)
    return key.unit if key is not None else ""
