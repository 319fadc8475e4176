"""The plotly.js an HTML page carries: the cartesian bundle where setup fetched it and it is
the one pinned, else plotly's full bundle; either compressed, the same bytes each time; every
chart iolab draws is of a trace type the cartesian bundle has. A FIFO in place of the cartesian
bundle is not opened for reading (issue 29, finding 10): the page carries the full bundle, and a
line says why."""

from __future__ import annotations

import base64
import gzip
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import invoke
from golden.make_store import CDM, DEVICES, STORE
from iolab.report import compare_document, data, document
from iolab.report.formats import html
from iolab.report.render import plotly_bundle, plotly_render
from iolab.report.run import Options
from iolab.store import Store

MIB = 1024**2


@pytest.fixture
def cartesian_at(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """Where the cartesian bundle is looked for, moved to an empty folder."""
    path = tmp_path / "share" / plotly_bundle.CARTESIAN_FILE
    monkeypatch.setattr(plotly_bundle, "cartesian_path", lambda: path)
    plotly_bundle._cartesian.cache_clear()
    yield path
    plotly_bundle._cartesian.cache_clear()


def documents() -> Iterator[document.Document]:
    for store in (STORE, DEVICES, CDM):
        with Store(store) as opened:
            found = data.load(opened, [1])
            both = data.load(opened, [1, 2], samples=False) if store != CDM else None
        yield document.assemble(found, Options(baseline=found.runs[0].baseline))
        if both:
            yield compare_document.compare(both)


def test_every_chart_uses_only_the_trace_types_it_says() -> None:
    kinds = set()
    for made in documents():
        for chart in made.charts():
            used = {trace["type"] for trace in plotly_render.figure(chart)["data"]}
            assert used <= plotly_render.traces(chart), chart.name
            kinds |= used
    assert kinds == {"scatter", "bar", "heatmap"} <= plotly_bundle.CARTESIAN_TRACES


def test_without_the_cartesian_bundle_a_page_carries_the_full_one(cartesian_at: Path) -> None:
    chosen = plotly_render.library(next(documents()).charts())
    assert chosen.name == "full" and len(chosen.code) > 3 * MIB


def test_a_bundle_that_is_not_the_pinned_one_is_not_used(cartesian_at: Path) -> None:
    cartesian_at.parent.mkdir(parents=True)
    cartesian_at.write_text("window.Plotly = {newPlot: function () { alert(1); }};")
    assert plotly_bundle.bundle(frozenset({"bar"})).name == "full"


def test_the_packed_bundle_is_the_same_bytes_each_time_and_unpacks_to_the_code() -> None:
    chosen = plotly_bundle.Bundle("full", "0", b"window.Plotly = {};" * 100)
    packed = chosen.packed()
    assert packed == chosen.packed()
    assert gzip.decompress(base64.b64decode(packed)) == chosen.code
    assert packed in plotly_bundle.loader(chosen)


def test_a_study_sized_page_is_under_one_and_a_half_mib_with_the_cartesian_bundle() -> None:
    assert plotly_bundle.cartesian_path().exists(), (
        "NOT CHECKED: no cartesian bundle here (scripts/setup --test builds it with npm)"
    )
    made = next(documents())
    page = html.render_document(made)
    assert len(made.charts()) >= 10
    assert "charts drawn by plotly.js 4.1.1 (cartesian bundle)" in page
    assert len(page.encode()) < 1.5 * MIB


# ---------------------------------------------------------------- the plotly bundle


@pytest.mark.slow
def test_a_fifo_in_place_of_the_plotly_bundle_is_not_waited_on(
    cartesian_at: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    cartesian_at.parent.mkdir(parents=True)
    os.mkfifo(cartesian_at)
    monkeypatch.chdir(tmp_path)
    outcome = invoke(
        ["report", "1", "--db", str(STORE), "--format", "html", "-o", "page.html"], limit_s=120
    )
    assert outcome.code == 0 and not outcome.crash, outcome.stderr + outcome.crash
    assert outcome.stderr.startswith("wrote page.html"), outcome.stderr
    (line,) = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert line.startswith(f"{cartesian_at}: not a regular file"), line
    assert "this page carries plotly's full bundle" in line
    # the full bundle packs to about 2 MiB, the cartesian one to about 0.6 MiB
    assert (tmp_path / "page.html").stat().st_size > 1.5 * 1024**2
    assert cartesian_at.exists() and not cartesian_at.is_file()
