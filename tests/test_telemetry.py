"""The CPU and the devices beside each case (issue 21, finding 4): sampled per second while
fio runs, stored, shown (terminal, Markdown, HTML, CSV, Parquet) and used by the checks
cpu-bound (fio's load on the CPUs), cpu-steal, device-busy (a note), foreign-load (issue 30,
finding 1) and flat-scaling (a limit named only from fio's own load)."""

from __future__ import annotations

import csv
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import psutil
import pytest

from conftest import run_iolab
from iolab.analysis import check_context, checks, load_checks, reading, scaling
from iolab.analysis.scaling import Point
from iolab.model import CaseMetrics, Code, DirectionMetrics, JSONObject
from iolab.model.telemetry import CPU, Telemetry, TelemetryPoint, clause
from iolab.report.views import telemetry_view
from iolab.runner import procs, telemetry
from iolab.store import Store


def seen(
    cpu: dict[str, float],
    devices: dict[str, dict[str, float]],
    seconds: int = 3,
    others_pct: float | None = None,
) -> Telemetry:
    """Telemetry with the same figures every second (a stand-in for the pure checks)."""
    points = [
        TelemetryPoint(t * 1000, CPU, m, v) for t in range(1, seconds + 1) for m, v in cpu.items()
    ]
    points += [
        TelemetryPoint(t * 1000, name, m, v)
        for t in range(1, seconds + 1)
        for name, figures in devices.items()
        for m, v in figures.items()
    ]
    return Telemetry((0,), tuple(devices), tuple(points), others_cpu_pct=others_pct)


def context(watched: Telemetry | None) -> check_context.Context:
    return check_context.Context(
        options={"rw": "randread", "numjobs": 2},
        metrics=CaseMetrics((), 0.0, 0.0, 3000, 0),
        cpus=2,
        telemetry=watched,
    )


# ---------------------------------------------------------------- the checks, pure

WATCHED = {"cpu-bound", "cpu-steal", "device-busy", "foreign-load"}
CHECK_CASES = [
    # (cpu figures, device figures, other processes' CPU share, codes expected among WATCHED)
    ({"busy": 97, "fio": 61, "steal": 0}, {"vda": {"util": 3}}, None, {"cpu-bound"}),
    ({"busy": 90, "fio": 80, "steal": 0}, {"vda": {"util": 3}}, 5.0, {"cpu-bound"}),
    ({"busy": 89, "fio": 89, "steal": 0}, {"vda": {"util": 3}}, None, set()),
    ({"busy": 30, "fio": 12, "steal": 12}, {"vda": {"util": 40}}, None, {"cpu-steal"}),
    ({"busy": 30, "fio": 12, "steal": 9}, {"vda": {"util": 40}}, None, set()),
    (
        {"busy": 34, "fio": 12, "steal": 0},
        {"vda": {"util": 98, "queue": 31}},
        None,
        {"device-busy"},
    ),
    ({"busy": 34, "fio": 12, "steal": 0}, {"vda": {"util": 94, "queue": 31}}, None, set()),
    ({"busy": 34, "fio": 12, "steal": 0}, {"vda": {"util": 99, "queue": 1}}, None, set()),
    (
        {"busy": 99, "fio": 50, "steal": 20},
        {"vda": {"util": 100, "queue": 4}},
        10.0,
        {"cpu-bound", "cpu-steal", "device-busy"},
    ),
    (
        {"busy": 10, "fio": 5, "steal": 0},
        {"loop0": {"util": 20}, "loop1": {"util": 99, "queue": 2}},
        None,
        {"device-busy"},
    ),
    # another process keeps the CPUs busy: its load, not fio's; no "the CPU is the limit"
    ({"busy": 97, "fio": 20, "steal": 0}, {"vda": {"util": 3}}, 70.0, {"foreign-load"}),
    ({"busy": 60, "fio": 20, "steal": 0}, {"vda": {"util": 3}}, 35.0, {"foreign-load"}),
    ({"busy": 40, "fio": 20, "steal": 0}, {"vda": {"util": 3}}, 19.0, set()),
]


