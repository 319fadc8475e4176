"""The HTML report in real headless Chromium, offline: no console errors, no request leaves
the file, every chart drawn with titled axes; screenshots saved under test-output/."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import websocket

from conftest import run_iolab
from golden.make_store import STORE
from iolab.report import compare_document, data, document
from iolab.report.run import Options
from iolab.store import Store

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
OUTPUT = Path(__file__).resolve().parents[1] / "test-output"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--remote-debugging-port=0",
    "--window-size=1280,900",
    "--hide-scrollbars",
)
LOCAL = ("file:", "data:", "blob:", "about:")
CHARTS_JS = """
[...document.querySelectorAll('figure.chart')].map(f => {
  const plot = f.querySelector('.js-plotly-plot');
  const layout = plot && plot._fullLayout;
  const title = a => (a && a.title && a.title.text) || '';
  return {name: f.dataset.chart, svgs: f.querySelectorAll('.main-svg').length,
          traces: plot && plot.data ? plot.data.length : 0,
          x: title(layout && layout.xaxis), y: title(layout && layout.yaxis)};
})
"""


class Browser:
    """Headless Chromium driven over the DevTools protocol (no driver download, no network)."""

    def __init__(self, profile: Path) -> None:
        self.process = subprocess.Popen(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and len(port_file.read_text().split()) >= 2):
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise AssertionError("chromium did not start its DevTools endpoint")
            time.sleep(0.1)
        port = port_file.read_text().split()[0]
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(f"http://127.0.0.1:{port}/json/list", timeout=10) as answer:
            targets = json.load(answer)
        page = next(t for t in targets if t["type"] == "page")
        self.ws = websocket.create_connection(
            page["webSocketDebuggerUrl"], timeout=30, suppress_origin=True
        )
        self.ident = 0
        self.events: list[dict[str, Any]] = []
        for domain in ("Runtime", "Log", "Page", "Network"):
            self.call(f"{domain}.enable")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.ident += 1
        self.ws.send(json.dumps({"id": self.ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.ident:
                assert "error" not in message, message
                result: dict[str, Any] = message.get("result", {})
                return result
            self.events.append(message)

    def load(self, url: str) -> None:
        self.events.clear()
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + 30
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            assert time.monotonic() < deadline, "the page did not finish loading"
            self.events.append(json.loads(self.ws.recv()))

    def evaluate(self, expression: str) -> Any:
        answer = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        assert "exceptionDetails" not in answer, answer
        return answer["result"].get("value")

    def errors(self) -> list[str]:
        found = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                found.append(json.dumps(params["exceptionDetails"])[:500])
            elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
                found.append(json.dumps(params["args"])[:500])
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                found.append(params["entry"]["text"])
        return found

    def requests(self) -> list[str]:
        return [
            e["params"]["request"]["url"]
            for e in self.events
            if e.get("method") == "Network.requestWillBeSent"
        ]

    def screenshot(self, path: Path, full: bool) -> None:
        if full:
            height = self.evaluate("document.documentElement.scrollHeight")
            self.call(
                "Emulation.setDeviceMetricsOverride",
                width=1280,
                height=min(int(height), 16000),
                deviceScaleFactor=1,
                mobile=False,
            )
        else:
            self.call(
                "Emulation.setDeviceMetricsOverride",
                width=1280,
                height=900,
                deviceScaleFactor=1,
                mobile=False,
            )
        shot = self.call("Page.captureScreenshot", format="png")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))

    def close(self) -> None:
        self.ws.close()
        self.process.terminate()
        self.process.wait(timeout=10)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail("chromium is not installed: run scripts/setup --test (as root)")
    with tempfile.TemporaryDirectory(prefix="iolab-chromium-") as profile:
        opened = Browser(Path(profile))
        yield opened
        opened.close()


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


def _shot(browser: Browser, selector: str, path: Path) -> None:
    """A screenshot of one element of the page (the full page laid out, then clipped)."""
    height = browser.evaluate("document.documentElement.scrollHeight")
    browser.call(
        "Emulation.setDeviceMetricsOverride",
        width=1280,
        height=min(int(height), 16000),
        deviceScaleFactor=1,
        mobile=False,
    )
    box = browser.evaluate(
        f"(() => {{ const r = document.querySelector({json.dumps(selector)})"
        ".getBoundingClientRect(); return [r.x, r.y + window.scrollY, r.width, r.height]; })()"
    )
    clip = dict(zip(("x", "y", "width", "height"), box, strict=True), scale=1)
    shot = browser.call(
        "Page.captureScreenshot", format="png", clip=clip, captureBeyondViewport=True
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(base64.b64decode(shot["data"]))


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
    _shot(browser, '[data-chart="ratio-heat"]', OUTPUT / "compare-heat.png")

    _open(browser, tmp_path, STORE, "report", "1")
    _shot(browser, 'table[data-table="results"]', OUTPUT / "report-results.png")
    _shot(browser, '[data-chart="ratio-heat"]', OUTPUT / "report-heat.png")
    _shot(browser, '[data-chart="latency-rand-numjobs-1-read"]', OUTPUT / "report-exceedance.png")

    text = _open(browser, tmp_path, DEVICES, "report", "1")
    series = browser.evaluate(SHAPES_JS)
    assert series and all(s["x0"][0] == -1 and s["range"][0] == -1 for s in series), series
    mixed = next(s for s in series if s["name"] == "timeseries-mixed-iops")
    assert set(mixed["colors"]) == {"#1f77b4", "#ff7f0e"}  # two set-ups, two colours
    assert "xfs: stack file /run/iolab/xfs/iolab.testfile" in text
    _shot(browser, '[data-chart="timeseries-mixed-iops"]', OUTPUT / "timeseries-ramp.png")
    _shot(browser, "#environment", OUTPUT / "devices-environment.png")

    text = _open(browser, tmp_path, DEVICES, "compare", "1", "2")
    assert (
        browser.evaluate("document.querySelector('details[data-notes=\"volatile\"]').open") is False
    )
    assert "6 more recorded facts differ" in text
    _shot(browser, "#environment", OUTPUT / "devices-compare-environment.png")

    _open(browser, tmp_path, CDM, "report", "1")
    names = [c["name"] for c in browser.evaluate(CHARTS_JS)]
    assert names[0] == "crystaldiskmark" and not any(n.startswith("scaling") for n in names)
    _shot(browser, 'table[data-table="crystaldiskmark"]', OUTPUT / "cdm-table.png")
    _shot(browser, '[data-chart="crystaldiskmark"]', OUTPUT / "cdm-bars.png")
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
    _shot(browser, '[data-chart="scaling-iodepth-geometric-mean"]', OUTPUT / "big-scaling.png")
    _shot(browser, '[data-chart="bars-iops"]', OUTPUT / "big-bars.png")


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
    _shot(browser, 'figure.chart[data-chart^="heat-"]', OUTPUT / "heat-titles.png")
