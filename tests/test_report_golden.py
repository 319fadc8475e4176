"""Golden tests: the committed store (real fio, two runs of one plan, 3 repetitions) renders
to exactly the committed Markdown and CSV; its statistics read as they should.

The byte-for-byte snapshots are pure (the fast lane runs them): every command by the real
command line in this process, the charts' images left undrawn (a Markdown report's text names
them, whatever they hold). The images themselves, and the commands as separate processes,
are the slow tests' (`rendered`: tests/golden/make_store.py's own rendering)."""

from __future__ import annotations

import csv
import inspect
import re
import shutil
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import get_type_hints

import pytest
from click.testing import CliRunner

from conftest import iolab_here, results_of, run_iolab
from golden.make_store import SNAPSHOTS, STORE, WRITTEN, render, store_of
from iolab.cli import main
from iolab.errors import StoreError
from iolab.fio.parse import PERCENTILES
from iolab.model import CheckWarning, DirectionMetrics, Sample
from iolab.report import data as report_data
from iolab.report import document
from iolab.report.charts import Chart
from iolab.report.formats import output
from iolab.report.render.mpl_render import ImageFormat
from iolab.report.run import Options, ReportRun, derive
from iolab.store import Store

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    out = tmp_path_factory.mktemp("golden")
    return out, render(STORE, out)


def test_store_is_small_and_real() -> None:
    assert STORE.stat().st_size < 1024 * 1024
    with sqlite3.connect(STORE) as db:
        raw = db.execute("SELECT raw_json FROM cases LIMIT 1").fetchone()[0]
        assert '"bins"' in raw and "fio-3" in raw  # fio's own json+ output
        assert db.execute("SELECT count(*) FROM samples").fetchone()[0] > 0


def undrawn(jobs: Sequence[tuple[Chart, ImageFormat]]) -> list[bytes]:
    return [f"{chart.name}.{fmt}".encode() for chart, fmt in jobs]