@pytest.mark.parametrize(("cpu", "devices", "others", "codes"), CHECK_CASES)
def test_checks_read_the_telemetry(
    cpu: dict[str, float],
    devices: dict[str, dict[str, float]],
    others: float | None,
    codes: set[str],
) -> None:
    found = {w.code: w for w in checks.case_warnings(context(seen(cpu, devices, 3, others)))}
    assert set(found) & WATCHED == codes
    if "cpu-bound" in codes:  # fio's share stated
        assert f"fio's own share {cpu['fio']:.0f}%" in found["cpu-bound"].message
    if "device-busy" in codes:
        name = max(devices, key=lambda d: devices[d]["util"])
        assert name in found["device-busy"].message
        assert found["device-busy"].note and "not a fault" in found["device-busy"].message
    if "foreign-load" in codes:
        assert f"other processes used {others:.0f}%" in found["foreign-load"].message
        assert not found["foreign-load"].note


def _direct_read(iops: float, mbps: float) -> CaseMetrics:
    read = DirectionMetrics("read", iops, mbps * 1e6, 0, 3000, None, None)
    return CaseMetrics((read,), 0.0, 0.0, 3000, 0)


DEVICE_LOADS = [
    # (fio's read IOPS and MB/s, the device's over the same window, one device?, foreign?)
    ((4_500, 18.4), (160_543, 657.6), True, True),  # another fio on the same disk
    ((4_500, 18.4), (4_700, 19.3), True, False),  # fio's own I/O, and a little metadata
    ((3_000, 3_145.7), (24_000, 3_150.0), True, False),  # 1 MiB reads split in 128 KiB
    ((4_500, 18.4), (4_600, 590.0), True, False),  # read-ahead: bigger requests, not more
    ((4_500, 18.4), (12_000, 49.0), False, False),  # a stack: members and a backing disk
    ((4_500, 18.4), (40_000, 160.0), False, True),
]


@pytest.mark.parametrize(("fio", "device", "alone", "foreign"), DEVICE_LOADS)
def test_a_device_doing_far_more_than_fio_is_foreign_load(
    fio: tuple[float, float], device: tuple[float, float], alone: bool, foreign: bool
) -> None:
    figures = {"r_iops": device[0], "r_mbps": device[1], "util": 99.0, "queue": 8.0}
    devices = {"vda": figures} if alone else {"loop0": {"util": 10.0}, "vda": figures}
    known = check_context.Context(
        options={"rw": "randread", "direct": 1},
        metrics=_direct_read(*fio),
        cpus=2,
        telemetry=seen({}, devices),
    )
    found = {w.code: w for w in checks.case_warnings(known)}
    assert ("foreign-load" in found) == foreign
    if foreign:
        assert f"vda did {device[0]:,.0f} read IOPS" in found["foreign-load"].message
        assert "device-busy" not in found  # the busy device was not fio's doing
    buffered = replace(known, options={"rw": "randread", "direct": 0})
    assert load_checks.foreign_load(buffered) is None  # the page cache reshapes buffered I/O


def test_no_telemetry_falls_back_to_fios_own_count() -> None:
    """An import has no telemetry: cpu-bound counts fio's usr + sys, as before."""
    assert load_checks.cpu_steal(context(None)) is None
    assert load_checks.device_busy(context(None)) is None
    assert load_checks.foreign_load(context(None)) is None


def test_means_leave_the_ramp_out() -> None:
    points = tuple(
        TelemetryPoint(t, CPU, "busy", v) for t, v in ((1000, 100.0), (2000, 10.0), (3000, 20.0))
    )
    assert Telemetry((0,), (), points, skip_ms=1000).mean(CPU, "busy") == 15.0
    assert Telemetry((0,), (), points).mean(CPU, "busy") == pytest.approx(130 / 3)


