"""Charts fit to publish: the author's title and caption where the plan gives them
([report.charts.<chart>], plan.report_keys), and under every chart a source line that says
where its figures come from (iolab's version, the plan, the date of the run, the host), so
that a chart copied into an article still says it.

The texts are read from the plan each run recorded (a later run's words win); they are data
from a database, so only strings of one line count. An id that names no chart of the report
is an error naming the charts there are, when the report draws its charts by its own choice
(with --charts, a chart not asked for is not drawn, and its words wait for it).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime

from iolab.errors import ReportError
from iolab.model import ChartText
from iolab.names import one_line
from iolab.report.cells import WARNED
from iolab.report.charts import Chart
from iolab.report.data import Dataset
from iolab.report.views.env_view import host_of, in_lab
from iolab.store.rows import recorded_plan


def texts(data: Dataset) -> dict[str, ChartText]:
    """The author's words per chart id, from the runs' recorded plans (the latest run's win)."""
    out: dict[str, ChartText] = {}
    for run in sorted(data.runs, key=lambda r: r.started_at):
        report = recorded_plan(run.plan_text).get("report")
        charts = report.get("charts") if isinstance(report, dict) else None
        for chart, words in charts.items() if isinstance(charts, dict) else ():
            if isinstance(words, dict):
                out[str(chart)] = ChartText(
                    str(chart), _line(words, "title"), _line(words, "caption")
                )
    return out


def _line(words: Mapping[str, object], key: str) -> str:
    value = words.get(key)
    return one_line(value).strip() if isinstance(value, str) else ""


def source_line(data: Dataset) -> str:
    """'Source: iolab 0.2.0, plan "golden", run 1 of 2026-11-26, host db1' (runs, dates and
    hosts listed once each)."""
    runs = sorted(data.runs, key=lambda r: r.id)
    versions = list(dict.fromkeys(r.iolab_version for r in runs if r.iolab_version))
    plans = list(dict.fromkeys(r.plan_name for r in runs))
    dates = list(dict.fromkeys(_date(r.started_at) for r in runs))
    hosts = list(dict.fromkeys(host_of(r, in_lab(r, data.cases)) for r in runs))
    which = "run" if len(runs) == 1 else "runs"
    parts = [
        f"iolab {', '.join(versions)}" if versions else "iolab",
        f"plan{'s' if len(plans) > 1 else ''} {', '.join(repr(p) for p in plans)}",
        f"{which} {', '.join(str(r.id) for r in runs)} of {', '.join(dates)}",
        f"host{'s' if len(hosts) > 1 else ''} {', '.join(hosts)}",
    ]
    return "Source: " + "; ".join(parts)


def _date(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d")


def check_words(words: Mapping[str, ChartText], charts: Sequence[Chart], data: Dataset) -> None:
    """ReportError when the plan gives words for a chart the report does not have."""
    names = [c.name for c in charts]
    unknown = [chart for chart in words if chart not in names]
    if not unknown:
        return
    runs = ", ".join(str(r.id) for r in data.runs)
    there = ", ".join(names) if names else "none"
    close = difflib.get_close_matches(unknown[0], names, n=1, cutoff=0.5)
    meant = f" (did you mean {close[0]}?)" if close else ""
    raise ReportError(
        f"[report.charts.{unknown[0]}] in the plan of run{'s' if len(data.runs) > 1 else ''} "
        f"{runs} names no chart of this report{meant}; its charts: {there}"
    )


def finished(chart: Chart, words: Mapping[str, ChartText], source: str) -> Chart:
    """The chart with the author's title and caption, if given, and its source line. An
    author's caption replaces iolab's, but for what iolab's says of figures it cannot vouch
    for (⚑), which follows it."""
    given = words.get(chart.name)
    title = given.title if given and given.title else chart.title
    caption = chart.caption
    if given and given.caption:
        kept = f" {chart.caption}" if WARNED in chart.caption else ""
        caption = f"{given.caption}{kept}"
    return replace(chart, title=title, caption=caption, source=source)
