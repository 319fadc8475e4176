"""Headless Chromium for the tests that look at a page: driven over the DevTools protocol (no
driver download, no network); screenshots go under test-output/ for a person to look at."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import websocket

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


def shot(browser: Browser, selector: str, path: Path) -> None:
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
    assert path.read_bytes().startswith(b"\x89PNG")
