"""Trust, step 3 (issue 21, findings 2, 7 and 8): imported numbers get their set-up's facts
(device count, a member's rated speed, cache) from a table's columns or `iolab import` flags,
and the same checks as measured ones; advice that fits the case (too-short on time-based
cases, overran, btrfs below its sector size, presets that do not trip randrepeat); the load
curve's knee only where the rise is beyond the points' noise.

Every figure compared is read from the file or the run it comes from (the published table by
the csv module, fio's JSON by json), never written here as a constant."""

from __future__ import annotations

import csv
import hashlib
import json
import math
import sqlite3
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from conftest import iolab_here, run_iolab
from iolab.analysis import check_context, checks, peak
from iolab.model import (
    CaseMetrics,
    Curve,
    CurvePoint,
    DirectionMetrics,
    PeakRecord,
    PeakWinner,
    SearchBounds,
)
from iolab.report.views import curve_view
from iolab.store import Store
from loopdevs import LoopDevs, loops_fixture, sh

PUBLISHED = Path(__file__).parent / "fixtures" / "import" / "published"
STUDY_C = PUBLISHED / "C_x25e_raid_cards_dd.csv"
__all__ = ["loops_fixture"]

X25E_RATED = "250,170"  # the table's comment: rated 250 MB/s read, 170 MB/s write


def codes_by_case(db: Path) -> dict[tuple[str, str], dict[str, str]]:
    """(set-up, workload) -> {code: message} of every stored case."""
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT setup, workload, warnings FROM cases").fetchall()
    return {
        (s, w): {x["code"]: f"{x['message']} {x['advice']}" for x in json.loads(found)}
        for s, w, found in rows
    }


def table_rows(path: Path) -> list[dict[str, str]]:
    lines = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    return list(csv.DictReader(lines))


def one_line_refusal(done: Any) -> str:
    lines = done.stderr.splitlines()
    assert done.returncode == 1, done.stderr
    assert len(lines) == 1 and lines[0].startswith("iolab: "), done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    return str(lines[0])


# ---------------------------------------------------------------- finding 2: imports' facts


