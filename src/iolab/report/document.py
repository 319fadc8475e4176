"""The report as one document: sections of tables, charts and notes, built from a dataset.

`iolab report` picks the charts from what the runs contain: several set-ups give bars, a
numeric sweep (numjobs, iodepth, bs, rwmixread, ...) gives scaling lines, stored samples give
time series, json+ histograms give latency exceedance curves, and a baseline gives the change
heat map. Options select or suppress each kind. CrystalDiskMark's tests get its own grid and
bars (report.views.cdm_view); big runs show the ends of a ranking (report.summary).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from iolab.analysis import comparison
from iolab.analysis.factors import Pivot
from iolab.analysis.findings import Finding
from iolab.choices import CHART_KINDS
from iolab.errors import ReportError
from iolab.names import one_line
from iolab.report import summary
from iolab.report.cells import (
    Table,
    case_notes,
    check_baseline,
    incomplete,
    legend,
    results_table,
    run_title,
    setup_line,
)
from iolab.report.charts import Chart
from iolab.report.data import Dataset
from iolab.report.judged import judge
from iolab.report.views import (
    cdm_view,
    count_figure,
    curve_view,
    env_view,
    figures,
    findings_view,
    fleet_view,
    heat_figure,
    hosts_view,
    pivot_view,
    publish,
    raid_view,
    ratio_view,
    rounds_view,
    sweep_heat,
    tables,
    telemetry_view,
    time_figures,
)
from iolab.store.rows import recorded_plan

AUTO_LATENCY_MAX_WORKLOADS = 12


@dataclass(frozen=True)
class Notes:
    title: str
    items: tuple[str, ...]
    name: str = "notes"


Block = Table | Chart | Notes


@dataclass(frozen=True)
class Section:
    title: str
    blocks: tuple[Block, ...]
    intro: str = ""


FINDINGS_TABLES = (
    "across-runs",
    "leaders",
    "costs",
)  # the Findings section's tables, ahead of the results


@dataclass(frozen=True)
class Document:
    title: str
    subtitle: tuple[str, ...]
    sections: tuple[Section, ...]
    environments: tuple[tuple[str, str], ...] = ()  # (heading, JSON text), for the HTML page
    findings: tuple[Finding, ...] = ()  # what the Findings section says, for JSON and CSV

    def tables(self) -> list[Table]:
        return [b for s in self.sections for b in s.blocks if isinstance(b, Table)]

    def charts(self) -> list[Chart]:
        return [b for s in self.sections for b in s.blocks if isinstance(b, Chart)]

    def main_table(self) -> Table:
        """The results (or comparison) table: the first, past the findings' tables."""
        return next(t for t in self.tables() if t.name not in FINDINGS_TABLES)


@dataclass(frozen=True)
class Options:
    """What the user chose: charts None means pick automatically."""

    metric: str = "auto"
    baseline: str | None = None
    charts: tuple[str, ...] | None = None
    skip: tuple[str, ...] = ()
    x: str | None = None
    y: str = "auto"
    lines: str = "auto"
    pool: bool = False  # the runs read as repetitions of one another
    pivot: Pivot | None = None  # --pivot ROWS:COLUMNS (report.views.pivot_view)
    short: bool = False  # --short: the findings' short form, for articles (findings_view)


def parse_kinds(text: str | None, option: str) -> tuple[str, ...] | None:
    """'bars,scaling' -> ('bars', 'scaling'); 'auto' or None -> None; 'none' -> ()."""
    if text is None or text.strip() == "auto":
        return None
    kinds = tuple(k.strip() for k in text.split(",") if k.strip())
    if kinds == ("none",):
        return ()
    wrong = [k for k in kinds if k not in CHART_KINDS]
    if wrong:
        raise ReportError(
            f"{option} {wrong[0]!r} is not a chart kind; choose from {', '.join(CHART_KINDS)}, "
            "auto or none"
        )
    return kinds


def _title(data: Dataset) -> str:
    lab = env_view.title_note(data)  # measured in iolab's virtual lab
    if len(data.runs) == 1:
        return run_title(data.runs[0]) + lab
    ids = ", ".join(str(r.id) for r in data.runs)
    names = sorted({r.plan_name for r in data.runs})
    return f"runs {ids}: {' / '.join(names)}{lab}"


