"""Parser tests on output this machine's fio really printed (tests/fixtures/fio, see its README)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from iolab.fio import parse
from iolab.fio.outcome import Outcome, failure

FIO = Path(__file__).parent / "fixtures" / "fio"


def fixture(name: str, suffix: str = ".json") -> str:
    return (FIO / name / f"{name}{suffix}").read_text()


def doc(name: str) -> dict[str, Any]:
    return parse.load_json(fixture(name))


def test_plain_json_randread() -> None:
    raw = doc("randread-json")
    m = parse.metrics(raw)
    job = raw["jobs"][0]
    assert [d.direction for d in m.directions] == ["read"]
    read = m.directions[0]
    assert read.iops == pytest.approx(job["read"]["iops"])
    assert read.bw_bytes == job["read"]["bw_bytes"]
    assert read.percentiles_ns["99.9"] == job["read"]["clat_ns"]["percentile"]["99.900000"]
    assert set(read.percentiles_ns) == {"50", "90", "99", "99.9", "99.99"}
    assert read.lat_mean_ns == pytest.approx(job["read"]["clat_ns"]["mean"])
    assert m.error == 0 and m.usr_cpu == job["usr_cpu"]
    assert m.runtime_ms == job["read"]["runtime"]


@pytest.mark.parametrize("name", ["randread-jsonplus", "group-numjobs4", "seq-1m-read"])
def test_histogram_percentiles_agree_with_fio(name: str) -> None:
    """json+ bins turned into percentiles give fio's own figures, so merged jobs can be trusted."""
    job = doc(name)["jobs"][0]
    direction = next(d for d in ("read", "write") if job[d]["total_ios"])
    clat = job[direction]["clat_ns"]
    bins = {int(k): int(v) for k, v in clat["bins"].items()}
    ours = parse.histogram_percentiles(bins)
    for p in parse.PERCENTILES:
        assert ours[p] == clat["percentile"][f"{float(p):.6f}"], p


def test_group_reporting_numjobs4_is_one_entry() -> None:
    raw = doc("group-numjobs4")
    job = raw["jobs"][0]
    m = parse.metrics(raw)
    assert len(raw["jobs"]) == 1
    assert m.direction("write") is not None and m.direction("read") is None
    assert m.total_iops == pytest.approx(job["write"]["iops"])
    # fio sums job_runtime over the group's jobs; the case's wall time is the direction runtime
    assert job["job_runtime"] > job["write"]["runtime"] * 3
    assert m.runtime_ms == job["write"]["runtime"]


def test_two_jobs_without_grouping_are_added_and_histograms_merged() -> None:
    raw = doc("numjobs2-nogroup")
    jobs = raw["jobs"]
    m = parse.metrics(raw)
    assert len(jobs) == 2
    read = m.direction("read")
    assert read is not None
    assert read.iops == pytest.approx(sum(j["read"]["iops"] for j in jobs))
    assert read.io_bytes == sum(j["read"]["io_bytes"] for j in jobs)
    p50s = sorted(j["read"]["clat_ns"]["percentile"]["50.000000"] for j in jobs)
    assert p50s[0] <= read.percentiles_ns["50"] <= p50s[1]
    assert read.lat_max_ns == max(j["read"]["clat_ns"]["max"] for j in jobs)


def test_histogram_bins_add_jobs_per_direction() -> None:
    raw = doc("numjobs2-nogroup")
    bins = parse.histogram_bins(raw)
    assert list(bins) == ["read"]  # write and trim did no I/O
    assert sum(bins["read"].values()) == sum(j["read"]["total_ios"] for j in raw["jobs"])
    assert (
        parse.histogram_percentiles(bins["read"]) == parse.metrics(raw).directions[0].percentiles_ns
    )
    mixed = parse.histogram_bins(doc("mixed-randrw"))
    assert list(mixed) == ["read", "write"] and all(isinstance(k, int) for k in mixed["write"])
    assert parse.histogram_bins(doc("randread-json")) == {}  # plain json has no bins


def test_mixed_rw_has_both_directions() -> None:
    raw = doc("mixed-randrw")
    job = raw["jobs"][0]
    m = parse.metrics(raw)
    assert [d.direction for d in m.directions] == ["read", "write"]
    assert m.total_iops == pytest.approx(job["read"]["iops"] + job["write"]["iops"])
    share = job["read"]["total_ios"] / (job["read"]["total_ios"] + job["write"]["total_ios"])
    assert 0.6 < share < 0.8  # rwmixread=70


@pytest.mark.parametrize(
    ("name", "errno", "words"),
    [
        (
            "failed-einval",
            22,
            "fio: io_u error on file einval.dat: Invalid argument: read offset=0",
        ),
        ("failed-enospc", 28, "No space left on device"),
        ("failed-erofs", 30, "error=Read-only file system"),
    ],
)
def test_failed_jobs_keep_errno_and_fio_words(name: str, errno: int, words: str) -> None:
    text = fixture(name)
    assert parse.metrics(parse.load_json(text)).error == errno
    outcome = Outcome(
        returncode=int(fixture(name, ".rc")),
        json_text=text,
        stderr=fixture(name, ".stderr"),
        log_files=(),
    )
    message = failure(outcome)
    assert message is not None and words in message and "\n" not in message


