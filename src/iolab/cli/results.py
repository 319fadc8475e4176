"""`iolab runs`, `report`, `compare`, `history` and `check`: what the database holds."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

from iolab.choices import CHART_KINDS, HISTORY_LEAST, HISTORY_MOST_WINDOW, Y_METRICS
from iolab.cli import (
    EXIT_NOT_JUDGED,
    EXIT_REGRESSION,
    WHOLE,
    Whole,
    db_option,
    echo,
    err,
    main,
    output_options,
    ui,
)
from iolab.names import one_line

if TYPE_CHECKING:
    from iolab.analysis import history as history_model
    from iolab.report import document as report_document
    from iolab.store import RunRow


@main.command()
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print them as JSON, for scripts.")
def runs(db: str, as_json: bool) -> None:
    """List the runs stored in the database."""
    from iolab.app import reporting
    from iolab.report import cells as report_model

    rows = reporting.runs(db, ui())
    if as_json:
        echo(json.dumps([_run_json(r) for r in rows], indent=2, ensure_ascii=False))
        return
    if not rows:
        echo(f"{db} holds no runs yet")
    for r in rows:
        started = report_model.utc(r.started_at)
        failed = f", {r.failed} failed" if r.failed else ""
        host = one_line(str(r.environment.get("hostname", "?")))
        own = f"  iolab {r.own_s[0] / r.own_s[1]:.3f} s a case" if r.own_s else ""
        echo(
            f"{r.id:>4}  {started}  {one_line(r.plan_name):<22} {r.status:<11} "
            f"{r.tally(r.done)} cases{failed}  {host}{own}"
        )


def _run_json(run: RunRow) -> dict[str, object]:
    return {
        "id": run.id,
        "plan": run.plan_name,
        "status": run.status,
        "started_at": run.started_at,
        "ended_at": run.ended_at,
        "cases_planned": run.case_count,
        "cases_done": run.done,
        "cases_failed": run.failed,
        "host": run.environment.get("hostname"),
        "origin": run.origin.kind,
        "iolab_own_s": run.own_s[0] if run.own_s else None,
    }


@main.command()
@click.argument("run_ids", nargs=-1, type=WHOLE, metavar="[RUN]...")
@db_option
@output_options
@click.option("--baseline", metavar="SETUP", help="Show other set-ups as % of this one.")
@click.option(
    "--charts",
    metavar="LIST",
    default="auto",
    show_default=True,
    help=f"Charts to draw: auto, none, or a comma list of {','.join(CHART_KINDS)}.",
)
@click.option("--skip-charts", metavar="LIST", help="Chart kinds to leave out of auto's choice.")
@click.option(
    "--x",
    "x_field",
    metavar="FIELD",
    help="Workload field on the x axis of scaling charts (default: the swept one).",
)
@click.option(
    "--y",
    "y_metric",
    type=click.Choice(Y_METRICS),
    default="auto",
    show_default=True,
    help="Metric on the y axis of scaling charts.",
)
@click.option(
    "--lines",
    type=click.Choice(["auto", "setup", "pattern"]),
    default="auto",
    show_default=True,
    help="Scaling charts: one line per set-up, or per pattern (auto: per set-up if several).",
)
@click.option(
    "--pool",
    is_flag=True,
    help="Read the runs named as repetitions of one another "
    "(runs of one plan): one column per set-up, the spread across runs stated.",
)
@click.option(
    "--short",
    is_flag=True,
    help="Findings for an article and nothing else: those that say most, up to 8 and about "
    "150 words, without tags, each caveat said once, one legend (JSON and CSV keep them "
    "all).",
)
@click.option(
    "--pivot",
    metavar="ROWS:COLUMNS",
    help="Also a table per workload laid out by "
    "the set-ups' factors, e.g. card,level:policy (setup and run are factors "
    "too).",
)
def report(run_ids: tuple[int, ...], db: str, fmt: str, **flags: Any) -> None:
    """Render stored runs (default: the latest) as a table, Markdown, CSV or HTML.

    Several runs are shown side by side, or pooled as repetitions of one another (--pool).
    HTML is one self-contained page with interactive charts; Markdown written to a file gets
    its charts as images beside it.
    """
    from iolab.app import reporting
    from iolab.report import run as report_run
    from iolab.report.formats import output as report_output

    written = {k: flags.pop(k) for k in ("output", "image_format", "export_dir", "force")}
    drawn = fmt in ("markdown", "html") or written["export_dir"] is not None
    charts = report_run.parse_kinds(flags["charts"], "--charts")  # () when not drawn (app)
    options = report_run.Options(
        metric=flags["metric"],
        baseline=flags["baseline"],
        charts=charts,
        skip=report_run.parse_kinds(flags["skip_charts"], "--skip-charts") or (),
        x=flags["x_field"],
        y=flags["y_metric"],
        lines=flags["lines"],
        pool=flags["pool"],
        pivot=report_run.parse_pivot(flags["pivot"]) if flags["pivot"] else None,
        short=flags["short"],
    )
    report_output.check_destination(
        written["output"], written["export_dir"], force=written["force"], images=fmt == "markdown"
    )
    _emit(reporting.report(db, run_ids, options, drawn, ui()), fmt, **written)


@main.command()
@click.argument("run_ids", nargs=-1, type=WHOLE, required=True, metavar="RUN_A RUN_B [RUN]...")
@db_option
@output_options
def compare(run_ids: tuple[int, ...], db: str, fmt: str, metric: str, **written: Any) -> None:
    """Compare runs against the first: each change with its 95% interval, marked "not
    significant" where the interval includes 0; says what differs in their environments."""
    from iolab.app import reporting
    from iolab.report.formats import output as report_output

    report_output.check_destination(
        written["output"], written["export_dir"], force=written["force"], images=fmt == "markdown"
    )
    _emit(reporting.compare(db, run_ids, metric, ui()), fmt, **written)


