"""No chart without data (issue 32, finding 4): every preset, run over the fake executor (fio's
real output replayed) on a folder, then reported with every chart kind: every chart drawn has
a series with points. The quick preset's first report drew "I/O rate vs iodepth" with axes
and nothing on them (one iodepth per pattern: no line to draw)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import HERE_SETUP, chart_points
from fakes import FIO_INFO, FakeExecutor, Seen
from iolab.plan.common import Overrides
from iolab.plan.load import load_preset, parse_plan, preset_names
from iolab.report import data as report_data
from iolab.report import document as report_document
from iolab.report.charts import Chart
from iolab.report.run import Options
from iolab.runner.campaign import plan_campaign
from iolab.runner.executing import execute
from iolab.store import Store
from iolab.targets import process

CHARTED = Options(charts=None)


def _charts(document: report_document.Document) -> list[Chart]:
    return [b for s in document.sections for b in s.blocks if isinstance(b, Chart)]


@pytest.mark.parametrize(  # each a report built whole: the fast lane keeps the first
    "preset",
    [pytest.param(p, marks=[pytest.mark.slow] if i else []) for i, p in enumerate(preset_names())],
)
def test_every_chart_of_a_presets_report_has_points(preset: str, tmp_path: Path) -> None:
    overrides = Overrides(target=str(tmp_path), size="256m", runtime=1, max_cases=40)
    the_plan = load_preset(preset, overrides)
    built = plan_campaign(the_plan, FIO_INFO, executor=FakeExecutor(), probe_write=False)
    with Store(tmp_path / "results.db") as store:
        run_id = store.create_run(built.plan, {}, "test", {}, process.me())
        execute(built, store, run_id, Seen())
        document = report_document.assemble(report_data.load(store, [run_id]), CHARTED)
    empty = [c.title for c in _charts(document) if chart_points(c) == 0]
    assert empty == [], f"{preset}: charts without data: {empty}"


SWEPT = (
    """
name = "depth by jobs"
"""
    + HERE_SETUP
    + """
[[workload]]
name = "4k random read"
rw = "randread"
bs = "4k"
iodepth = [1, 4]
numjobs = [1, 2]
"""
)


@pytest.mark.parametrize(("failing", "maps"), [(0, 2), (4, 0)])
def test_a_depth_by_jobs_heat_map_has_points_or_is_not_drawn(
    tmp_path: Path, failing: int, maps: int
) -> None:
    """The iodepth x numjobs heat maps (IOPS, p99) of a sweep of both: drawn with a point in
    every cell that has a figure; not drawn when every case failed (no map without data), nor
    any other chart (a scaling chart of failed cases only drew axes)."""
    the_plan = parse_plan(SWEPT.format(path=tmp_path), "swept.toml")
    fake = FakeExecutor(script=["enospc"] * failing)
    built = plan_campaign(the_plan, FIO_INFO, executor=fake, probe_write=False)
    with Store(tmp_path / "results.db") as store:
        run_id = store.create_run(built.plan, {}, "test", {}, process.me())
        execute(built, store, run_id, Seen())
        document = report_document.assemble(report_data.load(store, [run_id]), CHARTED)
    heat = [c for c in _charts(document) if c.kind == "heat"]
    assert [chart_points(c) for c in heat] == [4] * maps
    empty = [c.title for c in _charts(document) if chart_points(c) == 0]
    assert empty == [], f"charts without data: {empty}"  # the scaling charts neither
