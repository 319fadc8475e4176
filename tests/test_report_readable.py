"""Reports that read like the studies (issue 13), from the committed stores: compare says what
matters in a few lines; a baseline shows absolute values and one vocabulary of change; units
and labels read plainly; time series are coloured by set-up with the warm-up really shaded;
CrystalDiskMark's presets get its grid; big runs summarise and say what they left out."""

from __future__ import annotations

import csv
import json
import re
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import iolab_here, run_iolab
from golden.make_store import CDM, DEVICES, STORE
from iolab.model import Setup, codec, metric_for
from iolab.model.facts import SetupFacts
from iolab.report import compare_document, data, document
from iolab.report.cells import Cell, Row, Table, cell_values, change_cell, setup_line
from iolab.report.charts import Region
from iolab.report.formats import csv as csv_format
from iolab.report.formats import markdown, output, terminal
from iolab.report.render import mpl_render
from iolab.report.run import Options
from iolab.report.views import cdm_view, figures, heat_figure, time_figures
from iolab.store import Store

BENCH = Path(__file__).resolve().parents[1] / "bench"
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
CHANGE = re.compile(r"^[+-]\d+\.\d% ± \d+\.\d%( n\.s\.)?$")


def _copy(store: Path, tmp_path: Path) -> Path:
    db = tmp_path / store.name
    shutil.copy(store, db)
    return db


def _load(db: Path, runs: list[int | None], **kw: bool) -> data.Dataset:
    with Store(db) as store:
        return data.load(store, runs, **kw)


def _edit_environment(db: Path, run: int, setup: str, change: Any) -> None:
    with sqlite3.connect(db) as con:
        (text,) = con.execute(
            "SELECT environment FROM setups WHERE run_id = ? AND name = ?", (run, setup)
        ).fetchone()
        env = json.loads(text)
        change(env)
        con.execute(
            "UPDATE setups SET environment = ? WHERE run_id = ? AND name = ?",
            (json.dumps(env), run, setup),
        )


# ---------------------------------------------------------------- 1: compare's environment


@pytest.mark.slow
def test_compare_says_what_matters_in_a_few_lines_and_folds_the_rest(tmp_path: Path) -> None:
    db = _copy(DEVICES, tmp_path)

    def new_firmware(env: dict[str, Any]) -> None:
        for device in env["layout"]["devices"].values():
            device["firmware"], device["model"] = "FW-2", "Disk 9000"

    _edit_environment(db, 2, "xfs", new_firmware)
    with sqlite3.connect(db) as con:
        con.execute(
            "UPDATE runs SET environment = json_set(environment, '$.fio_version', "
            "'fio-3.36') WHERE id = 2"
        )
    md = run_iolab(
        "compare", "1", "2", "--db", str(db), "--format", "markdown", cwd=tmp_path, check=True
    ).stdout
    section = md.split("### What differs between the runs")[1].split("\n### ")[0]
    lines = [line for line in section.splitlines() if line.startswith("- ")]
    assert lines == [
        "- host: fio differs (run 1: fio-3.33; run 2: fio-3.36)",
        "- set-up 'xfs': device model differs (run 1: —; run 2: Disk 9000)",
        "- set-up 'xfs': device firmware differs (run 1: —; run 2: FW-2)",
        "- 6 more recorded facts differ, volatile ones that do not change results (uuid 5, "
        "log 1): listed in the HTML report's details.",
    ]
    table = run_iolab("compare", "1", "2", "--db", str(db), cwd=tmp_path, check=True).stdout
    for text in (md, table):
        assert not UUID.search(text), "UUIDs stay in the HTML page's details"
        assert "btrfs-progs" not in text and '"command"' not in text, "no mkfs logs as JSON"
    # a few lines: the findings with the costs table they cite, the comparison, what differs
    # (its mixed workload a read, a write and a total row, 2-repetition intervals in words)
    assert "device firmware differs" in table and len(table) < 10_000
    page = run_iolab(
        "compare", "1", "2", "--db", str(db), "--format", "html", cwd=tmp_path, check=True
    ).stdout
    folded = page.split('<details data-notes="volatile">')[1].split("</details>")[0]
    assert "Volatile facts that differ (6)" in folded and UUID.search(folded)
    assert "set-up &#x27;btrfs raid1&#x27;: log differs" in folded


# ---------------------------------------------------------------- 2: values and change