CLAUSES = [
    ({"busy": 34, "fio": 12}, {"vda": {"util": 98}}, "CPU 34% (fio 12%), vda 98% busy"),
    ({"busy": 5, "fio": 1}, {}, "CPU 5% (fio 1%)"),
    (
        {"busy": 50, "fio": 20},
        {"loop0": {"util": 10}, "loop1": {"util": 60}, "md0": {"util": 70}},
        "CPU 50% (fio 20%), md0 70% busy, loop1 60% busy",
    ),
]


@pytest.mark.parametrize(("cpu", "devices", "said"), CLAUSES)
def test_terminal_clause(
    cpu: dict[str, float], devices: dict[str, dict[str, float]], said: str
) -> None:
    assert clause(seen(cpu, devices)) == said


def test_no_clause_without_telemetry() -> None:
    assert clause(None) == ""


def _sweep(iops: list[float], cpu: float, util: float, others: float = 0.0) -> list[Point]:
    """numjobs 1 to 8; the device's queue grows with the load where it is the limit (util 99)."""
    points = []
    for n, value in zip((1, 2, 4, 8), iops, strict=True):
        queue = n * 4.0 if util >= 99 else 2.0
        watched = seen(
            {"busy": cpu, "fio": cpu / 2}, {"loop0": {"util": util, "queue": queue}}, 3, others
        )
        known = check_context.Context(
            options={"rw": "randread", "numjobs": n},
            metrics=CaseMetrics((), 0, 0, 3000, 0),
            cpus=4,
            telemetry=watched,
        )
        codes = frozenset(w.code for w in checks.case_warnings(known))
        options = {"rw": "randread", "numjobs": n}
        points.append(Point("s", f"r {n}", options, value, watched, codes=codes))
    return points


SWEEPS = [
    # (IOPS at numjobs 1, 2, 4, 8; CPU busy; device util; other processes' CPU; the limit named)
    ([10_000, 19_000, 37_000, 70_000], 50, 50, 0, None),
    ([10_000, 19_000, 20_000, 20_500], 97, 40, 0, "the CPU is the limit"),
    ([10_000, 19_000, 20_000, 20_500], 40, 99, 0, "the device is the limit: loop0's queue grew"),
    ([36_000, 45_000, 48_000, 50_000], 50, 60, 0, "software is"),
    ([36_000, 45_000, 48_000, 50_000], 50, 93, 0, "its queue did not grow with the load"),
    ([10_000, 10_500, 30_000, 60_000], 95, 20, 0, "numjobs 1 → 2"),
    ([10_000, 19_000, 20_000, 20_500], 97, 40, 60, "other work shared the host"),
    ([10_000, 19_000, 20_000, 20_500], 40, 99, 60, "other work shared the host"),
]


@pytest.mark.parametrize(("iops", "cpu", "util", "others", "limit"), SWEEPS)
def test_flat_scaling_names_the_limit(
    iops: list[float], cpu: float, util: float, others: float, limit: str | None
) -> None:
    found = scaling.flat_scaling(_sweep(iops, cpu, util, others))
    if limit is None:
        assert found == []
        return
    assert [w.code for w in found] == ["flat-scaling"]
    assert limit in found[0].message
    if not others:
        assert f"{util:.0f}% busy" in found[0].message and f"{cpu:.0f}% busy" in found[0].message
    else:
        assert "is the limit" not in found[0].message


