#!/usr/bin/env python3
"""How big a self-contained HTML report is: a study-A-sized run (5 set-ups x 6 workloads, each
case with ten 1 s samples; built directly with iolab's Store and model types), its page made
three ways side by side in one process, from the same document:

- before: plotly's full bundle inlined as it is (what iolab 0.1 wrote);
- full: the full bundle compressed, unpacked by the browser (where npm is missing);
- cartesian: plotly's cartesian bundle compressed (what scripts/setup fetches).

Target: the page under 1.5 MiB. Prints each size and its ratio to the first.

    python3 bench/html_page_size.py [--setups 5] [--workloads 6]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from report_size import build

from iolab.report import data, document
from iolab.report.formats import html
from iolab.report.render import plotly_bundle
from iolab.report.run import Options
from iolab.store import Store

MIB = 1024**2
TARGET_MIB = 1.5


def pages(db: Path) -> dict[str, bytes]:
    """The same document as a page with each plotly.js."""
    with Store(db) as store:
        found = data.load(store, [])
    made = document.assemble(found, Options(baseline=found.runs[0].baseline))
    cartesian = html.render_document(made)
    if "(cartesian bundle)" not in cartesian:
        sys.exit("no cartesian bundle here: run scripts/setup (it fetches it with npm)")
    found_at = plotly_bundle.cartesian_path
    plotly_bundle.cartesian_path = lambda: Path("/nonexistent")
    plotly_bundle._cartesian.cache_clear()
    full = html.render_document(made)
    plotly_bundle.cartesian_path = found_at
    plotly_bundle._cartesian.cache_clear()
    whole = plotly_bundle.bundle(frozenset({"none"}))
    before = full.replace(plotly_bundle.loader(whole), whole.code.decode())
    return {"before": before.encode(), "full": full.encode(), "cartesian": cartesian.encode()}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--setups", type=int, default=5)
    parser.add_argument("--workloads", type=int, default=6)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="iolab-html-size-") as folder:
        db = Path(folder) / "size.db"
        build(db, args.setups, args.workloads)
        made = pages(db)
    first = len(made["before"])
    print(f"{args.setups} set-ups x {args.workloads} workloads, one HTML page each way:")
    for name, page in made.items():
        size = len(page) / MIB
        print(
            f"{name:<10} {size:5.2f} MiB  ({len(page) / first:.2f} of before; "
            f"{size / TARGET_MIB:.2f} of the {TARGET_MIB} MiB target)"
        )


if __name__ == "__main__":
    main()
