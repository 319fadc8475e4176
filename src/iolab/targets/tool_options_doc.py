"""The allow-list of options for mkfs, mount, mdadm and lvcreate as the Markdown table that
docs/setups.md holds (a test keeps the two the same)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from iolab.targets.tool_options import (
    LVCREATE,
    MDADM,
    MKFS,
    MOUNT_BARE,
    MOUNT_COMMON,
    MOUNT_OPTIONS,
    MOUNT_REFUSED,
    Value,
)


def markdown() -> str:
    """The allow-list as a Markdown table, as docs/setups.md holds it (a test keeps it so)."""
    rows = ["| tool | option | value |", "| --- | --- | --- |"]
    for tool in (*MKFS.values(), MDADM, LVCREATE):
        spellings = {name: [name] for name in tool.options}
        for other, name in tool.aliases.items():
            spellings[name].append(other)
        flags = [
            spelled
            for name, spec in tool.options.items()
            if spec is None
            for spelled in spellings[name]
        ]
        rows += [f"| {tool.name} | {_code(flags)} | none |"] if flags else []
        rows += [
            f"| {tool.name} | {_code(spellings[name])} | {_doc(spec)} |"
            for name, spec in tool.options.items()
            if spec is not None
        ]
        rows += [f"| {tool.name} | {_code(list(tool.refused))} | refused |"] if tool.refused else []
    rows += _mount_rows("all", MOUNT_COMMON)
    for fs, table in MOUNT_OPTIONS.items():
        rows += _mount_rows(fs, table)
    rows.append(f"| mount -o | {_code(list(MOUNT_REFUSED))} | refused |")
    return "\n".join(rows) + "\n"


def _mount_rows(fs: str, table: Mapping[str, Value | None]) -> list[str]:
    bare = [n for n, v in table.items() if v is None or n in MOUNT_BARE.get(fs, ())]
    rows = [f"| mount -o ({fs}) | {_code(bare)} | none |"] if bare else []
    return rows + [
        f"| mount -o ({fs}) | {_code([name + '='])} | {_doc(spec)} |"
        for name, spec in table.items()
        if spec is not None
    ]


def _code(names: Sequence[str]) -> str:
    return ", ".join(f"`{name}`" for name in names)


_SHORT = {
    "number": "a number",
    "decimal": "a number (decimals too)",
    "size": "a size",
    "name": "a name",
    "label": "a label",
}


def _doc(spec: Value | None) -> str:
    """A value as the docs' table says it, in few words."""
    if spec is None:
        return "none"
    if spec.kind == "sub":
        parts = [
            f"`{name}`" if value is None else f"`{name}=` {_doc(value)}"
            for name, value in spec.sub.items()
        ]
        refused = [f"`{name}=` refused" for name in spec.refused]
        return ", ".join(parts + refused)
    if spec.kind == "features":
        return "a list of " + ", ".join(spec.words) + " (^ turns one off)"
    if spec.kind == "word":
        return spec.shown.removeprefix("one of ") or " or ".join(spec.words)
    return _SHORT[spec.kind]