def _emit(document: report_document.Document, fmt: str, **written: Any) -> None:
    """Render and write (stdout, or a file with its images beside it, and an export)."""
    from iolab.report.formats import output as report_output

    text, said = report_output.emit(document, fmt, **written)
    echo(text, nl=False)
    for line in said:
        err.print(one_line(line), soft_wrap=True, markup=False)


@main.command()
@click.argument("chosen", nargs=-1, metavar="[PLAN | RUN...]")
@db_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "csv", "markdown", "html"]),
    default="table",
    show_default=True,
    help="markdown and html draw a trend chart per series that moved.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the series as JSON (--format json).")
@click.option(
    "--all",
    "every",
    is_flag=True,
    help="Every run of each series (default: its latest 10 and every change).",
)
@click.option("-o", "--output", default="-", metavar="FILE", help="Write here; '-' is stdout.")
@click.option(
    "--force",
    is_flag=True,
    help="Replace files iolab did not write (never through a symbolic link).",
)
def history(
    chosen: tuple[str, ...],
    db: str,
    fmt: str,
    as_json: bool,
    every: bool,
    output: str,
    force: bool,
) -> None:
    """The runs of one plan (default: the latest measured run's; or the runs named) over
    time: per set-up, workload and metric, each run's mean, and the changes beyond the
    noise with what changed; by default each series' latest 10 runs and every change."""
    from iolab.app.base import collector_paused
    from iolab.app.gate import plan_history
    from iolab.report.text import history_text

    ids = [int(word) for word in chosen if word.isascii() and word.isdigit()]
    if len(ids) not in (0, len(chosen)) or (not ids and len(chosen) > 1):
        raise click.BadParameter(
            "give one plan's name, or run numbers", param_hint="[PLAN | RUN...]"
        )
    plan_name = None if ids or not chosen else chosen[0]
    fmt = "json" if as_json else fmt
    if fmt in ("markdown", "html"):
        from iolab.report.formats import output as report_output

        report_output.check_destination(output, None, force=force, images=fmt == "markdown")
    elif output != "-":
        raise click.BadParameter("-o goes with --format markdown or html", param_hint="-o")
    with collector_paused():  # until the history is out, not only derived
        found = plan_history(db, plan_name, ui(), ids)
        if fmt == "json":
            echo(history_text.history_json(found.plan_name, found.series, every), nl=False)
        elif fmt == "table":
            echo(history_text.history(found.plan_name, found.runs, found.series, every), nl=False)
        elif fmt == "csv":
            echo(history_text.history_csv(found.series, every), nl=False)
        else:
            from iolab.report import history as report_history

            document = report_history.document(found.plan_name, found.runs, found.series)
            _emit(document, fmt, output=output, image_format="png", export_dir=None, force=force)