def test_study_c_table_is_flagged_above_ceiling_and_cache_size(tmp_path: Path) -> None:
    done = iolab_here(
        "import", str(STUDY_C), "--rated-mbps", X25E_RATED, "--db", "c.db", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    found = codes_by_case(tmp_path / "c.db")
    rated_read, rated_write = (float(x) for x in X25E_RATED.split(","))
    flagged = 0
    for row in table_rows(STUDY_C):
        setup = f"{row['card']} RAID{row['raid_level']} of {row['drives']}"
        drives, cache_mib = int(row["drives"]), int(row["cache_mb"])
        # a write gets the devices its level leaves: one of a mirror, all but parity's
        leaves = {"0": drives, "1": 1, "10": drives // 2, "5": drives - 1}[row["raid_level"]]
        for way, rated in (("read", rated_read), ("write", rated_write)):
            codes = found[(setup, f"dd 100M rw={way}")]
            figure = float(row[f"{way}_MB/s"])
            count = leaves if way == "write" else drives
            above = figure > checks.CEILING_MARGIN * count * rated
            assert ("above-ceiling" in codes) == above, (setup, way, codes)
            if above:
                flagged += 1
                message = codes["above-ceiling"]
                assert f"{figure:,.0f} MB/s" in message and f"{count * rated:,.0f}" in message
                assert f"{count} x {rated:,.0f} MB/s" in message, message
            test_mib = 100 * 20  # the comment's dd: bs=100M count=20
            assert ("cache-size" in codes) == (test_mib < 4 * cache_mib), (setup, codes)
            if "cache-size" in codes:
                assert f"{cache_mib:.1f} MiB" in codes["cache-size"], codes["cache-size"]
                said = f"({test_mib:,} MiB)", f"at least {4 * cache_mib:,} MiB"
                assert all(s in codes["cache-size"] for s in said), "two figures that differ"
    assert flagged >= 2, "study C's RAID0 of 4 writing 821 MB/s, RAID1 of 2 writing 227 MB/s"
    assert "above-ceiling" in found[("Adaptec 5805 RAID1 of 2", "dd 100M rw=write")]
    with Store(str(tmp_path / "c.db")) as store:
        definitions = {name: d for name, d, _ in store.setups(1)}
    adaptec = definitions["Adaptec 5805 RAID0 of 4"]
    assert adaptec["device_count"] == 4 and adaptec["rated_write_bps"] == rated_write * 1e6
    assert adaptec["cache_bytes"] == 512 * 2**20


def test_without_a_rated_speed_the_table_gives_no_ceiling(tmp_path: Path) -> None:
    done = iolab_here("import", str(STUDY_C), "--db", "c.db", cwd=tmp_path, check=True)
    assert done.returncode == 0
    found = codes_by_case(tmp_path / "c.db")
    assert not any("above-ceiling" in codes for codes in found.values())
    assert any("cache-size" in codes for codes in found.values()), "the cache is a column"


@pytest.fixture(scope="module")
def md0_json(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """fio's JSON of a real run, standing for an "md0 of 3" measured elsewhere."""
    folder = tmp_path_factory.mktemp("md0")
    out = folder / "md0.json"
    subprocess.run(
        [
            "fio",
            "--name=md0",
            f"--filename={folder / 'data'}",
            "--size=16m",
            "--rw=randread",
            "--bs=4k",
            "--ioengine=psync",
            "--runtime=1",
            "--time_based",
            "--randrepeat=0",
            "--output-format=json",
            f"--output={out}",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    (folder / "data").unlink()
    return out


@pytest.mark.fio
@pytest.mark.parametrize(
    ("times", "flagged"), [(5.0, True), (3.5, True), (2.0, False), (1 / 3, False)]
)
def test_an_md0_of_3_import_above_three_disks_is_flagged(
    md0_json: Path, tmp_path: Path, times: float, flagged: bool
) -> None:
    """The import at `times` x the single disk's rated IOPS (5x: the issue's md0 of 3)."""
    iops = json.loads(md0_json.read_text())["jobs"][0]["read"]["iops"]
    rated = iops / times
    done = run_iolab(
        "import",
        str(md0_json),
        "--devices",
        "3",
        "--rated-iops",
        f"{rated:.3f}",
        "--db",
        "i.db",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    (codes,) = codes_by_case(tmp_path / "i.db").values()
    assert ("above-ceiling" in codes) == flagged, codes
    if flagged:
        assert f"{iops:,.0f} IOPS" in codes["above-ceiling"]
        assert f"3 x {rated:,.0f} IOPS" in codes["above-ceiling"]


BAD_FACTS = [
    *(
        ("--devices", v, "--devices")
        for v in ("0", "-1", "nan", "inf", "-inf", "1e400", "2.5", "abc", "", "5000", "0x10", "1,2")
    ),
    *(
        (flag, v, flag)
        for flag in ("--rated-iops", "--rated-mbps")
        for v in (
            "0",
            "-5",
            "nan",
            "NaN",
            "inf",
            "Infinity",
            "-inf",
            "1e999",
            "x",
            "1,2,3",
            ",",
            "0,100",
            "100,-1",
            "100,nan",
            "",
        )
    ),
    *(("--cache", v, "--cache") for v in ("0", "xyz", "-1", "1.5g", "nan", "inf", "0k")),
]


def first_of_each_flag(facts: list[tuple[str, str, str]]) -> list[Any]:
    """The fast lane's share: each flag's first bad value (an iolab process each); the rest
    are slow (the whole suite runs them)."""
    seen: set[str] = set()
    marked = []
    for flag, value, named in facts:
        marks = [pytest.mark.slow] if flag in seen else []
        marked.append(pytest.param(flag, value, named, marks=marks))
        seen.add(flag)
    return marked


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
@pytest.mark.parametrize(("flag", "value", "named"), first_of_each_flag(BAD_FACTS))
def test_bad_set_up_facts_are_one_line_and_nothing_imported(
    tmp_path: Path, flag: str, value: str, named: str
) -> None:
    table = tmp_path / "c.csv"
    table.write_bytes(STUDY_C.read_bytes())
    before = hashlib.sha256(table.read_bytes()).hexdigest()
    done = run_iolab("import", str(table), flag, value, "--db", "x.db", cwd=tmp_path)
    line = one_line_refusal(done)
    assert named in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.csv"], "no database created"
    assert hashlib.sha256(table.read_bytes()).hexdigest() == before


# ---------------------------------------------------------------- finding 7: fitting advice


SHORT_PLAN = """
name = "advice"

[defaults]
size = "16m"
direct = 1
randrepeat = 0

[[setup]]
name = "here"
path = "{path}"

[[workload]]
name = "paced"
rw = "randread"
runtime = 1
rate_iops = 200

[[workload]]
name = "thinking"
rw = "randread"
runtime = 1
thinktime = "3s"
thinktime_blocks = 1

[[workload]]
name = "plain"
rw = "randread"
runtime = 1
"""


@pytest.mark.fio
def test_too_short_and_overran_advice_fits_time_based_cases(workdir: Path) -> None:
    (workdir / "plan.toml").write_text(SHORT_PLAN.format(path=workdir))
    run_iolab("run", "plan.toml", cwd=workdir, check=True)
    found = {w: codes for (_, w), codes in codes_by_case(workdir / "iolab.db").items()}
    paced = found["paced"]["too-short"]
    assert "time_based" not in paced, "a time-based case is told to run longer"
    assert "runtime" in paced and "moved" in paced, paced
    overran = found["thinking"]["overran"]
    assert "where 1 s were asked" in overran, overran
    assert "overran" not in found["plain"] and "overran" not in found["paced"]


def metrics(runtime_ms: int, io_bytes: int) -> CaseMetrics:
    way = DirectionMetrics("read", io_bytes / 4096, io_bytes, io_bytes, runtime_ms, 1.0, 1.0)
    return CaseMetrics((way,), 1.0, 1.0, runtime_ms, 0)


# (options, runtime ms, bytes moved) -> (too-short?, overran?, advice names time_based?)
CASES = [
    (
        {"rw": "read", "bs": "1m", "size": "32m", "time_based": 1, "runtime": 1},
        1000,
        2_300_000_000,
        (False, False, False),
    ),
    (
        {"rw": "read", "bs": "1m", "size": "32m", "time_based": 0},
        20,
        32 * 2**20,
        (True, False, True),
    ),
    (
        {"rw": "read", "bs": "4k", "time_based": 1, "runtime": 2},
        10_010,
        10**9,
        (False, True, False),
    ),
    (
        {"rw": "read", "bs": "4k", "time_based": 1, "runtime": 2, "ramp_time": 2},
        4_000,
        10**9,
        (False, False, False),
    ),
    (
        {"rw": "read", "bs": "4k", "time_based": 1, "runtime": 1},
        500,
        4096 * 200,
        (True, False, False),
    ),
]


@pytest.mark.parametrize(("options", "ran", "moved", "expected"), CASES)
def test_too_short_and_overran_judge_what_ran(
    options: Mapping[str, Any], ran: int, moved: int, expected: tuple[bool, bool, bool]
) -> None:
    context = check_context.Context(options=options, metrics=metrics(ran, moved))
    short, overran = checks.too_short(context), checks.overran(context)
    assert (short is not None, overran is not None) == expected[:2], (short, overran)
    if short is not None:
        assert ("time_based" in short.advice) == expected[2], short.advice


@pytest.mark.fio
@pytest.mark.parametrize("preset", ["quick", "crystaldiskmark"])
def test_presets_repeated_do_not_trip_randrepeat(workdir: Path, preset: str) -> None:
    run_iolab(
        "run",
        "--preset",
        preset,
        "--repeat",
        "2",
        "--runtime",
        "1",
        "--size",
        "16m",
        cwd=workdir,
        check=True,
    )
    found = codes_by_case(workdir / "iolab.db")
    random = [w for (_, w) in found if "rand" in w or "random" in w or "RND" in w]
    assert random, "the preset has random cases"
    assert not any("randrepeat" in codes for codes in found.values()), found


BTRFS_PLAN = """
name = "btrfs small blocks"
repeat = 1

[defaults]
runtime = 1
size = "8m"  # small: btrfs's buffered fallback soon reads it all from the page cache
direct = 1
randrepeat = 0
ioengine = "psync"

[[setup]]
name = "one"
devices = ["{one}"]
filesystem = "xfs"

[[setup]]
name = "btrfs raid0 of 2"
devices = ["{a}", "{b}"]
raid = "btrfs"
level = "raid0"

[[workload]]
rw = "randread"
bs = "2k"
"""


@pytest.mark.fio
@pytest.mark.root
def test_btrfs_below_its_sector_size_is_not_told_to_use_direct(
    loops: LoopDevs, workdir: Path
) -> None:
    devs = [loops.make(320) for _ in range(3)]
    for dev in devs:
        sh("losetup", "--direct-io=on", dev)  # the single device measured, not the host's cache
    plan = BTRFS_PLAN.format(one=devs[0], a=devs[1], b=devs[2])
    (workdir / "plan.toml").write_text(plan)
    confirm = [arg for d in devs for arg in ("--yes-destroy", d)]
    run_iolab("run", "plan.toml", *confirm, cwd=workdir, check=True)
    report = run_iolab("report", cwd=workdir, check=True).stdout
    lines = [line for line in report.splitlines() if "above-ceiling" in line]
    assert lines, report
    assert "btrfs does buffered I/O" in lines[0] and "use direct=1" not in lines[0], lines[0]


def test_ceiling_advice_fits_direct_and_the_filesystem() -> None:
    assert "use direct=1" in checks.ceiling_advice({"direct": 0, "bs": "2k"}, "btrfs")
    said = checks.ceiling_advice({"direct": 1, "bs": "2k"}, "btrfs")
    assert "btrfs does buffered I/O" in said and "use direct=1" not in said
    assert "use direct=1" not in checks.ceiling_advice({"direct": 1, "bs": "2k"}, "xfs")
    assert "btrfs" not in checks.ceiling_advice({"direct": 1, "bs": "4k"}, "btrfs")
    assert "btrfs" in checks.ceiling_advice(
        {"direct": 1, "bs": "8k"}, "btrfs", checks.btrfs_sector("-s 16k")
    )
    assert checks.btrfs_sector("--sectorsize=64k -m raid1") == 64 * 1024
    assert checks.btrfs_sector("") == checks.BTRFS_SECTOR


# ---------------------------------------------------------------- finding 8: the knee


def point(load: int | None, p99_us: float) -> peak.LoadPoint:
    iops = 700.0 * (load or 100)
    return peak.LoadPoint(load, iops, iops, 50_000.0, p99_us * 1000, p99_us * 2000)


def curve_of(points: list[peak.LoadPoint]) -> Curve:
    stored = tuple(
        CurvePoint(
            p.load_pct,
            p.asked_iops,
            f"w{n}",
            True,
            p.delivered_iops,
            p.p50_ns,
            p.p99_ns,
            p.p999_ns,
            True,
        )
        for n, p in enumerate(points)
    )
    return Curve(70_000.0, stored, peak.knee(points), peak.KNEE_FACTOR, peak.DELIVERED_SHARE)


LOADS = [*range(10, 101, 10), None]
# p99 (µs) per load: the one noisy 20% point, a flat curve with jitter, a real knee
SPIKE = [100, 210, 104, 98, 106, 101, 103, 99, 105, 102, 108]
JITTER = [100, 130, 90, 125, 95, 140, 92, 135, 97, 180, 150]
RISE = [100, 104, 98, 103, 101, 99, 160, 260, 420, 700, 900]


@pytest.mark.parametrize(
    ("p99s", "knee_load"),
    [(SPIKE, None), (JITTER, None), (RISE, 70)],
    ids=["spike", "jitter", "rise"],
)
def test_the_knee_is_found_only_beyond_the_noise(p99s: list[float], knee_load: int) -> None:
    points = [point(load, p99) for load, p99 in zip(LOADS, p99s, strict=True)]
    found = peak.find_knee(points)
    assert (None if found.index is None else points[found.index].load_pct) == knee_load
    assert found.noise > 0
    curve = curve_of(points)
    found_by = PeakRecord(
        "curve", "iops", SearchBounds((1, 1), (32, 32)), 1, 0.03, (), (), WINNER, curve
    )
    judged = peak.verdict("here", "4k randread", found_by, peak.no_warnings)
    table = curve_view.curve_table(judged)
    charts = curve_view.curve_charts("4k randread", [judged])
    flagged = [r.label for r in table.rows if "knee" in r.stubs[0]]
    said = " ".join(table.notes)
    noise = f"±{found.noise:.0%}"
    assert noise in said and noise in charts[0].caption, (said, charts[0].caption)
    if knee_load is None:
        assert flagged == [] and charts[0].regions == ()
        assert "No knee within the noise" in said
        lines = peak.said("here", "4k", found_by)
        assert any("no knee within the noise" in line for line in lines), lines
    else:
        assert found.index is not None and flagged == [f"{knee_load}%"] and charts[0].regions
        assert charts[0].regions[0].start == points[found.index].delivered_iops


WINNER = PeakWinner(1, 32, "w", (70_000.0,), 70_000.0, None, None, None, 0.01, ())


def test_the_noise_is_the_scatter_about_the_neighbours() -> None:
    smooth = [100 * math.exp(0.1 * i) for i in range(8)]
    assert peak.p99_noise(smooth) == pytest.approx(0.0, abs=1e-9), "a smooth rise is no noise"
    assert peak.p99_noise([100, 200]) == 0.0, "under three points: unknown"
    assert peak.p99_noise([100, 120, 100, 120, 100]) > 0.05


# ------------------------------------------- issue 30, finding 8: facts per set-up, rated alike

STUDY_A = PUBLISHED / "A_vertex3_raid_card_vs_none.csv"
STUDY_C_BONNIE = PUBLISHED / "C_x25e_raid_cards_bonnie.csv"


def _caches(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT name, definition FROM setups").fetchall()
    return {name: int(json.loads(d).get("cache_bytes", 0)) for name, d in rows}


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--cache", "1g"], {"PERC H710P ARA+WB": 1, "PERC H710P NRA+WT": 1, "no RAID card": 1}),
        (
            ["--cache", "PERC H710P ARA+WB=1g", "--cache", "PERC H710P NRA+WT=1g"],
            {"PERC H710P ARA+WB": 1, "PERC H710P NRA+WT": 1, "no RAID card": 0},
        ),
        (
            ["--cache", "512m", "--cache", "no RAID card=2g"],
            {"PERC H710P ARA+WB": 0.5, "PERC H710P NRA+WT": 0.5, "no RAID card": 2},
        ),
    ],
    ids=["every-set-up", "the-cards-only", "one-overridden"],
)
def test_a_cache_goes_to_the_set_ups_it_names(
    tmp_path: Path, flags: list[str], expected: dict[str, float]
) -> None:
    """`--cache 1g` on study A's table went to the "no RAID card" column too: SETUP=SIZE gives
    a set-up its own, and a fact without a name is everyone's (a named one wins)."""
    done = iolab_here("import", str(STUDY_A), *flags, "--db", "a.db", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert _caches(tmp_path / "a.db") == {k: int(v * 1024**3) for k, v in expected.items()}


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
def test_a_fact_naming_no_imported_set_up_is_one_line(tmp_path: Path) -> None:
    done = run_iolab(
        "import", str(STUDY_A), "--cache", "PERC H710=1g", "--db", "a.db", cwd=tmp_path
    )
    line = one_line_refusal(done)
    assert "'PERC H710'" in line and "'no RAID card'" in line, line
    assert not (tmp_path / "a.db").exists()


@pytest.mark.parametrize(
    ("rated", "flagged"),
    [("35000,3300", False), ("35000,3300@4k:random", False), ("35000,3300@8k:sequential", True)],
    ids=["datasheet-4k-random", "said-4k-random", "rated-8k-sequential"],
)
def test_rated_iops_are_compared_with_cases_alike(
    tmp_path: Path, rated: str, flagged: bool
) -> None:
    """Study C's bonnie++ block writes (8 KiB sequential) against the X25-E's 4k random
    datasheet IOPS flagged all 8; rated IOPS hold at a block size and pattern, compared with
    cases alike only (a rating at 8k sequential, for the sake of the test, flags them)."""
    done = iolab_here(
        "import", str(STUDY_C_BONNIE), "--rated-iops", rated, "--db", "c.db", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    codes = codes_by_case(tmp_path / "c.db")
    writes = [found for (_, workload), found in codes.items() if "write" in workload]
    assert writes and any("above-ceiling" in found for found in writes) == flagged


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
@pytest.mark.parametrize("value", ["100@", "100@4k:diagonal", "100@zz", "100@0:random", "=100"])
def test_a_rating_whose_shape_is_not_readable_is_one_line(tmp_path: Path, value: str) -> None:
    done = run_iolab("import", str(STUDY_A), "--rated-iops", value, "--db", "a.db", cwd=tmp_path)
    assert "--rated-iops" in one_line_refusal(done)
    assert not (tmp_path / "a.db").exists()
