"""The house's rules that a reader relies on: the formatter formats every line, one class
per name across the package, no module reaching into another's private names, names imported
plainly (none resolved when first asked for), warning codes said as members of one enum,
each documented, and no test that skips."""

from __future__ import annotations

import ast
import functools
import re
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path

from conftest import source_nodes, source_tree
from iolab.model import Code

SRC = Path(__file__).parent.parent / "src" / "iolab"
DOCS = SRC.parent.parent / "docs"


@functools.cache
def _modules() -> dict[str, ast.Module]:
    """Every source file parsed, once for the session (the tests only read the trees)."""
    return {str(path.relative_to(SRC)): source_tree(path) for path in sorted(SRC.rglob("*.py"))}


@functools.cache
def _nodes() -> dict[str, tuple[ast.AST, ...]]:
    """Every node of every source file, walked once for the session."""
    return {str(path.relative_to(SRC)): source_nodes(path) for path in sorted(SRC.rglob("*.py"))}


def test_the_formatter_formats_every_line() -> None:
    """A line count is no proxy for one module, one job: lines kept dense by hand defeat it.
    Source is as ruff formats it, with no line held back from the formatter."""
    held = [
        f"{path.relative_to(SRC)}:{n}"
        for path in sorted(SRC.rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"#\s*fmt:\s*(skip|off)", line)
    ]
    assert held == [], f"let the formatter format these lines: {held}"


SKIPS = re.compile(r"\bpytest\.(skip|importorskip)\(|\bmark\.skip(if)?\b|\bxfail\b")


def test_no_test_skips() -> None:
    """A test whose part is missing (root, a tool, a kernel module, the lab) fails with the
    reason (conftest.require_root, `assert ..., "NOT CHECKED: ..."`): a skip passes a run that
    checked nothing there. A case that cannot apply is left out of the parameters instead."""
    tests = Path(__file__).parent
    found = [
        f"{path.name}:{n}"
        for path in sorted(tests.glob("*.py"))
        if path.name != Path(__file__).name
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if SKIPS.search(line)
    ]
    assert found == [], f"fail with the reason instead of skipping: {found}"


def test_one_class_per_name() -> None:
    defined: dict[str, list[str]] = defaultdict(list)
    for name, nodes in _nodes().items():
        for node in nodes:
            if isinstance(node, ast.ClassDef):
                defined[node.name].append(name)
    twice = {cls: where for cls, where in defined.items() if len(where) > 1}
    assert twice == {}, f"a class name names one class: {twice}"


def test_no_private_name_imported_across_modules() -> None:
    reached = [
        f"{name}: from {node.module} import {alias.name}"
        for name, nodes in _nodes().items()
        for node in nodes
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("iolab")
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]
    assert reached == []


def _module_level(body: list[ast.stmt]) -> Iterator[tuple[str, ast.stmt]]:
    """The names a module binds at its top (through `if` and `try` blocks too)."""
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.name, node
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            yield from ((t.id, node) for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            yield from ((a.asname or a.name, node) for a in node.names)
        elif isinstance(node, ast.If | ast.Try):
            handlers = [h.body for h in node.handlers] if isinstance(node, ast.Try) else []
            for block in (node.body, node.orelse, *handlers):
                yield from _module_level(block)


def test_names_are_imported_plainly() -> None:
    """One import mechanism, plain imports: no module resolves its names when first asked for
    (a module's `__getattr__`, PEP 562), which hides a name's home from the reader, from
    go-to-definition and from the type checker. A command keeps start-up fast by importing
    what it uses inside its function (iolab.cli; tests/test_cli_startup.py)."""
    lazy = [
        f"{name}:{node.lineno}"
        for name, tree in _modules().items()
        for bound, node in _module_level(tree.body)
        if bound in ("__getattr__", "__dir__")
    ]
    assert lazy == [], f"import these names plainly: {lazy}"


def _strings(node: ast.expr) -> list[str]:
    found = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]
    return [n.value for n in found if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _called(func: ast.expr) -> str:
    """The last part of what a call names, as its source spells it (`Code` in `model.Code(x)`):
    a name's or an attribute's own, without writing the source out again."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ast.unparse(func).split(".")[-1]


def _literal_codes(nodes: Sequence[ast.AST]) -> list[tuple[int, str]]:
    """Warnings built with a code string (CheckWarning or a subclass), and `.code` compared
    with one."""
    makers = {"CheckWarning"} | {
        n.name
        for n in nodes
        if isinstance(n, ast.ClassDef) and any(ast.unparse(b) == "CheckWarning" for b in n.bases)
    }
    found: list[tuple[int, str]] = []
    for node in nodes:
        if isinstance(node, ast.Call) and _called(node.func) in makers:
            given = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "code")]
            found += [(node.lineno, s) for arg in given for s in _strings(arg)]
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(isinstance(s, ast.Attribute) and s.attr == "code" for s in sides):
                found += [(node.lineno, s) for side in sides for s in _strings(side)]
    return found


def test_warning_codes_are_members_not_literals() -> None:
    found = {name: hits for name, nodes in _nodes().items() if (hits := _literal_codes(nodes))}
    assert found == {}, f"say these codes as members of iolab.model.Code: {found}"
    planted = ast.parse('CheckWarning("cpu-bound", "m", "a")\nx = w.code in ("a", "b")')
    assert _literal_codes(list(ast.walk(planted))) == [(1, "cpu-bound"), (2, "a"), (2, "b")]


def test_every_code_is_documented_and_every_documented_code_a_member() -> None:
    pages = "\n".join(page.read_text() for page in sorted(DOCS.glob("*.md")))
    methods = (DOCS / "methods.md").read_text()
    section = methods[methods.index("## Methodology checks") :]
    listed = re.findall(r"^- `([a-z-]+)`( \(over [^)]*\))?:", section, re.MULTILINE)
    assert listed, "docs/methods.md lists the checks as '- `code`: ...'"
    assert [code for code, _ in listed if code not in set(Code)] == []
    assert [code for code in Code if f"`{code}`" not in pages] == []
