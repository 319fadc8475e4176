"""An imported fio-plot-style tree is named and charted as iolab's own sweeps are: each workload
by its pattern, block size, depth and jobs; chart axes only from options that change the
workload (never its file or log names); reads and writes never averaged into one line.

The tree is made here by real fio, as fio-plot's sample trees were (fio-plot's own P420i +
Crucial MX200 one among them): every job called [random-read], writes too, its logs named
after the queue depth alone (write_bw_log=random-read-depth-D), one JSON file per point named
MODE-IODEPTH-NUMJOBS.json in the target's folder."""

from __future__ import annotations

import math
import re
import statistics
import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES, run_iolab
from fakes import QuietUi
from iolab.app.transfer import import_files
from iolab.report import data
from iolab.report.views import figures, sweep_heat
from iolab.store import Store

MODES, DEPTHS, JOBS = ("randread", "randwrite"), (1, 2, 4, 8, 16), (1, 2)


def _tree(root: Path) -> Path:
    """fio-plot's sample tree layout, written by fio: 20 points of 4k random reads and writes
    on a 1 MiB file (page cache, no O_DIRECT: the figures do not matter here, their names do)."""
    target, logs = root / "P420i_sample", root / "logs"
    target.mkdir()
    logs.mkdir()
    for mode in MODES:
        for depth in DEPTHS:
            for jobs in JOBS:
                log = f"random-read-depth-{depth}"
                subprocess.run(
                    [
                        "fio",
                        "--name=random-read",
                        f"--filename={root / 'data.img'}",
                        "--size=1m",
                        f"--rw={mode}",
                        "--bs=4k",
                        "--ioengine=libaio",
                        f"--iodepth={depth}",
                        f"--numjobs={jobs}",
                        "--group_reporting",
                        f"--write_bw_log={log}",
                        f"--write_iops_log={log}",
                        f"--write_lat_log={log}",
                        "--log_avg_msec=500",
                        "--output-format=json",
                        f"--output={target / f'{mode}-{depth}-{jobs}.json'}",
                    ],
                    cwd=logs,
                    check=True,
                    capture_output=True,
                    timeout=60,
                )
    return target


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fioplot")
    tree = _tree(root)
    done = run_iolab("import", str(tree), "--setup", "mx200", "--db", "t.db", cwd=root)
    assert done.returncode == 0, done.stderr
    return root / "t.db"


def _dataset(db: Path) -> data.Dataset:
    with Store(db) as store:
        return data.load(store, [None])


@pytest.mark.fio
def test_every_point_is_named_by_its_pattern_block_size_depth_and_jobs(imported: Path) -> None:
    found = _dataset(imported)
    names = {c.workload: c.options for c in found.cases}
    assert sorted(names) == sorted(
        f"4k {m} iodepth={d} numjobs={j}" for m in MODES for d in DEPTHS for j in JOBS
    )
    for name, options in names.items():  # each name says what the JSON's options say
        assert (
            name == f"{options['bs']} {options['rw']} iodepth={options['iodepth']} "
            f"numjobs={options['numjobs']}"
        )
        assert options["write_bw_log"] == f"random-read-depth-{options['iodepth']}"


@pytest.mark.fio
def test_scaling_charts_name_only_workload_options_and_keep_reads_from_writes(
    imported: Path,
) -> None:
    found = _dataset(imported)
    charts = figures.scaling(found)
    assert [c.name for c in charts] == [
        "scaling-numjobs-geometric-mean",
        "scaling-iodepth-geometric-mean",
    ]
    iops = {
        (c.options["rw"], c.options["iodepth"], c.options["numjobs"]): figures.case_metric(
            c, "iops"
        )
        for c in found.cases
    }
    fields = (("numjobs", "iodepth"), ("iodepth", "numjobs"))
    for chart, (field, over) in zip(charts, fields, strict=True):
        assert (
            chart.title == f"I/O rate vs {field}: mx200, geometric mean over {over} "
            "(one line per direction)"
        )
        assert not re.search(r"log|filename|directory|output", chart.title + chart.caption)
        assert [s.name for s in chart.series] == list(MODES)
        for line, mode in zip(chart.series, MODES, strict=True):
            for x, y in zip(line.x, line.y, strict=True):
                mine = [
                    v
                    for (m, d, j), v in iops.items()
                    if m == mode and (j if field == "numjobs" else d) == x and v
                ]
                assert y == pytest.approx(math.exp(statistics.fmean(map(math.log, mine))))


@pytest.mark.fio
@pytest.mark.slow
def test_the_markdown_report_titles_its_charts_by_workload_options(imported: Path) -> None:
    """As a new user would: `iolab report --format markdown` of the imported tree."""
    root = imported.parent
    done = run_iolab("report", "--db", "t.db", "--format", "markdown", "-o", "r.md", cwd=root)
    assert done.returncode == 0, done.stderr
    titles = re.findall(r"!\[([^\]]*)\]\(r_files/(scaling-[^)]*)\)", (root / "r.md").read_text())
    assert len(titles) == 2, titles
    for title, _ in titles:
        assert not re.search(r"write_|log|filename", title), title
        assert "(one line per direction)" in title


def test_a_bench_fio_trees_lines_are_named_once_by_what_they_keep(tmp_path: Path) -> None:
    """bench-fio's own tree (tests/fixtures/import/bench-fio/tree: randread and randrw 70/30 at
    4k and 64k, iodepth 1 and 4, numjobs 1 and 2): a numjobs chart with a line per pattern,
    each named by its workload's name less numjobs, never with its options again beside it."""
    db = tmp_path / "t.db"
    import_files([str(FIXTURES / "import" / "bench-fio" / "tree")], None, str(db), QuietUi())
    found = _dataset(db)
    (chart,) = figures.scaling(found)
    assert chart.title == "I/O rate vs numjobs: bench.img (one line per pattern)"
    expected = {re.sub(r" numjobs=\d+", "", c.workload) for c in found.cases}
    assert sorted(s.name for s in chart.series) == sorted(expected)
    assert len(expected) == 8 and all(
        re.fullmatch(r"(4|64)k rand(read|rw rwmixread=70) iodepth=[14]", name) for name in expected
    )


def test_a_bench_fio_tree_gets_its_depth_by_jobs_heat_maps(tmp_path: Path) -> None:
    """Each imported file names its own logs: those names are not what a pattern is, so the
    tree's 4 patterns each get an IOPS and a p99 map over iodepth x numjobs (issue 45)."""
    db = tmp_path / "t.db"
    import_files([str(FIXTURES / "import" / "bench-fio" / "tree")], None, str(db), QuietUi())
    maps = sweep_heat.charts(_dataset(db))
    assert [m.title for m in maps if m.title.startswith("IOPS")] == [
        f"IOPS over iodepth × numjobs: {p} on bench.img"
        for p in (
            "4k randread",
            "64k randread",
            "4k randrw rwmixread=70",
            "64k randrw rwmixread=70",
        )
    ]
    assert len(maps) == 8
