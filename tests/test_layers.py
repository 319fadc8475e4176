"""Imports run one way: cli → app → (plan, runner, report) → (fio, targets, store, analysis)
→ the plain bottom (model, errors, units, files, layouts). No room imports one above it, and
the rooms' import graph has no cycle."""

from __future__ import annotations

import ast
import builtins
import importlib
import importlib.util
import pkgutil
import re
import sys
import types
from pathlib import Path
from typing import Any, get_origin

from conftest import source_nodes

SRC = Path(__file__).parent.parent / "src" / "iolab"
LAYERS = {
    **dict.fromkeys(
        ("model", "errors", "units", "files", "outputs", "saving", "names", "version", "layouts"),
        0,
    ),
    "presets": 0,
    "choices": 0,
    **dict.fromkeys(("fio", "targets", "store", "analysis"), 1),
    **dict.fromkeys(("plan", "runner", "report", "exchange"), 2),
    **dict.fromkeys(("app", "terminal_ui", "shell"), 3),
    **dict.fromkeys(("cli", "__main__", "__init__"), 4),
}


def room(module: str) -> str:
    return module.split(".")[1] if module.count(".") else "__init__"


def _is_room(name: str) -> bool:
    """`from iolab import NAME` names a room (a module or package), or a name of the package's
    own __init__ (such as `__version__`), which sits at the top."""
    return (SRC / name).is_dir() or (SRC / f"{name}.py").exists()


def imports() -> dict[str, set[str]]:
    """room -> the rooms it imports."""
    graph: dict[str, set[str]] = {}
    for path in SRC.rglob("*.py"):
        dotted = "iolab." + ".".join(path.relative_to(SRC).with_suffix("").parts)
        mine = (
            room(dotted.removesuffix(".__init__"))
            if path.name != "__init__.py" or path.parent != SRC
            else "__init__"
        )
        for node in source_nodes(path):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("iolab"):
                names = (
                    [node.module]
                    if "." in node.module
                    else [
                        f"iolab.{alias.name}" if _is_room(alias.name) else "iolab"
                        for alias in node.names
                    ]
                )
                graph.setdefault(mine, set()).update(room(n) for n in names)
    return graph


def test_every_room_has_a_layer() -> None:
    assert set(imports()) <= set(LAYERS), set(imports()) - set(LAYERS)


def test_no_room_imports_one_above_it() -> None:
    upward = [
        (mine, other)
        for mine, others in imports().items()
        for other in others
        if other != mine and LAYERS.get(other, 0) > LAYERS[mine]
    ]
    assert not upward, upward


def test_a_name_from_the_package_top_counts_as_an_import_of_the_top() -> None:
    assert _is_room("plan") and _is_room("version") and not _is_room("__version__")
    assert room("iolab") == "__init__"


def test_rooms_import_each_other_without_cycles() -> None:
    graph = {k: v - {k} for k, v in imports().items()}
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        if state.get(node) == 1:
            raise AssertionError(f"import cycle: {' -> '.join([*trail, node])}")
        if state.get(node) == 2:
            return
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            visit(nxt, [*trail, node])
        state[node] = 2

    for node in sorted(graph):
        visit(node, [])


