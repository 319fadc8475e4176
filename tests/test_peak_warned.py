"""A peak's answers say when the points they rest on are warned: the peak rests on the
winner's runs; the knee on the lowest load, the knee's and the first past it; the latency
target's "at most N IOPS" on the last load within it and the first beyond. Each is marked ⚑
with the codes, as a cell is, in the lines `iolab peak` prints as it runs and in every report
format; notes and a rate not delivered (the curve flags it itself) are no ⚑.

The fake device makes chosen points cpu-bound by fio's own count; a busy host may add other
warnings (foreign-load) to any point, so an answer is checked against what its own points
carry, and never for the cpu-bound of a point it does not rest on."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import run_iolab
from fake_device import FakeDevice
from fakes import Seen
from iolab.analysis import peak
from iolab.model import CheckWarning, Curve, CurvePoint, PeakRecord, SloPoint, codec
from iolab.report import document as report_document
from iolab.report.cells import Table
from iolab.report.charts import Chart
from iolab.report.formats import html, json_format, markdown, terminal
from iolab.store import CaseRow, Store
from test_peak import run
from test_peak_report import CHARTED, CURVE, _p99_us, load, section

BASE = "4k randread"
WINNER = f"{BASE} numjobs=2 iodepth=32"  # the fake device's best point (tests/fake_device.py)
SLO = f"p99<={3 * _p99_us():.0f}us"  # held up to 60% of the fake device's peak
MARK = re.compile(r" ⚑ ([a-z-]+(?:, [a-z-]+)*)(?: \((?:loads? )?([^)]*)\))?")
CURVE_SAYS = {"rate-not-delivered"}


def at(load_pct: int) -> str:
    return f"{WINNER} load={load_pct}%"


@dataclass(frozen=True)
class Ran:
    """A curve search with a latency target on the fake device, and its report."""

    store: Store
    run_id: int
    seen: Seen
    document: report_document.Document

    def codes(self, *workloads: str) -> set[str]:
        """The codes that make these points' figures ⚑, as their stored cases carry them."""
        rows: list[CaseRow] = self.store.cases(self.run_id, "here")
        return {
            w.code
            for r in rows
            if r.workload in workloads
            for w in r.warnings
            if not w.note and w.code not in CURVE_SAYS
        }

    def record(self) -> PeakRecord:
        (found,) = load(self.store, [self.run_id]).setups
        record = found.searches[BASE]
        assert record.curve is not None and record.curve.slo is not None
        return record

    def line(self, said: str) -> str:
        """The line `iolab peak` printed as it ran with `said` in it."""
        (found,) = [n for n in self.seen.notes if said in n]
        return found


def ran(tmp_path: Path, cpu_bound: Sequence[str] = ()) -> Ran:
    device = FakeDevice(cpu_bound=tuple(cpu_bound))
    store, run_id, seen = run(tmp_path, device, f'{CURVE}\nslo = "{SLO}"')
    document = report_document.assemble(load(store, [run_id]), CHARTED)
    out = Ran(store, run_id, seen, document)
    curve = out.record().curve
    assert curve is not None and curve.slo is not None and curve.slo.load_pct == 60
    knee = peak.curve_knee(curve).index
    assert knee is not None and curve.points[knee].load_pct == 50, "the fake device's shape"
    return out


def marks(text: str) -> tuple[set[str], list[str]]:
    """The codes and the loads a line's ⚑ names (none: no ⚑; ["all"]: "all 11 loads")."""
    found = MARK.search(text)
    if found is None:
        return set(), []
    codes, loads = found.groups()
    named = ["all"] if loads and loads.startswith("all ") else loads.split(", ") if loads else []
    return set(codes.split(", ")), named


def answers(done: Ran) -> Iterator[tuple[str, str, tuple[str, ...]]]:
    """Each answer line `iolab peak` printed, its part that carries the ⚑, and the points it
    rests on."""
    slo = done.line(f"slo {SLO}: ")
    yield "slo", slo.split(": at most ", 1)[1], (at(60), at(70))
    knee = done.line("curve of 11 points")
    yield "knee", knee.split("; knee at ", 1)[1].split(", p99 noise")[0], (at(10), at(50), at(60))
    top = done.line("curve search: peak ")
    yield "peak", top.split(" IOPS (95%, ", 1)[1].split(";")[0], (WINNER,)


