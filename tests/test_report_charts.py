"""Charts and statistics from real fio runs: study D's figure from a jobs sweep across three
set-ups, per-second time series, and repeat = 3 with a comparison of two runs."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import results_of, run_iolab
from iolab.report import compare_document, data
from iolab.report.cells import NO_INTERVAL
from iolab.report.render import mpl_render
from iolab.report.views import figures, time_figures
from iolab.store import Store

OUTPUT = Path(__file__).resolve().parents[1] / "test-output"
SWEEP = """
name = "jobs sweep"
[defaults]
runtime = 1
size = "8m"
log_avg_msec = 0
[[setup]]
name = "1 device"
path = "{root}/a"
[[setup]]
name = "RAID0 of 2"
path = "{root}/b"
[[setup]]
name = "RAID0 of 4"
path = "{root}/c"
[[workload]]
name = "4k randread"
rw = "randread"
bs = "4k"
numjobs = [1, 2, 4]
"""
REPEATED = """
name = "repeated"
repeat = 3
[defaults]
runtime = 1
size = "8m"
[[setup]]
name = "left"
path = "{root}/a"
[[setup]]
name = "right"
path = "{root}/b"
[[workload]]
rw = "randread"
bs = "4k"
"""
SERIES = """
name = "over time"
[defaults]
runtime = 3
size = "8m"
log_avg_msec = 1000
[[setup]]
name = "disk"
path = "{root}/a"
[[workload]]
rw = "randread"
bs = "4k"
"""


def _store(root: Path, plan: str, runs: int = 1) -> Path:
    for name in ("a", "b", "c"):
        (root / name).mkdir()
    (root / "plan.toml").write_text(plan.format(root=root))
    for number in range(runs):
        run_iolab("run", "plan.toml", *(["--new"] if number else []), cwd=root, check=True)
    return root


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A module-wide scratch directory on a real filesystem (not tmpfs: O_DIRECT)."""
    base = tmp_path_factory.mktemp("charts").name  # charts0 in every suite: add the pid
    path = Path(os.environ.get("IOLAB_TEST_DIR", "/var/tmp")) / f"iolab-test-{os.getpid()}-{base}"
    path.mkdir(parents=True)
    yield path
    subprocess.run(["rm", "-rf", str(path)], check=False)


@pytest.fixture(scope="module")
def sweep(scratch: Path) -> Path:
    root = scratch / "sweep"
    root.mkdir()
    return _store(root, SWEEP)


@pytest.fixture(scope="module")
def repeated(scratch: Path) -> Path:
    root = scratch / "repeated"
    root.mkdir()
    return _store(root, REPEATED, runs=2)


def output(name: str) -> Path:
    """Where a chart is kept to look at after the tests (test-output/, made by whichever
    test keeps one first)."""
    OUTPUT.mkdir(exist_ok=True)
    return OUTPUT / name


def _stored_iops(db: Path) -> dict[tuple[str, int], float]:
    with sqlite3.connect(db) as con:
        rows = con.execute(
            "SELECT c.setup, c.options, m.iops FROM metrics m JOIN cases c ON c.id = m.case_id"
        )
        return {(s, int(json.loads(o)["numjobs"])): i for s, o, i in rows}


@pytest.mark.fio
def test_one_command_gives_study_d_figure(sweep: Path) -> None:
    done = run_iolab(
        "report",
        "--format",
        "markdown",
        "-o",
        "study-d.md",
        "--charts",
        "scaling",
        "--image-format",
        "svg",
        cwd=sweep,
        check=True,
    )
    assert "wrote study-d.md" in done.stderr
    text = (sweep / "study-d.md").read_text()
    links = re.findall(r"!\[([^\]]+)\]\(([^)]+)\)", text)
    assert len(links) == 1, links
    title, link = links[0]
    assert title == "I/O rate vs numjobs: 4k randread (one line per set-up)"  # not "all workloads"
    svg = (sweep / link).read_text()
    for words in ("numjobs (jobs)", "I/O rate (IOPS)", "1 device", "RAID0 of 2", "RAID0 of 4"):
        assert words in svg, words
    shutil.copy(sweep / link, output("study-d-iops-vs-jobs.svg"))

    with Store(sweep / "iolab.db") as store:
        charts = figures.scaling(data.load(store, [None]))
    assert len(charts) == 1
    chart = charts[0]
    assert chart.x.title == "numjobs" and chart.y.unit == "IOPS"
    assert [s.name for s in chart.series] == ["1 device", "RAID0 of 2", "RAID0 of 4"]
    png = mpl_render.render(chart, "png")
    assert png.startswith(b"\x89PNG")
    output("study-d-iops-vs-jobs.png").write_bytes(png)
    stored = _stored_iops(sweep / "iolab.db")
    for series in chart.series:
        assert series.x == (1.0, 2.0, 4.0)
        assert series.y == tuple(stored[(series.name, jobs)] for jobs in (1, 2, 4))


@pytest.mark.fio
def test_lines_per_pattern_and_png_export(sweep: Path) -> None:
    out = sweep / "export"
    run_iolab(
        "report",
        "--charts",
        "scaling,bars",
        "--lines",
        "pattern",
        "--export",
        str(out),
        cwd=sweep,
        check=True,
    )
    names = sorted(p.name for p in out.iterdir())
    scaling = [n for n in names if n.startswith("scaling-") and n.endswith(".png")]
    assert len(scaling) == 3  # one chart per set-up, one line per pattern
    assert "bars-iops.png" in names and "bars-iops.svg" in names
    assert {"results.csv", "latency.csv", "environment.csv"} <= set(names)
    for name in names:
        head = (out / name).read_bytes()[:8]
        assert head.startswith(b"\x89PNG") if name.endswith(".png") else head
    shutil.copy(out / "bars-iops.png", output("study-d-bars.png"))


