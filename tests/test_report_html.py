"""The HTML report in real headless Chromium, offline: no console errors, no request leaves
the file, every chart drawn with titled axes; screenshots saved under test-output/."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from chromium import CHARTS_JS, LOCAL, OUTPUT, Browser, shot
from conftest import run_iolab
from golden.make_store import STORE
from iolab.report import compare_document, data, document
from iolab.report.run import Options
from iolab.store import Store


def _expected_charts(run_ids: list[int], compare: bool) -> list[str]:
    with Store(STORE) as store:
        found = data.load(store, run_ids, samples=not compare, histograms=not compare)
        stored = found.runs[0]
    if compare:
        return [c.name for c in compare_document.compare(found).charts()]
    options = Options(baseline=stored.baseline)
    return [c.name for c in document.assemble(found, options).charts()]


@pytest.mark.browser
@pytest.mark.parametrize(
    ("command", "shot"),
    [(("report", "1"), "report-html"), (("compare", "1", "2"), "compare-html")],
)
def test_html_report_renders_offline_without_errors(
    browser: Browser, tmp_path: Path, command: tuple[str, ...], shot: str
) -> None:
    page = tmp_path / f"{shot}.html"
    run_iolab(
        *command, "--db", str(STORE), "--format", "html", "-o", str(page), cwd=tmp_path, check=True
    )
    text = page.read_text()
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=[\"']?https?:", text)
    assert "Environment" in text and "fio-3.33" in text

    browser.load(page.as_uri())
    deadline = time.monotonic() + 20
    while True:
        charts = browser.evaluate(CHARTS_JS)
        if all(c["svgs"] > 0 for c in charts) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert browser.errors() == []
    assert [u for u in browser.requests() if not u.startswith(LOCAL)] == []

    expected = _expected_charts([int(a) for a in command[1:]], command[0] == "compare")
    assert [c["name"] for c in charts] == expected and len(expected) >= 3
    for chart in charts:
        assert chart["svgs"] > 0 and chart["traces"] > 0, chart
        assert chart["x"] and chart["y"], f"{chart['name']} lacks an axis title"
    browser.screenshot(OUTPUT / f"{shot}.png", full=True)
    browser.screenshot(OUTPUT / f"{shot}-top.png", full=False)
    assert (OUTPUT / f"{shot}.png").read_bytes().startswith(b"\x89PNG")


HEAT_JS = """
(() => {
  const plot = document.querySelector('[data-chart="ratio-heat"] .js-plotly-plot');
  const layout = plot._fullLayout;
  return {traces: plot.data.length, bar: plot.data[0].colorbar.title.text,
          x: layout.xaxis.title.text, y: layout.yaxis.title.text,
          title: layout.title.text, grey: plot.data.length > 1 ? plot.data[1].colorscale : null};
})()
"""
SHAPES_JS = """
[...document.querySelectorAll('figure.chart')].filter(f => f.dataset.chart.startsWith('timeseries'))
  .map(f => { const p = f.querySelector('.js-plotly-plot');
              return {name: f.dataset.chart, x0: (p.layout.shapes || []).map(s => s.x0),
                      range: p._fullLayout.xaxis.range,
                      colors: p.data.map(t => t.line && t.line.color)}; })
"""


def _open(browser: Browser, tmp_path: Path, store: Path, *command: str) -> str:
    page = tmp_path / f"{'-'.join(command)}.html"
    run_iolab(
        *command, "--db", str(store), "--format", "html", "-o", str(page), cwd=tmp_path, check=True
    )
    _show(browser, page)
    return page.read_text()


def _show(browser: Browser, page: Path) -> None:
    """Load the page and wait until every chart is drawn; no error on the console."""
    browser.load(page.as_uri())
    deadline = time.monotonic() + 20
    while not all(c["svgs"] > 0 for c in browser.evaluate(CHARTS_JS)):
        assert time.monotonic() < deadline, "charts were not drawn"
        time.sleep(0.2)
    assert browser.errors() == []


def test_pages_read_like_the_studies(browser: Browser, tmp_path: Path) -> None:
    """Issue 13 in the browser: the change heat map titled and greyed where not significant;
    the time series coloured by set-up with the ramp_time shaded; what differs in a few lines
    with the volatile rest folded away; CrystalDiskMark's grid and bars."""
    from golden.make_store import CDM, DEVICES

    _open(browser, tmp_path, STORE, "compare", "1", "2")
    heat = browser.evaluate(HEAT_JS)
    assert heat["title"] == "Change vs run 1, per workload and set-up"
    assert (heat["bar"], heat["x"], heat["y"]) == ("change vs run 1 (%)", "run", "workload · setup")
    assert heat["traces"] == 2 and heat["grey"] == [[0, "#d9d9d9"], [1, "#d9d9d9"]]
    shot(browser, '[data-chart="ratio-heat"]', OUTPUT / "compare-heat.png")

    _open(browser, tmp_path, STORE, "report", "1")
    shot(browser, 'table[data-table="results"]', OUTPUT / "report-results.png")
    shot(browser, '[data-chart="ratio-heat"]', OUTPUT / "report-heat.png")
    shot(browser, '[data-chart="latency-rand-numjobs-1-read"]', OUTPUT / "report-exceedance.png")

    text = _open(browser, tmp_path, DEVICES, "report", "1")
    series = browser.evaluate(SHAPES_JS)
    assert series and all(s["x0"][0] == -1 and s["range"][0] == -1 for s in series), series
    mixed = next(s for s in series if s["name"] == "timeseries-mixed-iops")
    assert set(mixed["colors"]) == {"#1f77b4", "#ff7f0e"}  # two set-ups, two colours
    assert "xfs: stack file /run/iolab/xfs/iolab.testfile" in text
    shot(browser, '[data-chart="timeseries-mixed-iops"]', OUTPUT / "timeseries-ramp.png")
    shot(browser, "#environment", OUTPUT / "devices-environment.png")

    text = _open(browser, tmp_path, DEVICES, "compare", "1", "2")
    assert (
        browser.evaluate("document.querySelector('details[data-notes=\"volatile\"]').open") is False
    )
    assert "6 more recorded facts differ" in text
    shot(browser, "#environment", OUTPUT / "devices-compare-environment.png")

    _open(browser, tmp_path, CDM, "report", "1")
    names = [c["name"] for c in browser.evaluate(CHARTS_JS)]
    assert names[0] == "crystaldiskmark" and not any(n.startswith("scaling") for n in names)
    shot(browser, 'table[data-table="crystaldiskmark"]', OUTPUT / "cdm-table.png")
    shot(browser, '[data-chart="crystaldiskmark"]', OUTPUT / "cdm-bars.png")
    browser.screenshot(OUTPUT / "cdm-html.png", full=True)


