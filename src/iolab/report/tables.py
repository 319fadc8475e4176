"""The report's other tables: latency percentiles and the recorded environment."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from iolab.analysis import latency
from iolab.analysis.environment import EnvDifference, differences
from iolab.model import DIRECTIONS, Direction, DirectionMetrics
from iolab.report.data import Case, Dataset, SetupInfo
from iolab.report.model import Cell, Row, Table, stat_cell
from iolab.targets.facts import SetupFacts, TargetFacts
from iolab.units import human_bytes

Statistic = Callable[[DirectionMetrics], float | None]
LATENCY_COLUMNS: tuple[tuple[str, Statistic], ...] = (
    ("mean", lambda m: m.lat_mean_ns),
    ("p50", lambda m: m.percentiles_ns.get("50")),
    ("p90", lambda m: m.percentiles_ns.get("90")),
    ("p99", lambda m: m.percentiles_ns.get("99")),
    ("p99.9", lambda m: m.percentiles_ns.get("99.9")),
    ("p99.99", lambda m: m.percentiles_ns.get("99.99")),
    ("max", lambda m: m.lat_max_ns),
)


def _latency(case: Case, direction: Direction, statistic: Statistic) -> float | None:
    m = case.metrics.get(direction)
    if case.status != "ok" or m is None:
        return None
    return statistic(m)


def _format(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}" if value >= 10 else f"{value:.2f}"


def latency_table(data: Dataset) -> Table | None:
    """Completion latency per workload, set-up and direction: mean, percentiles and max, each
    the median of the repetitions (± its 95% interval); one unit for the whole table."""
    entries = []
    for workload in data.workloads():
        for label in data.labels:
            cases = data.cell(label, workload)
            for direction in DIRECTIONS:
                values = {
                    name: [v for c in cases if (v := _latency(c, direction, stat)) is not None]
                    for name, stat in LATENCY_COLUMNS
                }
                if values["p50"] or values["mean"]:
                    entries.append((workload, label, direction, values))
    if not entries:
        return None
    unit = latency.unit_for([v for *_, values in entries for v in values["p50"]])
    rows = []
    for workload, label, direction, values in entries:
        cells = tuple(_cell(values[name], unit) for name, _ in LATENCY_COLUMNS)
        rows.append(Row(workload, cells, (label, direction)))
    return Table(
        f"Completion latency ({unit[0]})",
        "workload",
        tuple(f"{name} ({unit[0]})" for name, _ in LATENCY_COLUMNS),
        tuple(rows),
        name="latency",
        stub_headers=("setup", "direction"),
        column_header="statistic",
        column_keys=tuple(name for name, _ in LATENCY_COLUMNS),
    )


def _cell(values: Sequence[float], unit: tuple[str, float]) -> Cell:
    if not values:
        return Cell(None, unit[0], "—")
    return stat_cell([v / unit[1] for v in values], unit[0], "lat", _format)


# ---------------------------------------------------------------- environment

HOST_FACTS: tuple[tuple[str, str], ...] = (
    ("host", "hostname"),
    ("CPU", "cpu_model"),
    ("CPU threads", "threads"),
    ("memory", "memory_bytes"),
    ("virtualised", "virtualized"),
    ("kernel", "kernel"),
    ("distribution", "distro"),
    ("fio", "fio_version"),
)
TargetFact = Callable[[TargetFacts], Any]
SETUP_FACTS: tuple[tuple[str, TargetFact], ...] = (
    ("target", lambda t: t.path),
    ("filesystem", lambda t: t.filesystem and t.filesystem.fstype),
    ("mount options", lambda t: t.filesystem and t.filesystem.options),
    ("device", lambda t: t.device and t.device.path),
    ("model", lambda t: t.device and t.device.model),
    ("firmware", lambda t: t.device and t.device.firmware),
    ("transport", lambda t: t.device and t.device.transport),
    ("rotational", lambda t: t.device and t.device.rotational),
    ("scheduler", lambda t: t.device and t.device.scheduler),
    ("write cache", lambda t: t.device and t.device.write_cache),
    ("RAID", lambda t: t.raid and t.raid.to_json()),
)


def _setup_facts(setup: SetupInfo) -> SetupFacts:
    return SetupFacts.from_json(setup.environment)


def _layout(setup: SetupInfo) -> Mapping[str, Any] | None:
    """A set-up's definition less its name, kind and path: how its layout was asked for."""
    layout = {k: v for k, v in setup.definition.items() if k not in ("name", "kind", "path")}
    return layout or None


def _text(key: str, value: Any) -> str:
    if value is None or value == "":
        return "—"
    if key == "memory_bytes" and isinstance(value, int | float):
        return human_bytes(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={v}" for k, v in value.items() if v not in (None, "", [], {}))
    return str(value)


def environment_table(data: Dataset) -> Table:
    """The host and target facts recorded with each set-up, set-ups as columns."""
    runs = {run.id: run for run in data.runs}
    rows = []
    for name, key in HOST_FACTS:
        texts = [_text(key, runs[s.run_id].environment.get(key)) for s in data.setups]
        rows.append(Row(name, tuple(Cell(None, "", t) for t in texts)))
    targets = [_setup_facts(s).target for s in data.setups]
    for name, fact in SETUP_FACTS:
        texts = [_text(name, fact(t) if t else None) for t in targets]
        rows.append(Row(name, tuple(Cell(None, "", t) for t in texts)))
    texts = [_text("layout", _layout(s)) for s in data.setups]
    rows.append(Row("layout", tuple(Cell(None, "", t) for t in texts)))
    return Table(
        "Environment",
        "fact",
        data.labels,
        tuple(rows),
        notes=_differing(rows),
        name="environment",
        column_header="setup",
    )


def _differing(rows: list[Row]) -> tuple[str, ...]:
    """One note naming the facts whose values are not the same for every set-up."""
    if not rows or len(rows[0].cells) < 2:
        return ()
    differ = [row.label for row in rows if len({cell.text for cell in row.cells}) > 1]
    if not differ:
        return ("Every fact shown is the same for all set-ups.",)
    return (f"Differs between set-ups: {', '.join(differ)}.",)


def environment_differences(data: Dataset, limit: int = 20) -> list[str]:
    """What differs between the runs' hosts, and between same-named set-ups across runs: one
    line per fact, with each run's value."""
    if len(data.runs) < 2:
        return []
    found = [
        (d, [r.id for r in data.runs])
        for d in differences("host", [r.environment for r in data.runs])
    ]
    for name in sorted({s.name for s in data.setups}):
        same = [s for s in data.setups if s.name == name]
        if len(same) > 1:
            ids = [s.run_id for s in same]
            stored = [_setup_facts(s).to_json() for s in same]
            found += [(d, ids) for d in differences(f"set-up {name!r}", stored)]
    lines = [_describe(diff, ids) for diff, ids in found[:limit]]
    if len(found) > limit:
        lines.append(f"… and {len(found) - limit} more differences (see the environment table)")
    return lines


def _describe(diff: EnvDifference, run_ids: Sequence[int]) -> str:
    values = "; ".join(
        f"run {run}: {value}" for run, value in zip(run_ids, diff.values, strict=True)
    )
    return f"{diff.where}: {diff.key} differs ({values})"
