"""A plan's history as a document (`iolab history --format markdown|html`): a table of every
series, then a trend chart for each series that moved (a step beyond the run-to-run noise, a
lone outlier, a change point or a run with other load): each run's mean with its
repetitions' 95% interval, the level between change points as a line of its own, each change
point shaded from the run before it, with what changed in the caption."""

from __future__ import annotations

from collections.abc import Sequence

from iolab.analysis.history import FOREIGN, RunChange, RunSeries, imported
from iolab.analysis.stats import summarize
from iolab.names import one_line
from iolab.report.cells import Cell, Row, Table, format_value, utc
from iolab.report.charts import Axis, Chart, Region, slug
from iolab.report.charts import Series as Line
from iolab.report.document import Document, Notes, Section
from iolab.store import RunRow

MOST_CHARTS = 60  # a long plan draws the series that moved most; the table lists them all
MOST_TICKS = 12


def document(plan_name: str, runs: Sequence[RunRow], found: Sequence[RunSeries]) -> Document:
    moved = sorted(
        (s for s in found if s.steps or s.changes or any(p.foreign for p in s.points)),
        key=_moved,
        reverse=True,
    )
    drawn = moved[:MOST_CHARTS]
    notes = (
        []
        if len(moved) <= MOST_CHARTS
        else [
            f"{len(moved)} series moved; the {MOST_CHARTS} with the largest change are drawn "
            "(iolab history --json has them all)."
        ]
    )
    head = Section("Series", (_table(found), *([Notes("Notes", tuple(notes))] if notes else ())))
    source = _source(plan_name, runs)
    sections = [head, *(Section(_label(s), (_chart(s, source), *_said(s))) for s in drawn)]
    title = f"History of plan {one_line(plan_name)!r}"
    return Document(title, _subtitle(plan_name, runs), tuple(sections))


def _label(series: RunSeries) -> str:
    return f"{series.setup} · {series.workload} · {series.metric}"


def _moved(series: RunSeries) -> float:
    sizes = [abs(c.change_pct or 0.0) for c in series.changes]
    return max([*sizes, *(abs(s.change_pct) for s in series.steps)], default=0.0)


def _subtitle(plan_name: str, runs: Sequence[RunRow]) -> tuple[str, ...]:
    if not runs:
        return ()
    first, last = utc(runs[0].started_at), utc(runs[-1].started_at)
    if len(runs) == 1:
        said = [f"1 run, {runs[0].id}, {first}"]
    else:
        said = [f"{len(runs)} runs, {runs[0].id} to {runs[-1].id}, {first} to {last}"]
    joined = imported(plan_name, runs)
    if joined:
        said.append(f"imported runs joined: {', '.join(map(str, joined))}")
    return tuple(said)


def _source(plan_name: str, runs: Sequence[RunRow]) -> str:
    """The line under every chart: the iolab that measured, the plan, its runs and dates,
    the hosts (as a report's charts carry, report.views.publish)."""
    if not runs:
        return ""
    versions = ", ".join(dict.fromkeys(r.iolab_version for r in runs if r.iolab_version))
    hosts = dict.fromkeys(
        str(r.environment.get("hostname") or r.origin.hostname or "?") for r in runs
    )
    first, last = utc(runs[0].started_at)[:10], utc(runs[-1].started_at)[:10]
    dates = first if first == last else f"{first} to {last}"
    which = f"run {runs[0].id}" if len(runs) == 1 else f"runs {runs[0].id} to {runs[-1].id}"
    return (
        f"Source: iolab {versions or '?'}; plan {one_line(plan_name)!r}; {which} of {dates}; "
        f"host{'s' if len(hosts) > 1 else ''} {', '.join(hosts)}"
    )