def curve_rows(done: Ran) -> dict[str, list[set[str]]]:
    """The curve table's rows in the JSON report: each measured cell's flags."""
    report = json.loads(json_format.render_document(done.document))
    (table,) = [
        t for s in report["sections"] for t in s["tables"] if t["name"] == "curve-here-4k-randread"
    ]
    return {r["label"]: [set(c["flags"]) for c in r["cells"][1:]] for r in table["rows"]}


@pytest.mark.slow  # runs the runner over the fake executor and reports
def test_a_latency_target_resting_on_cpu_bound_points_says_so_in_every_format(
    tmp_path: Path,
) -> None:
    """The 60% and 70% loads (the last within the target, the first beyond it) are cpu-bound:
    "at most N IOPS" and the knee (which rests on the 60% load too) carry ⚑ cpu-bound and name
    those loads, where `iolab peak` says them and in the terminal, Markdown, HTML and JSON
    reports; the peak (its winner's runs are clean of it) does not."""
    done = ran(tmp_path, [at(60), at(70)])
    for name, part, rests in answers(done):
        codes, loads = marks(part)
        assert codes == done.codes(*rests), (name, part)
        if name == "slo":
            assert "cpu-bound" in codes and loads == ["60%", "70%"], part
        elif name == "knee":
            assert "cpu-bound" in codes and ("60%" in loads or loads == ["all"]), part
            assert set(loads) <= {"10%", "50%", "60%", "all"}, part
        else:
            assert "cpu-bound" not in codes, part
    slo = done.line(f"slo {SLO}: ").split(": at most ", 1)[1]
    knee = done.line("curve of 11 points").split("; knee at ", 1)[1].split(", p99 noise")[0]
    knee_mark = knee.split(" (50% of the peak)", 1)[1]
    report = done.document
    texts = {
        "terminal": terminal.render_document(report, width=400),
        "markdown": markdown.render_document(report, {c.name: "x.png" for c in report.charts()}),
        "html": html.render_document(report).replace("&lt;", "<"),
    }
    for name, text in texts.items():
        assert slo in text, name
        assert f"(48,888 IOPS, p99 489 µs){knee_mark}; past it" in text, (name, knee_mark)
    as_json = json.loads(json_format.render_document(report))
    (finding,) = [f for f in as_json["findings"] if "load curve's knee" in f["sentence"]]
    assert slo in finding["sentence"] and knee_mark in finding["sentence"]
    assert "cpu-bound" in {w["code"] for w in finding["warnings"]}
    notes = [n for s in as_json["sections"] for t in s["tables"] for n in t["notes"]]
    assert any(n.endswith(slo) for n in notes) and any(knee_mark in n for n in notes)
    rows = curve_rows(done)
    assert all("cpu-bound" in flags for flags in rows["60%"] + rows["70%"])
    assert not any("cpu-bound" in flags for flags in rows["50%"] + rows["peak"])


@pytest.mark.slow  # runs the runner over the fake executor and reports
def test_a_warned_point_no_answer_rests_on_marks_its_row_only(tmp_path: Path) -> None:
    """The 30% load is cpu-bound: its row says so; no answer rests on it, so none does."""
    done = ran(tmp_path, [at(30)])
    for name, part, rests in answers(done):
        codes, _ = marks(part)
        assert codes == done.codes(*rests) and "cpu-bound" not in codes, (name, part)
    section_text = " ".join(
        n for t in section(done.document).blocks if hasattr(t, "notes") for n in t.notes
    )
    assert "cpu-bound" not in section_text
    assert all("cpu-bound" in flags for flags in curve_rows(done)["30%"])


@pytest.mark.slow  # runs the runner over the fake executor and reports
def test_the_winners_warning_marks_the_peak_and_its_row(tmp_path: Path) -> None:
    """The winner's runs are cpu-bound: the peak carries ⚑ cpu-bound (one point, no loads
    named), and so does the curve's unthrottled row; the knee and the target do not."""
    done = ran(tmp_path, [WINNER])
    for name, part, rests in answers(done):
        codes, loads = marks(part)
        assert codes == done.codes(*rests), (name, part)
        assert ("cpu-bound" in codes) is (name == "peak"), (name, part)
        assert loads == [] or name != "peak", part
    assert all("cpu-bound" in flags for flags in curve_rows(done)["peak"])


