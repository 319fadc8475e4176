"""The report as one document: sections of tables, charts and notes, each section a function
of the one run the report is of (report.run.ReportRun), called in the order of SECTIONS.

`iolab report` picks the charts from what the runs contain: several set-ups give bars, a
numeric sweep (numjobs, iodepth, bs, rwmixread, ...) gives scaling lines, stored samples give
time series, json+ histograms give latency exceedance curves, and a baseline gives the change
heat map. Options select or suppress each kind. CrystalDiskMark's tests get its own grid and
bars (report.views.cdm_view); big runs show the ends of a ranking (report.summary).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from iolab.analysis.findings import Finding
from iolab.names import one_line
from iolab.report.cells import Table, case_notes, incomplete, run_title
from iolab.report.charts import Chart
from iolab.report.data import Dataset
from iolab.report.judged import Differed
from iolab.report.run import Options, ReportRun, derive
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
    ratio_view,
    rounds_view,
    sweep_heat,
    tables,
    telemetry_view,
    time_figures,
)
from iolab.store.rows import recorded_plan


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
    """The whole report of `data` as `options` ask: the run derived once (report.run), then
    each section of SECTIONS in turn, the findings first and the findings past the first ones
    last; --short keeps the findings' short form alone. Every chart carries its author's words
    (published_blocks)."""
    run = derive(data, options)
    body = [section for made in SECTIONS if (section := made(run)) is not None]
    found, spread = run.judged.findings, run.judged.spread
    if options.short:  # what an author pastes: the findings and their caveats, no tables
        sections = findings_blocks(found, options.baseline, spread, short=True)
    else:
        sections = [*findings_blocks(found, options.baseline, spread), *body]
        sections += more_findings(found)
    check = options.charts is None and not options.skip
    published = published_blocks(sections, run.data, check)
    title, environments = _title(run.data), _environments(run.data)
    return Document(title, subtitle(run.data), published, environments, tuple(found))


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


def more_findings(found: Sequence[Finding]) -> list[Section]:
    """The findings past the first ones, as an appendix at the end (the short form has none:
    the JSON and CSV hold them all)."""
    rest = findings_view.more_lines(found)
    more = Notes(findings_view.MORE_TITLE, rest, findings_view.MORE_NAME)
    return [Section(findings_view.MORE_TITLE, (more,))] if rest else []


def environment_blocks(data: Dataset, found: Sequence[Differed]) -> tuple[Block, ...]:
    """The facts table; what differs between runs (what matters, in a few lines; the
    volatile rest of `found`, report.judged.environment_differences, for the HTML page's
    details); each set-up's stack, filesystem and commands."""
    blocks: list[Block] = [tables.environment_table(data)]
    volatile = env_view.volatile_differences(found)
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


def notes_section(data: Dataset, extra: Sequence[str] = ()) -> Section | None:
    """Failures, warnings and unfinished runs, when there are any."""
    notes = [*extra, *case_notes(data.cases)]
    for run in data.runs:
        notes += incomplete(run)
    if not notes:
        return None
    return Section("Warnings and notes", (Notes("Warnings and notes", tuple(notes)),))


# ---------------------------------------------------------------- the sections, in order


def results_section(run: ReportRun) -> Section | None:
    """The results table (± intervals), with the change heat map against a baseline;
    CrystalDiskMark's grid first. A run of published shares alone has none: its shares are
    the table."""
    data = run.data
    head: tuple[Block, ...] = (run.results, *_ratio(run))
    if (crystal := cdm_view.table(data)) is not None:
        head = (crystal, *(head if run.baseline else ()))
    return Section("Results", head) if data.cases or not data.ratios else None


def _ratio(run: ReportRun) -> tuple[Block, ...]:
    baseline = run.baseline
    if "ratio" not in run.kinds or not baseline:
        return ()
    title = f"Change vs {baseline}, per workload and set-up"
    chart = heat_figure.heat(run.results, title, "set-up", baseline)
    return (chart,) if chart else ()