def modules() -> dict[str, set[str]]:
    """module -> the iolab modules it imports (a package's __init__ as the package's name;
    imports under TYPE_CHECKING count: they are how a circle hides)."""
    known = {
        "iolab." + ".".join(p.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
        for p in SRC.rglob("*.py")
    }
    graph: dict[str, set[str]] = {}
    for path in SRC.rglob("*.py"):
        mine = "iolab." + ".".join(path.relative_to(SRC).with_suffix("").parts)
        mine = mine.removesuffix(".__init__")
        found = graph.setdefault(mine, set())
        for node in source_nodes(path):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("iolab"):
                for alias in node.names:
                    name = f"{node.module}.{alias.name}"
                    found.add(name if name in known else node.module)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    trail: list[str] = []

    def visit(node: str) -> list[str] | None:
        if state.get(node) == 1:
            return [*trail[trail.index(node) :], node]
        if state.get(node) == 2:
            return None
        state[node] = 1
        trail.append(node)
        for nxt in sorted(graph.get(node, ())):
            if (found := visit(nxt)) is not None:
                return found
        trail.pop()
        state[node] = 2
        return None

    return next((c for node in sorted(graph) if (c := visit(node)) is not None), None)


def test_no_circle_between_the_modules_of_a_package() -> None:
    """Within a room too: a module imports no module that imports it back (a package's
    __init__, which gathers its modules' names, is left out as a target)."""
    graph = modules()
    packages = {m for m in graph if (SRC / Path(*m.split(".")[1:]) / "__init__.py").exists()}
    inner = {
        mine: {o for o in others if o != mine and o not in packages and room(o) == room(mine)}
        for mine, others in graph.items()
        if mine not in packages
    }
    assert _cycle(inner) is None, " -> ".join(_cycle(inner) or [])


def test_the_circle_finder_finds_one() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def _imported_across(rooms: tuple[str, ...]) -> set[tuple[str, str]]:
    """(module, name) of everything these rooms import from another room: a name, or each
    public name a module they import as a whole defines (`from iolab.fio import parse`)."""
    found: set[tuple[str, str]] = set()
    for mine in rooms:
        for path in (SRC / mine).rglob("*.py"):
            for node in source_nodes(path):
                if (
                    isinstance(node, ast.ImportFrom)
                    and node.module
                    and node.module.startswith("iolab.")
                    and room(node.module) != mine
                ):
                    for alias in node.names:
                        found |= _named(node.module, alias.name)
    return found


def _named(module: str, name: str) -> frozenset[tuple[str, str]]:
    """The name itself, or, where it is a module, the public names it defines."""
    if not (SRC.parent / Path(*f"{module}.{name}".split("."))).with_suffix(".py").exists():
        return frozenset({(module, name)})
    inner = importlib.import_module(f"{module}.{name}")
    return frozenset(
        (inner.__name__, n)
        for n, v in vars(inner).items()
        if not n.startswith("_") and getattr(v, "__module__", None) == inner.__name__
    )


def _store_api() -> set[tuple[str, str]]:
    """Store and every public function and class the store package offers, and those its
    modules define (`store.case_reads`, `store.rows`, ...)."""
    store = importlib.import_module("iolab.store")
    found = {
        ("iolab.store", n)
        for n, v in vars(store).items()
        if not n.startswith("_")
        and (isinstance(v, type) or callable(v))
        and str(getattr(v, "__module__", "")).startswith("iolab.store")
    }
    for module in pkgutil.iter_modules(store.__path__):
        found |= _named("iolab.store", module.name)
    return found


def _spelled(text: str, namespace: dict[str, object]) -> str:
    """An annotation with each alias it names spelled out (`JSONDict` -> `dict[str, Any]`)."""
    for word in set(re.findall(r"[A-Za-z_]\w*", text)):
        alias = namespace.get(word)
        if isinstance(alias, types.GenericAlias | types.UnionType) or (
            type(alias).__module__ == "typing"
        ):
            text = text.replace(word, repr(alias))
    return text


def _own(thing: object) -> list[str]:
    """The annotations a function or a class itself declares, aliases spelled out."""
    namespace = getattr(thing, "__globals__", None)
    if namespace is None:
        namespace = vars(sys.modules.get(getattr(thing, "__module__", None) or "", builtins))
    notes = getattr(thing, "__annotations__", {})
    return [_spelled(str(v), namespace) for v in notes.values()]


def _annotations(thing: object) -> list[str]:
    """Every annotation of a function, or of a class's fields and public methods (class and
    static methods, properties included), as text with the aliases they name spelled out."""
    out = _own(thing)
    if isinstance(thing, type):
        for klass in thing.__mro__[:-1]:
            out += _own(klass) if klass is not thing else []
            for name, member in vars(klass).items():
                method = getattr(member, "fget", None) or getattr(member, "__func__", member)
                if not name.startswith("_") and callable(method):
                    out += _own(method)
    return out


def _loose(pairs: set[tuple[str, str]]) -> list[str]:
    """`module.name: annotation` for each annotation with `Any` in it."""
    untyped = []
    for module, name in sorted(pairs):
        thing = getattr(importlib.import_module(module), name)
        untyped += [f"{module}.{name}: {a}" for a in _annotations(thing) if "Any" in a]
    return untyped


def test_no_untyped_mapping_crosses_from_runner_or_store_to_report() -> None:
    """What report and the runner read of another room is typed, and so is the store's public
    API: no `Any` (nor an alias of it) in a signature or a field of anything they import or
    it offers (JSON kept as JSON is `model.JSON` / `model.JSONObject`)."""
    crossing = _imported_across(("report", "runner"))
    assert ("iolab.store", "Store") in crossing, "the finder finds what report imports"
    assert ("iolab.fio.parse", "load_json") in crossing, "and the names of a module imported"
    store = _store_api()
    assert ("iolab.store", "Store") in store, "the finder finds the store's API"
    assert ("iolab.store.rows", "RunRow") in store, "and what its modules define"
    assert _loose(crossing | store) == []


def test_the_any_finder_finds_one() -> None:
    def loose(facts: dict[str, Any]) -> None: ...

    assert any("Any" in a for a in _annotations(loose))


Bag = dict[str, Any]


def test_the_any_finder_sees_through_an_alias_and_a_classmethod() -> None:
    class Shape:
        @classmethod
        def from_json(cls, data: Bag) -> None: ...

    assert "dict[str, typing.Any]" in _annotations(Shape)


REPORT_RANKS = {
    "cells": 0,
    "charts": 0,
    "data": 0,
    "directions": 0,
    "drives": 0,
    "summary": 0,
    "views": 1,
    "document": 2,
    "compare_document": 2,
    "judged": 2,
    "judged_findings": 2,
    "run": 2,
    "advice": 2,
    "history": 2,
    "render": 2,
    "formats": 3,
    "text": 3,
}


def _report_part(module: str) -> str:
    return module.split(".")[2] if module.count(".") >= 2 else ""


def test_report_parts_import_one_way() -> None:
    """report's layout shows its roles: the model and data at its top, then views, then
    the document and the renderers, then the formats; no part imports one above it."""
    graph = modules()
    parts = {_report_part(m) for m in graph if m.startswith("iolab.report.")}
    assert parts <= set(REPORT_RANKS), parts - set(REPORT_RANKS)
    upward = [
        (mine, other)
        for mine, others in graph.items()
        if mine.startswith("iolab.report.")
        for other in others
        if other.startswith("iolab.report.")
        if REPORT_RANKS[_report_part(other)] > REPORT_RANKS[_report_part(mine)]
    ]
    assert upward == []


def test_the_report_never_chooses_a_metric_itself() -> None:
    """A workload's metric (IOPS, or MB/s for large blocks) is chosen once, where its cases
    are read (store.CaseRow.metric, by model.metric_for); no report module chooses it again."""
    choosing = sorted(
        str(path.relative_to(SRC))
        for path in (SRC / "report").rglob("*.py")
        if any(
            isinstance(node, ast.Name | ast.Attribute | ast.alias)
            and "metric_for"
            in (getattr(node, "id", "") or getattr(node, "attr", "") or getattr(node, "name", ""))
            for node in source_nodes(path)
        )
    )
    assert not choosing, choosing
    read = (SRC / "store" / "case_reads.py").read_text()
    assert "metric_for" in read, "the store's read chooses each case's metric"


# Where the report may call the analysis: where the run is loaded (report.data: json+ bins
# merged, a case's options classified, the checks only a set-up's cases together show; and
# report.run, which reads the user's --pivot) and where it is judged (report.judged: the
# warnings; report.judged_findings: the findings). Every other report
# module takes from iolab.analysis only typed results: classes (dataclasses, enums), type
# aliases and constants, which it words.
CALLS_ANALYSIS = frozenset(
    {"report/data.py", "report/run.py", "report/judged.py", "report/judged_findings.py"}
)

# Report modules that still call analysis functions themselves, each name exactly: a view
# that works out what it shows (it should read it from the judged run instead), the cells'
# statistics, and the texts of `iolab history`, `check` and `advise`. The list only shrinks.
STILL_CALLING = {
    "report/advice.py": {"raid_model.fewest", "raid_model.parse_workload"},
    "report/cells.py": {"stats.compare", "stats.summarize"},
    "report/history.py": {"history.imported", "stats.summarize"},
    "report/text/gate_junit.py": {"history.runs_said"},
    "report/text/history_text.py": {
        "history.imported",
        "history.runs_said",
        "history.shown",
        "stats.summarize",
    },
    "report/views/count_figure.py": {"scaling.sweeps"},
    "report/views/curve_view.py": {
        "latency.unit_for",
        "objective.slo",
        "peak.curve_knee",
        "peak.drift_line",
        "peak.knee_rests",
        "peak.load_label",
        "peak.said",
        "peak.slo_rests",
        "peak.slo_said",
    },
    "report/views/figures.py": {"latency.exceedance", "latency.unit_for", "stats.summarize"},
    "report/views/findings_view.py": {"findings.and_list"},
    "report/views/fleet_view.py": {"fleet.inventory", "fleet.outliers", "fleet.spread"},
    "report/views/hosts_view.py": {"stats.summarize"},
    "report/views/raid_view.py": {
        "raid_model.geometry",
        "raid_model.predict",
        "raid_model.workload",
    },
    "report/views/sweep_heat.py": {"latency.unit_for"},
    "report/views/time_figures.py": {
        "latency.unit_for",
        "levels.step",
        "levels.words",
        "timeseries.settled_from",
    },
}


def _typed_result(found: object) -> bool:
    """A class, a type alias or a constant: what the analysis returns or declares, not what
    it does."""
    return (
        isinstance(found, type | types.UnionType)
        or get_origin(found) is not None
        or not callable(found)
    )


def analysis_functions(path: Path) -> set[str]:
    """The analysis functions a module names ("module.function"), imported by name or reached
    through an imported analysis module."""
    modules: dict[str, str] = {}  # local name -> analysis module
    named: set[tuple[str, str]] = set()
    for node in source_nodes(path):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("iolab.analysis"):
            for alias in node.names:
                whole = f"{node.module}.{alias.name}"
                if _is_module(whole):
                    modules[alias.asname or alias.name] = whole
                else:
                    named.add((str(node.module), alias.name))
        elif isinstance(node, ast.Import):
            assert not any(a.name.startswith("iolab.analysis") for a in node.names), path
    for node in source_nodes(path):
        if not isinstance(node, ast.Attribute):
            continue
        if isinstance(node.value, ast.Name) and node.value.id in modules:
            named.add((modules[node.value.id], node.attr))
    return {
        f"{module.rsplit('.', 1)[1]}.{name}"
        for module, name in named
        if not _typed_result(getattr(importlib.import_module(module), name))
    }


def _is_module(dotted: str) -> bool:
    try:
        return importlib.util.find_spec(dotted) is not None
    except ModuleNotFoundError:
        return False


def test_the_report_words_what_the_analysis_returns() -> None:
    """report/ calls analysis functions only where the run is loaded and judged; elsewhere it
    imports the analysis' typed results alone (and the modules in STILL_CALLING, exactly)."""
    calling = {
        str(path.relative_to(SRC)): found
        for path in sorted((SRC / "report").rglob("*.py"))
        if (found := analysis_functions(path))
    }
    assert {m for m in calling if m not in CALLS_ANALYSIS} == set(STILL_CALLING), calling
    assert {m: f for m, f in calling.items() if m not in CALLS_ANALYSIS} == STILL_CALLING
    assert set(calling) >= CALLS_ANALYSIS, "the loading and the judging call the analysis"


def test_the_analysis_finder_tells_a_function_from_a_result() -> None:
    from iolab.analysis import findings, latency, scaling

    assert not _typed_result(scaling.flat_scaling)
    assert not _typed_result(latency.merge)
    assert all(map(_typed_result, (findings.Finding, scaling.Options, latency.MICROSECONDS)))