def test_baseline_shows_values_beside_the_change_compare_says_alike() -> None:
    found = _load(STORE, [1])
    doc = document.assemble(found, Options(baseline="one"))
    results = doc.main_table()
    assert results.columns == ("one (baseline)", "two", "change vs one")
    assert results.keys == ("one", "two", "change two vs one")
    for row in results.rows:
        one, two, change = row.cells
        assert one.unit == two.unit == row.stubs[0] and two.summary is not None
        assert change.unit == "%" and CHANGE.match(change.text), change.text
        metric = metric_for(found.cell("one", row.label)[0].options)
        base = cell_values(found.cell("one", row.label), metric)[0]
        other = cell_values(found.cell("two", row.label), metric)[0]
        assert change.text == change_cell(base, other).text
    compared = compare_document.compare(_load(STORE, [1, 2], samples=False, histograms=False))
    changes = [row.cells[2] for row in compared.main_table().rows]
    assert all(CHANGE.match(c.text) for c in changes), [c.text for c in changes]

    heat = next(c for c in doc.charts() if c.kind == "heat")
    assert heat.title == "Change vs one, per workload and set-up"
    assert (heat.x.label, heat.y.label, heat.center) == ("set-up", "workload", 0.0)
    assert heat.scale is not None and heat.scale.label == "change vs one (%)"
    assert [s.y[0] for s in heat.series] == pytest.approx([r.cells[2].value for r in results.rows])
    assert [s.muted[0] for s in heat.series] == ["n.s." in r.cells[2].text for r in results.rows]
    heat = next(c for c in compared.charts() if c.kind == "heat")
    assert heat.x.label == "run" and heat.series[0].x == ("run 2",)
    assert heat.y.label == "workload · setup"
    assert heat.scale is not None and heat.scale.label == "change vs run 1 (%)"
    assert [s.muted[0] for s in heat.series] == ["not significant" in c.flags for c in changes]
    assert sum(s.muted[0] for s in heat.series) == 5  # n.s. cells are grey, not coloured
    low, high = heat.heat_range()
    assert low == -high and high >= 10
    svg = mpl_render.render(heat, "svg").decode()
    for words in ("change vs run 1 (%)", ">run<", "workload · setup", "n.s."):
        assert words in svg, words


def test_one_outlier_does_not_make_every_other_change_pale() -> None:
    """Changes of -94%, -90%, -80% and +942%: the colours run to ±94% (-94% gets the darkest
    red), +942% is drawn at the darkest blue, and the caption says what was clipped."""
    changes = (-94.0, -90.0, -80.0, 942.0)
    rows = tuple(
        Row(f"w{i}", (Cell(None, "", "one"), Cell(100 + c, "%", f"{c:+.0f}%", heat=100 + c)))
        for i, c in enumerate(changes)
    )
    table = Table("Results", "workload", ("one", "change two vs one"), rows)
    chart = heat_figure.heat(table, "Change vs one", "set-up", "one")
    assert chart is not None
    assert chart.heat_range() == (-94.0, 94.0)
    assert chart.heat_clipped() == [942.0]
    assert chart.caption.endswith(
        "Colours stop at ±94%: 1 cell lies beyond (the largest +942%), drawn at the darkest "
        "shade; the labels give the values."
    )
    calm = heat_figure.heat(
        Table("Results", "workload", ("one", "change two vs one"), rows[:3]), "t", "x", "one"
    )
    assert calm is not None and calm.heat_clipped() == [] and "Colours stop" not in calm.caption


def test_a_heat_map_of_a_long_table_says_how_many_rows_it_draws() -> None:
    """98 changed rows: the map draws the ends of the ranking, 40, and its caption says so,
    with where every row is (issue 45: an import's map showed 40 of 98 rows, no word)."""
    rows = tuple(
        Row(f"w{i}", (Cell(None, "", "one"), Cell(100.0 + i, "%", f"{i:+}%", heat=100.0 + i)))
        for i in range(98)
    )
    table = Table("Results", "workload", ("one", "change two vs one"), rows)
    chart = heat_figure.heat(table, "Change vs one", "set-up", "one")
    assert chart is not None and len(chart.series) == 40
    assert chart.caption.endswith(
        " 40 of the table's 98 rows: the ends of the ranking; every row is in the results "
        "table (and its CSV)."
    )


# ---------------------------------------------------------------- 5: units and labels