def test_one_io_in_flight_over_more_devices_names_no_device() -> None:
    """QD1, one job: one I/O uses one member at a time (the RAID model's "QD1: one member")."""
    watched = seen({"busy": 30, "fio": 10}, {"loop0": {"util": 99, "queue": 1.0}})
    points = []
    for count, value in zip((1, 2, 4), (5_000.0, 5_100.0, 5_050.0), strict=True):
        definition: JSONObject = {"devices": ["/dev/x"] * count, "raid": "btrfs", "level": "raid0"}
        devices, family = telemetry_view.devices_of(definition)
        options = {"rw": "randread", "iodepth": 1, "numjobs": 1}
        points.append(Point(f"x{count}", "4k QD1", options, value, watched, devices, family))
    found = scaling.flat_scaling(points)
    assert [w.code for w in found] == ["flat-scaling"]
    assert "one I/O is in flight" in found[0].message and "is the limit" not in found[0].message


def test_flat_scaling_needs_telemetry() -> None:
    """Without telemetry (an import, a stored run from before it) the limit is unknown: no
    warning, so such reports stay as they were."""
    points = [Point("s", "r", {"iodepth": d}, v) for d, v in ((1, 100.0), (2, 101.0))]
    assert scaling.flat_scaling(points) == []


DEVICE_SWEEPS = [
    # (level, IOPS on 1, 2, 4 devices; a warning expected)
    ("raid0", [40_000, 45_000, 47_000], True),
    ("raid0", [40_000, 78_000, 150_000], False),
    ("raid1", [40_000, 41_000, 41_500], False),  # mirrors are not meant to add IOPS
]


@pytest.mark.parametrize(("level", "iops", "warned"), DEVICE_SWEEPS)
def test_flat_scaling_over_device_count(level: str, iops: list[float], warned: bool) -> None:
    """Set-ups alike but for their device count make a sweep; striped ones only."""
    watched = seen({"busy": 45, "fio": 20}, {"loop0": {"util": 50}})
    points = []
    for count, value in zip((1, 2, 4), iops, strict=True):
        definition: JSONObject = {"devices": ["/dev/x"] * count, "raid": "btrfs", "level": level}
        devices, family = telemetry_view.devices_of(definition)
        name = f"{level} of {count}"
        points.append(
            Point(
                name,
                "4k randread",
                {"rw": "randread", "iodepth": 32},
                value,
                watched,
                devices,
                family,
            )
        )
    found = scaling.flat_scaling(points)
    assert [w.code for w in found] == (["flat-scaling"] if warned else [])
    if warned:
        message = found[0].message
        assert "device_count 2 → 4" in message and "software is" in message
        assert f"{level} of 1 / {level} of 2 / {level} of 4" in message


# ---------------------------------------------------------------- real fio


def plan(where: Path, body: str, name: str = "t") -> Path:
    path = where / f"{name}.toml"
    path.write_text(f'name = "{name}"\n[[setup]]\nname = "here"\npath = "{where}"\n{body}')
    return path


@pytest.fixture
def busy_cpu0() -> Iterator[None]:
    """Another process keeping CPU 0 busy, pinned there."""
    spin = subprocess.Popen(
        ["taskset", "-c", "0", sys.executable, "-c", "while True: pass"],
        stdout=subprocess.DEVNULL,
    )
    try:
        yield
    finally:
        spin.kill()
        spin.wait()


def _telemetry(db: Path) -> dict[tuple[str, str, int], Telemetry]:
    with Store(db) as store:
        return store.telemetry(store.run().id)