def subtitle(data: Dataset) -> tuple[str, ...]:
    lines = env_view.run_lines(data)  # a lab run's says so first
    described = dict.fromkeys(d for run in data.runs if (d := description(run.plan_text)))
    lines += [f"what it measures: {d}" for d in described]
    return tuple(lines)


def description(plan_text: str) -> str:
    """A plan's own `description`, from the text the run recorded ("" for a job file, an
    import, or a plan without one); on one line."""
    found = recorded_plan(plan_text).get("description", "")
    return one_line(found) if isinstance(found, str) else ""


def assemble(data: Dataset, options: Options) -> Document:
    """The whole report: results (± intervals, ratios), charts, latency, environment, notes."""
    check_baseline(options.baseline, data.labels, _where(data))
    hosted, data = data, fleet_view.median_hosts(data)  # "each": a host's figure, not the sum
    results = _results(data, options.metric, options.baseline)
    kinds = _kinds(data, options)
    head: tuple[Block, ...] = (results, *_ratio(results, options, kinds))
    if (crystal := cdm_view.table(data)) is not None:
        head = (crystal, *(head if options.baseline else ()))
    # a run of published shares alone has no results: its shares are the table
    sections = [Section("Results", head)] if data.cases or not data.ratios else []
    sections += [Section(ratio_view.TITLE, (t,)) for t in [ratio_view.table(data)] if t]
    if options.pivot is not None:
        pivots = pivot_view.blocks(data, options.pivot, options.metric)
        sections.append(Section(f"{pivot_view.TITLE}: {options.pivot.said}", tuple(pivots)))
    sections += _hosts_section(hosted, options)
    raid = raid_view.table(data, options.metric)
    sections += [Section("RAID model", (raid,))] if raid else []
    steady_blocks: list[Block] = [*rounds_view.tables(data), *rounds_view.charts(data)]
    sections += [Section("Steady state", tuple(steady_blocks))] if steady_blocks else []
    sections += [Section("Peak and load curve", tuple(b)) for b in [curve_view.blocks(data)] if b]
    sections += _chart_sections(data, options, kinds)
    sections += [Section("CPU and devices", b) for b in [telemetry_view.blocks(data)] if b]
    latency = tables.latency_table(data, options.baseline)
    latency_blocks: list[Block] = [latency] if latency else []
    if "latency" in kinds:
        latency_blocks += figures.exceedance(data)
    if latency_blocks:
        sections.append(Section("Latency", tuple(latency_blocks)))
    sections.append(Section("Environment", environment_blocks(data)))
    judged = judge(data, results, options.metric, options.baseline, raid, latency)
    sections += notes_section(data, judged.warnings)
    found = judged.findings
    if options.short:  # what an author pastes: the findings and their caveats, no tables
        sections = findings_blocks(found, options.baseline, judged.spread, short=True)
    else:
        sections[:0] = findings_blocks(found, options.baseline, judged.spread)
        sections += more_findings(found, options.short)
    published = published_blocks(sections, data, options.charts is None and not options.skip)
    return Document(_title(data), subtitle(data), published, _environments(data), tuple(found))


def _where(data: Dataset) -> str:
    """What the report is of, as a bad --baseline's error names it."""
    if data.pooled_runs:
        return f"runs {', '.join(str(r) for r in data.pooled_runs)}"
    return f"run {data.runs[0].id}" if len(data.runs) == 1 else "these runs"


def published_blocks(
    sections: Sequence[Section], data: Dataset, check: bool
) -> tuple[Section, ...]:
    """Every chart with the author's words (the plan's [report.charts]), checked against the
    charts drawn when iolab chose them, and its source line (report.views.publish)."""
    words, source = publish.texts(data), publish.source_line(data)
    if check:
        publish.check_words(
            words, [b for s in sections for b in s.blocks if isinstance(b, Chart)], data
        )

    def one(block: Block) -> Block:
        return publish.finished(block, words, source) if isinstance(block, Chart) else block

    return tuple(replace(s, blocks=tuple(map(one, s.blocks))) for s in sections)