def test_latency_columns_switch_to_ms_and_clamp_percentiles_to_the_max(tmp_path: Path) -> None:
    db = _copy(STORE, tmp_path)
    with sqlite3.connect(db) as con:  # a device 1,000 times slower: ~100 ms tails
        rows = con.execute("SELECT rowid, percentiles_ns, lat_max_ns FROM metrics").fetchall()
        for rowid, text, top in rows:
            slow = {k: v * 1000 for k, v in json.loads(text).items()}
            slow["99.99"] = top * 1000 * 1.03  # fio's bin edge above the maximum
            con.execute(
                "UPDATE metrics SET percentiles_ns = ?, lat_max_ns = ?, lat_mean_ns = "
                "lat_mean_ns * 1000 WHERE rowid = ?",
                (json.dumps(slow), top * 1000, rowid),
            )
    built = document.assemble(_load(db, [1]), Options(charts=()))
    latency = next(t for t in built.tables() if t.name == "latency")
    assert latency.name == "latency"
    units = [row.stubs[2] for row in latency.rows]  # one per row, named in its "unit" column
    assert set(units) <= {"ms", "s"}, units  # by its largest figure (~1 s tails here)
    assert all(
        {c.unit for c in row.cells if c.value is not None} == {row.stubs[2]} for row in latency.rows
    )
    texts = [cell.text for row in latency.rows for cell in row.cells]
    assert not any(re.search(r"\d{2},\d{3}", t) for t in texts), "no 113,770 µs: ms instead"
    for row in latency.rows:
        p9999, top = row.cells[5], row.cells[6]
        assert p9999.text.startswith("≤ ") and p9999.value == top.value
    assert any(note.startswith("≤: fio put this percentile above") for note in latency.notes)


def test_exceedance_ticks_read_as_plain_numbers_and_percentiles() -> None:
    assert figures.log_ticks([20.0, 45.0]) == ((20.0, "20"), (45.0, "45"))
    assert [t for _, t in figures.log_ticks([8.0, 300.0])] == ["10", "20", "50", "100", "200"]
    assert [t for _, t in figures.log_ticks([0.5, 20_000.0])] == [
        "1",
        "10",
        "100",
        "1,000",
        "10,000",
    ]
    chart = figures.exceedance(_load(STORE, [1]))[0]
    assert chart.y.unit == "%" and "1% (p99)" in [t for _, t in chart.y.ticks]
    svg = mpl_render.render(chart, "svg").decode()
    assert "10^" not in svg and "×10" not in svg and "times" not in svg
    assert ">1% (p99)<" in svg and ">100<" in svg


def test_titles_name_the_workload_and_never_wrap_in_a_terminal() -> None:
    title = "run 12: a plan with a long name (2026-11-22 02:10 UTC, fio-3.33)"
    narrow = Table(title, "workload", ("x",), (Row("w", (Cell(1.0, "", "1"),)),))
    text = terminal.render(narrow, width=120)
    assert text.splitlines()[0] == title  # on one line, though the grid is narrow
    assert max(len(line) for line in text.splitlines()[1:]) < 20


def test_markdown_environment_reads_without_python_and_lists_each_set_up() -> None:
    text = (Path(__file__).parent / "golden" / "devices-report.md").read_text()
    environment = text.split("## Environment")[1]
    assert not re.search(r"\{'|\['|': ", environment), "no Python dicts or lists"
    assert (
        "| RAID | — | btrfs: data RAID1, system RAID1, metadata RAID1; over loop2, loop3 |"
        in environment
    )
    assert "- xfs: filesystem xfs_info: block size 4096, inode size 512, ag count 4," in text
    assert (
        "- xfs: stack file /run/iolab/xfs/iolab.testfile → xfs on /dev/loop2 → loop loop2" in text
    )
    assert "- btrfs raid1: commands `mkfs.btrfs -f -d raid1 /dev/loop2 /dev/loop3` ✓;" in text


# ---------------------------------------------------------------- 4: time series