@pytest.mark.slow  # runs the runner over the fake executor and reports
def test_a_clean_search_marks_no_answer_with_cpu_bound(tmp_path: Path) -> None:
    """No point cpu-bound: no answer says cpu-bound, and on a quiet host (its points carry no
    warning) no answer carries ⚑ at all; the 100% load's rate not delivered is the curve's
    own flag, not a ⚑ on the knee or the target."""
    done = ran(tmp_path)
    for name, part, rests in answers(done):
        codes, _ = marks(part)
        assert codes == done.codes(*rests), (name, part)
        assert "cpu-bound" not in codes and "rate-not-delivered" not in codes
        assert (" ⚑" in part) is bool(done.codes(*rests)), (name, part)


@pytest.mark.parametrize("cpu_bound", [True, False])
def test_a_steady_state_verdict_carries_its_windows_warnings(
    tmp_path: Path, cpu_bound: bool
) -> None:
    """[steady] rounds: the verdict's window mean rests on the window's rounds; cpu-bound
    rounds mark it ⚑ cpu-bound and each round's row, in the table and the chart's caption."""
    device = FakeDevice(cpu_bound=(BASE,) if cpu_bound else ())
    store, run_id, _ = run(tmp_path, device, f'\n[steady]\ntrack = "{BASE}"\n')
    document = report_document.assemble(load(store, [run_id]), CHARTED)
    blocks = [b for s in document.sections for b in s.blocks]
    (table,) = [b for b in blocks if isinstance(b, Table) and b.name == "steady-here"]
    (chart,) = [b for b in blocks if isinstance(b, Chart) and b.name == "convergence-here"]
    (verdict,) = table.notes
    assert verdict.startswith("here: steady state reached; measurement window rounds 1-5"), verdict
    rows: list[CaseRow] = store.cases(run_id, "here")
    codes = {w.code for r in rows for w in r.warnings if not w.note}
    assert marks(verdict)[0] == codes, verdict
    assert ("cpu-bound" in codes) is cpu_bound
    if cpu_bound:
        assert " ⚑ " in verdict and "(all 5 rounds)" in verdict, verdict
        assert all("cpu-bound" in row.cells[0].flags for row in table.rows)
    assert chart.caption == verdict


# ------------------------------------------------------------ what each answer rests on

LOADS = (*range(10, 101, 10), None)
RISING = (100, 100, 104, 98, 102, 240, 300, 380, 500, 700, 900)  # the knee: 50%
FLAT = (100, 102, 98, 101, 99, 103, 100, 102, 99, 101, 104)  # no knee


def curve_of(p99_us: Sequence[int], slo_at: int | str | None = "none") -> Curve:
    """A curve over LOADS with these p99s; `slo_at`: the load its target held to (None: the
    peak itself; "none": no load met it; "unset": no target)."""
    points = tuple(
        CurvePoint(
            load,
            None if load is None else load * 1000.0,
            _name(load),
            True,
            (load or 100) * 1000.0,
            value * 500.0,
            value * 1000.0,
            value * 2000.0,
            True,
        )
        for load, value in zip(LOADS, p99_us, strict=True)
    )
    slo = None
    if slo_at != "unset":
        met = slo_at != "none"
        load = slo_at if isinstance(slo_at, int) else None
        slo = SloPoint(
            "p99<=200us",
            load,
            _name(load) if met else "",
            (1.0,) * met,
            (1.0,) * met,
            met and load is None,
        )
    return Curve(100_000.0, points, None, peak.KNEE_FACTOR, peak.DELIVERED_SHARE, slo)


def _name(load: int | None) -> str:
    return WINNER if load is None else at(load)


def warning(code: str) -> CheckWarning:
    return CheckWarning(code, f"{code} here.", "Do something.")


