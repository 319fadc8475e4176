"""Findings in words (analysis.findings): each kind from typed figures, none claimed beyond
the noise, and on a stored run every figure a finding cites is a cell of the same report."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from conftest import run_iolab
from iolab.analysis import findings
from iolab.analysis.findings import Figure
from iolab.model import CheckWarning

GOLDEN = Path(__file__).parent / "golden"
CACHE = CheckWarning("page-cache", "read from memory.", "Use direct=1.")


def fig(setup: str, values: tuple[float, ...], workload: str = "4k randread",
        warned: tuple[CheckWarning, ...] = ()) -> Figure:  # fmt: skip
    return Figure(workload, setup, f"{values[0]:,.0f} ± x", "IOPS", values, warned)


def kinds(found: list[findings.Finding], kind: str) -> list[str]:
    return [f.sentence for f in found if f.kind == kind]


def test_a_significant_lead_is_stated_with_its_margin() -> None:
    found = findings.derive([fig("raid0", (200.0, 202.0, 198.0)), fig("one", (100.0, 101.0, 99.0))])
    (said,) = kinds(found, "winner")
    assert "raid0 leads by +100.0% ± " in said and "one 100 ± x IOPS" in said
    assert kinds(found, "overall") == []  # one workload: no overall


def test_differences_within_the_noise_are_said_to_be() -> None:
    found = findings.derive([fig("a", (100.0, 140.0, 60.0)), fig("b", (101.0, 120.0, 80.0))])
    (said,) = kinds(found, "winner")
    assert "not distinguishable" in said and "includes 0" in said
    assert found[0].significant is False


def test_one_run_each_is_indicative_only() -> None:
    (said,) = kinds(findings.derive([fig("a", (120.0,)), fig("b", (100.0,))]), "winner")
    assert "no interval, indicative" in said


def test_cost_against_the_baseline_with_its_range_and_reversal() -> None:
    mixed, qd32 = "512 B mixed", "4k QD32 write"
    figures = [
        fig("wt", (100.0, 101.0, 99.0), mixed), fig("wb", (280.0, 282.0, 278.0), mixed),
        fig("wt", (100.0, 101.0, 99.0), qd32), fig("wb", (59.0, 60.0, 58.0), qd32),
    ]  # fmt: skip
    (said,) = kinds(findings.derive(figures, baseline="wt"), "cost")
    assert "Against wt, wb changes the figures by a median of" in said
    assert "helps 512 B mixed and costs 4k QD32 write" in said
    assert "+180.0% ± " in said and "-41.0% ± " in said


def test_a_shared_cap_is_named() -> None:
    figures = [
        fig("card A", (821.0, 820.0)),
        fig("card B", (815.0, 818.0)),
        fig("disk", (250.0, 251.0)),
    ]
    (said,) = kinds(findings.derive(figures), "cap")
    assert "2 set-ups reach the same figure within 5%" in said and "shared limit" in said


def test_trust_counts_the_warnings_and_winners_say_so() -> None:
    figures = [fig("a", (200.0, 201.0), warned=(CACHE,)), fig("b", (100.0, 101.0))]
    found = findings.derive(figures)
    assert "1 of 2 figures rest on warned cases (page-cache on 1)" in kinds(found, "trust")[0]
    assert "but 1 of these 2 figures carry warnings (page-cache)" in kinds(found, "winner")[0]


@pytest.mark.slow
def test_findings_come_first_and_cite_only_what_the_report_shows(tmp_path: Path) -> None:
    store = tmp_path / "devices.db"
    shutil.copyfile(GOLDEN / "devices.db", store)
    md = run_iolab("report", "1", "--db", str(store), "--format", "markdown", cwd=tmp_path,
                   check=True).stdout  # fmt: skip
    sections = re.findall(r"^## (.+)$", md, re.M)
    assert sections[0] == "Findings" and sections[1] == "Results"
    said = md.split("### What the numbers show")[1].split("###")[0]
    rest = md.split("## Results")[1] + md.split("### Leaders per workload")[1]
    for figure in re.findall(r"[+-]?\d[\d,]*(?:\.\d+)?%?(?: ± [\d,.]+%?)?", said):
        if " ± " in figure:
            assert figure in rest or figure in md.split("### Leaders")[1], figure
    terminal = run_iolab("report", "1", "--db", str(store), cwd=tmp_path, check=True).stdout
    assert terminal.index("What the numbers show:") < terminal.index("Results")
