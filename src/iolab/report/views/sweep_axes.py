"""What a scaling chart may sweep, and what its lines keep apart.

Axes are the options that change the workload (fio.options.workload_axis: one list, in one
place): never the file fio used, its logs, its job's name or a reporting option, which an
imported tree's JSON carries and which differ from file to file (fio-plot's sample trees name
each point's logs after its iodepth). A line never averages reads and writes together: where a
chart's points are means over many workloads, each direction (reads, writes, mixes) has its
own line."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from iolab.fio import options as fio_options
from iolab.report.charts import Axis, Chart, Series, slug
from iolab.report.data import DataCase, Dataset
from iolab.units import parse_size

SCALING_FIELDS = ("numjobs", "iodepth", "bs", "rwmixread")  # the x axes, first these

SIZE_FIELDS = frozenset({"bs", "size", "filesize"})
DIRECTION_OF = {
    "read": "reads",
    "randread": "reads",
    "write": "writes",
    "randwrite": "writes",
    "trim": "trims",
    "randtrim": "trims",
    "rw": "mixed",
    "readwrite": "mixed",
    "randrw": "mixed",
    "trimwrite": "mixed",
    "randtrimwrite": "mixed",
}


def varying(cases: Sequence[DataCase]) -> dict[str, list[Any]]:
    """The workload axes whose values differ between cases, with their distinct values, by
    name."""
    distinct = _distinct(cases)
    keys = sorted(k for k in {k for o in distinct for k in o} if fio_options.workload_axis(k))
    out: dict[str, list[Any]] = {}
    for key in keys:
        values: list[Any] = []
        for options in distinct:
            value = options.get(key)
            if value not in values:
                values.append(value)
        if len(values) > 1:
            out[key] = values
    return out


def _distinct(cases: Sequence[DataCase]) -> list[Mapping[str, Any]]:
    """The cases' options, each once, in the order the cases first have them: the set-ups
    and repetitions of a workload share theirs (compared where a workload's differ, as
    another run's may)."""
    seen: dict[str, list[Mapping[str, Any]]] = {}
    out: list[Mapping[str, Any]] = []
    last: tuple[str, Mapping[str, Any] | None] = ("", None)
    for case in cases:
        if case.options is last[1] and case.workload == last[0]:  # the case before's: kept
            continue  # (a workload's set-ups and repetitions share its options)
        last = (case.workload, case.options)
        kept = seen.setdefault(case.workload, [])
        if not any(case.options is o or case.options == o for o in kept):
            kept.append(case.options)
            out.append(case.options)
    return out


def number(field: str, value: Any) -> float | None:
    """An axis value as a number (a size in bytes); None when it is not one."""
    try:
        if field in SIZE_FIELDS:
            return float(parse_size(value))
        return float(value) if not isinstance(value, bool) else None
    except (TypeError, ValueError):
        return None


def direction(options: Mapping[str, Any]) -> str:
    """What a workload's line is kept apart by: "reads", "writes", "mixed" (fio's rw, read
    by default), or the rw itself where it is none of fio's patterns."""
    rw = str(options.get("rw", "read")).split(":")[0]
    return DIRECTION_OF.get(rw, rw)


def said(part: str, name: str) -> bool:
    """Whether a workload's name already says "KEY=VALUE": in those words, or, for its block
    size and pattern, by the value alone, as iolab names a sweep's points ("4k randread
    iodepth=1" says bs=4k and rw=randread)."""
    words = name.split()
    key, _, value = part.partition("=")
    return part in words or (key in ("bs", "rw") and value in words)


def line_name(direction: str, patterns: Sequence[str]) -> str:
    """A direction's line as a legend names it: its one pattern ("randread"), or the direction
    with its patterns ("reads: randread, read")."""
    return patterns[0] if len(patterns) == 1 else f"{direction}: {', '.join(patterns)}"


# ---------------------------------------------------------------- means over many workloads

XAxis = Callable[[str, Sequence[float]], Axis]


@dataclass(frozen=True)
class _Field:
    """One swept field's points: per (set-up, direction, value) the logs of the medians of
    every workload point there; the fields each point is a mean over."""

    name: str
    xs: list[float]
    found: dict[tuple[str, str, float | None], list[float]]
    over: list[str]
    swept: list[str]  # every field the workloads sweep


def means(
    data: Dataset,
    ok: Sequence[DataCase],
    cells: Mapping[tuple[str, str], list[float]],
    axes: tuple[Axis, XAxis],
    groups: int,
) -> list[Chart]:
    """Charts of a sweep of too many combinations for a chart each: per swept numeric field,
    each point the geometric mean, per set-up and direction, of the medians (`cells`, by
    set-up and workload) of every workload point with that value. Reads, writes and mixes are
    never one line: with several, one set-up's chart has a line per direction, several
    set-ups' a chart per direction."""
    swept = varying(ok)
    fields = [f for f in dict.fromkeys((*SCALING_FIELDS, *sorted(swept))) if f in swept]
    fields = [f for f in fields if all(number(f, v) is not None for v in swept[f])]
    logs = {key: math.log(statistics.median(values)) for key, values in cells.items() if values}
    options = {c.workload: c.options for c in ok}
    ways = {w: direction(o) for w, o in options.items()}
    patterns = _patterns(options.values())
    lines = {way: line_name(way, found) for way, found in patterns.items()}
    mixed = any(len(found) > 1 for found in patterns.values())  # rw averaged within a line
    charts = []
    for field in fields:
        xs = sorted({n for v in swept[field] if (n := number(field, v)) is not None})
        found: dict[tuple[str, str, float | None], list[float]] = {}
        for (setup, workload), log in logs.items():
            at = number(field, options[workload].get(field))
            found.setdefault((setup, ways[workload], at), []).append(log)
        over = [f for f in swept if f != field and (f != "rw" or mixed)]
        charts += _charts(
            data, _Field(field, xs, found, over, list(swept)), lines, axes, (groups, len(options))
        )
    return charts


def _patterns(options: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Each direction's patterns (fio's rw), in the order the workloads have them."""
    out: dict[str, list[str]] = {}
    for one in options:
        found = out.setdefault(direction(one), [])
        if (rw := str(one.get("rw", "read"))) not in found:
            found.append(rw)
    return out


def _charts(
    data: Dataset,
    at: _Field,
    lines: dict[str, str],
    axes: tuple[Axis, XAxis],
    counts: tuple[int, int],
) -> list[Chart]:
    """One field's charts: one with a line per set-up where every case goes one way; else one
    with a line per direction (one set-up), or one per direction with a line per set-up."""
    colors = {label: index for index, label in enumerate(data.labels)}
    over = f"geometric mean over {', '.join(at.over)}" if at.over else "median"
    caption = (
        f"{counts[1]:,} workload points sweep {', '.join(at.swept)}: too many "
        f"combinations for a chart each ({counts[0]:,}). Each point is the geometric mean of the "
        f"medians of every workload point with that {at.name}, per set-up"
    )
    name = f"scaling-{slug(at.name)}"
    if len(lines) == 1:
        (way,) = lines
        drawn = tuple(_line(at, label, way, label, colors[label]) for label in data.labels)
        return [
            _chart(
                f"{name}-geometric-mean",
                at,
                f"{over} (one line per set-up)",
                drawn,
                axes,
                caption + ".",
            )
        ]
    caption += " and direction: reads and writes are never one line."
    if len(data.labels) == 1:
        (label,) = data.labels
        drawn = tuple(_line(at, label, way, line, None) for way, line in lines.items())
        title = f"{label}, {over} (one line per direction)"
        return [_chart(f"{name}-geometric-mean", at, title, drawn, axes, caption)]
    return [
        _chart(
            f"{name}-{slug(way)}-geometric-mean",
            at,
            f"{line}, {over} (one line per set-up)",
            tuple(_line(at, label, way, label, colors[label]) for label in data.labels),
            axes,
            caption,
        )
        for way, line in lines.items()
    ]


def _line(at: _Field, setup: str, way: str, name: str, color: int | None) -> Series:
    ys = tuple(
        math.exp(statistics.fmean(v)) if (v := at.found.get((setup, way, x))) else None
        for x in at.xs
    )
    return Series(name, tuple(at.xs), ys, (None,) * len(ys), color=color)


def _chart(
    name: str,
    at: _Field,
    about: str,
    drawn: tuple[Series, ...],
    axes: tuple[Axis, XAxis],
    caption: str,
) -> Chart:
    y, x_axis = axes
    title = f"{y.title[:1].upper()}{y.title[1:]} vs {at.name}: {about}"
    return Chart(name, "line", title, x_axis(at.name, at.xs), y, drawn, caption=caption)