def shares_section(run: ReportRun) -> Section | None:
    """Figures published as shares of a baseline's, beside the measured ones."""
    table = ratio_view.table(run.data)
    return Section(ratio_view.TITLE, (table,)) if table else None


def pivot_section(run: ReportRun) -> Section | None:
    """--pivot ROWS:COLUMNS: a table per workload by the set-ups' factors."""
    pivot = run.options.pivot
    if pivot is None:
        return None
    return Section(
        f"{pivot_view.TITLE}: {pivot.said}", tuple(pivot_view.blocks(run.data, pivot, run.metric))
    )


def hosts_section(run: ReportRun) -> Section | None:
    """Runs on several hosts: each host beside the aggregate; the aggregate against the number
    of hosts, a scaling chart (--charts and --skip-charts select it as one)."""
    options = run.options
    chart = "scaling" not in options.skip and (
        options.charts is None or "scaling" in options.charts
    )
    hosted, metric = run.hosted, run.metric
    found = [*fleet_view.blocks(run.fleets), *hosts_view.blocks(hosted, metric, chart)]
    return Section("Hosts", tuple(found)) if found else None


def raid_section(run: ReportRun) -> Section | None:
    return Section("RAID model", (run.raid,)) if run.raid else None


def steady_section(run: ReportRun) -> Section | None:
    found: list[Block] = [*rounds_view.tables(run.data), *rounds_view.charts(run.data)]
    return Section("Steady state", tuple(found)) if found else None


def curve_section(run: ReportRun) -> Section | None:
    found = curve_view.blocks(run.data, run.judged.searches)
    return Section("Peak and load curve", tuple(found)) if found else None


def bars_section(run: ReportRun) -> Section | None:
    if "bars" not in run.kinds:
        return None
    charts = cdm_view.bars(run.data) or figures.bars(run.data, run.metric, run.baseline)
    return Section("Set-ups side by side", tuple(charts))


def scaling_section(run: ReportRun) -> Section | None:
    """A metric against the field the runs sweep (--x, --y, --lines), or against the devices
    a striping run's set-ups spread over."""
    if "scaling" not in run.kinds:
        return None
    x, y, data = run.options.x, run.options.y, run.data
    if x == count_figure.FIELD:
        charts = count_figure.charts(data, run.device_sweeps, y)
    else:
        charts = figures.scaling(data, x, y, run.options.lines)
        if not charts and x is None:  # a striping run: the device-count chart
            charts = count_figure.charts(data, run.device_sweeps, y)
    return Section("Scaling", tuple(charts)) if charts else None


def heatmap_section(run: ReportRun) -> Section | None:
    maps = sweep_heat.charts(run.data) if "heatmap" in run.kinds else []
    return Section("Queue depth × jobs", tuple(maps)) if maps else None


def time_section(run: ReportRun) -> Section | None:
    charts = time_figures.time_series(run.data) if "timeseries" in run.kinds else []
    return Section("Over time", tuple(charts)) if charts else None


def telemetry_section(run: ReportRun) -> Section | None:
    """The CPUs' and devices' table, and their charts over time (ReportRun.over_time)."""
    found = telemetry_view.blocks(run.data, run.over_time)
    return Section("CPU and devices", found) if found else None


def latency_section(run: ReportRun) -> Section | None:
    found: list[Block] = [run.latency] if run.latency else []
    if "latency" in run.kinds:
        found += figures.exceedance(run.data)
    return Section("Latency", tuple(found)) if found else None


def environment_section(run: ReportRun) -> Section | None:
    return Section("Environment", environment_blocks(run.data, run.judged.differences))


def warnings_section(run: ReportRun) -> Section | None:
    """What the analysis warns of (report.judged), then the cases' own notes."""
    return notes_section(run.data, run.judged.warnings)


SECTIONS: tuple[Callable[[ReportRun], Section | None], ...] = (
    results_section,
    shares_section,
    pivot_section,
    hosts_section,
    raid_section,
    steady_section,
    curve_section,
    bars_section,
    scaling_section,
    heatmap_section,
    time_section,
    telemetry_section,
    latency_section,
    environment_section,
    warnings_section,
)  # the report's body, in order, between the findings and the findings past the first ones
