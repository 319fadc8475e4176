"""Charts to publish (issue 32, finding 10) and a lab run's header (finding 9).

Charts: the plan's [report.charts.<chart>] title and caption (checked with file:line; an id
no chart of the report has is an error naming those it has), a source line under every chart
(iolab's version, the plan, the run's date, the host) in PNG/SVG, HTML and Markdown,
thousands separators on numeric axes in both renderers, and the iodepth x numjobs heat map
of IOPS and p99 latency, drawn only where both axes have 2 values or more.

A lab run's header: this host may not boot the lab kernel, so the store is filled as `iolab
run --lab` fills it (the run inside dumped, then kept by app.lab_run.as_stored) and the
report is read from what it recorded.
"""

from __future__ import annotations

import json
import re
import socket
import sqlite3
import time
from dataclasses import replace
from pathlib import Path

import pytest

from chromium import CHARTS_JS, OUTPUT, Browser, shot
from conftest import HERE_SETUP, chart_points, run_iolab
from fakes import FIO_INFO, FakeExecutor, Seen
from iolab.analysis.history import RunChange, RunPoint, RunSeries
from iolab.app import lab_run
from iolab.errors import PlanError, ReportError
from iolab.plan.load import parse_plan
from iolab.report import data as report_data
from iolab.report import document as report_document
from iolab.report import history as report_history
from iolab.report.charts import Axis, Chart, Series
from iolab.report.formats import markdown, terminal
from iolab.report.render import mpl_render, plotly_render
from iolab.report.run import Options
from iolab.runner.campaign import plan_campaign
from iolab.runner.executing import execute
from iolab.store import Store
from iolab.targets import process

SWEEP = (
    """
name = "depth by jobs"
"""
    + HERE_SETUP
    + """
[[workload]]
name = "4k random read"
rw = "randread"
bs = "4k"
iodepth = {depths}
numjobs = {jobs}
{extra}
"""
)
HEAT_IOPS = "heat-here-4k-random-read-iops"
HEAT_P99 = "heat-here-4k-random-read-p99"


def _plan(tmp_path: Path, depths: str = "[1, 4]", jobs: str = "[1, 2]", extra: str = "") -> str:
    return SWEEP.format(path=tmp_path, depths=depths, jobs=jobs, extra=extra)


def _stored(tmp_path: Path, text: str, name: str = "results.db") -> Path:
    """The plan run over the fake executor (fio's real output replayed) into a store."""
    the_plan = parse_plan(text, str(tmp_path / "sweep.toml"))
    built = plan_campaign(the_plan, FIO_INFO, executor=FakeExecutor(), probe_write=False)
    db = tmp_path / name
    with Store(db) as store:
        run_id = store.create_run(built.plan, {"hostname": "db1"}, "test", {}, process.me())
        execute(built, store, run_id, Seen())
    return db


def _document(db: Path, options: Options | None = None) -> report_document.Document:
    with Store(db) as store:
        found = report_data.load(store, [store.run().id])
    return report_document.assemble(found, options or Options())


# ---------------------------------------------------------------- the plan's keys


def test_chart_texts_come_from_the_plan(tmp_path: Path) -> None:
    extra = f'\n[report.charts.{HEAT_IOPS}]\ntitle = "Reads by depth and jobs"\ncaption = "A."\n'
    the_plan = parse_plan(_plan(tmp_path, extra=extra), "sweep.toml")
    assert [(c.chart, c.title, c.caption) for c in the_plan.charts] == [
        (HEAT_IOPS, "Reads by depth and jobs", "A.")
    ]


@pytest.mark.parametrize(
    ("table", "line", "said"),
    [
        ('[report.charts."Bars IOPS"]\ntitle = "x"', 18, "'Bars IOPS' is not a chart id"),
        ("[report.charts.bars-iops]\nsubtitle = 'x'", 19, "unknown key 'subtitle'"),
        ("[report.charts.bars-iops]\ntitle = 3", 19, "title must be a string, not 3"),
        ('[report.charts.bars-iops]\ntitle = ""', 19, "title is empty"),
        ("[report.charts.bars-iops]\ncaption = '''\ntwo\nlines'''", None, "control character"),
        ('[report]\ncharts = "bars-iops"', 19, "charts must be a table"),
        # issue 40, finding 9: what a name may not hold, a title or caption may not either
        ('[report.charts.bars-iops]\ntitle = "a\\u0085b"', 19, "title holds U+0085"),
        ('[report.charts.bars-iops]\ntitle = "a\\u009b31mb"', 19, "title holds U+009B"),
        (
            '[report.charts.bars-iops]\ntitle = "abc\\u202edcba"',
            19,
            "title holds U+202E (RIGHT-TO-LEFT OVERRIDE)",
        ),
        ('[report.charts.bars-iops]\ntitle = "a\\u2066b"', 19, "title holds U+2066"),
        ('[report.charts.bars-iops]\ncaption = "a\\u200bb"', 19, "caption holds U+200B"),
        ('[report.charts.bars-iops]\ncaption = "a\\u2028b"', 19, "caption holds U+2028"),
    ],
)
def test_bad_chart_texts_are_placed(
    tmp_path: Path, table: str, line: int | None, said: str
) -> None:
    with pytest.raises(PlanError) as raised:
        parse_plan(_plan(tmp_path, extra=table), "sweep.toml")
    message = str(raised.value)
    assert said in message, message
    if line is not None:
        assert message.startswith(f"sweep.toml:{line}: "), message


