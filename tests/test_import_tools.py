"""`iolab import` of what other tools wrote: bench-fio's trees, dd's and bonnie++'s reports
(tests/fixtures/import, see capture-tools.sh), and the tables the reference studies published
(copied unchanged into tests/fixtures/import/published). Every number stored is checked
against the file's own, read here on its own terms (regular expressions, the csv module), never
against constants."""

from __future__ import annotations

import csv
import json
import re
import shutil
from collections import defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from conftest import iolab_here, run_iolab
from fakes import QuietUi
from iolab.app.transfer import import_files
from iolab.exchange import bonnie
from iolab.model import Direction
from iolab.store import CaseRow, Store
from iolab.units import format_size

IMPORT = Path(__file__).parent / "fixtures" / "import"
TREE = IMPORT / "bench-fio" / "tree"
CLIENT_SERVER = IMPORT / "bench-fio" / "client-server"
DD = IMPORT / "dd"
BONNIE = IMPORT / "bonnie"
PUBLISHED = IMPORT / "published"

RATE = re.compile(
    r"^(\d+) bytes(?: \([^)]*\))? copied, ([\d.]+) s, ([\d.]+) ([kMGT]?B)/s$", re.MULTILINE
)
SI = {"B": 1, "kB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}
BENCH_JSON = re.compile(r"^([a-z]+)-(\d+)-(\d+)\.json$")


def imported(tmp_path: Path, *paths: Path, db: str = "tools.db") -> tuple[Store, Any]:
    done = import_files([str(p) for p in paths], None, str(tmp_path / db), QuietUi())
    return Store(tmp_path / db, create=False), done


def cases_of(store: Store, run_id: int | None = None) -> list[CaseRow]:
    return store.cases(store.run(run_id).id)


def one(cases: list[CaseRow], workload: str, setup: str | None = None) -> CaseRow:
    found = [c for c in cases if c.workload == workload and setup in (None, c.setup)]
    assert len(found) == 1, (workload, setup, [(c.setup, c.workload) for c in cases])
    return found[0]


def exact(text: str, factor: int = 1) -> float:
    return float(Decimal(text) * factor)


# bench-fio


def bench_name(path: Path) -> str:
    """The workload name the tree gives a file, worked out here from its path alone."""
    mode, depth, jobs = BENCH_JSON.match(path.name).groups()  # type: ignore[union-attr]
    mix = re.fullmatch(rf"{mode}(\d+)", path.parent.parent.name)
    share = f" rwmixread={mix.group(1)}" if mix else ""
    return f"{path.parent.name} {mode}{share} iodepth={depth} numjobs={jobs}"


def log_values(paths: list[Path], scale: int) -> list[float]:
    """fio's log lines of every job added per 500 ms interval, scaled; an interval with fewer
    lines than the fullest one (the start or the end, not every job logged) left out."""
    per_slot: dict[int, list[float]] = defaultdict(list)
    for path in paths:
        for line in path.read_text().splitlines():
            time, value = (int(v) for v in line.split(",")[:2])
            per_slot[round(time / 500) * 500].append(value)
    most = max((len(v) for v in per_slot.values()), default=0)
    return sorted(sum(v) * scale for v in per_slot.values() if len(v) == most)


def test_a_bench_fio_tree_is_its_target_set_up_with_workloads_named_by_the_tree(
    tmp_path: Path,
) -> None:
    store, done = imported(tmp_path, TREE)
    files = sorted(TREE.rglob("*.json"))
    assert len(files) == 16 and not done.problems
    cases = cases_of(store)
    assert {c.setup for c in cases} == {"bench.img"}  # bench-fio's target, not the folder "4k"
    assert sorted(c.workload for c in cases) == sorted(bench_name(f) for f in files)
    for path in files:
        case = one(cases, bench_name(path))
        jobs = json.loads(path.read_text())["jobs"]
        mode, depth, numjobs = BENCH_JSON.match(path.name).groups()  # type: ignore[union-attr]
        assert case.options["rw"] == mode and case.options["iodepth"] == int(depth)
        assert case.options["numjobs"] == int(numjobs) and len(jobs) == int(numjobs)
        for way, stored in case.metrics.items():
            assert stored.bw_bytes == sum(j[way]["bw_bytes"] for j in jobs)
            assert stored.io_bytes == sum(j[way]["io_bytes"] for j in jobs)
        assert not case.warnings or all(w.code != "logs-only" for w in case.warnings)


def test_bench_fio_logs_are_the_samples_of_the_json_of_their_names(tmp_path: Path) -> None:
    store, _ = imported(tmp_path, TREE)
    samples: dict[str, list[float]] = defaultdict(list)
    for found in store.case_samples(store.run().id):
        if found.sample.metric == "bw" and found.sample.direction == "read":
            samples[found.workload].append(found.sample.value)
    checked = 0
    for path in sorted(TREE.rglob("*.json")):
        mode, depth, jobs = BENCH_JSON.match(path.name).groups()  # type: ignore[union-attr]
        logs = sorted(path.parent.glob(f"{mode}-iodepth-{depth}-numjobs-{jobs}_bw.*.log"))
        assert len(logs) == int(jobs)
        reads = [
            p
            for p in logs
            if any(ln.split(",")[2].strip() == "0" for ln in p.read_text().splitlines())
        ]
        if mode == "randread" and len(reads) == len(logs):
            assert sorted(samples[bench_name(path)]) == log_values(logs, 1024)
            checked += 1
    assert checked >= 4


def test_client_server_bench_fio_logs_named_after_the_host_are_read(tmp_path: Path) -> None:
    store, done = imported(tmp_path, CLIENT_SERVER)
    host_logs = sorted(p for p in CLIENT_SERVER.rglob("*.log.*"))
    assert host_logs and not done.problems
    written = [p for p in host_logs if p.stat().st_size]
    assert done.runs[0][1].startswith(f"run 1: 2 cases from {2 + len(written)} files")
    cases = cases_of(store)
    assert {c.setup for c in cases} == {"bench.img"}
    lat: dict[str, int] = defaultdict(int)
    for found in store.case_samples(store.run().id):
        lat[found.workload] += found.sample.metric == "lat"
    for path in sorted(CLIENT_SERVER.rglob("*.json")):
        case = one(cases, bench_name(path))
        stats = [
            e for e in json.loads(path.read_text())["client_stats"] if e["jobname"] != "All clients"
        ]
        assert case.metrics["read"].bw_bytes == sum(e["read"]["bw_bytes"] for e in stats)
        assert set(case.hosts) == {"127.0.0.5"}
        mode, depth, jobs = BENCH_JSON.match(path.name).groups()  # type: ignore[union-attr]
        clat = sorted(path.parent.glob(f"{mode}-iodepth-{depth}-numjobs-{jobs}_clat.*.log.*"))
        assert lat[case.workload] == len(log_values(clat, 1))


# dd


def dd_reports(path: Path) -> list[tuple[str, str, str, str, int]]:
    """(bytes, seconds, rate, unit, records out) of each final report in a dd file."""
    text = path.read_text()
    records = [int(f) + int(p) for f, p in re.findall(r"^(\d+)\+(\d+) records out$", text, re.M)]
    finals = [m for m in RATE.finditer(text) if text[: m.start()].endswith("records out\n")]
    return [(*m.groups(), n) for m, n in zip(finals, records, strict=True)]  # type: ignore[misc]


def test_dd_reports_are_sequential_cases_with_the_rate_dd_printed(tmp_path: Path) -> None:
    files = sorted(DD.glob("*.txt"))
    store, done = imported(tmp_path, *files)
    assert not done.problems
    cases = cases_of(store)
    units = set()
    for path in files:
        if path.stem == "dd-trace":
            continue
        ((moved, seconds, rate, unit, records),) = dd_reports(path)
        units.add(unit)
        way: Direction = "read" if "read" in path.stem else "write"
        bs = int(moved) // records
        mine = [
            c
            for c in cases
            if c.options["rw"] == way
            and c.metrics[way].io_bytes == int(moved)
            and c.metrics[way].bw_bytes == exact(rate, SI[unit])
        ]
        assert mine, path
        case = mine[0]
        stored = case.metrics[way]
        assert stored.runtime_ms == round(Decimal(seconds) * 1000)
        assert stored.iops == pytest.approx(float(records / Decimal(seconds)), rel=1e-12)
        assert stored.lat_mean_ns is None and stored.lat_max_ns is None
        assert case.setup == "dd" and case.options["size"] == int(moved)
        # two reports of one block size and direction, of other sizes: the file's name added
        assert re.fullmatch(
            rf"dd {re.escape(format_size(bs).upper())} rw={way}( \(.+\))?", case.workload
        )
        assert records * bs == int(moved)
    assert {"kB", "MB", "GB"} <= units, "the dd fixtures should hold kB/s, MB/s and GB/s rates"


def test_a_dd_transcript_says_the_direction_and_block_size_by_its_command_lines(
    tmp_path: Path,
) -> None:
    path = DD / "dd-trace.txt"
    store, _ = imported(tmp_path, path)
    commands = re.findall(r"^\+ dd (.*)$", path.read_text(), re.M)
    assert len(commands) == 2
    cases = {c.workload: c for c in cases_of(store)}
    assert set(cases) == {"dd 100M rw=write", "dd 100M rw=read"}  # as the dd-bonnie-2009 preset
    ways: tuple[Direction, ...] = ("write", "read")
    for (moved, _, rate, unit, _), way in zip(dd_reports(path), ways, strict=True):
        case = cases[f"dd 100M rw={way}"]
        assert case.metrics[way].bw_bytes == exact(rate, SI[unit])
        assert case.metrics[way].io_bytes == int(moved)
        assert case.options["bs"] == "100m" and case.options["direct"] == 1


def test_dd_progress_lines_become_bandwidth_samples(tmp_path: Path) -> None:
    path = DD / "dd-write-progress.txt"
    store, _ = imported(tmp_path, path)
    progress = [
        (int(m.group(1)), Decimal(m.group(2)))
        for m in RATE.finditer(path.read_text().replace("\r", "\n"))
    ][:-1]  # the last report is the result
    assert len(progress) >= 2
    expected, before = [], (0, Decimal(0))
    for moved, seconds in progress:
        expected.append(float((moved - before[0]) / (seconds - before[1])))
        before = (moved, seconds)
    found = [s.sample for s in store.case_samples(store.run().id)]
    assert [s.value for s in found] == expected
    assert {(s.metric, s.direction) for s in found} == {("bw", "write")}


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
def test_a_dd_report_that_does_not_say_its_direction_is_one_line(tmp_path: Path) -> None:
    anonymous = tmp_path / "output.txt"
    shutil.copy(DD / "dd-write-direct.txt", anonymous)
    done = run_iolab(
        "import", str(anonymous), str(DD / "dd-read-direct.txt"), "--db", "d.db", cwd=tmp_path
    )
    assert done.returncode == 3
    assert done.stdout.startswith("run 1: 1 cases from 1 files, set-ups dd (dd)")
    assert (
        f"iolab: error: {anonymous}: line 3: dd's report does not say whether it read or "
        "wrote" in done.stderr
    )


# bonnie++


def csv_fields(path: Path) -> list[list[str]]:
    return [line.split(",") for line in path.read_text().splitlines() if line.startswith("1.98,")]


def ns(latency: str) -> float:
    number, unit = re.fullmatch(r"(\d+)(us|ms)", latency).groups()  # type: ignore[union-attr]
    return exact(number, 1000 if unit == "us" else 1_000_000)


def test_bonnie_csv_lines_are_its_timed_tests_in_bytes_per_second(tmp_path: Path) -> None:
    path = BONNIE / "bonnie-quiet.csv"
    store, _ = imported(tmp_path, path)
    cases = cases_of(store)
    runs = csv_fields(path)
    assert len(runs) == 2  # -x 2: two lines, after a header line
    names: list[tuple[str, int, int, Direction]] = [
        ("bonnie++ block rw=write", 11, 39, "write"),
        ("bonnie++ rewrite", 13, 40, "write"),
        ("bonnie++ block rw=read", 17, 42, "read"),
        ("bonnie++ seeks", 19, 43, "read"),
    ]
    stored = 0
    for repetition, fields in enumerate(runs, start=1):
        for name, at, lat, way in names:
            found = [c for c in cases if c.workload == name and c.repetition == repetition]
            if fields[at] in ("", "+++++"):
                assert not found, name  # too fast to time, or not run: nothing stored
                continue
            (case,) = found
            assert case.metrics[way].bw_bytes == exact(fields[at], 1024)
            assert case.metrics[way].iops == exact(fields[at], 1024) / 8192
            assert case.metrics[way].lat_max_ns == ns(fields[lat])
            assert case.options["bs"] == "8k" and case.options["size"] == 256 * 2**20
            stored += 1
    assert stored >= 4
    assert not any("per-char" in c.workload for c in cases)  # -f: no per-char tests
    assert store.run().environment["fio_version"] == f"bonnie++ {runs[0][1]}"


def test_bonnie_output_with_its_table_is_read_from_its_csv_line(tmp_path: Path) -> None:
    path = BONNIE / "bonnie-table.txt"
    store, _ = imported(tmp_path, path)
    (fields,) = csv_fields(path)
    cases = {c.workload: c for c in cases_of(store)}
    per_char: list[tuple[str, int, int, Direction]] = [
        ("bonnie++ per-char rw=write", 9, 38, "write"),
        ("bonnie++ per-char rw=read", 15, 41, "read"),
    ]
    for name, at, lat, way in per_char:
        if fields[at] == "+++++":
            assert name not in cases
            continue
        metrics = cases[name].metrics[way]
        assert metrics.bw_bytes == exact(fields[at], 1024) == metrics.iops  # a character an I/O
        assert metrics.lat_max_ns == ns(fields[lat])
    timed = {n for n, v in zip(bonnie.TESTS, fields[9:21:2], strict=True) if v != "+++++"}
    assert len(cases) == len(timed) >= 1


def test_bonnie_table_is_read_where_a_file_has_no_csv_line() -> None:
    path = BONNIE / "bonnie-table.txt"
    text = path.read_text()
    (row,) = bonnie.table_lines(text)
    table = text.splitlines()
    values = re.findall(r"(\+\+\+\+\+|\d+(?:\.\d+)?[kmg]?)\s+(\+\+\+|\d+)", table[3][19:])
    assert len(values) == len(bonnie.TESTS)
    assert row.values == tuple(None if v == "+++++" else v for v, _ in values)
    (fields,) = csv_fields(path)
    for job in bonnie.read(path, "\n".join(table[:5])):
        test = next(t for t in bonnie.TESTS if t.name == job.name)
        at = 9 + 2 * bonnie.TESTS.index(test)
        figure = row.values[bonnie.TESTS.index(test)]
        assert figure is not None and job.metrics is not None
        (metrics,) = job.metrics.directions
        number, suffix = re.fullmatch(r"([\d.]+)([kmg]?)", figure).groups()  # type: ignore[union-attr]
        assert metrics.bw_bytes == exact(number, {"": 1, "k": 1024, "m": 2**20, "g": 2**30}[suffix])
        assert metrics.bw_bytes == pytest.approx(exact(fields[at], 1024), rel=0.01)  # rounded


# published tables


def table(path: Path) -> list[dict[str, str]]:
    lines = [ln for ln in path.read_text().splitlines() if not ln.startswith("#")]
    return list(csv.DictReader(lines))


def test_a_published_table_of_set_up_columns_is_a_run_of_published_figures(
    tmp_path: Path,
) -> None:
    path = PUBLISHED / "A_sata_ssd_sw_raid0.csv"
    store, _ = imported(tmp_path, path)
    run = store.run()
    assert run.plan_name == f"published {path.name}" and run.origin.files == (str(path),)
    rows = table(path)
    setups = [c for c in rows[0] if c not in ("workload", "rw", "bs", "numjobs", "metric")]
    assert [name for name, *_ in store.setups(run.id)] == setups
    cases = cases_of(store)
    assert len(cases) == len(rows) * len(setups)
    for row in rows:
        bs = {"4k": 4096, "32m": 32 * 2**20}[row["bs"]]
        way: Direction = "read" if "read" in row["rw"] else "write"
        for setup in setups:
            case = one(cases, f"{row['bs']} rw={row['rw']}", setup)
            metrics = case.metrics[way]
            if row["metric"] == "iops":
                assert metrics.iops == exact(row[setup]) and metrics.bw_bytes == metrics.iops * bs
            else:
                assert metrics.bw_bytes == exact(row[setup], 10**6)
                assert metrics.iops == metrics.bw_bytes / bs
            assert metrics.lat_mean_ns is None and metrics.lat_max_ns is None  # none published
            assert case.options["description"] == row["workload"]
            assert case.options["numjobs"] == int(row["numjobs"])
            assert [w.code for w in case.warnings] == ["published"]


def test_published_dd_and_bonnie_tables_have_set_ups_as_rows(tmp_path: Path) -> None:
    dd_table = PUBLISHED / "C_x25e_raid_cards_dd.csv"
    bonnie_table = PUBLISHED / "C_x25e_raid_cards_bonnie.csv"
    store, _ = imported(tmp_path, dd_table)
    cases = cases_of(store)
    ways: tuple[Direction, ...] = ("read", "write")
    for row in table(dd_table):
        setup = f"{row['card']} RAID{row['raid_level']} of {row['drives']}"
        for way in ways:
            case = one(cases, f"dd 100M rw={way}", setup)  # as the dd-bonnie-2009 preset
            assert case.metrics[way].bw_bytes == exact(row[f"{way}_MB/s"], 10**6)
            assert case.options["bs"] == "100m" and case.options["size"] == 20 * 100 * 2**20
        definition = next(d for name, d, _ in store.setups(store.run().id) if name == setup)
        assert definition["cache_bytes"] == int(row["cache_mb"]) * 2**20
    store, _ = imported(tmp_path, bonnie_table, db="bonnie.db")
    cases = cases_of(store)
    for row in table(bonnie_table):
        setup = f"{row['card']} RAID{row['raid_level']} of {row['drives']}"
        seeks = one(cases, "bonnie++ seeks", setup).metrics["read"]
        assert seeks.iops == exact(row["random_seeks/s"])
        block_in = one(cases, "bonnie++ block rw=read", setup).metrics["read"]
        assert block_in.bw_bytes == exact(row["seq_input_block_KB/s"], 1024)
        block_out = one(cases, "bonnie++ block rw=write", setup).metrics["write"]
        assert block_out.bw_bytes == exact(row["seq_output_block_KB/s"], 1024)


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
def test_published_tables_together_a_percentage_table_refused_the_rest_imported(
    tmp_path: Path,
) -> None:
    done = run_iolab("import", str(PUBLISHED), "--db", "p.db", cwd=tmp_path)
    assert done.returncode == 3
    percent = PUBLISHED / "E_megaraid_wb_vs_wt_percent.csv"
    assert f"iolab: error: {percent}: a table of percentages" in done.stderr
    assert done.stderr.count("iolab: error:") == 1
    store = Store(tmp_path / "p.db", create=False)
    setups = [name for name, *_ in store.setups(store.run().id)]
    # one name in two tables: each keeps its own, the file's name added
    assert "Intel SSD 520 (A_sata_ssd_sw_raid0)" in setups
    assert "Intel SSD 520 (A_perc_h710p_ara_wb)" in setups
    assert "Adaptec 5805 RAID1 of 2 (C_x25e_raid_cards_dd)" in setups
    again = iolab_here(
        "import", str(PUBLISHED / "A_other_devices.csv"), "--db", "p.db", cwd=tmp_path
    )
    assert again.returncode == 0 and "already imported (run 1)" in again.stderr


def test_a_report_shows_published_figures_as_the_study_printed_them(tmp_path: Path) -> None:
    path = PUBLISHED / "A_vertex3_raid_card_vs_none.csv"
    iolab_here("import", str(path), "--db", "v.db", cwd=tmp_path, check=True)
    report = iolab_here("report", "--db", "v.db", cwd=tmp_path, check=True).stdout
    row = next(r for r in table(path) if r["workload"] == "4k sequential read")
    assert f"{int(row['no RAID card']):,}" in report  # 4k: IOPS
    big = next(r for r in table(path) if r["workload"] == "32m sequential read")
    assert big["no RAID card"] in report  # 32m: MB/s


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
def test_setup_renames_a_tree_but_not_a_table_and_unknown_csv_in_a_folder_is_left_out(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "results"
    folder.mkdir()
    shutil.copy(DD / "dd-read-direct.txt", folder)
    (folder / "notes.csv").write_text("host,owner\nlab1,me\n")
    table_file = PUBLISHED / "A_vertex3_raid_card_vs_none.csv"
    done = iolab_here(
        "import",
        str(folder),
        str(CLIENT_SERVER),
        str(table_file),
        "--setup",
        "ssd",
        "--db",
        "s.db",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert f"iolab: {folder / 'notes.csv'}: a CSV file of no kind iolab reads, left out" in (
        done.stderr
    )
    store = Store(tmp_path / "s.db", create=False)
    setups = {c.setup for c in cases_of(store)}
    columns = list(table(table_file)[0])
    assert setups == {"ssd", *columns[columns.index("metric") + 1 :]}  # the table keeps its own
    named = run_iolab(
        "import", str(tmp_path / "results" / "notes.csv"), "--db", "n.db", cwd=tmp_path
    )
    assert named.returncode == 1 and "notes.csv: not fio output iolab knows" in named.stderr
