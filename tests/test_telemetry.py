"""The CPU and the devices beside each case (issue 21, finding 4): sampled per second while
fio runs, stored, shown (terminal, Markdown, HTML, CSV, Parquet) and used by the checks
cpu-bound (whoever used the CPUs), cpu-steal, device-saturated and flat-scaling."""

from __future__ import annotations

import csv
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import run_iolab
from iolab.analysis import checks, scaling
from iolab.analysis.scaling import Point
from iolab.model import CaseMetrics, JSONObject
from iolab.report.views import usage_view
from iolab.runner import telemetry
from iolab.store import Store
from iolab.usage import CPU, Telemetry, UsagePoint, clause


def seen(
    cpu: dict[str, float], devices: dict[str, dict[str, float]], seconds: int = 3
) -> Telemetry:
    """Telemetry with the same figures every second (a stand-in for the pure checks)."""
    points = [
        UsagePoint(t * 1000, CPU, m, v) for t in range(1, seconds + 1) for m, v in cpu.items()
    ]
    points += [
        UsagePoint(t * 1000, name, m, v)
        for t in range(1, seconds + 1)
        for name, figures in devices.items()
        for m, v in figures.items()
    ]
    return Telemetry((0,), tuple(devices), tuple(points))


def context(watched: Telemetry | None) -> checks.Context:
    return checks.Context(
        {"rw": "randread", "numjobs": 2}, CaseMetrics((), 0.0, 0.0, 3000, 0), 2, telemetry=watched
    )


# ---------------------------------------------------------------- the checks, pure

CHECK_CASES = [
    # (cpu figures, device figures, codes expected among cpu-bound/cpu-steal/device-saturated)
    ({"busy": 97, "fio": 61, "steal": 0}, {"vda": {"util": 3}}, {"cpu-bound"}),
    ({"busy": 90, "fio": 20, "steal": 0}, {"vda": {"util": 3}}, {"cpu-bound"}),
    ({"busy": 89, "fio": 89, "steal": 0}, {"vda": {"util": 3}}, set()),
    ({"busy": 30, "fio": 12, "steal": 12}, {"vda": {"util": 40}}, {"cpu-steal"}),
    ({"busy": 30, "fio": 12, "steal": 9}, {"vda": {"util": 40}}, set()),
    ({"busy": 34, "fio": 12, "steal": 0}, {"vda": {"util": 98, "queue": 31}}, {"device-saturated"}),
    ({"busy": 34, "fio": 12, "steal": 0}, {"vda": {"util": 94, "queue": 31}}, set()),
    ({"busy": 34, "fio": 12, "steal": 0}, {"vda": {"util": 99, "queue": 1}}, set()),
    ({"busy": 99, "fio": 50, "steal": 20}, {"vda": {"util": 100, "queue": 4}},
     {"cpu-bound", "cpu-steal", "device-saturated"}),
    ({"busy": 10, "fio": 5, "steal": 0}, {"loop0": {"util": 20}, "loop1": {"util": 99, "queue": 2}},
     {"device-saturated"}),
]  # fmt: skip


@pytest.mark.parametrize(("cpu", "devices", "codes"), CHECK_CASES)
def test_checks_read_the_telemetry(
    cpu: dict[str, float], devices: dict[str, dict[str, float]], codes: set[str]
) -> None:
    found = {w.code: w for w in checks.case_warnings(context(seen(cpu, devices)))}
    assert set(found) & {"cpu-bound", "cpu-steal", "device-saturated"} == codes
    if "cpu-bound" in codes:  # fio's share stated, whoever else used the CPU
        assert f"fio's own share {cpu['fio']:.0f}%" in found["cpu-bound"].message
    if "device-saturated" in codes:
        name = max(devices, key=lambda d: devices[d]["util"])
        assert name in found["device-saturated"].message
        assert "information" in found["device-saturated"].message


def test_no_telemetry_falls_back_to_fios_own_count() -> None:
    """An import has no telemetry: cpu-bound counts fio's usr + sys, as before."""
    assert checks.cpu_steal(context(None)) is None
    assert checks.device_saturated(context(None)) is None


def test_means_leave_the_ramp_out() -> None:
    points = tuple(
        UsagePoint(t, CPU, "busy", v) for t, v in ((1000, 100.0), (2000, 10.0), (3000, 20.0))
    )
    assert Telemetry((0,), (), points, skip_ms=1000).mean(CPU, "busy") == 15.0
    assert Telemetry((0,), (), points).mean(CPU, "busy") == pytest.approx(130 / 3)


CLAUSES = [
    ({"busy": 34, "fio": 12}, {"vda": {"util": 98}}, "CPU 34% (fio 12%), vda 98% busy"),
    ({"busy": 5, "fio": 1}, {}, "CPU 5% (fio 1%)"),
    ({"busy": 50, "fio": 20}, {"loop0": {"util": 10}, "loop1": {"util": 60}, "md0": {"util": 70}},
     "CPU 50% (fio 20%), md0 70% busy, loop1 60% busy"),
]  # fmt: skip