# ---------------------------------------------------------------- the heat map


def test_a_depth_by_jobs_sweep_gets_iops_and_p99_heat_maps(tmp_path: Path) -> None:
    document = _document(_stored(tmp_path, _plan(tmp_path, "[1, 4, 16]", "[1, 2]")))
    maps = [c for c in document.charts() if c.kind == "heat"]
    assert [c.name for c in maps] == [HEAT_IOPS, HEAT_P99]
    iops = maps[0]
    assert [s.name for s in iops.series] == ["1", "2"]  # rows: numjobs
    assert iops.series[0].x == ("1", "4", "16")  # columns: iodepth
    assert all(chart_points(c) == 6 for c in maps)
    assert iops.colors == "rising" and maps[1].colors == "falling"
    assert iops.scale is not None and iops.scale.unit == "IOPS"
    assert "Queue depth × jobs" in [s.title for s in document.sections]


@pytest.mark.parametrize(("depths", "jobs"), [("[1, 4]", "1"), ("4", "[1, 2]")])
def test_no_heat_map_without_two_values_on_each_axis(
    tmp_path: Path, depths: str, jobs: str
) -> None:
    db = _stored(tmp_path, _plan(tmp_path, depths, jobs))
    assert [c.name for c in _document(db).charts() if c.kind == "heat"] == []
    with pytest.raises(ReportError, match="no set-up sweeps both iodepth and numjobs"):
        _document(db, Options(charts=("heatmap",)))


# ---------------------------------------------------------------- titles, captions, source


def test_a_scaling_title_names_only_what_varies_between_its_lines(tmp_path: Path) -> None:
    """A sequential job beside a random sweep makes bs, rw and randrepeat vary across the run,
    but only the random sweep has a line: its title is its name, not "(bs=4k rw=randread)"."""
    extra = '[[workload]]\nname = "seq"\nrw = "read"\nbs = "1m"\nrandrepeat = 1\niodepth = 1\n'
    text = _plan(tmp_path, "[1, 4]", "1", "randrepeat = 0\n" + extra)
    charts = _document(_stored(tmp_path, text)).charts()
    (scaling,) = [c for c in charts if c.kind == "line" and " vs iodepth" in c.title]
    assert scaling.title == "I/O rate vs iodepth: here (one line per pattern)"
    assert [s.name for s in scaling.series] == ["4k random read"]


def test_the_authors_words_and_a_source_line_on_every_chart(tmp_path: Path) -> None:
    extra = (
        f'\n[report.charts.{HEAT_IOPS}]\ntitle = "Where reads stop scaling"\n'
        'caption = "4k random reads on one file."\n'
    )
    document = _document(_stored(tmp_path, _plan(tmp_path, extra=extra)))
    charts = {c.name: c for c in document.charts()}
    assert charts[HEAT_IOPS].title == "Where reads stop scaling"
    caption = charts[HEAT_IOPS].caption  # iolab's follows where it says ⚑ (a busy host's load)
    assert caption == "4k random reads on one file." or (
        caption.startswith("4k random reads on one file. Each cell:") and "⚑" in caption
    ), caption
    assert charts[HEAT_P99].title.startswith("p99 latency over iodepth × numjobs")
    for chart in charts.values():
        assert re.fullmatch(
            r"Source: iolab \S+; plan 'depth by jobs'; run 1 of \d{4}-\d\d-\d\d; host db1",
            chart.source,
        ), chart.source
    text = markdown.render_document(document, {c: f"r_files/{c}.png" for c in charts})
    assert text.count("\nSource: iolab ") == len(charts)


