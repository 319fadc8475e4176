"""The plotly.js an HTML page carries, and the script that unpacks it in the browser.

A page stays self-contained and offline: plotly.js is inlined once. Which plotly.js:

- plotly's *cartesian* bundle (the chart types iolab draws: scatter, bar, heatmap; 1.4 MiB),
  when `scripts/setup` has fetched it (`npm pack`, the version pinned here) into the
  environment's `share/iolab/`, and its SHA-256 is the one pinned here;
- else the full bundle the plotly Python package ships (4.6 MiB).

Either is inlined gzip-compressed and base64-encoded (a third of its size for the cartesian
bundle) and unpacked by the browser's own DecompressionStream (Chrome and Edge 80, Firefox
113, Safari 16.4); until it is, each chart's `Plotly.newPlot` call waits in a queue. A browser
without DecompressionStream shows a line in place of each chart saying so.
"""

from __future__ import annotations

import base64
import errno
import gzip
import hashlib
import logging
import os
import stat
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

BundleName = Literal["cartesian", "full"]
CARTESIAN_VERSION = "4.1.1"
NPM_SPEC = f"plotly.js-cartesian-dist-min@{CARTESIAN_VERSION}"
CARTESIAN_FILE = "plotly-cartesian.min.js"
CARTESIAN_SHA256 = "79542150855a52c567260e3137095dbe2b744e6d702a5cabe67da246942fba7a"
# the trace types the cartesian bundle draws, of those iolab's figures use
CARTESIAN_TRACES = frozenset({"scatter", "bar", "heatmap"})
MAX_BUNDLE_BYTES = 16 * 1024**2  # the cartesian bundle is 1.4 MiB
log = logging.getLogger(__name__)

LOADER = """(function () {
  var waiting = [];
  window.Plotly = {newPlot: function () { waiting.push(arguments); }};
  if (typeof DecompressionStream === "undefined") {
    document.addEventListener("DOMContentLoaded", function () {
      document.querySelectorAll(".plotly-graph-div").forEach(function (chart) {
        chart.textContent = "This browser cannot unpack the charts' script (it needs " +
          "DecompressionStream: Chrome or Edge 80, Firefox 113, Safari 16.4 or newer).";
      });
    });
    return;
  }
  var packed = "%s";
  var bytes = Uint8Array.from(atob(packed), function (c) { return c.charCodeAt(0); });
  var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  new Response(stream).text().then(function (code) {
    var script = document.createElement("script");
    script.textContent = code;
    document.head.appendChild(script);
    waiting.forEach(function (call) { window.Plotly.newPlot.apply(window.Plotly, call); });
  });
})();"""


@dataclass(frozen=True)
class Bundle:
    """The plotly.js a page carries: which one, its version, its code."""

    name: BundleName
    version: str
    code: bytes

    def packed(self) -> str:
        """The code gzip-compressed (no timestamp, so a page is the same each time) and
        base64-encoded."""
        return base64.b64encode(gzip.compress(self.code, 9, mtime=0)).decode("ascii")


def cartesian_path() -> Path:
    return Path(sys.prefix) / "share" / "iolab" / CARTESIAN_FILE


@cache
def _cartesian() -> Bundle | None:
    """The cartesian bundle where setup put it and it is the one pinned here, else None."""
    try:
        code = _read_bundle(cartesian_path())
    except FileNotFoundError:
        return None
    except OSError as error:
        log.warning(
            "%s: %s; this page carries plotly's full bundle (run scripts/setup again)",
            cartesian_path(),
            error.strerror,
        )
        return None
    if hashlib.sha256(code).hexdigest() != CARTESIAN_SHA256:
        return None
    return Bundle("cartesian", CARTESIAN_VERSION, code)


def _read_bundle(path: Path) -> bytes:
    """The bundle's bytes, if it is a regular file of at most MAX_BUNDLE_BYTES: opened without
    blocking and not through a link, so a FIFO, a device or a link in its place is never
    waited on or followed (OSError saying what it is instead)."""
    handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(handle, "rb") as opened:
        found = os.fstat(handle)
        if not stat.S_ISREG(found.st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a FIFO, a device or a socket)")
        if found.st_size > MAX_BUNDLE_BYTES:
            raise OSError(errno.EFBIG, f"larger than {MAX_BUNDLE_BYTES // 1024**2} MiB")
        return opened.read(MAX_BUNDLE_BYTES)


@cache
def _full() -> Bundle:
    import plotly.offline  # type: ignore[import-untyped]

    version = str(plotly.offline.get_plotlyjs_version())
    return Bundle("full", version, str(plotly.offline.get_plotlyjs()).encode("utf-8"))


def bundle(traces: frozenset[str]) -> Bundle:
    """The smallest plotly.js that draws these trace types."""
    small = _cartesian() if traces <= CARTESIAN_TRACES else None
    return small or _full()


@cache
def loader(chosen: Bundle) -> str:
    """The script that unpacks the bundle, then draws the charts that waited for it (made
    once per bundle in a process)."""
    return LOADER % chosen.packed()
