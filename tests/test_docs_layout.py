"""The map of the source keeps up with the source: docs/layout.md names every module under
src/iolab in its room's row, and docs/benchmarks.md every script in bench/ (and no other)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "src" / "iolab"
LAYOUT = ROOT / "docs" / "layout.md"
BENCHMARKS = ROOT / "docs" / "benchmarks.md"
ROW = re.compile(r"^\| `([^`]+)`(?:, `([^`]+)`)* \|", re.MULTILINE)


def modules(source: Path = SOURCE) -> list[str]:
    """Every module and subpackage, as a path from src/iolab: "names.py", "analysis/stats",
    "report/views/tables", "report/views/" (a package's __init__ is its folder)."""
    found = []
    for path in sorted(source.rglob("*.py")):
        parts = path.relative_to(source).parts
        if len(parts) == 1:
            found.append(parts[0])
        elif len(parts) > 2 and path.name == "__init__.py":
            found.append("/".join(parts[:-1]) + "/")
        elif path.name != "__init__.py":
            found.append("/".join(parts)[: -len(".py")])
    return found


def rooms(text: str) -> dict[str, str]:
    """The Rooms table's rows, by the room each names ("analysis/", "names.py"): the row's text."""
    table = text.split("## Rooms", 1)[1].split("\n## ", 1)[0]
    found: dict[str, str] = {}
    for line in table.splitlines():
        for name in re.findall(r"`([^`]+)`", line.split("|")[1] if line.startswith("|") else ""):
            found[name] = line
    return found


def unnamed(module: str, rows: dict[str, str]) -> bool:
    """Whether the layout leaves `module` out: a top-level module needs a row of its own; one
    in a room needs its name in backquotes in the room's row, alone or with the folders
    between ("views/tables" or "tables")."""
    if "/" not in module:
        return module not in rows
    room, _, inner = module.partition("/")
    row = rows.get(f"{room}/", "")
    names = {inner, inner.rstrip("/"), inner.rstrip("/").rsplit("/", 1)[-1]}
    return not any(f"`{name}`" in row or f"`{name}/`" in row for name in names if name)


def test_the_layout_names_every_module() -> None:
    rows = rooms(LAYOUT.read_text())
    missing = [m for m in modules() if unnamed(m, rows)]
    assert not missing, f"docs/layout.md does not name {', '.join(missing)} (Rooms table)"


def test_the_layout_check_finds_a_module_left_out(tmp_path: Path) -> None:
    for name in (
        "analysis/__init__.py",
        "analysis/stats.py",
        "analysis/extra.py",
        "units.py",
        "report/views/__init__.py",
        "report/views/tables.py",
        "report/__init__.py",
        "spare.py",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).touch()
    text = (
        "## Rooms\n\n| room | what |\n| --- | --- |\n"
        "| `analysis/` | statistics (`stats`) |\n| `report/` | `views/` has `tables` |\n"
        "| `units.py` | sizes |\n\n## Tests\n| `spare.py` | not in the table |\n"
    )
    rows = rooms(text)
    found = [m for m in modules(tmp_path) if unnamed(m, rows)]
    assert found == ["analysis/extra", "spare.py"]


def scripts() -> list[str]:
    return sorted(p.name for p in (ROOT / "bench").glob("*.py"))


@pytest.mark.parametrize("name", scripts())
def test_the_benchmarks_page_names_every_bench_script(name: str) -> None:
    named = f"bench/{name}" in BENCHMARKS.read_text()
    assert named, f"docs/benchmarks.md does not name bench/{name}"


def test_every_script_the_benchmarks_page_names_exists() -> None:
    named = set(re.findall(r"bench/(\w+\.py)", BENCHMARKS.read_text()))
    assert named, "docs/benchmarks.md names no bench script"
    assert named <= set(scripts()), f"no such script: {', '.join(sorted(named - set(scripts())))}"