def test_a_chart_id_the_report_lacks_names_those_it_has(tmp_path: Path) -> None:
    extra = '\n[report.charts.heat-here-iops]\ntitle = "Typo"\n'
    db = _stored(tmp_path, _plan(tmp_path, extra=extra))
    with pytest.raises(ReportError) as raised:
        _document(db)
    message = str(raised.value)
    assert message.startswith("[report.charts.heat-here-iops] in the plan of run 1 names no")
    assert f"(did you mean {HEAT_IOPS}?)" in message
    assert HEAT_IOPS in message and HEAT_P99 in message
    run_end = _document(db, Options(charts=()))  # the table `iolab run` prints
    assert run_end.charts() == []


def test_a_history_chart_carries_its_source_line(tmp_path: Path) -> None:
    db = _stored(tmp_path, _plan(tmp_path))
    with Store(db) as store:
        runs = store.runs()
    points = tuple(
        RunPoint(run, float(run), (100.0 if run < 4 else 80.0,) * 3) for run in (1, 2, 3, 4, 5)
    )
    moved = RunSeries(
        "here", "4k", "iops", points, (), (RunChange(4, 0.01, 100.0, 80.0, -20.0, 1.0, ()),)
    )
    (chart,) = report_history.document("depth by jobs", runs, [moved]).charts()
    assert re.fullmatch(
        r"Source: iolab \S+; plan 'depth by jobs'; run 1 of \d{4}-\d\d-\d\d; host db1", chart.source
    ), chart.source


# ---------------------------------------------------------------- both renderers


SOURCE = "Source: iolab 1.0; plan 'p'; run 1 of 2026-11-26; host db1"


def _line_chart() -> Chart:
    return Chart(
        "scaling",
        "line",
        "I/O rate vs iodepth",
        Axis("iodepth", "I/Os"),
        Axis("I/O rate", "IOPS", start_at_zero=True),
        (Series("here", (1.0, 2.0, 4.0), (12_000.0, 23_500.0, 31_000.0)),),
        source=SOURCE,
    )


def test_plotly_separates_thousands_and_draws_the_source_line() -> None:
    figure = plotly_render.figure(_line_chart())
    layout = figure["layout"]
    assert layout["xaxis"]["tickformat"] == layout["yaxis"]["tickformat"] == ","
    assert layout["annotations"][-1]["text"] == SOURCE
    bare = plotly_render.figure(replace(_line_chart(), source=""))["layout"]
    assert layout["margin"]["b"] == bare["margin"]["b"] + plotly_render.SOURCE_PX
    assert bare["annotations"] == []


@pytest.mark.slow  # draws a chart with matplotlib
def test_matplotlib_separates_thousands_and_draws_the_source_line() -> None:
    svg = mpl_render.render(_line_chart(), "svg").decode()
    labels = re.findall(r">([^<>]*)</text>", svg)
    assert "30,000" in labels and "30000" not in svg
    assert labels[-1] == SOURCE


# ---------------------------------------------------------------- a lab run's header


STUDY_B = """
name = "study B md"

[[setup]]
name = "md RAID5 of 3 (mdadm, 64k chunk, no bitmap)"
{first}

[[setup]]
name = "md RAID10 of 4 (mdadm, near-2, 512k chunk)"
{second}

[[workload]]
name = "4k randwrite QD1"
rw = "randwrite"
bs = "4k"
iodepth = 1
runtime = 1
size = "8m"
"""
MD5 = 'devices = ["/dev/nvme1n1", "/dev/nvme2n1", "/dev/nvme3n1"]\nraid = "mdadm"\nlevel = 5'
MD10 = (
    'devices = ["/dev/nvme1n1", "/dev/nvme2n1", "/dev/nvme3n1", "/dev/nvme4n1"]\n'
    'raid = "mdadm"\nlevel = 10'
)


def _as_the_lab_stores_it(tmp_path: Path) -> Path:
    """A run as the lab kernel's `iolab run` leaves it (its plan.toml in a work folder that
    is removed after, its host "(none)"), then kept in the user's database as `iolab run
    --lab` keeps it (app.lab_run.as_stored). The kernel's md arrays are stood in for by
    folders of the same set-up names: the header and the cells are what is tried here."""
    user_plan = parse_plan(STUDY_B.format(first=MD5, second=MD10), str(tmp_path / "b.toml"))
    folder = tmp_path / "iolab-rehearse-x1y2"
    for name in ("md5", "md10"):
        (folder / name).mkdir(parents=True)
    text = STUDY_B.format(first=f'path = "{folder}/md5"', second=f'path = "{folder}/md10"')
    inside = parse_plan(text, str(folder / "plan.toml"))
    built = plan_campaign(inside, FIO_INFO, executor=FakeExecutor(), probe_write=False)
    with Store(folder / "lab.db") as lab:
        run_id = lab.create_run(inside, {"hostname": "(none)"}, "test", {}, process.me())
        execute(built, lab, run_id, Seen())
        tables = lab.dump(run_id)
    origin = lab_run.as_stored(
        tables, user_plan, "QEMU (software emulation, TCG) with Debian's kernel 6.1.0-56-amd64"
    )
    db = tmp_path / "iolab.db"
    with Store(db) as store:
        store.restore(tables, origin)
    return db