@pytest.mark.parametrize(("cpu", "devices", "said"), CLAUSES)
def test_terminal_clause(
    cpu: dict[str, float], devices: dict[str, dict[str, float]], said: str
) -> None:
    assert clause(seen(cpu, devices)) == said


def test_no_clause_without_telemetry() -> None:
    assert clause(None) == ""


def _sweep(iops: list[float], cpu: float, util: float) -> list[Point]:
    watched = seen({"busy": cpu, "fio": cpu / 2}, {"loop0": {"util": util}})
    return [
        Point("s", f"r {n}", {"rw": "randread", "numjobs": n}, value, watched)
        for n, value in zip((1, 2, 4, 8), iops, strict=True)
    ]


SWEEPS = [
    # (IOPS at numjobs 1, 2, 4, 8; CPU busy; device util; the limit named, or None: no warning)
    ([10_000, 19_000, 37_000, 70_000], 50, 50, None),
    ([10_000, 19_000, 20_000, 20_500], 97, 40, "the CPU is the limit"),
    ([10_000, 19_000, 20_000, 20_500], 40, 99, "the device is the limit"),
    ([36_000, 45_000, 48_000, 50_000], 50, 60, "software is"),
    ([36_000, 45_000, 48_000, 50_000], 50, 93, "the device is near its limit: loop0 was 93% busy"),
    ([10_000, 10_500, 30_000, 60_000], 95, 20, "numjobs 1 → 2"),
]


@pytest.mark.parametrize(("iops", "cpu", "util", "limit"), SWEEPS)
def test_flat_scaling_names_the_limit(
    iops: list[float], cpu: float, util: float, limit: str | None
) -> None:
    found = scaling.flat_scaling(_sweep(iops, cpu, util))
    if limit is None:
        assert found == []
        return
    assert [w.code for w in found] == ["flat-scaling"]
    assert limit in found[0].message
    assert f"{util:.0f}% busy" in found[0].message and f"{cpu:.0f}% busy" in found[0].message


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
        devices, family = usage_view.devices_of(definition)
        name = f"{level} of {count}"
        points.append(
            Point(name, "4k randread", {"rw": "randread"}, value, watched, devices, family)
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
    assert (read.mean(CPU, "busy") or 0) < 90  # the CPU did not
    with sqlite3.connect(workdir / "t.db") as db:
        codes = [r[0] for r in db.execute("SELECT warnings FROM cases WHERE workload = 'r'")]
    alone = [c == "[]" or ("cpu-steal" in c and c.count('"code"') == 1) for c in codes]
    assert codes and all(alone)
    line = next(x for x in done.stderr.splitlines() if "here · r #1" in x and "✓" in x)
    assert f"{util[0]} " in line and "% busy" in line and "CPU " in line and "(fio " in line
    _shown_everywhere(workdir, util[0])


def _shown_everywhere(workdir: Path, device: str) -> None:
    """The figures reach Markdown (table and chart), HTML and the CSV and Parquet exports."""
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
    assert 50 < float(mine[0]["dev_util_pct"]) <= 100 and float(mine[0]["cpu_busy_pct"]) < 90
    pq = run_iolab("export", "--db", "t.db", "--format", "parquet", "-o", "e.parquet", cwd=workdir)
    assert pq.returncode == 0, pq.stderr
    from pyarrow import parquet  # type: ignore[import-untyped]

    table = parquet.read_table(workdir / "e.parquet")
    assert "cpu_busy_pct" in table.column_names and "dev_util_pct" in table.column_names


@pytest.mark.fio
def test_null_jobs_on_a_busy_cpu_are_cpu_bound(workdir: Path, busy_cpu0: None) -> None:
    """Two null-engine jobs pinned to CPU 0 while another process keeps it busy: fio's own
    share is well under the whole, and cpu-bound says so."""
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
    warned = [x for x in done.stderr.splitlines() if "! CPU 0, the one the jobs may use" in x]
    assert len(warned) == 1 and f"fio's own share {fio:.0f}%" in warned[0]


@pytest.mark.fio
def test_numjobs_sweep_that_goes_flat(workdir: Path) -> None:
    """numjobs 1, 2, 4, 8 of the null engine on CPU 0: one job already fills the CPU, so the
    doublings gain nothing, and the report says the CPU is the limit, with the figures."""
    body = (
        '[[workload]]\nname = "null"\nioengine = "null"\nrw = "randread"\nbs = "4k"\n'
        'size = "256m"\nnumjobs = [1, 2, 4, 8]\ncpus_allowed = "0"\nruntime = 3\n'
        "time_based = 1\nrandrepeat = 0\n"
    )
    done = run_iolab("run", str(plan(workdir, body)), "--db", "t.db", cwd=workdir)
    assert done.returncode == 0, done.stderr
    report = run_iolab("report", "--db", "t.db", "--format", "markdown", cwd=workdir)
    assert report.returncode == 0, report.stderr
    flat = [x for x in report.stdout.splitlines() if "flat-scaling:" in x]
    assert len(flat) == 1, report.stdout
    assert "the CPU is the limit: the CPUs were" in flat[0] and "numjobs" in flat[0]


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
