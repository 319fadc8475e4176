"""Findings an author can publish (analysis.finding_groups): a sweep's points are one winner
line and one sentence per axis, every finding ranked, the short form (`report --short`) at
most 8 without tags and each caveat once, the full list in JSON and CSV with rank and group,
and a mixed workload's finding quoting read and write apart."""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import run_iolab
from iolab.analysis import finding_groups, finding_sweeps
from iolab.analysis.findings import Figure, Part
from iolab.analysis.scaling import Flat
from iolab.model import CheckWarning

TREE = Path(__file__).parent / "fixtures" / "import" / "bench-fio" / "tree"
LOAD = CheckWarning("foreign-load", "other work shared the host.", "Run it on a quiet host.")

PLAN = """
name = "scaling"
[defaults]
size = "16m"
runtime = 1
ioengine = "null"
[[setup]]
name = "x1"
path = "x1"
[[setup]]
name = "x2"
path = "x2"
[[workload]]
name = "4k random read"
rw = "randread"
bs = "4k"
numjobs = [1, 2, 4, 8, 16]
iodepth = [1, 8, 32]
"""


def findings_block(report: str, title: str = "What the numbers show") -> list[str]:
    """The lines of a terminal report's Notes block `title` (its "- " lines)."""
    lines = []
    for line in report.split(f"{title}:\n", 1)[1].splitlines():
        if not line.startswith("- "):
            break
        lines.append(line[2:])
    return lines


def point(setup: str, jobs: int, depth: int, iops: float, warned: bool = False) -> Figure:
    workload = f"4k random read iodepth={depth} numjobs={jobs}"
    values = (iops, iops * 1.01, iops * 0.99)
    return Figure(
        workload,
        setup,
        f"{iops:,.0f}",
        "IOPS",
        values,
        (LOAD,) if warned else (),
        "4k random read",
        f"iodepth={depth} numjobs={jobs}",
    )


def test_a_sweeps_points_make_one_winner_line_and_one_sentence_per_axis() -> None:
    """Two set-ups over numjobs 1..16 at two depths: one winner line for the family (not
    ten), one scaling sentence per axis (not fourteen), flat-scaling folded into its
    sweep's sentence, and the Leaders table still gets every point."""
    curve = {1: 10_000.0, 2: 19_000.0, 4: 30_000.0, 8: 31_000.0, 16: 31_500.0}
    figures = [
        point(s, j, d, iops * (1.5 if s == "x2" else 1.0) * (2 if d == 32 else 1))
        for s in ("x1", "x2")
        for d in (1, 32)
        for j, iops in curve.items()
    ]
    by = {(f.setup, f.workload): f for f in figures}
    sweeps = [
        finding_sweeps.Sweep(
            s,
            "numjobs",
            tuple((j, by[(s, f"4k random read iodepth={d} numjobs={j}")]) for j in curve),
        )
        for s in ("x1", "x2")
        for d in (1, 32)
    ]
    flat = Flat(
        "flat-scaling",
        "x1 · ...: numjobs 8 → 16 gained +2%",
        "advice",
        setups=("x1",),
        axis="numjobs",
        workloads=tuple(f.workload for f in sweeps[0].figures),
        low=8,
        high=16,
        limit="the CPU",
    )
    found = finding_groups.derive(figures, extra=[flat], sweeps=sweeps)
    winners = [f for f in found if f.kind == "winner"]
    (line,) = winners
    assert line.sentence.startswith("4k random read, 10 points (iodepth 1-32, numjobs 1-16): ")
    assert "x2 leads on 10" in line.sentence and len(line.points) == 10
    assert "the widest lead, x2 at iodepth=" in line.sentence
    (scaling,) = [f for f in found if f.kind == "scaling"]
    assert scaling.sentence.startswith("4k random read, per doubling of numjobs (IOPS): ")
    assert "stops paying past numjobs=4 on x1 at iodepth=1 (30,000 → 31,500)" in scaling.sentence
    assert "where flat, the limit: the CPU on x1 at iodepth=1" in scaling.sentence
    assert [f.rank for f in found] == sorted((f.rank for f in found), reverse=True)
    assert all(f.rank > 0 and f.group for f in found)


def test_the_rank_weighs_the_effect_its_noise_and_its_reach() -> None:
    big = finding_groups.derive([point("a", 1, 1, 300.0), point("b", 1, 1, 100.0)])
    small = finding_groups.derive([point("a", 1, 1, 110.0), point("b", 1, 1, 100.0)])
    lead = next(f for f in big if f.kind == "winner")
    near = next(f for f in small if f.kind == "winner")
    assert lead.significant and near.significant and lead.rank > near.rank
    noisy = [
        point("a", 1, 1, 300.0),
        Figure("4k random read iodepth=1 numjobs=1", "b", "150", "IOPS", (10.0, 290.0, 150.0)),
    ]
    within = next(f for f in finding_groups.derive(noisy) if f.kind == "winner")
    assert within.significant is False and within.rank < lead.rank


