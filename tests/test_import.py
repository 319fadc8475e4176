"""`iolab import` on output that fio really printed here (tests/fixtures/import, see its
capture.sh; old fio from build-old-fio.sh): every number stored equals the file's own."""

from __future__ import annotations

import json
import shutil
import sqlite3
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from conftest import iolab_here, run_iolab
from fakes import QuietUi
from iolab.app.transfer import export_run, import_files
from iolab.exchange import export, fio_json, naming, terse
from iolab.exchange.found_jobs import FoundJob
from iolab.exchange.logs import LOGS_ONLY
from iolab.fio import parse
from iolab.model import DirectionMetrics, FioValue
from iolab.store import Store

FIXTURES = Path(__file__).parent / "fixtures"
IMPORT = FIXTURES / "import"
FIO = FIXTURES / "fio"


def fixture(name: str, suffix: str = ".json", root: Path = IMPORT) -> Path:
    return root / name / f"{name}{suffix}"


def document(path: Path) -> dict[str, Any]:
    text = path.read_text()
    return dict(json.loads(text[text.index("{") :]))


def imported(tmp_path: Path, *paths: Path, setup: str | None = None) -> Store:
    db = tmp_path / "import.db"
    import_files([str(p) for p in paths], setup, str(db), QuietUi())
    return Store(db, create=False)


def metrics_of(store: Store, run_id: int | None = None) -> dict[str, dict[Any, DirectionMetrics]]:
    """workload -> direction -> stored main-window metrics."""
    return {c.workload: dict(c.metrics) for c in store.cases(store.run(run_id).id)}


def ns(value: object) -> float:
    """µs as fio printed them, in ns, exactly."""
    return float(Decimal(str(value)) * 1000)


def test_jsonplus_is_stored_as_a_live_run_stores_it(tmp_path: Path) -> None:
    path = fixture("randread-jsonplus", root=FIO)
    store = imported(tmp_path, path)
    (case,) = store.cases(1)
    doc = document(path)
    job = doc["jobs"][0]["read"]
    read = case.metrics["read"]
    assert read == parse.metrics(parse.load_json(path.read_text())).directions[0]
    assert read.iops == job["iops"] and read.bw_bytes == job["bw_bytes"]
    assert read.io_bytes == job["io_bytes"] and read.runtime_ms == job["runtime"]
    assert read.lat_mean_ns == job["clat_ns"]["mean"] and read.lat_max_ns == job["clat_ns"]["max"]
    assert read.percentiles_ns["99.9"] == job["clat_ns"]["percentile"]["99.900000"]
    raw = next(r for *_, r in store.case_raw(1))
    assert raw == path.read_text()  # fio's own text, byte for byte (histograms for reports)
    assert case.options["iodepth"] == 8 and case.options["rw"] == "randread"  # typed, merged
    assert case.setup == "randread-jsonplus" and case.workload == "randread"


def test_two_jobs_of_one_file_are_two_cases_with_their_options(tmp_path: Path) -> None:
    path = fixture("jsonplus-two-jobs")
    store = imported(tmp_path, path)
    cases = {c.workload: c for c in store.cases(1)}
    doc = document(path)
    assert list(cases) == ["randrw", "seqread"]
    for job in doc["jobs"]:
        case = cases[job["jobname"]]
        assert case.options["ioengine"] == doc["global options"]["ioengine"]
        assert case.options["bs"] == job["job options"]["bs"]
        for direction in ("read", "write"):
            if job[direction]["io_bytes"]:
                assert case.metrics[direction].iops == job[direction]["iops"]
                assert case.metrics[direction].lat_mean_ns == job[direction]["clat_ns"]["mean"]
    assert cases["randrw"].options["rwmixread"] == 70
    raw = {w: json.loads(r or "") for _, w, _, r in store.case_raw(1)}
    assert [j["jobname"] for j in raw["seqread"]["jobs"]] == ["seqread"]  # its own histogram


