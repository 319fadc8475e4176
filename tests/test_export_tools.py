"""`iolab export` for other tools: Parquet that pandas reads back with the JSON export's
numbers, `iolab.load` equal to the CSV export, and a bench-fio tree that the real fio-plot
(the PyPI package) draws charts from. The runs are the golden store's (real fio output)."""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
from PIL import Image

import iolab
from conftest import IOLAB, iolab_here, run_iolab
from iolab.errors import IolabError
from iolab.exchange import fioplot, parquet
from iolab.store import Store

ROOT = Path(__file__).parent.parent
GOLDEN = Path(__file__).parent / "golden" / "store.db"
IMPORT = Path(__file__).parent / "fixtures" / "import"
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    db = tmp_path / "golden.db"
    shutil.copy(GOLDEN, db)
    return db


def export_json(db: Path, tmp_path: Path, run: str = "1") -> dict[str, Any]:
    out = tmp_path / f"run{run}.json"
    run_iolab("export", run, "--db", str(db), "-o", str(out), cwd=tmp_path, check=True)
    return dict(json.loads(out.read_text()))


def one_line_error(done: subprocess.CompletedProcess[str], words: str) -> None:
    assert done.returncode == 1, done.stderr
    assert done.stderr == f"iolab: error: {words}\n"
    assert "Traceback" not in done.stderr


# ---------------------------------------------------------------- Parquet and iolab.load