def test_a_lab_runs_header_says_so_and_names_the_users_plan(tmp_path: Path) -> None:
    db = _as_the_lab_stores_it(tmp_path)
    with sqlite3.connect(db) as con:
        origin, source = con.execute("SELECT origin, plan_source FROM runs").fetchone()
    assert '"kind": "lab"' in origin and source == str(tmp_path / "b.toml")
    assert '"lab": "QEMU (software emulation, TCG)' in origin, "the lab's kernel, recorded"
    document = _document(db)
    assert document.subtitle[0].startswith(
        "run 1 ran in the lab's kernel (QEMU (software emulation, TCG) with Debian's kernel "
        "6.1.0-56-amd64) on image files"
    )
    run_line = document.subtitle[1]
    assert f"({tmp_path / 'b.toml'})" in run_line and "iolab-rehearse" not in run_line
    assert f"host {socket.gethostname()}, in iolab's virtual lab" in run_line
    assert "(none)" not in "\n".join(document.subtitle)
    assert document.title.endswith(
        ", measured in iolab's virtual lab (a kernel of its own, image files)"
    )
    text = terminal.render_document(document, width=120)  # as in a file
    assert text.startswith(f"{document.title}\n")
    results = text.split("\nResults\n", 1)[1]
    rows = [line for line in results.splitlines() if line.startswith("│ 4k randwrite")]
    assert len(rows) == 1 and rows[0].count("virtual-lab") == 2, results
    assert "…" not in results and "..." not in results, "no cell cut"


@pytest.mark.slow  # an iolab process
def test_a_lab_runs_report_says_so_from_the_command_line(tmp_path: Path) -> None:
    db = _as_the_lab_stores_it(tmp_path)
    done = run_iolab("report", "--db", str(db), "--format", "markdown", cwd=tmp_path, check=True)
    head = done.stdout.split("\n## ", 1)[0]
    assert head.startswith("# run 1: study B md (") and head.count("virtual lab") == 2
    assert "measured in iolab's virtual lab (a kernel of its own, image files)" in head
    assert "b.toml" in head and "iolab-rehearse" not in head


# ---------------------------------------------------------------- a real sweep, drawn

REAL = """
name = "depth by jobs"

[defaults]
size = "16m"
runtime = 1
randrepeat = 0

[[setup]]
name = "here"
path = "."

[[workload]]
name = "4k random read"
rw = "randread"
bs = "4k"
iodepth = [1, 8]
numjobs = [1, 2]

[report.charts.heat-here-4k-random-read-iops]
title = "4k random reads by depth and jobs"
"""
HEAT_JS = """
[...document.querySelectorAll('figure.chart')].filter(f => f.dataset.chart.startsWith('heat'))
  .map(f => { const p = f.querySelector('.js-plotly-plot'); const L = p._fullLayout;
    return {name: f.dataset.chart, title: L.title.text, z: p.data[0].z,
            bar: p.data[0].colorbar.tickformat, source: L.annotations.map(a => a.text).pop(),
            svgs: f.querySelectorAll('.main-svg').length}; })
"""


@pytest.mark.fio
@pytest.mark.browser
def test_a_real_sweeps_heat_maps_in_markdown_and_html(workdir: Path, browser: Browser) -> None:
    (workdir / "sweep.toml").write_text(REAL)
    run_iolab("run", "sweep.toml", cwd=workdir, check=True)
    run_iolab("report", "--format", "markdown", "-o", "r.md", cwd=workdir, check=True)
    text = (workdir / "r.md").read_text()
    images = re.findall(r"!\[([^\]]+)\]\((r_files/heat-[^)]+)\)", text)
    assert images[0][0] == "4k random reads by depth and jobs", images
    assert len(images) == 2 and text.count("\nSource: iolab ") == text.count("![")
    for _, link in images:
        assert (workdir / link).read_bytes().startswith(b"\x89PNG")
    run_iolab("report", "--format", "html", "-o", "r.html", cwd=workdir, check=True)
    browser.load((workdir / "r.html").as_uri())
    deadline = time.monotonic() + 30
    while not all(c["svgs"] > 0 for c in browser.evaluate(CHARTS_JS)):
        assert time.monotonic() < deadline, "charts were not drawn"
        time.sleep(0.2)
    assert browser.errors() == []
    maps = browser.evaluate(HEAT_JS)
    assert [m["name"] for m in maps] == [HEAT_IOPS, HEAT_P99]
    for found in maps:
        assert found["bar"] == "," and found["source"].startswith("Source: iolab ")
        cells = [v for row in found["z"] for v in row]
        assert len(cells) == 4 and all(v > 0 for v in cells), cells
    shot(browser, f'[data-chart="{HEAT_IOPS}"]', OUTPUT / "heat-map-html.png")