@pytest.mark.parametrize("name", ["old-2.21-json", "old-2.21-jsonplus"])
def test_old_fio_json_in_microseconds_with_repeated_keys(tmp_path: Path, name: str) -> None:
    path = fixture(name)
    text = path.read_text()
    assert '"fio version" : "fio-2.21"' in text and text.count('"0.00" : 0') >= 6
    stored = metrics_of(imported(tmp_path, path))
    for job in document(path)["jobs"]:
        for direction in ("read", "write"):
            part = job[direction]
            if not part["io_bytes"]:
                continue
            got = stored[job["jobname"]][direction]
            assert got.iops == part["iops"] and got.bw_bytes == part["bw"] * 1024
            assert got.io_bytes == part["io_bytes"] and got.runtime_ms == part["runtime"]
            assert got.lat_mean_ns == ns(part["clat"]["mean"])
            assert got.lat_max_ns == part["clat"]["max"] * 1000
            for p, key in (("50", "50.000000"), ("99.9", "99.900000")):
                assert got.percentiles_ns[p] == part["clat"]["percentile"][key] * 1000


def test_old_jsonplus_bins_give_fios_own_percentiles(tmp_path: Path) -> None:
    store = imported(tmp_path, fixture("old-2.21-jsonplus"))
    job = document(fixture("old-2.21-jsonplus"))["jobs"][0]["read"]["clat"]
    raw = json.loads(next(r for *_, r in store.case_raw(1) if r))
    bins = parse.histogram_bins(raw)["read"]
    assert sum(bins.values()) == sum(job["bins"].values())
    assert parse.histogram_percentiles(bins)["99.9"] == job["percentile"]["99.900000"] * 1000


def test_fio_3_1_without_bw_bytes_or_n(tmp_path: Path) -> None:
    path = fixture("old-3.1-jsonplus")
    doc = document(path)
    stored = metrics_of(imported(tmp_path, path))
    job = doc["jobs"][0]
    assert "bw_bytes" not in job["read"] and "N" not in job["read"]["clat_ns"]
    read = stored["randrw"]["read"]
    assert read.bw_bytes == job["read"]["bw"] * 1024 and read.iops == job["read"]["iops"]
    assert read.lat_mean_ns == job["read"]["clat_ns"]["mean"]
    assert read.percentiles_ns["99"] == job["read"]["clat_ns"]["percentile"]["99.000000"]


@pytest.mark.parametrize(
    ("name", "version"),
    [("terse-v3", "3"), ("terse-v4", "4"), ("terse-v5", "5"), ("old-2.0.7-terse", "3")],
)
def test_terse_lines_field_by_field(tmp_path: Path, name: str, version: str) -> None:
    path = fixture(name, ".txt")
    store = imported(tmp_path, path)
    cases = {c.workload: c for c in store.cases(1)}
    width = terse.VERSIONS[version][1]
    for line in path.read_text().splitlines():
        f = line.split(";")
        assert f[0] == version
        case = cases[f[2]]
        for index, direction in enumerate(("read", "write")):
            d = f[5 + index * width : 5 + (index + 1) * width]
            if int(d[0]) == 0:
                assert direction not in case.metrics
                continue
            got = case.metrics[direction]  # type: ignore[index]
            assert got.io_bytes == int(d[0]) * 1024 and got.bw_bytes == int(d[1]) * 1024
            assert got.iops == float(d[2]) and got.runtime_ms == int(d[3])
            assert got.lat_mean_ns == ns(d[10]) and got.lat_max_ns == int(d[9]) * 1000
            share, value = d[12 + 14].split("=")  # the 99.9th
            assert float(share.rstrip("%")) == 99.9
            assert got.percentiles_ns["99.9"] == int(value) * 1000
    assert store.run(1).environment["fio_version"] == (
        "fio-2.0.7" if name.startswith("old") else "fio-3.33"
    )