@main.command()
@click.argument("run_id", type=WHOLE, required=False, metavar="[RUN]")
@db_option
@click.option(
    "--baseline",
    type=WHOLE,
    metavar="RUN",
    help="Judge against the history up to and including this run (default: the plan's runs "
    "before RUN); by the rule alone against it where that history is too short.",
)
@click.option(
    "--rule",
    "rules",
    multiple=True,
    metavar="METRIC=PCT",
    help="How much worse a metric may get, in %: iops=5, bw=5, p99=10 (the defaults; a "
    "plan's [check] table sets its own).",
)
@click.option(
    "--window",
    type=Whole(HISTORY_LEAST, HISTORY_MOST_WINDOW),
    metavar="N",
    help="The earlier runs a run is judged against, "
    f"{HISTORY_LEAST} to {HISTORY_MOST_WINDOW} (default: the plan's "
    "[check] window, else 10).",
)
@click.option(
    "--strict/--no-strict",
    default=None,
    help="Whether a run not judged (too little history, a history too noisy for the rule, "
    "failed cases) fails the build with exit 5 (--strict, the default; the plan's [check] "
    "strict sets its own) or exits 0 (--no-strict), said either way.",
)
@click.option(
    "--junit",
    metavar="FILE",
    help="Also write the verdicts as JUnit XML: a test case per series, regressions as "
    "failures, series not judged as skipped.",
)
@click.option(
    "--ab",
    is_flag=True,
    help='Judge the set-ups of one interleaved run (a plan with order = "interleaved") '
    "against its baseline by their paired rounds, instead of the run against its history.",
)
@click.option("--force", is_flag=True, help="Let --junit replace a file iolab did not write.")
def check(
    run_id: int | None,
    db: str,
    baseline: int | None,
    rules: tuple[str, ...],
    window: int | None,
    strict: bool | None,
    junit: str | None,
    ab: bool,
    force: bool,
) -> None:
    """Gate a build on a run: the latest run (or RUN) against its plan's history, series by
    series, each line with the least change its history can detect. Exit 0: every series
    judged, none worse than its rule beyond what the earlier runs predict; 4: a regression;
    5: not judged (the plan's first runs, a history too noisy for the rule, failed cases).
    With --ab, an interleaved run's set-ups against its baseline, round by round."""
    from iolab import saving
    from iolab.app import gate
    from iolab.report.text import gate_junit, history_text

    if junit is not None:
        fix = "give a file name such as gate.xml"
        saving.check_file(junit, force=force, what=f"--junit {junit}", fix=fix)
    request = gate.CheckRequest(run_id, baseline, _rules(rules), window, strict)
    if ab:
        if baseline is not None or window is not None:
            flag = "--baseline" if baseline is not None else "--window"
            raise click.BadParameter(
                "--ab judges one interleaved run's own rounds: no history to choose",
                param_hint=flag,
            )
        checked = gate.check_ab(db, request, ui())
    else:
        checked = gate.check(db, request, ui())
    code = {"pass": 0, "regression": EXIT_REGRESSION, "not judged": EXIT_NOT_JUDGED}[
        checked.outcome
    ]
    code = 0 if code == EXIT_NOT_JUDGED and not checked.how.strict else code
    for line in history_text.unjudged(checked):
        echo(line)
    for v in checked.verdicts:
        echo(history_text.verdict(v))
    summary = history_text.summary(checked, code)
    if junit is not None:
        from iolab import outputs

        folder, name = outputs.split(junit)
        batch = saving.WriteBatch(folder, {name: gate_junit.junit(checked, summary)}, "check")
        saving.save([batch], force=force)
    echo(summary)
    if code:
        sys.exit(code)


def _rules(given: tuple[str, ...]) -> dict[history_model.Metric, float]:
    """--rule METRIC=PCT, each checked; these win over the plan's [check] and the defaults."""
    from iolab.analysis import history as history_model
    from iolab.plan import gate

    rules: dict[history_model.Metric, float] = {}
    for text in given:
        name, _, pct = text.partition("=")
        metric = next((m for m in history_model.METRICS if m == name.strip()), None)
        allowed = gate.allowance(pct)
        if metric is None or allowed is None:
            raise click.BadParameter(
                f"{text!r} is not METRIC=PCT with METRIC one of "
                f"{', '.join(history_model.METRICS)} and PCT from 0 to 1000",
                param_hint="--rule",
            )
        rules[metric] = allowed
    return rules