# ---------------------------------------------------------------- hostile titles (issue 40)

# A title and caption hostile to a page only: printable, so taken, and shown as their text.
HOSTILE_TITLE = '<img src=x onerror="window.__pwned=1"> <b>b</b> <a href="javascript:x">a</a>'
HOSTILE_CAPTION = "</script><script>window.__pwned=2</script><svg onload=window.__pwned=3>"
TITLES_JS = """
(() => ({
  pwned: typeof window.__pwned,
  elements: document.querySelectorAll('img, iframe, object, embed, script[src]').length,
  images: [...document.querySelectorAll('svg image')]  // a heat map's: a data: URL
    .filter(i => !(i.getAttribute('href') || '').startsWith('data:')).length,
  links: document.querySelectorAll('a[href^="javascript"], svg a').length,
  bold: [...document.querySelectorAll('.gtitle b, .gtitle tspan[style*="bold"]')].length,
  charts: [...document.querySelectorAll('figure.chart')].map(f => ({
    name: f.dataset.chart, svgs: f.querySelectorAll('.main-svg').length,
    title: (f.querySelector('.gtitle') || {}).textContent,
    caption: (f.querySelector('figcaption') || {}).textContent})),
}))()
"""


@pytest.mark.browser
def test_a_hostile_title_and_caption_are_text_on_the_page(tmp_path: Path, browser: Browser) -> None:
    """Every chart of a report given a title and caption that are markup (issue 40, finding
    9): Chromium runs none of it, makes no element of it, and shows each as its text, in the
    plotly layout's title and in the page's caption."""
    names = [c.name for c in _document(_stored(tmp_path, _plan(tmp_path), "first.db")).charts()]
    assert len(names) >= 4, names
    extra = "".join(
        f"\n[report.charts.{name}]\ntitle = {json.dumps(HOSTILE_TITLE)}\n"
        f"caption = {json.dumps(HOSTILE_CAPTION)}\n"
        for name in names
    )
    db = _stored(tmp_path, _plan(tmp_path, extra=extra))
    page = tmp_path / "r.html"
    run_iolab(
        "report", "--db", str(db), "--format", "html", "-o", str(page), cwd=tmp_path, check=True
    )
    browser.load(page.as_uri())
    deadline = time.monotonic() + 30
    while not all(c["svgs"] > 0 for c in browser.evaluate(TITLES_JS)["charts"]):
        assert time.monotonic() < deadline, "charts were not drawn"
        time.sleep(0.2)
    seen = browser.evaluate(TITLES_JS)
    found = [seen[key] for key in ("pwned", "elements", "images", "links", "bold")]
    assert found == ["undefined", 0, 0, 0, 0], seen
    assert browser.errors() == []
    assert [c["name"] for c in seen["charts"]] == names
    for chart in seen["charts"]:
        assert chart["title"] == HOSTILE_TITLE, chart
        assert chart["caption"].startswith(HOSTILE_CAPTION), chart


@pytest.mark.slow  # an iolab process draws the charts
def test_a_title_the_image_font_lacks_is_one_warning_line(tmp_path: Path) -> None:
    """Characters matplotlib's font has no glyph for (an emoji, CJK): one line for the chart,
    not Python's two lines (its source file, its code) per character (issue 40, finding 10)."""
    extra = f'\n[report.charts.{HEAT_IOPS}]\ntitle = "disk 💾 中文 ✓"\n'
    db = _stored(tmp_path, _plan(tmp_path, extra=extra))
    done = run_iolab("report", "--db", str(db), "--format", "markdown", "-o", "r.md", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (line,) = [s for s in done.stderr.splitlines() if s.startswith("iolab: warning: ")]
    assert line == (
        f"iolab: warning: chart {HEAT_IOPS}: 3 characters of its text are not in the PNG font "
        "and are drawn as boxes (the HTML page shows them)"
    )
    assert [s for s in done.stderr.splitlines() if not s.startswith("wrote ")] == [line]
    assert ".py:" not in done.stderr and "savefig" not in done.stderr