def test_time_series_by_set_up_repetitions_faint_warm_up_shaded() -> None:
    found = _load(DEVICES, [1])
    charts = {c.name: c for c in time_figures.time_series(found)}
    chart = charts["timeseries-mixed-iops"]
    bold = [s for s in chart.series if not s.faint]
    assert [s.name for s in bold] == ["xfs (median of 2)", "btrfs raid1 (median of 2)"]
    assert [s.color for s in bold] == [0, 1]  # the set-ups' colours on every chart
    faint = [s for s in chart.series if s.faint]
    assert [(s.name, s.color) for s in faint] == [
        ("xfs #1", 0),
        ("xfs #2", 0),
        ("btrfs raid1 #1", 1),
        ("btrfs raid1 #2", 1),
    ]
    assert chart.regions[0] == Region(-1.0, 0.0, "ramp_time (not measured)", 0.25)
    assert chart.x.span is not None and chart.x.span[0] == -1.0
    assert "fio's ramp_time, 1 s run before measuring" in chart.caption
    for chart in time_figures.time_series(_load(STORE, [1])):
        assert ("Shaded" in chart.caption) == bool(chart.regions), chart.caption


def test_time_series_metrics_have_the_same_points() -> None:
    found = _load(STORE, [1])
    for key, samples in found.samples.items():
        kept, _ = time_figures._aligned(samples)
        times = {kind: [t for t, _ in points] for kind, points in kept.items()}
        assert len({tuple(t) for t in times.values()}) == 1, (key, times)
    charts = time_figures.time_series(found)
    for workload in ("rand numjobs=1", "seq"):
        lines = [c for c in charts if c.title.endswith(f": {workload}")]
        counts = {c.y.unit: [len(s.x) for s in c.series] for c in lines}
        assert len({tuple(v) for v in counts.values()}) == 1, counts  # IOPS, MB/s and latency


# ---------------------------------------------------------------- 3: CrystalDiskMark


def test_crystaldiskmark_gets_its_grid_best_pass_and_bars(tmp_path: Path) -> None:
    found = _load(CDM, [1])
    doc = document.assemble(found, Options())
    grid = doc.main_table()
    assert grid.name == "crystaldiskmark" and "results" not in [t.name for t in doc.tables()]
    assert grid.columns == ("Read (MB/s)", "Read median", "Write (MB/s)", "Write median")
    assert [r.label for r in grid.rows] == ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"]
    for row in grid.rows:
        for side, (best, median) in zip(
            ("read", "write"), (row.cells[:2], row.cells[2:]), strict=True
        ):
            rw = {"read": "read", "write": "write"}[side]
            workload = next(
                w for w in found.workloads() if w.startswith(row.label) and w.endswith(rw)
            )
            passes = cell_values(found.cell("disk", workload), "bw")[0]
            assert best.value == max(passes) and best.unit == "MB/s"
            assert median.summary is not None and median.summary.n == len(passes) == 3
    names = [c.name for c in doc.charts()]
    assert "crystaldiskmark" in names and not any(n.startswith("scaling") for n in names)
    bars = next(c for c in doc.charts() if c.name == "crystaldiskmark")
    assert [s.name for s in bars.series] == ["Read", "Write"] and bars.y.unit.startswith("MB/s")
    assert bars.series[0].y[0] == grid.rows[0].cells[0].value
    # RND4K Q1T1 (tens of MB/s) beside SEQ1M (over a thousand): a log axis from the decade
    # below the smallest bar, so that it does not vanish
    smallest = min(v for s in bars.series for v in s.y if v is not None)
    assert bars.y.log and bars.y.span is not None and bars.y.span[0] <= smallest
    assert bars.y.span[0] * 10 > smallest and "Log scale" in bars.caption
    text = iolab_here("report", "--db", str(_copy(CDM, tmp_path)), cwd=tmp_path, check=True).stdout
    grid_text = text.split("\nCrystalDiskMark\n")[1].split("As Crystal")[0]  # past findings
    assert "CrystalDiskMark" in text and "rw=read" not in grid_text


def test_the_presets_set_up_here_is_named_by_its_folder(tmp_path: Path) -> None:
    db = _copy(CDM, tmp_path)
    with sqlite3.connect(db) as con:
        con.execute("UPDATE setups SET name = 'here'")
        con.execute("UPDATE cases SET setup = 'here'")
    found = _load(db, [1])
    assert cdm_view.name(found.setups[0]) == "/var/tmp/iolab-golden/disk"
    grid = cdm_view.table(found)
    assert grid is not None and "set-up /var/tmp/iolab-golden/disk: ext4 on /dev/vda" in grid.notes
    assert cdm_view.bars(found)[0].title == "CrystalDiskMark: /var/tmp/iolab-golden/disk"


