"""The report's peak section: the search's table, the curve's table and the latency-versus-load
chart, from runs on the fake device, in every format; absent where no search ran."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fake_device import FakeDevice
from fakes import recorded
from iolab.analysis import objective
from iolab.errors import PlanError
from iolab.plan import methods
from iolab.plan.load import parse_plan
from iolab.report import data as report_data
from iolab.report import document as report_document
from iolab.report.cells import Table
from iolab.report.charts import Chart
from iolab.report.formats import html, markdown, output, terminal
from iolab.report.run import Options
from iolab.store import Store
from test_peak import PLAN, run

CURVE = 'method = "curve"\nnumjobs = [1, 4]\niodepth = [1, 64]'
CHARTED = Options(charts=None)


def section(document: report_document.Document) -> report_document.Section:
    return next(s for s in document.sections if s.title == "Peak and load curve")


def load(store: Store, run_ids: list[int]) -> report_data.Dataset:
    return report_data.load(store, list(run_ids))


@pytest.fixture(scope="module")
def curve_report(tmp_path_factory: pytest.TempPathFactory) -> report_document.Document:
    """The report of one curve search on the fake device, run once for the tests that read it."""
    store, run_id, _ = run(tmp_path_factory.mktemp("curve"), FakeDevice(), CURVE)
    return report_document.assemble(load(store, [run_id]), CHARTED)


def test_the_section_holds_the_search_the_curve_and_the_chart(
    curve_report: report_document.Document,
) -> None:
    blocks = section(curve_report).blocks
    search, curve, chart = blocks
    assert isinstance(search, Table) and search.title == "Peak search: here, 4k randread"
    assert search.stub_headers == ("numjobs", "iodepth", "winner")
    assert [r.stubs[2] for r in search.rows].count("winner") == 1
    assert any("peak" in note and "(95%, 3 runs)" in note for note in search.notes)
    assert isinstance(curve, Table) and [r.label for r in curve.rows][-1] == "peak"
    assert [r.label for r in curve.rows][:2] == ["10%", "20%"]
    assert curve.columns[2:] == ("p50 (µs)", "p99 (µs)", "p99.9 (µs)")
    flags = {r.label: r.stubs[0] for r in curve.rows}
    assert flags["100%"] == "not delivered" and flags["50%"] == "knee"
    assert isinstance(chart, Chart) and chart.x.unit == "IOPS"
    assert [s.name for s in chart.series] == ["p50", "p99", "p99.9", "p99: not delivered"]
    assert chart.regions and chart.regions[0].label == "past the knee"
    delivered = chart.series[1].x
    assert list(delivered) == sorted(delivered), "drawn in order of delivered IOPS"
    # the load asked but not delivered is a series of its own, never among the low loads
    assert len(chart.series[3].x) == 1 and chart.series[3].x[0] not in delivered


@pytest.mark.slow  # runs the runner over the fake executor and reports
def test_two_set_ups_draw_one_chart_per_percentile_one_line_each(tmp_path: Path) -> None:
    store, first, _ = run(tmp_path, FakeDevice(), CURVE)
    _, second, _ = run(tmp_path, FakeDevice(shape=lambda j, d: 50_000.0 * min(j * d, 8)), CURVE)
    document = report_document.assemble(load(store, [first, second]), CHARTED)
    charts = [b for b in section(document).blocks if isinstance(b, Chart)]
    assert [c.title for c in charts] == [
        f"{p} latency against load: 4k randread" for p in ("p50", "p99", "p99.9")
    ]
    assert [s.name for s in charts[1].series] == ["run 1: here", "run 2: here"]


@pytest.mark.slow  # runs the runner over the fake executor and reports
def test_every_format_carries_it(curve_report: report_document.Document) -> None:
    document = curve_report
    text = markdown.render_document(
        document, {c.name: f"x/{c.name}.png" for c in document.charts()}
    )
    assert "## Peak and load curve" in text and "### Latency against load: here" in text
    assert "| 100% | not delivered |" in text and "x/curve-here-4k-randread.png" in text
    page = html.render_document(document)
    assert "Peak search: here, 4k randread" in page and "Latency against load" in page
    files = output.exported(document)
    assert "peak-here-4k-randread.csv" in files and "curve-here-4k-randread.svg" in files
    assert "numjobs,iodepth,winner" in files["peak-here-4k-randread.csv"].decode()
    shown = terminal.render_document(document, width=200)
    assert "load=100%" in shown, "the main table lists every point, as any workload"


def test_no_search_no_section(tmp_path: Path) -> None:
    store, run_id, _ = run(tmp_path, FakeDevice(), "")
    document = report_document.assemble(load(store, [run_id]), CHARTED)
    assert all(s.title != "Peak and load curve" for s in document.sections)


def test_the_knee_is_a_finding_citing_the_curves_table(
    curve_report: report_document.Document,
) -> None:
    document = curve_report
    (said,) = [f.sentence for f in document.findings if "load curve" in f.sentence]
    curve = section(document).blocks[1]
    assert isinstance(curve, Table)
    rows = {r.label: [c.text.split(" ⚑")[0] for c in r.cells] for r in curve.rows}  # its ⚑ apart
    knee, top = rows["50%"], rows["peak"]
    assert said.startswith(
        f"here · 4k randread: the load curve's knee is at 50% of the peak "
        f"({knee[1]} IOPS, p99 {knee[3]} µs)"
    )
    assert f"climbs to {top[3]} µs at the peak ({top[1]} IOPS)" in said


def _p99_us() -> float:
    """The recorded output's p99 (µs): the fake device's latency at no load."""
    read = json.loads(recorded("randread-jsonplus").json_text)["jobs"][0]["read"]
    return float(read["clat_ns"]["percentile"]["99.000000"]) / 1000


@pytest.mark.slow  # runs the runner over the fake executor and reports
def test_a_latency_target_finds_the_most_iops_within_it(tmp_path: Path) -> None:
    """The fake device's latency grows as 1 / (1 - load): a p99 target of 3x its unloaded p99
    holds up to about two thirds of its rate; that load is measured three times, flagged in
    the curve's table, and said with its interval."""
    target = f"p99<={3 * _p99_us():.0f}us"
    store, run_id, _ = run(tmp_path, FakeDevice(), f'{CURVE}\nslo = "{target}"')
    document = report_document.assemble(load(store, [run_id]), CHARTED)
    curve = section(document).blocks[1]
    assert isinstance(curve, Table)
    flagged = [r.label for r in curve.rows if "slo" in r.stubs[0].split(", ")]
    assert len(flagged) == 1 and flagged[0] in ("40%", "50%", "60%"), flagged
    (note,) = [n for n in curve.notes if n.startswith("slo ")]
    assert note.startswith(f"slo {target}: at most ") and f"at {flagged[0]} of the peak" in note
    assert re.search(r"\(95%: [\d,]+ to [\d,]+, 3 runs\)", note), note
    (said,) = [f.sentence for f in document.findings if "Within the target" in f.sentence]
    assert note.removeprefix("slo ") in said
    chart = section(document).blocks[2]
    assert isinstance(chart, Chart)
    assert [r.label.split(":")[0] for r in chart.regions][-1] == f"within {target}"
    (guide,) = chart.guides  # the target itself, a dashed line at its limit, in the y's unit
    assert guide.label == f"target {target}" and guide.value == pytest.approx(3 * _p99_us(), 0.01)
    assert chart.y.unit == "µs"


