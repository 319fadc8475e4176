"""The run a report is of, as one typed value: the dataset read from the store once, the
user's options, and what is worked out of them once, before any section is laid out: the
chart kinds to draw, the device-count sweeps, the results table, the RAID model's and the
latency tables, and what the analysis judges of it all (report.judged). Each section of the
report (report.document) is a function of this one value.

`derive` refuses, before any work, a --baseline that is not one of the runs' set-ups and
chart kinds the runs cannot draw."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property

from iolab import names
from iolab.analysis import factors, scaling
from iolab.analysis.factors import Pivot
from iolab.choices import CHART_KINDS
from iolab.errors import ReportError
from iolab.report import summary
from iolab.report.cells import (
    Table,
    case_value,
    check_baseline,
    legend,
    results_table,
    setup_line,
    shown_in,
)
from iolab.report.data import Dataset
from iolab.report.judged import Judged, fleets, judge, raid_models
from iolab.report.views import (
    cdm_view,
    count_figure,
    figures,
    fleet_view,
    raid_view,
    sweep_heat,
    tables,
    telemetry_view,
)
from iolab.report.views.count_figure import DeviceSweep
from iolab.report.views.fleet_view import Fleet

AUTO_LATENCY_MAX_WORKLOADS = 12


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


@dataclass(frozen=True)
class ReportRun:
    """The runs a report is of, loaded and judged once."""

    data: Dataset  # a fleet reported "each": each set-up's median host, not the sum
    hosted: Dataset  # as read, every host its own (the Hosts section)
    fleets: tuple[Fleet, ...]  # the set-ups run on a fleet, their hosts judged
    options: Options
    kinds: tuple[str, ...]  # the chart kinds to draw
    results: Table  # the results table, as the Results section shows it
    raid: Table | None  # the RAID model against what was measured
    latency: Table | None  # the latency percentiles
    judged: Judged  # the warnings and the ranked findings

    @property
    def metric(self) -> str:
        return self.options.metric

    @property
    def baseline(self) -> str | None:
        return self.options.baseline

    @property
    def over_time(self) -> bool:
        """Whether the CPUs' and devices' charts over time are drawn: timeseries chosen, or
        not skipped."""
        if self.options.charts is not None:
            return "timeseries" in self.options.charts
        return "timeseries" not in self.options.skip

    @cached_property
    def device_sweeps(self) -> tuple[DeviceSweep, ...]:
        """Set-ups alike but for their device count (found once, where a chart asks)."""
        return tuple(device_sweeps(self.data))


def derive(data: Dataset, options: Options) -> ReportRun:
    """The report's run: `data` as loaded, with all that the sections share worked out once."""
    check_baseline(options.baseline, data.labels, _where(data))
    hosted, data = data, fleet_view.median_hosts(data)  # "each": a host's figure, not the sum
    judged_fleets = fleets(hosted, options.metric)
    results = _results(data, judged_fleets, options.metric, options.baseline)
    kinds = _kinds(data, options)
    raid = raid_view.table(data, raid_models(data), options.metric)
    latency = tables.latency_table(data, options.baseline)
    judged = judge(data, results, options.metric, options.baseline, raid, latency, judged_fleets)
    return ReportRun(
        data,
        hosted,
        judged_fleets,
        options,
        kinds,
        results,
        raid,
        latency,
        judged,
    )


def device_sweeps(data: Dataset) -> list[DeviceSweep]:
    """Each device-count sweep of the runs (analysis.scaling): by device count, the points
    (set-up, workload) of set-ups alike but for their devices."""
    definitions = {s.label: s.definition for s in data.setups}
    points = []
    for setup in data.labels:
        devices, family = telemetry_view.devices_of(definitions.get(setup, {}))
        for workload in data.workloads():
            cases = data.cell(setup, workload)
            if not cases:
                continue
            value = case_value(cases[0], shown_in(cases[0])) or 0.0
            points.append(
                scaling.Point(setup, workload, cases[0].options, value, None, devices, family)
            )
    points += telemetry_view.single_devices(points, definitions)
    return list(scaling.sweeps(points, count_figure.FIELD).values())


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


def parse_pivot(text: str, option: str = "--pivot") -> Pivot:
    """'card,level:policy' as a Pivot (report.views.pivot_view); ReportError saying how when
    it is not that shape."""
    try:
        return factors.pivot(text)
    except factors.BadPivot as error:
        raise ReportError(f"{option} {names.shown(text)!r}: {error}") from None


def _where(data: Dataset) -> str:
    """What the report is of, as a bad --baseline's error names it."""
    if data.pooled_runs:
        return f"runs {', '.join(str(r) for r in data.pooled_runs)}"
    return f"run {data.runs[0].id}" if len(data.runs) == 1 else "these runs"


def _results(
    data: Dataset, judged_fleets: Sequence[Fleet], metric: str, baseline: str | None
) -> Table:
    table = results_table("Results", data.labels, data.cases, metric, baseline)
    described = [setup_line(s.label, s.setup, s.facts) for s in data.setups]
    table = replace(table, notes=(*described, *legend(data.cases, baseline)))
    # hosts_report = "each": each fleet set-up's median host, with the hosts' range
    return _summarised(fleet_view.results(table, data, judged_fleets), data, baseline)


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
    asked: Sequence[str] = options.charts or ()
    if "scaling" in asked and not (options.x or figures.sweep_field(data)):
        raise ReportError(
            "--charts scaling: the runs sweep no numeric workload field; "
            "use a list in numjobs, iodepth, bs or rwmixread, or name one with --x"
        )
    if "heatmap" in asked and sweep_heat.swept(data) == 0:
        raise ReportError(
            "--charts heatmap: no set-up sweeps both iodepth and numjobs over 2 values or more"
        )
    over_time = any(seen.over_time for seen in data.telemetry.values())
    if "timeseries" in asked and not data.samples and not over_time:
        raise ReportError(
            "--charts timeseries: no samples and no CPU or device figures over time are "
            "stored; add log_avg_msec = 1000 to the workloads and run again"
        )
    if "latency" in asked and not data.histograms:
        raise ReportError("--charts latency: no json+ latency histograms are stored")
    if "ratio" in asked and not options.baseline:
        raise ReportError("--charts ratio needs --baseline SETUP")