@pytest.mark.parametrize(
    ("p99", "slo_at", "answer", "warned", "mark"),
    [
        # the knee: the lowest load, the knee's, the first past it
        (RISING, "unset", "knee", {50: "cpu-bound"}, " ⚑ cpu-bound (load 50%)"),
        (RISING, "unset", "knee", {60: "cpu-bound"}, " ⚑ cpu-bound (load 60%)"),
        (
            RISING,
            "unset",
            "knee",
            {10: "cpu-bound", 60: "foreign-load"},
            " ⚑ cpu-bound, foreign-load (loads 10%, 60%)",
        ),
        (RISING, "unset", "knee", {20: "cpu-bound", 70: "cpu-bound"}, ""),
        (RISING, "unset", "knee", {60: "rate-not-delivered"}, ""),
        (RISING, "unset", "knee", {60: "device-busy"}, ""),
        # no knee: every point
        (FLAT, "unset", "knee", {80: "cpu-bound"}, " ⚑ cpu-bound (load 80%)"),
        (FLAT, "unset", "knee", {None: "too-short"}, " ⚑ too-short (load peak)"),
        (
            FLAT,
            "unset",
            "knee",
            dict.fromkeys(LOADS, "foreign-load"),
            " ⚑ foreign-load (all 11 loads)",
        ),
        # the target: the last load within it and the first beyond
        (RISING, 40, "slo", {40: "cpu-bound", 50: "cpu-bound"}, " ⚑ cpu-bound (loads 40%, 50%)"),
        (RISING, 40, "slo", {50: "page-cache"}, " ⚑ page-cache (load 50%)"),
        (RISING, 40, "slo", {30: "cpu-bound", 60: "cpu-bound"}, ""),
        (RISING, 40, "slo", {50: "device-busy"}, ""),
        (RISING, 90, "slo", {100: "rate-not-delivered"}, ""),
        (RISING, None, "slo", {None: "cpu-bound", 100: "cpu-bound"}, " ⚑ cpu-bound (load peak)"),
        (RISING, "none", "slo", {10: "cpu-bound"}, " ⚑ cpu-bound (load 10%)"),
        (RISING, "none", "slo", {20: "cpu-bound"}, ""),
    ],
)
def test_what_an_answer_rests_on(
    p99: Sequence[int],
    slo_at: int | str | None,
    answer: str,
    warned: dict[int | None, str],
    mark: str,
) -> None:
    curve = curve_of(p99, slo_at)
    by_name = {_name(load): [warning(code)] for load, code in warned.items()}

    def warnings(workload: str) -> list[CheckWarning]:
        return by_name.get(workload, [])

    rests = peak.knee_rests if answer == "knee" else peak.slo_rests
    assert rests(curve, warnings).mark == mark


# ------------------------------------------------------------------ a real run, a busy CPU


@pytest.mark.fio
@pytest.mark.slow
def test_iolab_peak_on_busy_cpus_marks_its_answers(workdir: Path) -> None:
    """Real fio on a file while a low-priority process keeps every CPU busy: each point is
    warned (the CPU, or another process's load on it), and `iolab peak` marks the target's
    answer and the knee with exactly the codes their points' stored cases carry."""
    db = workdir / "peak.db"
    burners = [
        subprocess.Popen(["nice", "-n", "19", "sh", "-c", "while :; do :; done"])
        for _ in os.sched_getaffinity(0)
    ]
    try:
        done = run_iolab(
            "peak",
            "--target",
            str(workdir),
            "--runtime",
            "1",
            "--size",
            "16m",
            "--numjobs",
            "1",
            "--iodepth",
            "1-4",
            "--slo",
            "p99<=1s",
            "--db",
            str(db),
            cwd=workdir,
            check=True,
        )
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    with sqlite3.connect(db) as con:
        (environment,) = con.execute("SELECT environment FROM setups").fetchone()
        stored = con.execute("SELECT workload, warnings FROM cases").fetchall()
    record = codec.from_json(PeakRecord, json.loads(environment)["peak_search"][BASE])
    assert record.curve is not None and record.curve.slo is not None
    codes: dict[str, set[str]] = {}
    for workload, warnings in stored:
        codes.setdefault(workload, set()).update(
            w["code"] for w in json.loads(warnings or "[]") if w["code"] not in CURVE_SAYS
        )
    rests = peak.slo_rests(record.curve, lambda name: [warning(c) for c in codes[name]])
    expected = {w.code for w in rests.warned}
    assert expected, f"every point is warned on busy CPUs: {codes}"
    (line,) = [x for x in done.stdout.splitlines() if "curve search: slo p99<=1s: " in x]
    assert marks(line.split(": at most ", 1)[1])[0] == expected, line
    (curve,) = [x for x in done.stdout.splitlines() if "curve search: curve of 11 points" in x]
    assert " ⚑ " in curve, curve