def test_setup_error_line_before_json_is_skipped() -> None:
    text = fixture("failed-erofs")
    assert not text.startswith("{")
    assert parse.load_json(text)["jobs"]


def test_damaged_output_is_a_parse_error() -> None:
    text = fixture("randread-json")
    with pytest.raises(parse.ParseError, match="cut short"):
        parse.load_json(text[: len(text) // 2])
    with pytest.raises(parse.ParseError, match="no JSON"):
        parse.load_json("fio: engine io_uring not loadable\n")


def _records(name: str) -> list[str]:
    return [r for r in re.split(r"\r\n|\r|\n", fixture(name, ".txt")) if r.strip()]


@pytest.mark.parametrize(
    "name",
    [
        "eta-stdout",
        "eta-stdout-write",
        "eta-stdout-mixed",
        "eta-stdout-newline",
        "eta-stdout-ratelimited",
        "eta-stdout-null",
        "eta-stdout-null-2m",
    ],
)
def test_every_full_status_line_parses(name: str) -> None:
    full = [r for r in _records(name) if "IOPS]" in r]
    assert full, name
    for record in full:
        status = parse.status_line(record)
        assert status is not None, record
        if "=0B/s" not in record:
            assert status.iops > 0 and status.bw_bytes > 0, record
    assert all(parse.status_line(r) is None for r in _records(name) if "IOPS]" not in r)


def test_status_units() -> None:
    line = "Jobs: 1 (f=1): [m(1)][-.-%][r=116MiB/s,w=49.7MiB/s][r=29.8k,w=12.7k IOPS][eta 00m:00s]"
    status = parse.status_line(line)
    assert status == parse.Status(iops=42_500, bw_bytes=(116 + 49.7) * 1024**2)
    slow = parse.status_line("Jobs: 1 (f=1): [r(1)][-.-%][r=300KiB/s][r=75 IOPS][eta 00m:01s]")
    assert slow == parse.Status(iops=75, bw_bytes=300 * 1024)
    fast = parse.status_line("Jobs: 2 (f=2): [r(2)][-.-%][r=38.6GiB/s][r=10.1M IOPS][eta 00m:01s]")
    assert fast is not None and fast.iops == pytest.approx(10.1e6)


def test_sample_logs_add_jobs_and_average_latency(tmp_path: Path) -> None:
    (tmp_path / "samples_iops.1.log").write_text("1000, 100, 0, 4096, 0\n2001, 110, 0, 4096, 0\n")
    (tmp_path / "samples_iops.2.log").write_text("999, 50, 0, 4096, 0\n2000, 60, 0, 4096, 0\n")
    (tmp_path / "samples_clat.1.log").write_text("1000, 2000, 1, 4096, 0\n")
    (tmp_path / "samples_clat.2.log").write_text("1000, 4000, 1, 4096, 0\n")
    (tmp_path / "samples_lat.1.log").write_text("1000, 9999, 1, 4096, 0\n")  # total: not read
    (tmp_path / "samples_slat.1.log").write_text("1000, 9999, 1, 4096, 0\n")
    (tmp_path / "samples_bw.1.log").write_text("1000, 4, 0, 4096, 0\n")
    (tmp_path / "samples_bw.2.log").write_text("1000, 4, 0, 4096, 0\n3000, 2, 0, 4096, 0\n")
    got = {
        (s.metric, s.direction, s.time_ms): s.value
        for s in parse.samples(sorted(tmp_path.glob("*.log")), 1000)
    }
    assert got == {
        ("iops", "read", 1000): 150,
        ("iops", "read", 2000): 170,
        ("lat", "write", 1000): 3000,
        ("bw", "read", 1000): 8192,
    }


def test_fixture_readme_lists_every_fixture() -> None:
    readme = (FIO / "README.md").read_text()
    for folder in FIO.iterdir():
        if not folder.is_dir():
            continue
        assert folder.name in readme, folder.name
        if folder.name != "terse":
            text = fixture(folder.name)
            assert json.loads(text[text.find("{") :])["fio version"] == "fio-3.33"


@pytest.mark.fio
def test_latency_samples_are_completion_latency_from_real_fio_logs(tmp_path: Path) -> None:
    """fio writes _lat (total), _clat and _slat logs; the samples are the _clat values."""
    job = tmp_path / "job.fio"
    job.write_text(
        "[j]\nfilename=data\nsize=8m\nrw=randread\nioengine=libaio\niodepth=8\ndirect=0\n"
        "runtime=1\ntime_based=1\nlog_avg_msec=250\nwrite_lat_log=samples\n"
    )
    subprocess.run(
        ["fio", "--output-format=json", str(job)], cwd=tmp_path, capture_output=True, check=True
    )
    logs = sorted(tmp_path.glob("samples_*.log"))
    assert {f.name.split(".")[0] for f in logs} >= {"samples_lat", "samples_clat", "samples_slat"}
    got = {s.time_ms: s.value for s in parse.samples(logs, 250) if s.metric == "lat"}
    clat: dict[int, list[float]] = {}
    for line in (tmp_path / "samples_clat.1.log").read_text().splitlines():
        fields = [f.strip() for f in line.split(",")]
        clat.setdefault(round(int(fields[0]) / 250) * 250, []).append(float(fields[1]))
    assert got and all(got[slot] == sum(v) / len(v) for slot, v in clat.items() if slot in got)