def test_status_interval_stream_gives_the_last_result_and_interval_samples(
    tmp_path: Path,
) -> None:
    path = fixture("status-interval")
    text = path.read_text()
    docs = [d for d, _ in fio_json.documents(text)]
    assert len(docs) >= 4 and all("jobs" in d for d in docs)
    store = imported(tmp_path, path)
    (case,) = store.cases(1)
    last = docs[-1]["jobs"][0]["read"]
    assert case.metrics["read"].iops == last["iops"]
    assert case.metrics["read"].lat_mean_ns == last["clat_ns"]["mean"]
    samples = [s.sample for s in store.case_samples(1) if s.sample.metric == "iops"]
    reads = [d["jobs"][0]["read"] for d in docs]
    expected = [
        (b["runtime"], (b["total_ios"] - a["total_ios"]) * 1000 / (b["runtime"] - a["runtime"]))
        for a, b in zip([{"runtime": 0, "total_ios": 0}, *reads], reads, strict=False)
    ]
    assert [(s.time_ms, s.value) for s in samples] == expected
    bws = [s.sample.value for s in store.case_samples(1) if s.sample.metric == "bw"]
    ends = [r for r, _ in expected]
    moved = sum(v * (t - p) / 1000 for v, t, p in zip(bws, ends, [0, *ends[:-1]], strict=True))
    assert moved == pytest.approx(last["io_bytes"])


def test_client_server_per_host_windows_and_our_own_aggregate(tmp_path: Path) -> None:
    path = fixture("client-server")
    doc = document(path)
    store = imported(tmp_path, path)
    entries = [e for e in doc["client_stats"] if e["jobname"] == "randrw"]
    assert {e["hostname"] for e in entries} == {"127.0.0.1", "127.0.0.2"}
    everyone = next(e for e in doc["client_stats"] if e["jobname"] == "All clients")
    main = metrics_of(store)["randrw"]["read"]
    assert main.iops == sum(e["read"]["iops"] for e in entries)
    assert main.iops != everyone["read"]["iops"]  # fio's "All clients" mixes both groups
    with sqlite3.connect(store.path) as db:
        rows = db.execute(
            "SELECT m.host, m.iops FROM metrics m JOIN cases c ON c.id = m.case_id"
            " WHERE c.workload = 'randrw' AND m.direction = 'read' AND m.host != ''"
        ).fetchall()
    assert sorted(rows) == sorted((e["hostname"], e["read"]["iops"]) for e in entries)
    assert store.run(1).environment["hostname"] == "127.0.0.1, 127.0.0.2"


def test_logs_join_their_job_with_the_files_own_values(tmp_path: Path) -> None:
    folder = IMPORT / "logs"
    store = imported(tmp_path, folder)
    (case,) = store.cases(1)
    assert case.workload == "randrw" and not any(w.code == "logs-only" for w in case.warnings)
    samples = [s.sample for s in store.case_samples(1)]
    first = [line.split(", ") for line in (folder / "randrw_iops.1.log").read_text().splitlines()]
    second = [line.split(", ") for line in (folder / "randrw_iops.2.log").read_text().splitlines()]
    t, value, direction = first[2][0], int(first[2][1]), int(first[2][2])
    other = next(
        int(f[1]) for f in second if f[2] == str(direction) and abs(int(f[0]) - int(t)) < 250
    )
    found = [
        s
        for s in samples
        if s.metric == "iops"
        and s.time_ms == round(int(t) / 500) * 500
        and s.direction == ("read", "write")[direction]
    ]
    assert [s.value for s in found] == [value + other]
    assert any(s.metric == "lat" for s in samples) and any(s.metric == "bw" for s in samples)


def test_logs_alone_make_a_case_of_their_means(tmp_path: Path) -> None:
    alone = tmp_path / "ssd"
    alone.mkdir()
    for log in (IMPORT / "logs").glob("randrw_*.log"):
        shutil.copy(log, alone)
    store = imported(tmp_path, alone)
    (case,) = store.cases(1)
    assert case.setup == "ssd" and case.workload == "randrw" and case.warnings == (LOGS_ONLY,)
    iops = [
        s.sample.value
        for s in store.case_samples(1)
        if s.sample.metric == "iops" and s.sample.direction == "read"
    ]
    assert case.metrics["read"].iops == pytest.approx(sum(iops) / len(iops))