@pytest.fixture(scope="module")
def texts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Every snapshot as make_store renders it (the same commands, the same far-off time
    zone), by the command line in this process, with the charts left undrawn."""
    out = tmp_path_factory.mktemp("golden-text")
    done: set[tuple[str, ...]] = set()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(output, "draw", undrawn)
        patch.setenv("TZ", "Pacific/Kiritimati")
        patch.chdir(out)
        time.tzset()
        try:
            for name, command in SNAPSHOTS.items():
                args = (
                    *(a.format(out=out) for a in command),
                    "--db",
                    str(STORE.parent / store_of(name)),
                )
                if args not in done:
                    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
                    assert result.exit_code == 0, (args, result.output)
                    done.add(args)
        finally:
            patch.undo()
            time.tzset()
    return {name: (out / WRITTEN.get(name, name)).read_text() for name in SNAPSHOTS}


@pytest.mark.parametrize("name", sorted(SNAPSHOTS))
def test_snapshot_matches_byte_for_byte(texts: dict[str, str], name: str) -> None:
    assert texts[name] == (GOLDEN / name).read_text(), (
        f"{name} changed; if on purpose: python tests/golden/make_store.py --render"
    )


@pytest.mark.slow  # every command a process of its own, every chart drawn
def test_the_commands_as_processes_write_the_same_text(
    rendered: tuple[Path, dict[str, str]], texts: dict[str, str]
) -> None:
    _, drawn = rendered
    assert drawn == texts


@pytest.mark.slow  # renders every snapshot, charts included
def test_markdown_images_are_written_beside_it(rendered: tuple[Path, dict[str, str]]) -> None:
    out, texts = rendered
    links = re.findall(r"!\[[^\]]+\]\(([^)]+)\)", texts["report.md"])
    kinds = {Path(link).stem.split("-")[0] for link in links}
    assert kinds == {"ratio", "bars", "scaling", "timeseries", "latency"}
    for link in links:
        assert link.startswith("report_files/")
        assert (out / link).read_bytes().startswith(b"\x89PNG\r\n\x1a\n"), link


def _results_rows(text: str) -> list[str]:
    results = text.split("## Results", 1)[1]
    return [line for line in results.splitlines() if line.startswith(("| rand", "| seq"))][:3]


@pytest.mark.slow  # renders every snapshot, charts included
def test_repeat_3_shows_intervals_in_every_format(
    rendered: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    _, texts = rendered
    for row in _results_rows(texts["report.md"]):
        assert row.count("±") == 3, row  # one, two, and two's change vs one
    for line in list(csv.DictReader(texts["results.csv"].splitlines())):
        assert line["n"] == "3"
        assert float(line["ci95_low"]) < float(line["value"]) < float(line["ci95_high"])
    table = results_of(
        run_iolab("report", "1", "--db", str(STORE), cwd=tmp_path, check=True).stdout
    )
    for label in ("rand numjobs=1", "rand numjobs=2", "seq"):
        row = next(line for line in table.splitlines() if f" {label} " in line)
        assert row.count("±") == 3, row
    page = tmp_path / "report.html"
    run_iolab(
        "report",
        "1",
        "--db",
        str(STORE),
        "--format",
        "html",
        "-o",
        str(page),
        cwd=tmp_path,
        check=True,
    )
    results = page.read_text().split('data-table="results"')[1].split("</table>")[0]
    assert results.count("±") == 9
    assert '"error_y":{"array":[' in page.read_text()  # error bars on the charts


def test_comparison_marks_differences_within_their_interval_not_significant(
    texts: dict[str, str],
) -> None:
    rows = list(csv.DictReader(texts["comparison.csv"].splitlines()))
    changes = [r for r in rows if r["column"] == "change 2 vs 1"]
    verdicts = [r["value"] for r in rows if r["column"] == "verdict 2 vs 1"]
    assert len(changes) == len(verdicts) == 6
    for change, verdict in zip(changes, verdicts, strict=True):
        low, high = float(change["ci95_low"]), float(change["ci95_high"])
        assert low < float(change["value"]) < high
        expected = "not significant" if low <= 0 <= high else ("higher" if low > 0 else "lower")
        assert verdict == expected
    # two runs of the same plan on the same files: most differences are noise
    assert verdicts.count("not significant") >= 4


def test_compare_says_what_differs_between_environments(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    shutil.copy(STORE, db)
    with sqlite3.connect(db) as con:
        con.execute(
            "UPDATE runs SET environment = json_set(environment, '$.fio_version', 'fio-3.36',"
            " '$.kernel', '6.12.0') WHERE id = 2"
        )
    done = iolab_here(
        "compare", "1", "2", "--db", str(db), "--format", "markdown", cwd=tmp_path, check=True
    )
    assert "### What differs between the runs" in done.stdout
    assert "- host: fio differs (run 1: fio-3.33; run 2: fio-3.36)" in done.stdout
    assert "- host: kernel differs (run 1: " in done.stdout
    assert "| rand numjobs=1 | one | IOPS |" in done.stdout  # still compared


def test_store_reads_typed_values(tmp_path: Path) -> None:
    """Reports get model types from the store: metrics, warnings and samples, not dicts."""
    db = tmp_path / "store.db"
    shutil.copy(STORE, db)
    warning = '[{"code": "cpu-bound", "message": "fio was busy.", "advice": "Add jobs."}]'
    with sqlite3.connect(db) as con:
        con.execute("UPDATE cases SET warnings = ? WHERE id = 1", (warning,))
    with Store(db) as store:
        first = store.cases(1)[0]
        read = first.metrics["read"]
        assert isinstance(read, DirectionMetrics) and read.direction == "read"
        assert set(read.percentiles_ns) == set(PERCENTILES) and read.iops > 0
        assert first.warnings == (CheckWarning("cpu-bound", "fio was busy.", "Add jobs."),)
        samples = store.case_samples(1)
        assert {s.sample.metric for s in samples} == {"iops", "bw", "lat"}
        assert all(isinstance(s.sample, Sample) for s in samples)
    with sqlite3.connect(db) as con:
        con.execute("UPDATE metrics SET direction = 'sideways'")
    with Store(db) as store, pytest.raises(StoreError, match="unknown direction 'sideways'"):
        store.cases(1)


def test_the_report_is_its_sections_in_order() -> None:
    """A report's body is report.document.SECTIONS called in turn, each a function of the one
    run alone (report.run.ReportRun) that gives a Section or None; the Findings come first,
    the More findings last, and --short keeps the findings' short form alone."""
    for made in document.SECTIONS:
        hints = get_type_hints(made)
        assert list(inspect.signature(made).parameters) == ["run"], made.__name__
        assert (hints["run"], hints["return"]) == (ReportRun, document.Section | None)
    with Store(STORE) as store:
        found = report_data.load(store, [1])
    options = Options(baseline="one")
    run = derive(found, options)
    body = [s.title for made in document.SECTIONS if (s := made(run)) is not None]
    titles = [s.title for s in document.assemble(found, options).sections]
    assert titles[0] == "Findings" and titles[1 : len(body) + 1] == body, titles
    assert titles[len(body) + 1 :] in ([], ["More findings"])
    short = document.assemble(found, replace(options, short=True))
    assert [s.title for s in short.sections] == ["Findings"]
