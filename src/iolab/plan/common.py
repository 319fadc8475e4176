"""What every part of plan loading shares: where a value sits, overrides, key checks."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from iolab.errors import PlanError


@dataclass(frozen=True)
class Overrides:
    """Command-line overrides that let any preset be tried small."""

    target: str | None = None
    size: str | None = None
    runtime: str | int | None = None
    repeat: int | None = None
    max_cases: int | None = None


@dataclass(frozen=True)
class Where:
    """Where a value sits in the plan text, for file:line messages."""

    source: str
    text: str
    table: str | None = None
    index: int = 0

    def fail(self, key: str | None, message: str) -> PlanError:
        line = line_of(self.text, self.table, self.index, key)
        if line is None and key is not None and self.table == "workload":
            line = line_of(self.text, "defaults", 0, key)  # a value the workload inherits
        if line is None and key is not None and self.table is not None:
            line = line_of(self.text, self.table, self.index, None)  # the table's header
        place = f"{self.source}:{line}" if line else self.source
        return PlanError(f"{place}: {message}")


def line_of(text: str, table: str | None, index: int, key: str | None) -> int | None:
    """The line of `key` inside the index-th [table] / [[table]] (top level when table is None)."""
    current: str | None = None
    seen = -1
    header = re.compile(r"^\s*\[\[?\s*([^\]\s]+)\s*\]\]?")
    for number, line in enumerate(text.splitlines(), start=1):
        found = header.match(line)
        if found:
            current = found.group(1)
            if table is None and key == current:
                return number
            if current == table:
                seen += 1
                if key is None and seen == index:
                    return number
            continue
        in_place = current == table and (table is None or seen == index)
        if in_place and key and re.match(rf"^\s*{re.escape(key)}\s*=", line):
            return number
    return None


def text_value(data: Mapping[str, Any], key: str, where: Where, default: str) -> str:
    value = data.get(key, default)
    if not isinstance(value, str):
        raise where.fail(key, f"{key} must be a string, not {value!r}")
    return value


def table_value(value: object, where: Where, name: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise where.fail(name, f"{name} must be a table ([{name}]), not {value!r}")
    return value


def known_keys(data: Mapping[str, Any], allowed: tuple[str, ...], where: Where, what: str) -> None:
    for key in data:
        if key not in allowed:
            raise where.fail(
                key, f"unknown key {key!r} in {what}; allowed keys: {', '.join(allowed)}"
            )