@pytest.mark.fio
def test_clean_direct_case_device_busy_cpu_not_no_warning(workdir: Path) -> None:
    """A written file, direct I/O: the device was busy and the CPU was not; no warning (a
    VM's steal is the host's own and only told when it is material)."""
    body = (
        '[[workload]]\nname = "w"\nrw = "write"\nbs = "1m"\nsize = "64m"\ndirect = 1\n'
        '[[workload]]\nname = "r"\nrw = "randread"\nbs = "64k"\nsize = "64m"\ndirect = 1\n'
        "runtime = 3\ntime_based = 1\nrandrepeat = 0\n"
    )
    done = run_iolab("run", str(plan(workdir, body)), "--db", "t.db", cwd=workdir)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    found = _telemetry(workdir / "t.db")
    read = found[("here", "r", 1)]
    util = read.busiest()
    assert util is not None and util[1] > 50  # the device did the work
    assert (read.mean(CPU, "fio") or 0) < 90  # fio's CPU did not
    with sqlite3.connect(workdir / "t.db") as db:
        stored = [r[0] for r in db.execute("SELECT warnings FROM cases WHERE workload = 'r'")]
    codes = [{w["code"] for w in json.loads(found)} for found in stored]
    # no trap of the case's own; only what a shared host adds: a VM's steal, other work's
    # load, and the note that the device was busy
    assert codes and all(found <= {"cpu-steal", "foreign-load", "device-busy"} for found in codes)
    line = next(x for x in done.stderr.splitlines() if "here · r #1" in x and "✓" in x)
    assert f"{util[0]} " in line and "% busy" in line and "CPU " in line and "(fio " in line
    _shown_everywhere(workdir, util[0], read.mean(CPU, "busy"))


def _shown_everywhere(workdir: Path, device: str, busy: float | None) -> None:
    """The figures reach Markdown (table and chart), HTML and the CSV and Parquet exports
    (`busy`: the host's CPU busy as stored, other work's included: a shared host's is high)."""
    md = run_iolab("report", "--db", "t.db", "--format", "markdown", "-o", "r.md", cwd=workdir)
    assert md.returncode == 0, md.stderr
    text = (workdir / "r.md").read_text()
    assert "## CPU and devices" in text and f"| {device} |" in text
    assert "CPU busy and device utilisation over time" in text
    assert list(workdir.glob("r_files/telemetry-*.png"))
    html = run_iolab("report", "--db", "t.db", "--format", "html", "-o", "r.html", cwd=workdir)
    assert html.returncode == 0, html.stderr
    page = (workdir / "r.html").read_text()
    assert "CPU and devices" in page and "telemetry-r" in page
    out = run_iolab("export", "--db", "t.db", "--format", "csv", "-o", "e.csv", cwd=workdir)
    assert out.returncode == 0, out.stderr
    rows = list(csv.DictReader((workdir / "e.csv").open()))
    mine = [r for r in rows if r["workload"] == "r"]
    assert mine and mine[0]["dev_name"] == device
    assert 50 < float(mine[0]["dev_util_pct"]) <= 100
    assert busy is not None and float(mine[0]["cpu_busy_pct"]) == pytest.approx(busy, abs=0.05)
    pq = run_iolab("export", "--db", "t.db", "--format", "parquet", "-o", "e.parquet", cwd=workdir)
    assert pq.returncode == 0, pq.stderr
    from pyarrow import parquet  # type: ignore[import-untyped]

    table = parquet.read_table(workdir / "e.parquet")
    assert "cpu_busy_pct" in table.column_names and "dev_util_pct" in table.column_names


@pytest.mark.fio
def test_null_jobs_on_a_cpu_another_process_keeps_busy_are_foreign_load(
    workdir: Path, busy_cpu0: None
) -> None:
    """Two null-engine jobs pinned to CPU 0 while another process keeps it busy: fio's own
    share is well under the whole, and foreign-load says whose the rest was (not cpu-bound)."""
    body = (
        '[[workload]]\nname = "null"\nioengine = "null"\nrw = "randread"\nbs = "4k"\n'
        'size = "1g"\nnumjobs = 2\ncpus_allowed = "0"\nruntime = 3\ntime_based = 1\n'
        "randrepeat = 0\n"
    )
    done = run_iolab("run", str(plan(workdir, body)), "--db", "t.db", cwd=workdir)
    assert done.returncode == 0, done.stderr
    found = _telemetry(workdir / "t.db")[("here", "null", 1)]
    assert found.cpus == (0,)
    busy, fio = found.mean(CPU, "busy"), found.mean(CPU, "fio")
    assert busy is not None and busy >= 90 and fio is not None and 10 < fio < 90
    # the CPU was busy with another process's work: foreign-load with its share, and the CPU
    # is not named as the limit of fio's jobs (issue 30, finding 1)
    assert found.others_cpu_pct is not None and found.others_cpu_pct >= 20
    assert not [x for x in done.stderr.splitlines() if "! CPU 0, the one the jobs may use" in x]
    warned = [x for x in done.stderr.splitlines() if "! other work shared the host" in x]
    assert len(warned) == 1 and "other processes used" in warned[0], done.stderr


