"""What every part of plan loading shares: where a value sits, overrides, key checks."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from iolab.errors import PlanError
from iolab.model import JSONObject

MAX_DEPTH = 32  # arrays and tables inside each other, in a plan's values
# tomllib's messages that quote the text they stopped at, as the kind of fault they report:
# a plan's message names its file, line and column, never what the file holds there.
_TOML_QUOTING = (
    ("Cannot declare", "a table or key declared twice"),
    ("Found invalid character", "a character that does not belong there"),
    ("Illegal character", "a control character inside a string"),
    ("Duplicate inline table key", "a key given twice in an inline table"),
    ("Cannot mutate immutable namespace", "a key added to an inline table or array"),
    ("Cannot redefine namespace", "a table defined twice"),
)
_TOML_AT = re.compile(
    r"^(?P<what>.*) \(at (?:line (?P<line>\d+), column (?P<column>\d+)|"
    r"end of document)\)$"
)


@dataclass(frozen=True)
class Overrides:
    """Command-line overrides that let any preset be tried small."""

    target: str | None = None
    size: str | None = None
    runtime: str | int | None = None
    repeat: int | None = None
    max_cases: int | None = None

    @classmethod
    def from_json(cls, data: JSONObject) -> Overrides:
        """The overrides a run was started with, as the store keeps them."""

        def text(key: str) -> str | None:
            value = data.get(key)
            return None if value is None else str(value)

        def whole(key: str) -> int | None:
            value = data.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        runtime = data.get("runtime")
        kept = runtime if isinstance(runtime, int) and not isinstance(runtime, bool) else None
        return cls(
            text("target"),
            text("size"),
            kept or text("runtime"),
            whole("repeat"),
            whole("max_cases"),
        )


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


def read_toml(text: str, source: str) -> dict[str, Any]:
    """TOML text as a table, its nesting bounded; PlanError naming the line and the kind of
    fault (never the text there) when it is not valid TOML."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise PlanError(toml_fault(str(error), source)) from None
    except RecursionError:  # arrays or inline tables inside each other, hundreds deep
        raise PlanError(
            f"{source}: values nest arrays or tables too deep to read; a plan nests them at "
            f"most {MAX_DEPTH} levels"
        ) from None
    check_depth(data, Where(source, text))
    return data


def toml_fault(message: str, source: str) -> str:
    """tomllib's message as 'SOURCE: not valid TOML: KIND (at line L, column C)', with no
    text of the file in it."""
    found = _TOML_AT.match(message)
    what = found.group("what") if found else message
    for start, kind in _TOML_QUOTING:
        if what.startswith(start):
            what = kind
            break
    else:
        if ("'" in what or '"' in what) and not what.startswith("Expected"):
            what = "a fault"  # a message this table does not know, said without its quote
    if found is None or found.group("line") is None:
        return f"{source}: not valid TOML: {what} (at the end of the file)"
    line, column = found.group("line"), found.group("column")
    return f"{source}: not valid TOML: {what} (at line {line}, column {column})"


def check_depth(data: Mapping[str, Any], where: Where) -> None:
    """Refuse values nested more than MAX_DEPTH levels (arrays and tables inside each other)
    before anything walks them; the fault is placed at the top-level key that holds them."""
    for key, value in data.items():
        if _deeper_than(value, MAX_DEPTH):
            raise where.fail(
                key,
                f"{key} nests arrays or tables more than {MAX_DEPTH} levels deep; a plan's "
                "values are a few levels at most",
            )


def _deeper_than(value: object, limit: int) -> bool:
    """Whether arrays and tables nest more than `limit` levels in value (no recursion)."""
    pending: list[tuple[object, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        inner = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        if inner and depth > limit:
            return True
        pending.extend((child, depth + 1) for child in inner)
    return False
