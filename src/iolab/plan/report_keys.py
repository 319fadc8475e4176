"""The plan's [report.charts.<chart>] tables: an author's title and caption for a chart.

    [report.charts.scaling-iodepth-here]
    title = "Random reads scale to QD16 on the Samsung 990"
    caption = "One 4k random-read job, queue depth 1 to 64, 3 repetitions."

A chart's id is its name in the report: the name of its image file (report_files/ID.png) and
of its HTML anchor (#chart-ID). Which charts a report has depends on what the runs measured,
so ids are checked against them when the report is made (report.views.publish); here, each
table's shape: an id as iolab names charts, only `title` and `caption`, each one line of text
holding no character the rule of names refuses (C1 controls, bidi overrides, zero-width
characters: `names.check`'s categories). Every format escapes them where it places them
(HTML, plotly's layout, Markdown).
"""

from __future__ import annotations

import re
from typing import Any

from iolab import names
from iolab.errors import PlanError
from iolab.model import ChartText
from iolab.plan.checks import control_character
from iolab.plan.common import Where, line_of

KEYS = ("title", "caption")
CHART_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")  # as report.charts.slug makes them
MOST = {"title": 200, "caption": 1000}  # characters


def chart_texts(report: dict[str, Any], where: Where) -> tuple[ChartText, ...]:
    """[report.charts] as ChartTexts, in the plan's order; PlanError at the line of the first
    fault."""
    charts = report.get("charts", {})
    if not isinstance(charts, dict):
        raise where.fail("charts", f"charts must be a table ([report.charts.ID]), not {charts!r}")
    return tuple(_one(str(chart), value, where) for chart, value in charts.items())


def _one(chart: str, value: object, report: Where) -> ChartText:
    what = f"[report.charts.{chart}]"
    if not CHART_ID.match(chart):
        raise _fail(
            report,
            chart,
            None,
            (
                f"{what}: {chart!r} is not a chart id; ids are the report's chart names, such as "
                "bars-iops or scaling-iodepth-here (lowercase letters, digits, '-')"
            ),
        )
    if not isinstance(value, dict):
        raise _fail(report, chart, None, f"{what} must be a table of title and caption")
    for key in value:
        if key not in KEYS:
            raise _fail(
                report,
                chart,
                key,
                f"unknown key {key!r} in {what}; allowed keys: {', '.join(KEYS)}",
            )
    title, caption = (_text(value, key, report, chart) for key in KEYS)
    return ChartText(chart, title, caption)


def _text(table: dict[str, Any], key: str, report: Where, chart: str) -> str:
    value = table.get(key, "")
    if not isinstance(value, str):
        raise _fail(report, chart, key, f"{key} must be a string, not {value!r}")
    text = value.strip()
    if control_character(text):
        raise _fail(
            report,
            chart,
            key,
            f"{key} holds a line break or a control character; write it on one line",
        )
    found = names.refused(text)  # C1 controls, bidi overrides, zero-width: as names refuse
    if found is not None:
        raise _fail(
            report, chart, key, f"{key} holds {names.spelled(found)}; write it in printable text"
        )
    if len(text) > MOST[key]:
        raise _fail(
            report, chart, key, f"{key} is {len(text):,} characters; keep it to {MOST[key]:,}"
        )
    if key in table and not text:
        raise _fail(report, chart, key, f"{key} is empty; leave it out to keep iolab's {key}")
    return text


def _fail(report: Where, chart: str, key: str | None, message: str) -> PlanError:
    """The fault at its line: the key's in the chart's table, else the table's header (a
    quoted id too: [report.charts."Bars IOPS"]), else the plan's name alone."""
    table = f"report.charts.{chart}"
    line = (line_of(report.text, table, 0, key) if key else None) or _header(report.text, chart)
    place = f"{report.source}:{line}" if line else report.source
    return PlanError(f"{place}: {message}")


def _header(text: str, chart: str) -> int | None:
    name = re.escape(chart)
    header = re.compile(
        rf"""^\s*\[\s*report\s*\.\s*charts\s*\.\s*(?:{name}|"{name}"|'{name}')\s*\]"""
    )
    for number, line in enumerate(text.splitlines(), start=1):
        if header.match(line):
            return number
    return None
