"""What differs between recorded environments (host, set-up), for honest comparisons."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# Repeated or bulky detail: `devices` and `stack` repeat `device` and `filesystem`.
SKIPPED = frozenset({"devices", "stack", "numa", "python"})


def flatten(value: object, prefix: str = "") -> dict[str, str]:
    """Nested dicts as dotted keys with JSON-ish text values; lists are kept whole."""
    if isinstance(value, Mapping):
        out: dict[str, str] = {}
        for key, item in value.items():
            if key in SKIPPED:
                continue
            out.update(flatten(item, f"{prefix}{key}."))
        return out
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return {prefix.rstrip("."): text}


@dataclass(frozen=True)
class EnvDifference:
    """One fact that is not the same in every environment compared."""

    where: str
    key: str
    values: tuple[str, ...]


def differences(where: str, environments: Sequence[Mapping[str, object]]) -> list[EnvDifference]:
    """The facts whose values are not all equal; a fact one environment lacks shows as '—'."""
    flat = [flatten(env) for env in environments]
    keys = sorted({key for env in flat for key in env})
    out = []
    for key in keys:
        values = tuple(env.get(key, "—") for env in flat)
        if len(set(values)) > 1:
            out.append(EnvDifference(where, key, values))
    return out