def _table(found: Sequence[RunSeries]) -> Table:
    rows = []
    for series in found:
        first, latest = series.points[0], series.points[-1]
        rows.append(
            Row(
                series.workload,
                (
                    Cell(first.mean, series.unit, format_value(first.mean, series.metric)),
                    Cell(latest.mean, series.unit, format_value(latest.mean, series.metric)),
                    Cell(float(len(series.points)), "", str(len(series.points))),
                    Cell(None, "", ", ".join(f"run {c.run_id}" for c in series.changes) or "none"),
                ),
                (series.setup, series.metric),
            )
        )
    return Table(
        "Every series",
        "workload",
        ("first run", "latest run", "runs", "change points"),
        tuple(rows),
        ("each figure: the mean of that run's repetitions.",),
        stub_headers=("set-up", "metric"),
        name="history",
        column_header="figure",
    )


def _chart(series: RunSeries, source: str = "") -> Chart:
    """The points in time order, one step apart (an imported run's id may be higher than a
    later run's), each labelled with its run's id."""
    runs = tuple(float(i) for i in range(len(series.points)))
    means = tuple(p.mean for p in series.points)
    spread = tuple(summarize(p.values).half_width for p in series.points)
    lines = [Line("run mean", runs, means, spread, color=0)]
    level = _levels(series)
    if level:
        lines.append(Line("level between change points", runs, level, color=1))
    return Chart(
        name=f"history-{slug(_label(series))}",
        kind="line",
        title=f"{series.metric} over runs: {series.setup} · {series.workload}",
        x=Axis("run, in the order they ran", ticks=_ticks(series)),
        y=Axis(series.metric, series.unit, start_at_zero=True),
        series=tuple(lines),
        regions=tuple(_region(series, c) for c in series.changes),
        caption=_caption(series),
        source=source,
    )


def _levels(series: RunSeries) -> tuple[float | None, ...]:
    """Each run's level: the mean of the figures between the change points around it."""
    if not series.changes:
        return ()
    starts = {c.run_id: c.after for c in series.changes}
    level: float | None = series.changes[0].before
    out = []
    for point in series.points:
        level = starts.get(point.run_id, level)
        out.append(level)
    return tuple(out)


def _ticks(series: RunSeries) -> tuple[tuple[float, str], ...]:
    """A tick per run, or about a dozen evenly spaced over a long history."""
    every = max(1, len(series.points) // MOST_TICKS)
    return tuple((float(i), str(p.run_id)) for i, p in enumerate(series.points) if i % every == 0)


def _region(series: RunSeries, change: RunChange) -> Region:
    at = [p.run_id for p in series.points].index(change.run_id)
    return Region(max(at - 1, 0) + 0.0, at + 0.0, f"change point at run {change.run_id}")


def _caption(series: RunSeries) -> str:
    if not series.changes:
        return "No change point; the runs' steps beyond the run-to-run noise are listed below."
    said = [
        f"run {c.run_id}: {c.change_pct:+.1f}%"
        + (f" ± {c.half_width_pct:.1f}%" if c.half_width_pct is not None else "")
        + (f" ({'; '.join(c.facts)})" if c.facts else "")
        for c in series.changes
        if c.change_pct is not None
    ]
    return "Change points (the shaded runs): " + ", ".join(said) + "."


def _said(series: RunSeries) -> tuple[Notes, ...]:
    lines = [
        f"run {s.run_id}: {s.change_pct:+.1f}%"
        + (f" ± {s.half_width_pct:.1f}%" if s.half_width_pct is not None else "")
        + (
            f" from the run before, a lone outlier (run {s.back} is back to the level)"
            if s.back is not None
            else " from the run before"
        )
        + (f"; changed: {', '.join(s.facts)}" if s.facts else "")
        for s in series.steps
    ]
    loaded = [
        f"run {p.run_id} had other load on the host ({FOREIGN}): judged like any run, its "
        "spread part of the host's run-to-run noise"
        for p in series.points
        if p.foreign
    ]
    notes = [Notes("Steps between runs", tuple(lines), "steps")] if lines else []
    if loaded:
        notes.append(Notes("Runs with other load", tuple(loaded), "load"))
    return tuple(notes)