def findings_blocks(
    found: Sequence[Finding],
    baseline: str | None,
    spread: Table | None = None,
    short: bool = False,
) -> list[Section]:
    """The Findings section, first: the sentences (the first ones, ranked; or the short
    form's), then the tables their figures come from."""
    if not found:
        return []
    items = findings_view.short_lines(found) if short else findings_view.first_lines(found)
    said: tuple[Block, ...] = (Notes(findings_view.SAID, items, findings_view.NAME),)
    if short:  # each caveat once, and one legend, under them
        caveats = findings_view.caveat_lines(found)
        said += (Notes(findings_view.CAVEATS, caveats, findings_view.NAME),)
        return [Section(findings_view.TITLE, said)]
    tables = (
        spread,
        findings_view.leaders_table(found),
        findings_view.costs_table(found, baseline),
    )
    return [Section(findings_view.TITLE, (*said, *(t for t in tables if t is not None)))]


def more_findings(found: Sequence[Finding], short: bool) -> list[Section]:
    """The findings past the first ones, as an appendix at the end (none in the short form:
    the JSON and CSV hold them all)."""
    rest = () if short else findings_view.more_lines(found)
    more = Notes(findings_view.MORE_TITLE, rest, findings_view.MORE_NAME)
    return [Section(findings_view.MORE_TITLE, (more,))] if rest else []


def _hosts_section(data: Dataset, options: Options) -> list[Section]:
    """Runs on several hosts: each host beside the aggregate; the aggregate against the number
    of hosts, a scaling chart (--charts and --skip-charts select it as one)."""
    chart = "scaling" not in options.skip and (
        options.charts is None or "scaling" in options.charts
    )
    metric = options.metric
    found = [*fleet_view.blocks(data, metric), *hosts_view.blocks(data, metric, chart)]
    return [Section("Hosts", tuple(found))] if found else []


def _results(data: Dataset, metric: str, baseline: str | None) -> Table:
    table = results_table("Results", data.labels, data.cases, metric, baseline)
    described = [setup_line(s.label, s.setup, s.facts) for s in data.setups]
    table = replace(table, notes=(*described, *legend(data.cases, baseline)))
    # hosts_report = "each": each fleet set-up's median host, with the hosts' range
    return _summarised(fleet_view.results(table, data, metric), data, baseline)


def _summarised(table: Table, data: Dataset, baseline: str | None) -> Table:
    """Past summary.TABLE_ROWS rows, people see the ends of the ranking; CSV keeps them all."""
    if len(table.rows) <= summary.TABLE_ROWS:
        return table
    ref = summary.reference(data.labels, baseline)
    top, bottom = summary.ends(summary.ranked(data.cases, data.labels, ref), summary.TABLE_ENDS)
    names = [row.label for row in table.rows]  # a mixed workload's rows: one workload
    told = summary.about(len(top), len(bottom), len(set(names)), data.labels, ref)
    return replace(
        table,
        shown=summary.positions(names, top, bottom),
        left_out=f"{told}; every row is in the CSV (--format csv).",
    )


def _kinds(data: Dataset, options: Options) -> tuple[str, ...]:
    """The chart kinds to draw: the user's, or those the data calls for."""
    if options.charts is not None:
        _check_possible(data, options)
        return tuple(k for k in options.charts if k not in options.skip)
    auto = []
    crystal = cdm_view.tests(data) is not None
    if len(data.labels) > 1 or crystal:
        auto.append("bars")
    if options.x or (figures.sweep_field(data) and not crystal):
        auto.append("scaling")
    if sweep_heat.few(sweep_heat.swept(data)):
        auto.append("heatmap")
    if data.samples:
        auto.append("timeseries")
    if len(data.workloads()) <= AUTO_LATENCY_MAX_WORKLOADS and data.histograms:
        auto.append("latency")
    if options.baseline and len(data.labels) > 1:
        auto.append("ratio")
    return tuple(k for k in auto if k not in options.skip)