@pytest.mark.fio
def test_timeseries_asked_of_a_store_with_nothing_over_time(sweep: Path, tmp_path: Path) -> None:
    """No fio samples (log_avg_msec = 0), and no CPU or device readings over time (gone from
    this copy: 1 s cases on a loaded host may have had two): one line says what to add."""
    shutil.copy(sweep / "iolab.db", tmp_path / "iolab.db")
    with sqlite3.connect(tmp_path / "iolab.db") as con:
        con.execute("DELETE FROM telemetry")
    asked = ("--charts", "timeseries", "--format", "html", "-o", "x.html")
    done = run_iolab("report", *asked, cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip() == (
        "iolab: error: --charts timeseries: no samples and no CPU or device figures over time are "
        "stored; add log_avg_msec = 1000 to the workloads and run again"
    ), done.stderr


@pytest.mark.fio
def test_options_that_cannot_be_met_are_one_line_errors(sweep: Path) -> None:
    for args, words in (
        (("--charts", "pie"), "--charts 'pie' is not a chart kind"),
        (("--charts", "ratio"), "--charts ratio needs --baseline SETUP"),
        (("--x", "iodepth"), "--x iodepth: the runs do not sweep it (every case has iodepth=1)"),
        (("--x", "blocksize"), "--x blocksize: no stored case has a numeric 'blocksize'"),
        (("--baseline", "nope"), "'nope' is not a set-up of run 1"),
    ):
        done = run_iolab("report", "--format", "html", "-o", "x.html", *args, cwd=sweep)
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and words in done.stderr, done.stderr
    done = run_iolab("compare", "1", cwd=sweep)
    assert done.returncode == 1 and "compare needs two runs or more" in done.stderr


@pytest.mark.fio
def test_time_series_per_second_with_warm_up(scratch: Path) -> None:
    root = scratch / "series"
    root.mkdir()
    _store(root, SERIES)
    with Store(root / "iolab.db") as store:
        charts = time_figures.time_series(data.load(store, [None]))
    assert [c.y.unit for c in charts[:2]] == ["IOPS", "MB/s = 10⁶ bytes/s"]
    # the latency's unit follows its size: µs on a quiet host, ms where other work slowed it
    assert charts[2].y.unit in ("µs", "ms"), charts[2].y.unit
    for chart in charts:
        assert chart.x.label == "time since the start of measurement (s)"
        assert chart.x.start_at_zero  # the first seconds are on the chart
        (series,) = chart.series
        assert series.x[:2] == (1.0, 2.0)  # one sample a second (fio may drop a last partial)
        assert all(v is not None and v > 0 for v in series.y)
    run_iolab("report", "--format", "markdown", "-o", "series.md", cwd=root, check=True)
    text = (root / "series.md").read_text()
    assert "## Over time" in text and "fio's averages over 1000 ms intervals" in text
    shutil.copy(root / "series_files" / f"{charts[0].name}.png", output("timeseries-iops.png"))


def intervals(text: str) -> int:
    """How many cells say their 95% interval: "± x", or, where the repetitions spread wider
    than the value (as they may on a loaded host), that there is no useful one."""
    return text.count("±") + text.count(NO_INTERVAL)


@pytest.mark.fio
def test_repeat_3_intervals_in_every_format_and_compare(repeated: Path) -> None:
    table = run_iolab("report", "1", cwd=repeated, check=True).stdout
    row = next(line for line in results_of(table).splitlines() if "4k randread" in line)
    assert intervals(row) == 2
    md = run_iolab(
        "report", "1", "--format", "markdown", "--baseline", "left", cwd=repeated, check=True
    ).stdout
    row = next(line for line in results_of(md).splitlines() if line.startswith("| 4k randread"))
    assert intervals(row) == 3 and "% ± " in row  # both absolute values, and the change
    lines = list(
        csv.DictReader(
            run_iolab(
                "report", "1", "--format", "csv", cwd=repeated, check=True
            ).stdout.splitlines()
        )
    )
    assert [line["n"] for line in lines] == ["3", "3"]
    assert all(float(x["ci95_low"]) < float(x["ci95_high"]) for x in lines)
    page = run_iolab("report", "1", "--format", "html", cwd=repeated, check=True).stdout
    assert intervals(page.split('data-table="results"')[1].split("</table>")[0]) == 2

    compared = run_iolab("compare", "1", "2", "--format", "csv", cwd=repeated, check=True)
    rows = list(csv.DictReader(compared.stdout.splitlines()))
    changes = [r for r in rows if r["column"] == "change 2 vs 1"]
    verdicts = [r["value"] for r in rows if r["column"] == "verdict 2 vs 1"]
    assert len(changes) == 2
    for change, verdict in zip(changes, verdicts, strict=True):
        low, high = float(change["ci95_low"]), float(change["ci95_high"])
        assert (verdict == "not significant") == (low <= 0 <= high), (change, verdict)
    terminal = run_iolab("compare", "1", "2", cwd=repeated, check=True).stdout
    assert "Comparison of runs 1 and 2" in terminal and "verdict 2 vs 1" in terminal
    with Store(repeated / "iolab.db") as store:
        doc = compare_document.compare(data.load(store, [1, 2], samples=False, histograms=False))
    assert doc.main_table().rows[0].cells[2].difference is not None