def test_jobs_named_for_other_io_and_logs_they_named_alike(tmp_path: Path) -> None:
    """As fio-plot's early sample trees were written: every job [random-read], writes too, and
    logs named after the queue depth alone. Jobs of one name with other options are named by
    their pattern, block size, depth and jobs, as a plan's sweep points are; logs one job
    named join it; logs two runs named alike (the second wrote over the first) are no one
    job's: left out with a line, not made a case."""
    folder = IMPORT / "misnamed"
    db = tmp_path / "import.db"
    done = import_files([str(folder)], None, str(db), QuietUi())
    with Store(db, create=False) as store:
        cases = {c.workload: c for c in store.cases(1)}
        samples = {c.workload: 0 for c in cases.values()}
        for row in store.case_samples(1):
            samples[row.workload] = samples.get(row.workload, 0) + 1
    read2, read4, write2 = (
        f"4k {rw} iodepth={d} numjobs=1"
        for rw, d in (("randread", 2), ("randread", 4), ("randwrite", 2))
    )
    assert sorted(cases) == [read2, read4, write2]
    for name, case in cases.items():
        rw, _, depth, _ = name.replace("=", " ").split()[1:5]
        assert (case.options["rw"], case.options["iodepth"]) == (rw, int(depth))
    assert not any(w.code == "logs-only" for c in cases.values() for w in c.warnings)
    assert samples[read4] > 0
    assert samples[read2] == samples[write2] == 0
    (line,) = done.skipped
    assert line == (
        f"{folder}/random-read-depth-2_*.log (5 files): named by the write_*_log of 2 jobs "
        "(randread-2-1.json, randwrite-2-1.json), each run wrote them over the one before, so "
        "they are no one job's: left out"
    )


@pytest.mark.parametrize(
    ("name", "rw", "file", "named"),
    [
        ("random-read", "randread", "a.json", "random-read"),  # says what it did
        ("4k-qd32", "randwrite", "a.json", "4k-qd32"),  # says no I/O: kept
        ("read", "randread", "a.json", "read"),  # says reads, not in which order: kept
        ("seq-read", "randread", "randread-1-1.json", "4k randread iodepth=1 numjobs=1"),
        ("random-read", "randwrite", "job7.json", "4k randwrite iodepth=1 numjobs=1"),
        ("mixed-readwrite", "randrw", "a.json", "mixed-readwrite"),
        ("rewrite", "rw", "a.json", "rewrite"),  # one side of a mix: not wrong
        ("reads", "randwrite", "rw-4-1.json", "4k randwrite iodepth=1 numjobs=1"),
        ("writes", "randrw", "a.json", "writes"),  # one side of a mix
        ("random-read", "rw", "a.json", "4k rw rwmixread=50 iodepth=1 numjobs=1"),  # not random
    ],
)
def test_a_job_is_named_by_what_it_did(name: str, rw: str, file: str, named: str) -> None:
    job = FoundJob(Path("/data") / file, name, {"rw": rw}, [])
    assert naming.truthful(job) == named


def test_jobs_of_one_name_are_named_by_the_options_that_tell_them_apart() -> None:
    """One job name for several workloads (fio-plot's sample trees): each is named by its
    pattern, block size, depth and jobs, and by any other workload option that differs
    between them; never by its file, its logs or its target."""

    def job(file: str, rw: str, depth: int, **more: FioValue) -> FoundJob:
        options: dict[str, FioValue] = {"rw": rw, "bs": "4k", "iodepth": depth, "numjobs": 1}
        logs = {"write_bw_log": f"random-read-depth-{depth}", "filename": f"/dev/{file}"}
        return FoundJob(Path("/data") / f"{file}.json", "random-read", options | logs | more, [])

    jobs = [
        job("a", "randread", 1),
        job("b", "randwrite", 1),
        job("c", "randread", 16),
        job("d", "randread", 1, size="1g"),
        job("e", "randread", 1, size="2g"),
    ]
    named = naming.workload_names(jobs)
    assert [named[id(j)] for j in jobs] == [
        "4k randread iodepth=1 numjobs=1",
        "4k randwrite iodepth=1 numjobs=1",
        "4k randread iodepth=16 numjobs=1",
        "4k randread iodepth=1 numjobs=1 size=1g",
        "4k randread iodepth=1 numjobs=1 size=2g",
    ]
    alone = FoundJob(Path("/data/x.json"), "random-read", {"rw": "randread", "iodepth": 4}, [])
    assert naming.workload_names([alone]) == {id(alone): "random-read"}  # one workload: kept
    reads = [job("f", "randread", 1), job("g", "randread", 16)]
    for one in reads:
        one.name = "reads"  # says what each did: a named sweep's points
    assert list(naming.workload_names(reads).values()) == ["reads iodepth=1", "reads iodepth=16"]