@pytest.mark.fio
def test_numjobs_sweep_that_goes_flat(workdir: Path) -> None:
    """numjobs 1, 2, 4, 8 of the null engine on CPU 0: one job already fills the CPU, so the
    doublings gain nothing, and the report says the CPU is the limit, with the figures. With
    other work on the host, it names no limit, and what it says of the sweep is warned."""
    body = (
        '[[workload]]\nname = "null"\nioengine = "null"\nrw = "randread"\nbs = "4k"\n'
        'size = "256m"\nnumjobs = [1, 2, 4, 8]\ncpus_allowed = "0"\nruntime = 3\n'
        "time_based = 1\nrandrepeat = 0\n"
    )
    done = run_iolab("run", str(plan(workdir, body)), "--db", "t.db", cwd=workdir)
    assert done.returncode == 0, done.stderr
    report = run_iolab("report", "--db", "t.db", "--format", "markdown", cwd=workdir)
    assert report.returncode == 0, report.stderr
    lines = report.stdout.splitlines()
    flat = [x for x in lines if "flat-scaling:" in x]
    with sqlite3.connect(workdir / "t.db") as db:
        shared = any("foreign-load" in w for (w,) in db.execute("SELECT warnings FROM cases"))
    if not shared:  # on a quiet host: flat, and the CPU is the limit
        assert len(flat) == 1, report.stdout
        assert "numjobs" in flat[0]
        assert "the CPU is the limit: the CPUs were" in flat[0], flat[0]
        return
    # other work on CPU 0 too: each added job wins a larger share of it, so the sweep may
    # grow; whatever iolab says of the sweep, it names no limit and says the figures are warned
    said = flat + [x for x in lines if "[scaling;" in x]
    assert said, report.stdout
    assert all("other work shared the host" in x or "foreign-load" in x for x in said), said
    assert not any("the CPU is the limit" in x for x in said), said


def test_devices_of_a_file_are_the_disk_under_it(tmp_path: Path) -> None:
    """A file's devices: the block devices its filesystem stands on, those diskstats counts."""
    found = telemetry.devices_of([Path("/var/tmp")])
    with open("/proc/diskstats") as stats:
        counted = {line.split()[2] for line in stats}
    assert set(found) <= counted
    assert telemetry.allowed_cpus({"cpus_allowed": "0"}) == (0,)
    assert telemetry.allowed_cpus({}) == tuple(range(os.cpu_count() or 1))


DAMAGED = [
    # (SQL that damages the stored telemetry, the command that reads it)
    ("UPDATE cases SET watched = '{not json'", ("report",)),
    ("UPDATE cases SET watched = '{\"cpus\": [0]}'", ("report", "--format", "markdown")),
    ('UPDATE cases SET watched = \'{"cpus": "x", "devices": []}\'', ("report",)),
    ("UPDATE cases SET watched = '[1, 2]'", ("report", "--format", "html", "-o", "r.html")),
    ("UPDATE cases SET watched = '{not json'", ("export", "--format", "csv", "-o", "e.csv")),
    ("UPDATE telemetry SET value = 'x'", ("report",)),
    ("UPDATE telemetry SET time_ms = 'soon'", ("export", "--format", "csv", "-o", "e.csv")),
]