@pytest.mark.slow
def test_parquet_holds_the_json_exports_numbers(golden: Path, tmp_path: Path) -> None:
    doc = export_json(golden, tmp_path)
    out = tmp_path / "results.parquet"
    done = run_iolab(
        "export", "1", "--db", str(golden), "--format", "parquet", "-o", str(out), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    beside = [tmp_path / f"results.{t}.parquet" for t in ("percentiles", "samples")]
    assert done.stderr == "".join(f"wrote {p}\n" for p in (out, *beside))
    main = pd.read_parquet(out)
    cases = {c["id"]: c for c in doc["cases"]}
    metrics = {
        (
            cases[m["case_id"]]["setup"],
            cases[m["case_id"]]["workload"],
            cases[m["case_id"]]["repetition"],
            m["direction"],
        ): m
        for m in doc["metrics"]
        if (m["phase"], m["round"], m["host"]) == ("measure", 0, "")
    }
    assert len(main) == len(metrics) == 18
    for row in main.to_dict("records"):
        stored = metrics[(row["setup"], row["workload"], row["repetition"], row["direction"])]
        for column in ("iops", "bw_bytes", "io_bytes", "runtime_ms", "lat_mean_ns", "lat_max_ns"):
            assert row[column] == stored[column], column
        case = next(c for c in doc["cases"] if c["id"] == stored["case_id"])
        assert [row[p] for p in ("rw", "bs", "iodepth", "numjobs")] == [
            case[p] for p in ("rw", "bs", "iodepth", "numjobs")
        ]
        shares = {
            p["percentile"]: p["value_ns"]
            for p in doc["percentiles"]
            if p["case_id"] == stored["case_id"]
            and p["direction"] == row["direction"]
            and (p["phase"], p["round"], p["host"]) == ("measure", 0, "")
        }
        assert [row[f"p{p}_ns"] for p in ("50", "90", "99", "99.9", "99.99")] == [
            shares[p] for p in ("50", "90", "99", "99.9", "99.99")
        ]
    assert str(main["iodepth"].dtype) == "int64" and str(main["iops"].dtype) == "float64"
    assert main["rwmixread"].isna().all() and (main["run"] == doc["run"]["id"]).all()
    percentiles, samples = (pd.read_parquet(p) for p in beside)
    assert percentiles["value_ns"].tolist() == [p["value_ns"] for p in doc["percentiles"]]
    assert percentiles["percentile"].tolist() == [p["percentile"] for p in doc["percentiles"]]
    assert samples["value"].tolist() == [s["value"] for s in doc["samples"]]
    assert samples["time_ms"].tolist() == [s["time_ms"] for s in doc["samples"]]
    mark = json.loads(pq.read_schema(out).metadata[b"iolab-export"])
    assert mark["schema"] == "iolab-export" and mark["version"] == 1


def csv_cell(value: Any) -> str:
    """A DataFrame cell as the CSV export writes it: empty for null."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


def test_load_is_the_csv_exports_main_table(golden: Path, tmp_path: Path) -> None:
    out = tmp_path / "results.csv"
    iolab_here(
        "export", "--db", str(golden), "--format", "csv", "-o", str(out), cwd=tmp_path, check=True
    )
    table = pd.read_csv(out, dtype=str, keep_default_na=False)
    frame = iolab.load(golden)  # the latest run, as the export's default
    assert list(frame.columns) == list(table.columns)
    assert len(frame) == len(table) == 18
    assert [[csv_cell(v) for v in row] for row in frame.itertuples(index=False)] == [
        list(row) for row in table.itertuples(index=False)
    ]
    assert frame["run"].unique().tolist() == [2]
    assert iolab.load(str(golden), run=1)["run"].unique().tolist() == [1]


@pytest.mark.slow
def test_load_equals_reading_the_parquet_export(golden: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.parquet"
    run_iolab(
        "export",
        "1",
        "--db",
        str(golden),
        "--format",
        "parquet",
        "-o",
        str(out),
        cwd=tmp_path,
        check=True,
    )
    pd.testing.assert_frame_equal(iolab.load(golden, run=1), pd.read_parquet(out))
    for table in ("percentiles", "samples"):
        pd.testing.assert_frame_equal(
            iolab.load(golden, run=1, table=table), pd.read_parquet(tmp_path / f"r.{table}.parquet")
        )
    with pytest.raises(IolabError, match="table='rows': choose one of main, percentiles"):
        iolab.load(golden, table="rows")  # type: ignore[arg-type]
    with pytest.raises(IolabError, match="does not exist"):
        iolab.load(tmp_path / "none.db")


def test_import_iolab_stays_light_and_load_is_there() -> None:
    code = (
        "import sys, iolab; heavy = {'pandas', 'pyarrow', 'iolab.exchange.export', 'iolab.store'}"
        " & set(sys.modules); "
        "assert not heavy, heavy; assert callable(iolab.load); print(iolab.load.__module__)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "iolab.exchange.frame\n"


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
def test_without_pyarrow_or_pandas_one_line_says_what_to_install(
    golden: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hidden = tmp_path / "hidden" / "pyarrow"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text("raise ImportError('not installed here')\n")
    env = {**os.environ, "PYTHONPATH": str(hidden.parent)}
    done = subprocess.run(
        [*IOLAB, "export", "--db", str(golden), "--format", "parquet", "-o", "r.parquet"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    one_line_error(done, "--format parquet needs pyarrow: pip install 'iolab[data]'")
    assert not (tmp_path / "r.parquet").exists()
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(parquet.MissingExtra, match=r"needs pandas: pip install 'iolab\[data\]'"):
        iolab.load(golden)
    with pytest.raises(ImportError):  # a MissingExtra is also an ImportError
        iolab.load(golden)


# ---------------------------------------------------------------- fio-plot


def fio_plot(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The fio-plot command line of the fio-plot package, installed beside this Python."""
    command = Path(sys.executable).parent / "fio-plot"
    found = str(command) if command.exists() else shutil.which("fio-plot")
    assert found, "fio-plot is not installed: pip install -e '.[test]'"
    env = {**os.environ, "MPLBACKEND": "Agg", "MPLCONFIGDIR": str(cwd / ".matplotlib")}
    return subprocess.run(
        [found, *args], cwd=cwd, capture_output=True, text=True, env=env, check=False, timeout=300
    )


def draw(png: Path, *args: str) -> str:
    """fio-plot's chart of `args` into `png`, which must be a real chart; its output."""
    done = fio_plot(*args, "-o", str(png), cwd=png.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert_png(png)
    return done.stdout


def assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert data.startswith(PNG) and len(data) > 20_000, len(data)
    with Image.open(path) as image:
        image.verify()
    with Image.open(path) as image:
        assert image.format == "PNG" and image.width >= 800 and image.height >= 400
        shades = image.convert("L").getcolors(256)
        assert shades and len(shades) > 16  # a chart, not a blank page


def export_tree(db: Path, tmp_path: Path, *args: str) -> tuple[Path, str]:
    tree = tmp_path / "fio-plot"
    done = run_iolab(
        "export", *args, "--db", str(db), "--format", "fio-plot", "-o", str(tree), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    return tree, done.stderr


@pytest.mark.slow
def test_the_tree_is_bench_fios_layout_of_fios_own_json(golden: Path, tmp_path: Path) -> None:
    tree, said = export_tree(golden, tmp_path, "1")
    assert (
        said == f"wrote {tree}: 18 fio JSON files and 54 logs for fio-plot, in 2 set-up folder(s)\n"
    )
    names = {str(p.relative_to(tree)) for p in tree.rglob("*.json")}
    runs = ["", "repetition-2/", "repetition-3/"]
    assert names == {
        f"{setup}/{where}"
        for setup in ("one", "two")
        for rep in runs
        for where in (
            f"4k/{rep}randread-1-1.json",
            f"4k/{rep}randread-1-2.json",
            f"128k/{rep}read-1-1.json",
        )
    }
    doc = export_json(golden, tmp_path)
    stored = {c["raw_json"][c["raw_json"].index("{") :] for c in doc["cases"]}
    assert {p.read_text() for p in tree.rglob("*.json")} == stored  # fio's JSON, as fio wrote it
    case = next(
        c
        for c in doc["cases"]
        if (c["setup"], c["workload"], c["repetition"]) == ("one", "rand numjobs=2", 1)
    )
    assert (tree / "one/4k/randread-1-2.json").read_text() == case["raw_json"]
    for metric, unit in (("bw", 1024), ("iops", 1), ("lat", 1)):
        log = tree / f"one/4k/randread-iodepth-1-numjobs-2_{metric}.1.log"
        mine = [s for s in doc["samples"] if s["case_id"] == case["id"] and s["metric"] == metric]
        assert log.read_text() == "".join(
            f"{s['time_ms']}, {round(s['value'] / unit)}, 0, 0, 0\n" for s in mine
        )
        if metric == "bw":  # fio logged KiB/s, which iolab stored as bytes/s
            assert all(s["value"] == round(s["value"] / unit) * unit for s in mine)
    listing = json.loads((tree / ".iolab-written").read_text())
    assert len(listing["files"]) == 72
    assert {entry["by"] for entry in listing["files"].values()} == {"fio-plot"}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("chart", "args"),
    [
        ("numjobs bars", ["-N", "-r", "randread", "-d", "1", "-n", "1", "2"]),
        ("3d", ["-L", "-t", "iops", "-r", "randread"]),
        ("log", ["-g", "-t", "iops", "lat", "-r", "randread", "-d", "1", "-n", "1", "2"]),
    ],
)
def test_fio_plot_draws_a_chart_from_the_export(
    golden: Path, tmp_path: Path, chart: str, args: list[str]
) -> None:
    tree, _ = export_tree(golden, tmp_path, "1")
    png = tmp_path / "chart.png"
    said = draw(png, "-i", str(tree / "one" / "4k"), "-T", f"iolab {chart}", *args)
    assert f"Saving to file {png}" in said


@pytest.mark.slow
def test_fio_plot_compares_two_set_ups(golden: Path, tmp_path: Path) -> None:
    tree, _ = export_tree(golden, tmp_path, "1")
    one, two = str(tree / "one" / "4k"), str(tree / "two" / "4k")
    draw(
        tmp_path / "compare.png",
        "-i",
        one,
        two,
        "-T",
        "one, two",
        "-C",
        "-r",
        "randread",
        "-d",
        "1",
        "-n",
        "1",
    )


@pytest.mark.slow
def test_imported_json_gets_what_fio_plot_picks_files_by(tmp_path: Path) -> None:
    """fio's JSON leaves out numjobs (its default); the tree's copy has it, and terse output
    (no fio JSON) is left out in a line."""
    files = [str(IMPORT / name) for name in ("jsonplus-two-jobs", "terse-v5")]
    run_iolab("import", *files, "--db", "imported.db", cwd=tmp_path, check=True)
    tree, said = export_tree(tmp_path / "imported.db", tmp_path)
    assert said.splitlines() == [
        f"wrote {tree}: 2 fio JSON files and 0 logs for fio-plot, in 1 set-up folder(s)",
        "left out 2 case(s) without fio's JSON (failed, or imported from terse output or logs)",
    ]
    mixed = tree / "jsonplus-two-jobs" / "randrw70" / "4k" / "randrw-4-1.json"
    assert {str(p.relative_to(tree)) for p in tree.rglob("*.json")} == {
        str(mixed.relative_to(tree)),
        "jsonplus-two-jobs/1m/read-2-1.json",
    }
    original = json.loads((IMPORT / "jsonplus-two-jobs" / "jsonplus-two-jobs.json").read_text())
    written = json.loads(mixed.read_text())
    job = written["jobs"][0]
    assert job["job options"] == {"numjobs": "1", **original["jobs"][0]["job options"]}
    assert job["read"] == original["jobs"][0]["read"]
    draw(
        tmp_path / "mixed.png",
        "-i",
        str(mixed.parent),
        "-T",
        "imported",
        "-l",
        "-r",
        "randrw",
        "-f",
        "read",
        "-d",
        "4",
        "-n",
        "1",
    )


def test_a_workload_the_file_names_cannot_tell_apart_is_left_out_in_a_line(golden: Path) -> None:
    with Store(golden) as store:
        tables = store.dump(1)
    again = [
        {**case, "id": int(case["id"]) + 1000, "workload": "rand again", "case_key": "again"}  # type: ignore[arg-type]
        for case in tables["cases"]
        if case["workload"] == "rand numjobs=1"
    ]
    made = fioplot.tree({**tables, "cases": [*tables["cases"], *again]})
    assert made.files == fioplot.tree(tables).files
    assert made.notes == [
        f"left out workload 'rand again' of set-up {setup!r}: fio-plot cannot tell it from "
        "'rand numjobs=1' (the same rw, bs, iodepth and numjobs)"
        for setup in ("one", "two")
    ]


@pytest.mark.slow
def test_fio_plot_export_writes_only_where_it_may(golden: Path, tmp_path: Path) -> None:
    base = ["export", "1", "--db", str(golden), "--format", "fio-plot"]
    one_line_error(run_iolab(*base, cwd=tmp_path), "--format fio-plot writes a folder: -o DIR")
    one_line_error(
        run_iolab(*base, "-o", str(golden), cwd=tmp_path),
        f"-o {golden} is a regular file, not a directory; name a folder to write into",
    )
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine\n")
    one_line_error(
        run_iolab(*base, "-o", str(theirs), cwd=tmp_path),
        f"-o {theirs} holds files iolab did not write; name a new or empty folder, or add --force",
    )
    assert [p.name for p in theirs.iterdir()] == ["notes.txt"]
    # an earlier export is replaced: its own files only, the rest of the folder is kept
    tree, _ = export_tree(golden, tmp_path, "2")
    (tree / "chart.png").write_bytes(PNG)
    stale = tree / "one" / "8k" / "randread-1-1.json"
    stale.parent.mkdir()
    stale.write_text("{}")
    listing = json.loads((tree / ".iolab-written").read_text())
    listing["files"]["one/8k/randread-1-1.json"] = {
        "sha256": hashlib.sha256(b"{}").hexdigest(),
        "by": "fio-plot",
    }
    (tree / ".iolab-written").write_text(json.dumps(listing))
    tree, _ = export_tree(golden, tmp_path, "1")
    assert (tree / "chart.png").read_bytes() == PNG and not stale.parent.exists()
    doc = export_json(golden, tmp_path)
    assert {p.read_text() for p in tree.rglob("*.json")} == {
        c["raw_json"][c["raw_json"].index("{") :] for c in doc["cases"]
    }
    # a file in its way that the earlier export did not write is never overwritten
    listing = json.loads((tree / ".iolab-written").read_text())
    del listing["files"]["one/4k/randread-1-1.json"]
    (tree / ".iolab-written").write_text(json.dumps(listing))
    one_line_error(
        run_iolab(*base, "-o", str(tree), cwd=tmp_path),
        f"{tree}/one/4k/randread-1-1.json exists and iolab did not write it; choose another "
        "name or add --force",
    )


@pytest.mark.slow
def test_bad_formats_and_parquet_to_stdout_are_one_line(golden: Path, tmp_path: Path) -> None:
    base = ["export", "--db", str(golden), "--format"]
    one_line_error(
        run_iolab(*base, "xml", cwd=tmp_path),
        "--format xml: choose one of json, csv, parquet, fio-plot",
    )
    one_line_error(
        run_iolab(*base, "parquet", cwd=tmp_path), "--format parquet writes files: -o FILE.parquet"
    )
    folder = tmp_path / "folder"
    folder.mkdir()
    done = run_iolab(*base, "parquet", "-o", str(folder), cwd=tmp_path)
    assert done.returncode == 1 and len(done.stderr.splitlines()) == 1
    assert f"-o {folder} is a directory" in done.stderr