def test_failed_job_is_a_failed_case_with_fios_errno(tmp_path: Path) -> None:
    store = imported(tmp_path, fixture("failed-enospc", root=FIO))
    (case,) = store.cases(1)
    assert case.status == "failed" and case.error and case.error.startswith("ENOSPC: No space")


def test_setup_names_come_from_folders_or_the_flag(tmp_path: Path) -> None:
    for name, source in (("ssd", "randread-jsonplus"), ("raid0", "randread-json"), ("x", "")):
        (tmp_path / name).mkdir()
        shutil.copy(fixture(source or "randread-json", root=FIO), tmp_path / name / "out.json")
    store = imported(tmp_path, tmp_path / "ssd", tmp_path / "raid0", tmp_path / "x")
    assert [s[0] for s in store.setups(1)] == ["ssd", "raid0"]  # x's file: raid0's content
    cases = store.cases(1)
    assert [(c.setup, c.workload) for c in cases] == [("ssd", "randread"), ("raid0", "randread")]
    flagged = imported(tmp_path / "ssd", fixture("seq-1m-read", root=FIO), setup="nvme0")
    assert [c.setup for c in flagged.cases(1)] == ["nvme0"]


def test_the_same_job_found_again_is_a_repetition(tmp_path: Path) -> None:
    for number, name in enumerate(("randread-json", "randread-jsonplus", "eta-stdout")):
        target = tmp_path / "ssd"
        target.mkdir(exist_ok=True)
        shutil.copy(fixture(name, root=FIO), target / f"{number}.json")
    store = imported(tmp_path, tmp_path / "ssd")
    cases = store.cases(1)
    by_point: dict[str, list[int]] = {}
    for case in cases:
        by_point.setdefault(case.workload, []).append(case.repetition)
    assert by_point["randread runtime=1"] == [1, 2]  # json and json+ of the same 1 s job
    assert by_point["randread runtime=3"] == [1]  # the 3 s one is another: named by what differs


