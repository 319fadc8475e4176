"""`iolab history` and `iolab check` as text: one block per series, one line per run (its
time to the second, its figure: the mean of its repetitions), the changes marked with their
size and what differs between the runs (a step out of or back into the run-to-run noise,
"<- change"; a lone outlier, "<- outlier"; a change point, where a new level starts, "<= new
level"), runs with other load marked; the series as CSV; one line per verdict, and the
lines that say what `check` did not judge."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence

from iolab.analysis.gate_verdicts import Checked, Paired, SeriesVerdict
from iolab.analysis.history import (
    CPU_BOUND,
    FOREIGN,
    LATEST,
    RunChange,
    RunPoint,
    RunSeries,
    RunStep,
    imported,
    shown,
)
from iolab.analysis.stats import summarize
from iolab.names import one_line, runs_said, spreadsheet_cell
from iolab.report.cells import utc
from iolab.store import RunRow


def _figure(value: float, unit: str) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}" if unit != "µs" else f"{value:,.0f}"


def _step(step: RunStep) -> str:
    size = f"{step.change_pct:+.1f}%"
    if step.half_width_pct is not None:
        size += f" ± {step.half_width_pct:.1f}%"
    else:
        size += " (one repetition on a side: no interval)"
    if step.back is not None:
        return f"  <- outlier {size} (lone: run {step.back} is back to the level)"
    return f"  <- change {size}"


def _load(point: RunPoint) -> str:
    """A run's load marks: other load on the host (judged beside it), fio's own CPU load."""
    if point.foreign:
        return f"  [{FOREIGN}: other load on the host]"
    return f"  [{CPU_BOUND}: fio's own load]" if CPU_BOUND in point.load else ""


def _level(change: RunChange) -> str:
    size = "from 0" if change.change_pct is None else f"{change.change_pct:+.1f}%"
    if change.half_width_pct is not None:
        size += f" ± {change.half_width_pct:.1f}%"
    return f"  <= new level {size} (p {change.p_value:.3f})"


def _marks(step: RunStep | None, change: RunChange | None) -> str:
    """A run's marks: its step, its change point, then once what differs from the run before."""
    facts = (step.facts if step else ()) or (change.facts if change else ())
    said = f"; changed: {', '.join(facts)}" if facts else ""
    return (_step(step) if step else "") + (_level(change) if change else "") + said


def _head(run_id: int, started_at: float) -> str:
    return f"  run {run_id:>4}  {utc(started_at)}  "


def history(
    plan_name: str, runs: Sequence[RunRow], found: Sequence[RunSeries], every: bool = False
) -> str:
    """Each series' latest runs and every marked one (history.shown; `every`: all runs)."""
    count = f"{len(runs)} run{'s' if len(runs) != 1 else ''}"
    lines = [f"plan {one_line(plan_name)!r}: {count}, {len(found)} series"]
    joined = set(imported(plan_name, runs))
    if joined:
        listed = ", ".join(str(i) for i in sorted(joined))
        lines[0] += f" (imported runs joined: {listed})"
    if not every and any(len(one.points) > LATEST for one in found):
        lines[0] += f"; each series' latest {LATEST} runs and every change shown (--all: every run)"
    said = {r.id: _head(r.id, r.started_at) for r in runs}  # once per run,
    for one in found:  # not once per series and run
        changed = {s.run_id: s for s in one.steps}
        levels = {c.run_id: c for c in one.changes}
        calm = "" if one.steps or one.changes else ": no change beyond the run-to-run noise"
        unit = one.unit
        points = shown(one, every)
        left = len(one.points) - len(points)
        earlier = f" ({left} earlier run{'s' if left != 1 else ''} not shown)" if left else ""
        lines.append(
            f"\n{one_line(one.setup)} · {one_line(one.workload)} · {one.metric} ({unit}){calm}"
            f"{earlier}"
        )
        for point in points:  # 100,000 lines in a long history with --all: most have no marks
            run = point.run_id
            marked = run in changed or run in levels
            marks = _marks(changed.get(run), levels.get(run)) if marked else ""
            origin = " imported" if run in joined else ""
            head = said.get(run) or _head(run, point.started_at)  # a run not listed
            lines.append(
                f"{head}{_figure(point.mean, unit):>10}  (n={len(point.values)})"
                f"{origin}{_load(point) if point.load else ''}{marks}"
            )
    return "\n".join(lines) + "\n"


