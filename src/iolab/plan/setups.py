"""Set-ups: an existing path, or devices built into a RAID layout with a filesystem."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from iolab.model import Setup
from iolab.plan.common import Overrides, Where, known_keys

SETUP_KEYS = ("name", "path")


def setups(raw: object, top: Where, over: Overrides) -> tuple[Setup, ...]:
    if over.target is not None:
        return (Setup(name=Path(over.target).name or over.target, path=over.target),)
    if not isinstance(raw, list) or not raw:
        raise top.fail(
            None, 'the plan has no [[setup]]; add one with a path, e.g. [[setup]] path = "."'
        )
    setups: list[Setup] = []
    for index, entry in enumerate(raw):
        where = replace(top, table="setup", index=index)
        if not isinstance(entry, dict):
            raise where.fail(None, "each [[setup]] must be a table")
        known_keys(entry, SETUP_KEYS, where, f"[[setup]] {index + 1}")
        path = entry.get("path")
        if not isinstance(path, str) or not path:
            raise where.fail("path", 'a [[setup]] needs path = "DIRECTORY or FILE"')
        name = entry.get("name", path)
        if not isinstance(name, str) or not name:
            raise where.fail("name", f"set-up name must be a non-empty string, not {name!r}")
        if name in (s.name for s in setups):
            raise where.fail("name", f"set-up name {name!r} is used twice; names must be unique")
        setups.append(Setup(name=name, path=path))
    return tuple(setups)
