"""Reports over stored runs: `iolab report`, `iolab compare`, `iolab runs`."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from iolab.app.base import Ui, collector_paused, open_store
from iolab.errors import ReportError
from iolab.report import compare_document
from iolab.report import data as report_data
from iolab.report import document as report_document
from iolab.report import run as report_run
from iolab.report.views import count_figure
from iolab.report.views import figures as report_figures
from iolab.store import RunRow


def report(
    db: str, run_ids: Sequence[int], options: report_run.Options, drawn: bool, ui: Ui
) -> report_document.Document:
    """Stored runs (default: the latest) as one document; `drawn` loads samples and histograms
    for charts. A single run's own metric and baseline are the defaults."""
    if options.pool and len(set(run_ids)) < 2:
        raise ReportError("--pool reads several runs as one: name two runs or more")
    with collector_paused(freeze=True):
        return _report(db, run_ids, options, drawn, ui)


def _report(
    db: str, run_ids: Sequence[int], options: report_run.Options, drawn: bool, ui: Ui
) -> report_document.Document:
    with open_store(db, ui) as store:
        data = report_data.load(store, list(run_ids), drawn, drawn, options.pool)
    _check_chart_options(data, options, drawn)
    if not drawn:
        options = dataclasses.replace(options, charts=())
    single = data.runs[0] if len(data.runs) == 1 or data.pooled else None
    if single is not None:
        options = dataclasses.replace(
            options,
            metric=single.metric if options.metric == "auto" else options.metric,
            baseline=options.baseline or single.baseline,
        )
    return report_document.assemble(data, options)


def _check_chart_options(
    data: report_data.Dataset, options: report_run.Options, drawn: bool
) -> None:
    """Options that shape charts are refused where no chart they shape is drawn, rather than
    ignored; --x, first, names a numeric field the runs sweep (scaling charts check it when
    drawn)."""
    if not drawn and options.x is not None:
        _check_x(data, options.x)
    shaping = [
        flag
        for flag, given in (
            ("--x", options.x is not None),
            ("--y", options.y != "auto"),
            ("--lines", options.lines != "auto"),
        )
        if given
    ]
    if shaping and options.charts is not None and "scaling" not in options.charts:
        raise ReportError(f"{shaping[0]} shapes scaling charts: add scaling to --charts")
    charting = [
        *shaping,
        *(["--charts"] if options.charts else []),
        *(["--skip-charts"] if options.skip else []),
    ]
    if charting and not drawn:
        raise ReportError(
            f"{charting[0]} shapes charts, and the table and CSV formats draw none: add "
            f"--format markdown or html, or --export DIR; or leave {charting[0]} out"
        )


def _check_x(data: report_data.Dataset, x: str) -> None:
    """--x names a numeric field the runs sweep, or the device count they sweep."""
    swept = report_figures.swept_fields(data)
    swept += [count_figure.FIELD] if report_run.device_sweeps(data) else []
    if x not in swept:
        choose = f"choose one of {', '.join(swept)}" if swept else "they sweep none: leave --x out"
        raise ReportError(f"--x {x!r} is not a numeric field these runs sweep; {choose}")


def compare(db: str, run_ids: Sequence[int], metric: str, ui: Ui) -> report_document.Document:
    with collector_paused(freeze=True):
        with open_store(db, ui) as store:
            data = report_data.load(store, list(run_ids), samples=False, histograms=False)
        return compare_document.compare(data, metric)


def runs(db: str, ui: Ui) -> list[RunRow]:
    with open_store(db, ui) as store:
        return store.runs()
