"""`iolab history` and `iolab check` as text: one block per series, one line per run, the
changes marked with their size and what differs between the runs; one line per verdict."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence

from iolab.analysis.history import Series, Step, Verdict
from iolab.names import one_line
from iolab.store import RunRow


def _figure(value: float, unit: str) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}" if unit != "µs" else f"{value:,.0f}"


def _step(step: Step) -> str:
    size = f"{step.change_pct:+.1f}%"
    if step.half_width_pct is not None:
        size += f" ± {step.half_width_pct:.1f}%"
    else:
        size += " (one run each: no interval)"
    facts = f"; changed: {', '.join(step.facts)}" if step.facts else ""
    return f"  <- change {size}{facts}"


def history(plan_name: str, runs: Sequence[RunRow], found: Sequence[Series]) -> str:
    lines = [f"plan {one_line(plan_name)!r}: {len(runs)} runs, {len(found)} series"]
    for one in found:
        changed = {s.run_id: s for s in one.steps}
        calm = "" if one.steps else ": no change beyond the noise"
        lines.append(f"\n{one_line(one.setup)} · {one_line(one.workload)} · {one.metric} "
                     f"({one.unit}){calm}")  # fmt: skip
        for point in one.points:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(point.started_at))
            step = changed.get(point.run_id)
            lines.append(f"  run {point.run_id:>4}  {when}  {_figure(point.median, one.unit):>10}"
                         f"  (n={len(point.values)}){_step(step) if step else ''}")  # fmt: skip
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
            }
            for s in found
        ],
    }  # fmt: skip
    return json.dumps(out, indent=2, ensure_ascii=False) + "\n"


def verdict(v: Verdict) -> str:
    s = v.series
    size = f"{v.change_pct:+.1f}%" + (f" ± {v.half_width_pct:.1f}%" if v.half_width_pct else "")
    head = "REGRESSION" if v.regression else "ok"
    return (
        f"{head}: {one_line(s.setup)} · {one_line(s.workload)} · {s.metric}: "
        f"{_figure(v.base.median, s.unit)} -> {_figure(v.latest.median, s.unit)} {s.unit} "
        f"({size}; allowed {v.allowed_pct:g}% worse): {v.words}"
    )