@pytest.fixture(scope="module")
def watched_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of one short local case, with its telemetry stored."""
    where = Path(tmp_path_factory.mktemp("telemetry"))
    body = '[[workload]]\nname = "r"\nrw = "read"\nbs = "64k"\nsize = "16m"\nruntime = 2\n'
    done = run_iolab("run", str(plan(where, body)), "--db", "t.db", cwd=where)
    assert done.returncode == 0, done.stderr
    return where / "t.db"


@pytest.mark.fio
@pytest.mark.parametrize(("damage", "command"), DAMAGED)
def test_damaged_telemetry_is_one_line(
    watched_db: Path, tmp_path: Path, damage: str, command: tuple[str, ...]
) -> None:
    db = tmp_path / "t.db"
    db.write_bytes(watched_db.read_bytes())
    with sqlite3.connect(db) as con:
        con.execute(damage)
    con.close()
    before = sorted(p.name for p in tmp_path.iterdir())
    done = run_iolab(*command, "--db", str(db), cwd=tmp_path)
    lines = done.stderr.splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert lines[0].startswith("iolab: ") and "damaged" in lines[0] and "Traceback" not in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written


def test_a_broken_check_is_said_and_the_others_still_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """One check that raises (a bug) no longer removes every warning of the case: it is a
    check-failed warning naming it, and cpu-bound beside it still fires (issue 30, finding 9).
    An option a check cannot read (a runtime of "1m30s" in an import) is no failure."""

    def broken(context: check_context.Context) -> None:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setitem(checks.CHECKS, Code.MISALIGNED, broken)
    known = context(seen({"busy": 97, "fio": 61, "steal": 0}, {"vda": {"util": 3}}))
    found = {w.code: w for w in reading.warnings(known)}
    assert "cpu-bound" in found and "check-failed" in found
    assert "the misaligned check could not judge" in found["check-failed"].message
    assert "ZeroDivisionError" in found["check-failed"].message
    unreadable = replace(known, options={**known.options, "runtime": "1m30s", "time_based": 1})
    monkeypatch.setitem(checks.CHECKS, Code.MISALIGNED, checks.misaligned)
    assert "check-failed" not in {w.code for w in reading.warnings(unreadable)}


def test_a_single_device_is_the_1_of_a_device_count_sweep() -> None:
    """btrfs RAID0 over 2 and 4 devices beside one device with the same filesystem: the flat
    doubling from 1 to 2 is found and named, as the findings' scaling lines count the 1 (the
    1 of a `device_count = [1, 2, 4]` sweep never appeared in flat-scaling; issue 30,
    finding 3)."""
    watched = seen({"busy": 40, "fio": 20}, {"loop0": {"util": 60, "queue": 4.0}})
    definitions: dict[str, JSONObject] = {
        "x1": {"name": "x1", "devices": ["/dev/a"], "raid": "none", "filesystem": "btrfs"},
        **{
            f"x{n}": {
                "name": f"x{n}",
                "devices": ["/dev/a"] * n,
                "raid": "btrfs",
                "level": "raid0",
                "filesystem": "btrfs",
            }
            for n in (2, 4)
        },
    }
    options = {"rw": "randread", "iodepth": 32}
    points = [
        Point(
            name, "4k QD32", options, value, watched, *telemetry_view.devices_of(definitions[name])
        )
        for name, value in (("x1", 40_000.0), ("x2", 41_000.0), ("x4", 80_000.0))
    ]
    points += telemetry_view.single_devices(points, definitions)
    found = scaling.flat_scaling(points)
    assert [w.code for w in found] == ["flat-scaling"]
    assert "device_count 1 → 2 gained +2%" in found[0].message, found[0].message


CHILD_WRITES = """
import os, sys
with open(sys.argv[1], "wb") as out:
    out.write(os.urandom(32 << 20))
    out.flush()
    os.fsync(out.fileno())