def test_a_relative_path_is_shown_with_the_folder_it_was(tmp_path: Path) -> None:
    """`iolab run` here, or a job file: the set-up's path is "."; its line says where that
    was, from the target recorded when it ran."""
    found = _load(_copy(CDM, tmp_path), [1])
    facts = codec.from_json(SetupFacts, found.setups[0].environment)
    line = setup_line("here", Setup("here", path="."), facts)
    assert line == "set-up here: path . = /var/tmp/iolab-golden/disk (ext4 on /dev/vda)"
    absolute = setup_line("x", Setup("x", path="/mnt/x"), facts)
    assert absolute == "set-up x: path /mnt/x (ext4 on /dev/vda)"


# ---------------------------------------------------------------- 6: at any size


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of 2 set-ups x 300 workload points (a six-field sweep), built as the bench does."""
    sys.path.insert(0, str(BENCH))
    import report_size

    db: Path = tmp_path_factory.mktemp("big") / "big.db"
    report_size.build(db, 2, 300)
    return db


@pytest.mark.slow  # runs the runner over the fake executor and reports
def test_big_runs_summarise_and_say_what_they_left_out(big: Path) -> None:
    found = _load(big, [None])
    assert found.charted is not None and len(found.charted) == 2  # samples read for 2 only
    assert {key[1] for key in found.samples} == set(found.charted)
    doc = document.assemble(found, Options())
    results = doc.main_table()
    # a mixed point (0 < rwmixread < 100) has a read, a write and a total row
    assert len({r.label for r in results.rows}) == 300 and results.shown is not None
    shown = results.shown_rows()
    gap = next(i for i, r in enumerate(shown) if r.label == "…")
    assert len({r.label for r in shown[:gap]}) == 100 == len({r.label for r in shown[gap + 1 :]})
    assert results.left_out.startswith("200 of 300 workloads shown: the 100 where setup-1 gains")
    assert len(csv_format.render(results).splitlines()) == 1 + 2 * len(results.rows)  # every row
    text = markdown.render_document(doc).split("## Results")[1].split("\n## ")[0]
    assert text.count("\n| mix ") == len(shown) - 1 and "| … |" in text
    assert results.left_out in text
    bars = [c for c in doc.charts() if c.kind == "bar"]
    assert 30 <= sum(len(c.series[0].x) for c in bars) <= 60  # a mixed point: read and write
    assert "(30 of 300)" in bars[0].title
    scaling = [c.name for c in doc.charts() if c.name.startswith("scaling")]
    assert scaling == [
        f"scaling-{f}-geometric-mean" for f in ("numjobs", "iodepth", "bs", "rwmixread")
    ]
    timeseries = {c.title.split(": ", 1)[1] for c in doc.charts() if c.name.startswith("time")}
    assert timeseries == set(found.charted)
    assert "drawn for 2 of 300 workloads" in doc.charts()[-1].caption
    latency = next(t for t in doc.tables() if t.name == "latency")
    assert {r.label for r in latency.rows} <= set(found.workloads())
    assert len({r.label for r in latency.rows}) == 40 and latency.left_out
    assert not any(c.name.startswith("latency") for c in doc.charts())  # too many to draw
    rendered = output.render(doc, "table")
    assert rendered.text.count("\n│ mix ") == len(shown) - 1


@pytest.mark.slow  # runs the runner over the fake executor and reports
def test_bench_builds_a_store_and_times_the_reports(tmp_path: Path) -> None:
    done = run_iolab_bench(tmp_path, "--setups", "2", "--workloads", "30", "--formats", "csv")
    assert done.returncode == 0, done.stderr
    assert "store: 60 results" in done.stdout and re.search(r"csv +\d+\.\d+ s", done.stdout)


def run_iolab_bench(cwd: Path, *args: str) -> Any:
    import subprocess

    return subprocess.run(
        [sys.executable, str(BENCH / "report_size.py"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


@pytest.mark.slow  # runs the runner over the fake executor and reports
def test_csv_of_a_big_run_has_every_row(big: Path, tmp_path: Path) -> None:
    out = run_iolab("report", "--db", str(big), "--format", "csv", cwd=tmp_path, check=True)
    rows = list(csv.DictReader(out.stdout.splitlines()))
    assert len({(r["workload"], r["setup"]) for r in rows}) == 600
    assert {r["setup"] for r in rows} == {"setup-0", "setup-1"}
    mixed = {r["workload"] for r in rows if r["direction"] == "total"}
    assert len(rows) == 600 + 2 * 2 * len(mixed)  # a mixed point: read, write and total