@pytest.mark.slow
def test_cli_imports_the_rest_names_the_bad_file_and_never_twice(tmp_path: Path) -> None:
    good = fixture("randread-jsonplus", root=FIO)
    cut = tmp_path / "cut.json"
    cut.write_text(good.read_text()[:500])
    words = tmp_path / "notes.txt"
    words.write_text("just notes\n")
    done = run_iolab("import", str(good), str(cut), str(words), "--db", "x.db", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    assert done.stdout.startswith("run 1: 1 cases from 1 files")
    (line,) = done.stderr.strip().splitlines()  # one line, however many files (issue 40)
    assert line.startswith(f"iolab: error: {cut}: its JSON is cut short or damaged "), line
    assert f"; {words}: not fio output iolab knows" in line
    assert line.endswith(" (2 of the files could not be imported)"), line
    again = run_iolab("import", str(good), "--db", "x.db", cwd=tmp_path)
    assert again.returncode == 0 and again.stdout == ""
    assert again.stderr.strip() == f"iolab: {good}: already imported (run 1)"
    assert len(Store(tmp_path / "x.db").runs()) == 1
    nothing = run_iolab("import", str(cut), "--db", "y.db", cwd=tmp_path)
    assert nothing.returncode == 1 and not (tmp_path / "y.db").exists()


# ---------------------------------------------------------------- export and back


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    db = tmp_path / "golden.db"
    shutil.copy(FIXTURES.parent / "golden" / "store.db", db)
    return db


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["table", "csv", "markdown"])
def test_export_json_then_import_reports_byte_for_byte(
    golden: Path, tmp_path: Path, fmt: str
) -> None:
    exported = tmp_path / "run1.json"
    done = run_iolab("export", "1", "--db", str(golden), "-o", str(exported), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    back = run_iolab("import", str(exported), "--db", "fresh.db", cwd=tmp_path, check=True)
    assert back.stdout.startswith("run 1: golden, 18 cases from the export")
    before = run_iolab("report", "1", "--db", str(golden), "--format", fmt, cwd=tmp_path)
    after = run_iolab("report", "1", "--db", "fresh.db", "--format", fmt, cwd=tmp_path)
    assert before.returncode == 0 and before.stdout and after.stdout == before.stdout
    again = run_iolab("import", str(exported), "--db", "fresh.db", cwd=tmp_path)
    assert (
        "already imported (run 1)" in again.stderr and len(Store(tmp_path / "fresh.db").runs()) == 1
    )


def test_an_export_of_a_run_already_here_is_not_a_second_run(golden: Path, tmp_path: Path) -> None:
    """A run exported and imported back into its own database would be its own twin: the run
    before itself for `iolab check`, hiding a regression. It is left out with a line."""
    exported = tmp_path / "run2.json"
    export_run(str(golden), 2, "json", str(exported), QuietUi())
    done = import_files([str(exported)], None, str(golden), QuietUi())
    assert done.runs == () and len(Store(golden, create=False).runs()) == 2
    assert done.skipped == (
        f"{exported}: the same run as run 2 here (golden, started at the same moment on the "
        "same host): left out, so that it is not counted twice",
    )


def test_export_schema_has_parameter_columns_and_own_tables(golden: Path) -> None:
    with Store(golden) as store:
        doc = export.document(store.dump(1), "test")
    assert doc["schema"] == "iolab-export" and doc["version"] == 1
    assert doc["parameters"][:5] == ["rw", "bs", "iodepth", "numjobs", "rwmixread"]
    assert "numjobs" in doc["parameters"] and "name" not in doc["parameters"]
    case = doc["cases"][0]
    assert case["rw"] == case["options"]["rw"] and case["rwmixread"] is None
    assert {p["percentile"] for p in doc["percentiles"]} == set(parse.PERCENTILES)
    assert doc["samples"] and set(doc["samples"][0]) == {
        "case_id",
        "phase",
        "round",
        "host",
        "metric",
        "direction",
        "time_ms",
        "value",
    }


def test_csv_export_writes_three_tables(golden: Path, tmp_path: Path) -> None:
    out = tmp_path / "results.csv"
    done = iolab_here(
        "export", "--db", str(golden), "--format", "csv", "-o", str(out), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    header = out.read_text().splitlines()[0].split(",")
    assert header[:5] == ["run", "setup", "workload", "repetition", "status"]
    assert header[5:10] == ["rw", "bs", "iodepth", "numjobs", "rwmixread"]
    assert "p99.9_ns" in header and "iops" in header
    rows = out.read_text().splitlines()[1:]
    assert len(rows) == 18 and all(r.startswith("2,") for r in rows)
    assert (
        (tmp_path / "results.samples.csv")
        .read_text()
        .startswith(
            "run,setup,workload,repetition,phase,round,host,metric,direction,time_ms,value\n"
        )
    )
    assert (tmp_path / "results.percentiles.csv").exists()


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
def test_a_damaged_export_is_one_line(golden: Path, tmp_path: Path) -> None:
    with Store(golden) as store:
        doc = export.document(store.dump(1), "test")
    doc["metrics"][3]["iops"] = "fast"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    done = run_iolab("import", str(bad), "--db", "x.db", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines()[0] == (
        f"iolab: error: {bad}: metrics[3].iops = 'fast' is not int or float"
    )