def test_a_mixed_workload_is_quoted_read_and_write_apart() -> None:
    mixed = [
        Figure(
            "mixed-70-30", s, text, "IOPS", values, (), "", "", (Part("read", r), Part("write", w))
        )
        for s, text, values, r, w in (
            ("a", "77,361", (77_361.0,), "54,113", "23,248"),
            ("b", "50,000", (50_000.0,), "35,000", "15,000"),
        )
    ]
    (line,) = [f for f in finding_groups.derive(mixed) if f.kind == "winner"]
    assert "a 54,113 read + 23,248 write IOPS (total 77,361)" in line.sentence
    assert "b 35,000 read + 15,000 write IOPS (total 50,000)" in line.sentence
    apart = Figure(
        "mixed",
        "a",
        "9",
        "IOPS",
        (9.0,),
        parts=(Part("read", "6"), Part("write", "3")),
        total=False,
    )
    assert apart.quoted == "6 read + 3 write IOPS", "IOPS of two block sizes are not added"


@pytest.mark.fio
@pytest.mark.slow
def test_a_30_case_scaling_plan_reads_in_at_most_8_findings(tmp_path: Path) -> None:
    """The issue's plan: 2 set-ups x numjobs 1..16 x iodepth 1, 8, 32 (30 cases). The short
    form has at most 8 findings, no tags, each caveat once and one legend; the full form's
    first findings keep their tags and the JSON and CSV hold every finding with rank and
    group."""
    (tmp_path / "scale.toml").write_text(PLAN)
    for name in ("x1", "x2"):
        (tmp_path / name).mkdir()
    run_iolab("run", "scale.toml", cwd=tmp_path, check=True)
    short = run_iolab("report", "--short", cwd=tmp_path, check=True).stdout
    sentences = findings_block(short)
    below = findings_block(short, "Caveats and legend")
    legend = [line for line in below if line.startswith("Figures as the results table")]
    caveats = [line for line in below if line.startswith("⚑ ")]
    # at most 8; on a loaded host, where most figures carry foreign-load, as few as one
    assert 1 <= len(sentences) <= 8 and len(legend) == 1 and len(below) == len(caveats) + 1
    assert len(" ".join(sentences).split()) <= 170  # about 150 words, and their marks
    assert not any(re.search(r"\[\w+(; \d+ cases?)?\]$", line) for line in sentences)
    assert not any("; but " in line for line in sentences), "caveats are said once, below"
    assert len({c.split(",")[0] for c in caveats}) == len(caveats)
    assert sum("per doubling of" in s for s in sentences) <= 2
    assert all(
        re.search(r"\d[\d,]* IOPS|\(\d[\d,.]* → \d", s)
        for s in sentences
        if s.startswith("4k random read")
    ), "each sentence with its figures"
    full = run_iolab("report", cwd=tmp_path, check=True).stdout
    tagged = findings_block(full)
    assert any(
        s.startswith("4k random read, 15 points (iodepth 1-32, numjobs 1-16)") for s in tagged
    ), tagged  # the family's winner line: in the full form, past the short form's 150 words
    assert all(re.search(r"\[\w+(; \d+ cases?)?\]$", t) or "More findings" in t for t in tagged)
    out = run_iolab("report", "--format", "json", cwd=tmp_path, check=True).stdout
    every = json.loads(out)["findings"]
    assert len(every) >= len(sentences) and all(f["group"] and f["rank"] > 0 for f in every)
    assert [f["rank"] for f in every] == sorted((f["rank"] for f in every), reverse=True)
    run_iolab("report", "--export", "out", "--charts", "none", cwd=tmp_path, check=True)
    with (tmp_path / "out" / "findings.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["sentence"] for r in rows] == [f["sentence"] for f in every]
    assert rows[0]["rank"] and rows[0]["group"]


@pytest.mark.slow
def test_two_imported_bench_fio_trees_compared_read_in_at_most_10(tmp_path: Path) -> None:
    """bench-fio's tree imported twice (the second a copy with its JSON rewritten, so it is
    a file of its own) as two set-ups: the short form of `report 1 2` has at most 10
    findings, one winner line per pattern and block size, the 70/30 mix read and write
    apart, as fio measured them."""
    other = tmp_path / "other"
    shutil.copytree(TREE, other)
    for path in other.rglob("*.json"):
        path.write_text(json.dumps(json.loads(path.read_text()), indent=1))
    run_iolab("import", str(TREE), "--setup", "ssd-a", cwd=tmp_path, check=True)
    run_iolab("import", str(other), "--setup", "ssd-b", cwd=tmp_path, check=True)
    lines = findings_block(
        run_iolab("report", "1", "2", "--short", cwd=tmp_path, check=True).stdout
    )
    assert 2 <= len(lines) <= 10, lines
    every = json.loads(
        run_iolab("report", "1", "2", "--format", "json", cwd=tmp_path, check=True).stdout
    )["findings"]
    sentences = [f["sentence"] for f in every]  # the winner lines rank low: no lead here
    winners = [s for s in sentences if re.match(r"(rand\w+ \d+k|\d+k rand\w+).*, 4 points", s)]
    assert len(winners) == 4, sentences  # randread and randrw, 4k and 64k
    (mixed,) = [s for s in winners if re.match(r"(randrw 4k|4k randrw) rwmixread=70", s)]
    job = json.loads((TREE / "bench.img" / "randrw70" / "4k" / "randrw-1-1.json").read_text())
    reads = sum(j["read"]["iops"] for j in job["jobs"])
    writes = sum(j["write"]["iops"] for j in job["jobs"])
    if "iodepth=1 numjobs=1:" in mixed:
        assert f"{reads:,.0f} read + {writes:,.0f} write IOPS" in mixed, mixed
    assert re.search(r"\d[\d,]* read \+ \d[\d,]* write IOPS \(total \d[\d,]*\)", mixed), mixed