def history_json(plan_name: str, found: Sequence[RunSeries], every: bool = False) -> str:
    """The series as JSON: each one's points shown (history.shown; `every`: all of them),
    how many runs it has, its steps and change points. Never NaN nor Infinity: a history
    that holds one is refused before anything is shown (app.gate)."""
    out = {
        "plan": plan_name,
        "all_runs": every,
        "series": [
            {
                "setup": s.setup,
                "workload": s.workload,
                "metric": s.metric,
                "unit": s.unit,
                "runs": len(s.points),
                "points": [
                    {
                        "run": p.run_id,
                        "started_at": p.started_at,
                        "started": utc(p.started_at),
                        "mean": p.mean,
                        "median": p.median,
                        "values": list(p.values),
                        "load": sorted(p.load) if p.load else [],
                    }
                    for p in shown(s, every)
                ],
                "changes": [
                    {
                        "run": c.run_id,
                        "change_pct": c.change_pct,
                        "half_width_pct": c.half_width_pct,
                        "significant": c.significant,
                        "outlier": c.outlier,
                        "back": c.back,
                        "facts": list(c.facts),
                    }
                    for c in s.steps
                ],
                "change_points": [
                    {
                        "run": c.run_id,
                        "p_value": c.p_value,
                        "before": c.before,
                        "after": c.after,
                        "change_pct": c.change_pct,
                        "half_width_pct": c.half_width_pct,
                        "facts": list(c.facts),
                    }
                    for c in s.changes
                ],
            }
            for s in found
        ],
    }
    # one line: a long history's JSON is written by the C encoder, several times faster than
    # an indented one (jq . indents it for reading)
    return json.dumps(out, ensure_ascii=False, allow_nan=False) + "\n"


CSV_HEADER = (
    "setup",
    "workload",
    "metric",
    "unit",
    "run",
    "started_at",
    "median",
    "n",
    "ci95_low",
    "ci95_high",
    "step_pct",
    "change_point_pct",
    "started",
    "mean",
    "outlier",
    "load",
)