def test_a_big_run_reads_as_a_summary(browser: Browser, tmp_path: Path) -> None:
    """2 set-ups x 300 workload points: the table shows its ends with a gap row and says what
    it left out; the charts are few and drawn."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import report_size

    db = tmp_path / "big.db"
    report_size.build(db, 2, 300)
    text = _open(browser, tmp_path, db, "report")
    results = text.split('data-table="results"')[1].split("</table>")[0]
    labels = re.findall(r"<tr><th>([^<]*)</th>", results)  # a mixed point has 3 rows
    assert results.count('<tr class="gap">') == 1 and len(set(labels) - {"workload"}) == 200
    assert "200 of 300 workloads shown" in text
    charts = browser.evaluate(CHARTS_JS)
    assert 10 <= len(charts) <= 20 and all(c["traces"] > 0 for c in charts)
    browser.screenshot(OUTPUT / "big-html-top.png", full=False)
    shot(browser, '[data-chart="scaling-iodepth-geometric-mean"]', OUTPUT / "big-scaling.png")
    shot(browser, '[data-chart="bars-iops"]', OUTPUT / "big-bars.png")


def test_the_full_bundle_draws_the_same_charts_where_the_cartesian_one_is_missing(
    browser: Browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """plotly's full bundle, unpacked by the same loader, when setup could not fetch the
    cartesian one (no npm): the same charts drawn, nothing fetched, no error."""
    from iolab.report.formats import html
    from iolab.report.render import plotly_bundle

    monkeypatch.setattr(plotly_bundle, "cartesian_path", lambda: tmp_path / "none.js")
    plotly_bundle._cartesian.cache_clear()
    with Store(STORE) as store:
        found = data.load(store, [1])
    made = document.assemble(found, Options(baseline=found.runs[0].baseline))
    page = tmp_path / "full.html"
    page.write_text(html.render_document(made))
    plotly_bundle._cartesian.cache_clear()
    assert "(full bundle)" in page.read_text()

    _show(browser, page)
    assert [u for u in browser.requests() if not u.startswith(LOCAL)] == []
    charts = browser.evaluate(CHARTS_JS)
    assert [c["name"] for c in charts] == [c.name for c in made.charts()]


OVERLAPS_JS = """
[...document.querySelectorAll('figure.chart')].map(f => {
  const box = s => { const e = f.querySelector(s); if (!e) return null;
                     const r = e.getBoundingClientRect();
                     return [r.left, r.top, r.right, r.bottom]; };
  return {name: f.dataset.chart, title: box('.gtitle'), x: box('.xtitle')};
})
"""


def _meet(one: list[float] | None, other: list[float] | None) -> bool:
    if one is None or other is None:
        return False
    return one[0] < other[2] and other[0] < one[2] and one[1] < other[3] and other[1] < one[3]


@pytest.mark.browser
def test_no_chart_title_overlaps_its_axis_title(browser: Browser, tmp_path: Path) -> None:
    """bench-fio's tree imported: its depth x jobs heat maps put the x axis on top, under the
    chart's title; in the drawn page no title's box meets its axis title's (issue 45)."""
    store = tmp_path / "bf.db"
    tree = Path(__file__).parent / "fixtures" / "import" / "bench-fio" / "tree"
    run_iolab("import", str(tree), "--db", str(store), cwd=tmp_path, check=True)
    _open(browser, tmp_path, store, "report", "--charts", "heatmap")
    boxes = browser.evaluate(OVERLAPS_JS)
    assert len([b for b in boxes if b["name"].startswith("heat-")]) == 8
    assert [b["name"] for b in boxes if _meet(b["title"], b["x"])] == []
    shot(browser, 'figure.chart[data-chart^="heat-"]', OUTPUT / "heat-titles.png")