@pytest.mark.slow  # runs the runner over the fake executor and reports
def test_a_latency_target_no_load_meets_says_so(tmp_path: Path) -> None:
    target = f"p99<={_p99_us() / 2:.0f}us"
    store, run_id, _ = run(tmp_path, FakeDevice(), f'{CURVE}\nslo = "{target}"')
    document = report_document.assemble(load(store, [run_id]), CHARTED)
    curve = section(document).blocks[1]
    assert isinstance(curve, Table)
    assert f"slo {target}: no load met it at the median of 3 runs" in " ".join(curve.notes)
    assert not [r for r in curve.rows if "slo" in r.stubs[0]]


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ('method = "peak"\nslo = "p99<=1ms"', 'slo goes with method = "curve"'),
        (f'{CURVE}\nslo = "p97<=1ms"', 'must be a latency target such as "p99<=2ms"'),
        (f'{CURVE}\nslo = "p99<=fast"', 'must be a latency target such as "p99<=2ms"'),
    ],
)
def test_a_bad_latency_target_is_refused_in_the_plan(tmp_path: Path, extra: str, said: str) -> None:
    with pytest.raises(PlanError, match=re.escape(said)):
        parse_plan(PLAN.format(path=tmp_path, extra=extra), "plan.toml")


def test_latency_targets_read_as_percentile_and_nanoseconds() -> None:
    assert objective.slo("p99<=2ms") == ("p99", 2e6)
    assert objective.slo(" P99.9 <= 500 us ") == ("p99.9", 5e5)
    assert objective.slo("p50<=80µs") == ("p50", 8e4)
    assert [objective.slo(t) for t in ("p99<2ms", "p99<=0ms", "p99<=inf ms", "p95<=1ms")] == [
        None
    ] * 4
    text = methods.command_plan("randread", "4k", False, "1-4", "1-8", "p99 <= 2ms")
    assert 'method = "curve"' in text and 'slo = "p99<=2ms"' in text
    with pytest.raises(PlanError, match=r"--slo 'p99<=2 parsecs'"):
        methods.command_plan("randread", "4k", False, "1-4", "1-8", "p99<=2 parsecs")
