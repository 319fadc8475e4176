"""`iolab history` and `iolab check` as text: one block per series, one line per run, the
changes marked with their size and what differs between the runs (a step from the run before,
"<- change"; a change point, where a new level starts, "<= new level"); the series as CSV;
one line per verdict."""

from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Sequence

from iolab.analysis.history import Change, Series, Step, Verdict, imported
from iolab.analysis.stats import summarize
from iolab.names import one_line, spreadsheet_cell
from iolab.store import RunRow


def _figure(value: float, unit: str) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}" if unit != "µs" else f"{value:,.0f}"


def _step(step: Step) -> str:
    size = f"{step.change_pct:+.1f}%"
    if step.half_width_pct is not None:
        size += f" ± {step.half_width_pct:.1f}%"
    else:
        size += " (one repetition on a side: no interval)"
    return f"  <- change {size}"


def _level(change: Change) -> str:
    size = "from 0" if change.change_pct is None else f"{change.change_pct:+.1f}%"
    if change.half_width_pct is not None:
        size += f" ± {change.half_width_pct:.1f}%"
    return f"  <= new level {size} (p {change.p_value:.3f})"


def _marks(step: Step | None, change: Change | None) -> str:
    """A run's marks: its step, its change point, then once what differs from the run before."""
    facts = (step.facts if step else ()) or (change.facts if change else ())
    said = f"; changed: {', '.join(facts)}" if facts else ""
    return (_step(step) if step else "") + (_level(change) if change else "") + said


def history(plan_name: str, runs: Sequence[RunRow], found: Sequence[Series]) -> str:
    lines = [f"plan {one_line(plan_name)!r}: {len(runs)} runs, {len(found)} series"]
    joined = set(imported(plan_name, runs))
    if joined:
        listed = ", ".join(str(i) for i in sorted(joined))
        lines[0] += f" (imported runs joined: {listed})"
    for one in found:
        changed = {s.run_id: s for s in one.steps}
        levels = {c.run_id: c for c in one.changes}
        calm = "" if one.steps or one.changes else ": no change beyond the noise"
        lines.append(f"\n{one_line(one.setup)} · {one_line(one.workload)} · {one.metric} "
                     f"({one.unit}){calm}")  # fmt: skip
        for point in one.points:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(point.started_at))
            marks = _marks(changed.get(point.run_id), levels.get(point.run_id))
            origin = " imported" if point.run_id in joined else ""
            lines.append(f"  run {point.run_id:>4}  {when}  {_figure(point.median, one.unit):>10}"
                         f"  (n={len(point.values)}){origin}{marks}")  # fmt: skip
    return "\n".join(lines) + "\n"


def history_json(plan_name: str, found: Sequence[Series]) -> str:
    out = {
        "plan": plan_name,
        "series": [
            {
                "setup": s.setup, "workload": s.workload, "metric": s.metric, "unit": s.unit,
                "points": [{"run": p.run_id, "started_at": p.started_at, "median": p.median,
                            "values": list(p.values)} for p in s.points],
                "changes": [{"run": c.run_id, "change_pct": c.change_pct,
                             "half_width_pct": c.half_width_pct, "significant": c.significant,
                             "facts": list(c.facts)} for c in s.steps],
                "change_points": [{"run": c.run_id, "p_value": c.p_value, "before": c.before,
                                   "after": c.after, "change_pct": c.change_pct,
                                   "half_width_pct": c.half_width_pct,
                                   "facts": list(c.facts)} for c in s.changes],
            }
            for s in found
        ],
    }  # fmt: skip
    # one line: a long history's JSON is written by the C encoder, several times faster than
    # an indented one (jq . indents it for reading)
    return json.dumps(out, ensure_ascii=False) + "\n"


CSV_HEADER = ("setup", "workload", "metric", "unit", "run", "started_at", "median", "n",
              "ci95_low", "ci95_high", "step_pct", "change_point_pct")  # fmt: skip


def history_csv(found: Sequence[Series]) -> str:
    """One line per series and run, long ("tidy"): the run's median with its repetitions'
    95% interval, the step from the run before where one is marked, and the change of level
    where a change point starts."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for one in found:
        steps = {s.run_id: s.change_pct for s in one.steps}
        levels = {c.run_id: c.change_pct for c in one.changes}
        for point in one.points:
            summary = summarize(point.values)
            texts = (one.setup, one.workload, one.metric, one.unit)
            figures = (point.median, summary.n, summary.low, summary.high,
                       steps.get(point.run_id), levels.get(point.run_id))  # fmt: skip
            writer.writerow([*(spreadsheet_cell(one_line(t)) for t in texts), point.run_id,
                             f"{point.started_at:.3f}",
                             *("" if v is None else f"{v:.6g}" for v in figures)])  # fmt: skip
    return buffer.getvalue()


def verdict(v: Verdict) -> str:
    s = v.series
    size = f"{v.change_pct:+.1f}%" + (f" ± {v.half_width_pct:.1f}%" if v.half_width_pct else "")
    head = "REGRESSION" if v.regression else "ok"
    return (
        f"{head}: {one_line(s.setup)} · {one_line(s.workload)} · {s.metric}: "
        f"{_figure(v.base.median, s.unit)} -> {_figure(v.latest.median, s.unit)} {s.unit} "
        f"({size}; allowed {v.allowed_pct:g}% worse): {v.words}"
    )