print("written", flush=True)
sys.stdin.read()
"""
PARENT_REAPS = """
import subprocess, sys, time
child = subprocess.Popen(
    [sys.executable, "-c", sys.argv[1], sys.argv[2]], stdin=subprocess.PIPE, stdout=subprocess.PIPE
)
import os
with open(sys.argv[3], "w") as told:
    told.write(f"{child.stdout.readline().decode().strip()} {os.getpid()}")
with open(sys.argv[4]) as go:
    go.read()
child.stdin.close()
child.wait()
time.sleep(60)
"""


@pytest.mark.slow
def test_a_child_reaped_mid_case_lends_its_past_io_to_no_one(tmp_path: Path) -> None:
    """A process that reaps a child during a case: the kernel adds the child's whole I/O to
    the parent's count, but what the child wrote before the case is not the case's other
    load (issue 45: "timeout (pid 7381): 5,830.0 MB/s read", more than the disk did)."""
    told, go = tmp_path / "told", tmp_path / "go"
    os.mkfifo(go)
    script = [sys.executable, "-c", PARENT_REAPS, CHILD_WRITES, str(tmp_path / "data")]
    # started through a shell that exits: the parent is not this process's child, so the
    # sampler watches it as another process on the host
    subprocess.run(["sh", "-c", f'"$@" {told} {go} >/dev/null 2>&1 &', "sh", *script], check=True)
    try:
        while not (told.exists() and told.read_text().startswith("written ")):
            subprocess.run(["sleep", "0.1"], check=True)
        parent = int(told.read_text().split()[1])
        with telemetry.Sampler((0,), ()) as sampler:
            go.write_text("go")  # the child ends and its parent reaps it, mid-case
            subprocess.run(["sleep", "1.5"], check=True)
        seen = [o for o in sampler.telemetry().others if o.pid == parent]
        assert all(o.write_mbps < 5 for o in seen), seen
    finally:
        subprocess.run(["pkill", "-f", "PARENT_REAPS|child.stdin.close"], check=False)


def test_the_process_table_reads_what_psutil_reads() -> None:
    """runner.procs reads /proc in one pass (issue 47): the same names, parents, CPU time,
    storage bytes and CPUs as psutil, and this process's children as its descendants."""
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(30)"], stdin=subprocess.DEVNULL
    )
    try:
        found = procs.table()
        for pid in (os.getpid(), child.pid):
            theirs = psutil.Process(pid)
            times, io = theirs.cpu_times(), theirs.io_counters()
            assert procs.full_name(pid, found[pid].name) == theirs.name()
            assert found[pid].parent == theirs.ppid()
            assert abs(found[pid].cpu_s - (times.user + times.system)) < 0.5
            assert procs.io_bytes(pid)[0] <= theirs.io_counters().read_bytes
            assert procs.io_bytes(pid)[1] >= io.write_bytes
            assert procs.cpus(pid) == set(theirs.cpu_affinity())
        assert child.pid in procs.descendants(os.getpid(), found)
        assert os.getpid() not in procs.descendants(child.pid, found)
    finally:
        child.kill()
        child.wait()


def test_the_cases_sample_on_one_thread_and_a_failed_reading_ends_only_its_case(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One sampling thread a process (a thread a case made each case wait for it to start,
    issue 47); a reading that fails on it leaves its case to close with the last reading and
    the next case sampled on the same thread."""
    with telemetry.Sampler((0,), ()) as first:
        pass
    thread = telemetry._WORKER.thread
    with monkeypatch.context() as patched:
        patched.setattr(telemetry.Sampler, "_loop", lambda self: 1 / 0)
        with telemetry.Sampler((0,), ()) as failed:
            pass
    with telemetry.Sampler((0,), ()) as second:
        time.sleep(1.2)

    assert thread is not None and telemetry._WORKER.thread is thread and thread.is_alive()
    assert failed.telemetry().cpus == (0,) and first.telemetry().cpus == (0,)
    assert any(p.metric == "busy" for p in second.telemetry().points), second.telemetry()
