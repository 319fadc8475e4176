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
from iolab.report import data, document
from iolab.store import Store

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
OUTPUT = Path(__file__).resolve().parents[1] / "test-output"
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--disable-sync",
    "--remote-debugging-port=0", "--window-size=1280,900", "--hide-scrollbars",
)  # fmt: skip
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
                width=1280, height=min(int(height), 16000), deviceScaleFactor=1, mobile=False,
            )  # fmt: skip
        else:
            self.call(
                "Emulation.setDeviceMetricsOverride",
                width=1280, height=900, deviceScaleFactor=1, mobile=False,
            )  # fmt: skip
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
        return [c.name for c in document.compare(found).charts()]
    options = document.Options(baseline=stored.baseline)
    return [c.name for c in document.build(found, options).charts()]


@pytest.mark.parametrize(
    ("command", "shot"),
    [(("report", "1"), "report-html"), (("compare", "1", "2"), "compare-html")],
)
def test_html_report_renders_offline_without_errors(
    browser: Browser, tmp_path: Path, command: tuple[str, ...], shot: str
) -> None:
    page = tmp_path / f"{shot}.html"
    run_iolab(*command, "--db", str(STORE), "--format", "html", "-o", str(page),
              cwd=tmp_path, check=True)  # fmt: skip
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