def history_csv(found: Sequence[RunSeries], every: bool = False) -> str:
    """One line per series and run shown (history.shown; `every`: every run), long
    ("tidy"): the run's median and mean with its
    repetitions' 95% interval, the step from the run before where one is marked (a lone
    outlier's too, `outlier` 1), the change of level where a change point starts, the time to
    the second, and its load warnings."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for one in found:
        steps = {s.run_id: s for s in one.steps}
        levels = {c.run_id: c.change_pct for c in one.changes}
        for point in shown(one, every):
            summary = summarize(point.values)
            texts = (one.setup, one.workload, one.metric, one.unit)
            step = steps.get(point.run_id)
            figures = (
                point.median,
                summary.n,
                summary.low,
                summary.high,
                step.change_pct if step else None,
                levels.get(point.run_id),
            )
            writer.writerow(
                [
                    *(spreadsheet_cell(one_line(t)) for t in texts),
                    point.run_id,
                    f"{point.started_at:.3f}",
                    *("" if v is None else f"{v:.6g}" for v in figures),
                    utc(point.started_at),
                    f"{point.mean:.6g}",
                    int(step is not None and step.outlier),
                    " ".join(sorted(point.load)),
                ]
            )
    return buffer.getvalue()


def verdict(v: SeriesVerdict) -> str:
    """A series in one line: judged, its change, against what, the words of the verdict and
    the least change its history detects; or why it was not judged."""
    s = v.series
    head = "REGRESSION" if v.regression else "ok" if v.judged else "NOT JUDGED"
    where = f"{one_line(s.setup)} · {one_line(s.workload)} · {s.metric}"
    if v.latest is None or v.how == "short":
        return f"{head}: {where}: {v.words}"
    if v.paired is not None:
        return f"{head}: {where}: {_paired(v, v.paired)}"
    size = f"{v.change_pct:+.1f}%" + (f" ± {v.half_width_pct:.1f}%" if v.half_width_pct else "")
    figures = f"{_figure(v.level, s.unit)} -> {_figure(v.latest.mean, s.unit)} {s.unit}"
    if v.how == "new-level" and v.since is not None:
        figures = f"{_figure(v.since.before, s.unit)} -> {_figure(v.since.after, s.unit)} {s.unit}"
        said = f"{where}: {v.words}: {figures} ({size}; allowed {v.allowed_pct:g}% worse)"
    else:
        said = f"{where}: mean {figures} ({size}; allowed {v.allowed_pct:g}% worse): {v.words}"
    if v.how in ("history", "blind") and v.bound is not None:
        side = "lowest" if s.metric in ("iops", "bw") else "highest"
        bound = f"{_figure(v.bound, s.unit)} {s.unit}" if v.bound > 0 else "below 0"
        said += f" (the {side} they predict: {bound})"
    elif v.how == "rule":
        said += f" (against {runs_said(v.against)}, by the rule alone)"
    if v.detectable_pct is not None and v.how != "blind":
        said += f"; this history detects {v.worse_word} beyond {v.detectable_pct:.1f}%"
    if v.back is not None:
        said += f"; a lone outlier: run {v.back} is back to the level"
    if FOREIGN in v.latest.load:
        said += "; judged beside other load"
    elif CPU_BOUND in v.latest.load:
        said += f"; its cases were {CPU_BOUND} (fio's own load)"
    return f"{head}: {said}"


def _paired(v: SeriesVerdict, p: Paired) -> str:
    """A series judged by interleaved rounds: both set-ups' geometric means, the change with
    its 95% interval, the words, and the least change the rounds detect."""
    unit = v.series.unit
    figures = f"{_figure(p.a_mean, unit)} -> {_figure(p.b_mean, unit)} {unit}"
    interval = f"95% interval {p.lo_pct:+.1f}% to {p.hi_pct:+.1f}%, {p.rounds} rounds"
    said = (
        f"geometric mean {figures} ({v.change_pct:+.1f}%, {interval}; allowed "
        f"{v.allowed_pct:g}% worse): {v.words}"
    )
    if v.detectable_pct is not None and v.how != "blind":
        said += f"; these rounds detect {v.worse_word} beyond {v.detectable_pct:.1f}%"
    if v.latest is not None and FOREIGN in v.latest.load:
        said += "; judged beside other load"
    return said


def unjudged(checked: Checked) -> list[str]:
    """What `check` says of the run before its series: the plan's first run, too little
    history, the other load it was judged beside, fio's own CPU load."""
    latest, verdicts = checked.run, checked.verdicts
    lines = []
    if checked.elsewhere:
        plural = "run" if checked.elsewhere == 1 else "runs"
        lines.append(
            f"{checked.elsewhere} {plural} of plan {one_line(checked.plan_name)!r} ran on another "
            "host: left out of this run's history (each host's noise is its own)"
        )
    if not verdicts:
        lines.append(f"run {latest} has no figure to judge: none of its cases measured one")
    if checked.first:
        lines.append(
            f"run {latest} is the first run of plan {one_line(checked.plan_name)!r}: nothing to "
            "judge yet (the gate needs 4 earlier runs to know their noise)"
        )
    short = [v for v in verdicts if v.how == "short"]
    if short and not checked.first and not checked.paired:
        earlier = len(min(short, key=lambda v: len(v.against)).against)
        plural = "run" if earlier == 1 else "runs"
        lines.append(
            f"run {latest} has {earlier} earlier {plural} of its plan; the gate needs 4 to know "
            "its noise: not judged (--baseline RUN judges by the rule alone against RUN)"
        )
    if checked.beside:
        judged = any(v.how != "short" for v in verdicts)
        how = "judged beside other load" if judged else "beside other load"
        tail = "; against its plan's runs, loaded ones included" if judged else ""
        if checked.paired:
            tail = "; each round's pair ran beside the same load"
        lines.append(
            f"run {latest} had other load on its CPUs/devices ({FOREIGN}): {how}: "
            f"{one_line(checked.beside)}{tail}"
        )
    if any(v.latest is not None and CPU_BOUND in v.latest.load and v.judged for v in verdicts):
        lines.append(f"run {latest}'s cases were {CPU_BOUND} (fio's own load): judged as usual")
    return lines


def summary(checked: Checked, code: int) -> str:
    """The last line: the run, what it was judged against, how many series were judged, the
    outcome and the exit code."""
    verdicts = checked.verdicts
    judged = [v for v in verdicts if v.judged]
    failed = sum(v.regression for v in verdicts)
    plural = "s" if failed != 1 else ""
    against = sorted({r for v in verdicts if v.how != "short" for r in v.against})
    history = f" against {runs_said(against)}" if against else ""
    why = [
        f"{n} {word}"
        for n, word in (
            (
                sum(v.how == "short" for v in verdicts),
                "too few rounds" if checked.paired else "too little history",
            ),
            (sum(v.how == "blind" for v in verdicts), "noise wider than the rule"),
            (sum(v.how == "failed" for v in verdicts), "no figure"),
        )
        if n
    ]
    missing = f" ({', '.join(why)})" if why else ""
    beside = "; judged beside other load" if checked.beside and against else ""
    if checked.paired:
        history = f" ({one_line(checked.paired)})"
    return (
        f"check: run {checked.run}{history}: {len(verdicts)} series, {len(judged)} judged, "
        f"{len(verdicts) - len(judged)} not judged{missing}, {failed} regression{plural} beyond "
        f"rule and noise{beside}: {checked.outcome.upper()} (exit {code})"
    )