def _check_possible(data: Dataset, options: Options) -> None:
    asked = options.charts or ()
    if "scaling" in asked and not (options.x or figures.sweep_field(data)):
        raise ReportError(
            "--charts scaling: the runs sweep no numeric workload field; "
            "use a list in numjobs, iodepth, bs or rwmixread, or name one with --x"
        )
    if "heatmap" in asked and sweep_heat.swept(data) == 0:
        raise ReportError(
            "--charts heatmap: no set-up sweeps both iodepth and numjobs over 2 values or more"
        )
    if "timeseries" in asked and not data.samples:
        raise ReportError(
            "--charts timeseries: no samples are stored; add log_avg_msec = 1000 to the "
            "workloads and run again"
        )
    if "latency" in asked and not data.histograms:
        raise ReportError("--charts latency: no json+ latency histograms are stored")
    if "ratio" in asked and not options.baseline:
        raise ReportError("--charts ratio needs --baseline SETUP")


def _ratio(results: Table, options: Options, kinds: Sequence[str]) -> tuple[Block, ...]:
    if "ratio" not in kinds or not options.baseline:
        return ()
    title = f"Change vs {options.baseline}, per workload and set-up"
    chart = heat_figure.heat(results, title, "set-up", options.baseline)
    return (chart,) if chart else ()


def _chart_sections(data: Dataset, options: Options, kinds: Sequence[str]) -> list[Section]:
    sections = []
    if "bars" in kinds:
        charts = cdm_view.bars(data) or figures.bars(data, options.metric, options.baseline)
        sections.append(Section("Set-ups side by side", tuple(charts)))
    if "scaling" in kinds:
        if options.x == count_figure.FIELD:
            charts = count_figure.charts(data, options.y)
        else:
            charts = figures.scaling(data, options.x, options.y, options.lines)
            if not charts and options.x is None:  # a striping run: the device-count chart
                charts = count_figure.charts(data, options.y)
        if charts:
            sections.append(Section("Scaling", tuple(charts)))
    if "heatmap" in kinds and (maps := sweep_heat.charts(data)):
        sections.append(Section("Queue depth × jobs", tuple(maps)))
    if "timeseries" in kinds:
        charts = time_figures.time_series(data)
        if charts:
            sections.append(Section("Over time", tuple(charts)))
    return sections


def environment_blocks(data: Dataset) -> tuple[Block, ...]:
    """The facts table; what differs between runs (what matters, in a few lines; the
    volatile rest for the HTML page's details); each set-up's stack, filesystem and commands."""
    blocks: list[Block] = [tables.environment_table(data)]
    volatile = env_view.volatile_differences(data)
    differences = env_view.differences_that_matter(data)
    if summary_line := env_view.volatile_summary(volatile):
        differences.append(summary_line)
    if differences:
        blocks.append(Notes("What differs between the runs", tuple(differences), "differences"))
    if volatile:
        blocks.append(Notes("Volatile facts that differ", tuple(volatile), "volatile"))
    if details := env_view.setup_details(data):
        blocks.append(Notes("Set-up details", tuple(details), "setup-details"))
    if drive_lines := env_view.drive_lines(data):
        blocks.append(Notes("The drives' own account", tuple(drive_lines), "drives"))
    return tuple(blocks)


def _environments(data: Dataset) -> tuple[tuple[str, str], ...]:
    out = [(f"run {r.id}: host", json.dumps(r.environment, indent=2)) for r in data.runs]
    out += [
        (f"set-up {s.label}", json.dumps({"definition": s.definition, **s.environment}, indent=2))
        for s in data.setups
    ]
    return tuple(out)


def comparison_warnings(data: Dataset, table: Table) -> list[str]:
    """mixed-versions and few-repeats, as notes (see analysis.comparison)."""
    cells = [cell for row in table.rows for cell in row.cells]
    found = (
        comparison.mixed_versions([(r.id, r.environment) for r in data.runs]),
        comparison.few_repeats(
            [c.summary for c in cells if c.summary], [c.difference for c in cells if c.difference]
        ),
    )
    return [f"{w.code}: {w}" for w in found if w is not None]


def notes_section(data: Dataset, extra: Sequence[str] = ()) -> list[Section]:
    """Failures, warnings and unfinished runs, when there are any."""
    notes = [*extra, *case_notes(data.cases)]
    for run in data.runs:
        notes += incomplete(run)
    if not notes:
        return []
    return [Section("Warnings and notes", (Notes("Warnings and notes", tuple(notes)),))]


# ---------------------------------------------------------------- compare
