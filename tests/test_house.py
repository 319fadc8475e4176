"""The house's rules that a reader relies on: no module over 500 lines, one class per name
across the package, and no module reaching into another's private names."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).parent.parent / "src" / "iolab"
MOST_LINES = 500


def _modules() -> dict[str, ast.Module]:
    return {
        str(path.relative_to(SRC)): ast.parse(path.read_text(), str(path))
        for path in sorted(SRC.rglob("*.py"))
    }


def test_no_module_over_500_lines() -> None:
    long = {
        str(path.relative_to(SRC)): n
        for path in SRC.rglob("*.py")
        if (n := len(path.read_text().splitlines())) > MOST_LINES
    }
    assert long == {}, f"split these modules (at most {MOST_LINES} lines each): {long}"


def test_one_class_per_name() -> None:
    defined: dict[str, list[str]] = defaultdict(list)
    for name, tree in _modules().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                defined[node.name].append(name)
    twice = {cls: where for cls, where in defined.items() if len(where) > 1}
    assert twice == {}, f"a class name names one class: {twice}"


def test_no_private_name_imported_across_modules() -> None:
    reached = [
        f"{name}: from {node.module} import {alias.name}"
        for name, tree in _modules().items()
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("iolab")
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]
    assert reached == []
