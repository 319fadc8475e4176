"""Findings in words (analysis.findings): each kind from typed figures, none claimed beyond
the noise, and on a stored run every figure a finding cites is a cell of the same report."""

from __future__ import annotations

import csv
import json
import re
import shutil
import sqlite3
from collections.abc import Mapping
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import run_iolab
from iolab.analysis import finding_details, finding_groups, finding_sweeps, findings, scaling
from iolab.analysis.findings import Figure
from iolab.cli import main
from iolab.model import CheckWarning, JSONObject
from iolab.report.views import telemetry_view

GOLDEN = Path(__file__).parent / "golden"
CACHE = CheckWarning("page-cache", "read from memory.", "Use direct=1.")


def fig(
    setup: str,
    values: tuple[float, ...],
    workload: str = "4k randread",
    warned: tuple[CheckWarning, ...] = (),
) -> Figure:
    return Figure(workload, setup, f"{values[0]:,.0f} ± x", "IOPS", values, warned)


def kinds(found: list[findings.Finding], kind: str) -> list[str]:
    return [f.sentence for f in found if f.kind == kind]


def test_a_significant_lead_is_stated_with_its_margin() -> None:
    found = finding_groups.derive(
        [fig("raid0", (200.0, 202.0, 198.0)), fig("one", (100.0, 101.0, 99.0))]
    )
    (said,) = kinds(found, "winner")
    assert "raid0 leads by +100.0% ± " in said and "one 100 ± x IOPS" in said
    assert kinds(found, "overall") == []  # one workload: no overall


def test_differences_within_the_noise_are_said_to_be() -> None:
    found = finding_groups.derive([fig("a", (100.0, 140.0, 60.0)), fig("b", (101.0, 120.0, 80.0))])
    (said,) = kinds(found, "winner")
    assert "not distinguishable" in said and "includes 0" in said
    assert next(f for f in found if f.kind == "winner").significant is False


def test_one_run_each_is_indicative_only() -> None:
    (said,) = kinds(finding_groups.derive([fig("a", (120.0,)), fig("b", (100.0,))]), "winner")
    assert "no interval, indicative" in said


def test_cost_against_the_baseline_with_its_range_and_reversal() -> None:
    mixed, qd32 = "512 B mixed", "4k QD32 write"
    figures = [
        fig("wt", (100.0, 101.0, 99.0), mixed),
        fig("wb", (280.0, 282.0, 278.0), mixed),
        fig("wt", (100.0, 101.0, 99.0), qd32),
        fig("wb", (59.0, 60.0, 58.0), qd32),
    ]
    (said,) = kinds(finding_groups.derive(figures, baseline="wt"), "cost")
    assert "Against wt, wb changes the figures by a median of" in said
    assert "helps 512 B mixed and costs 4k QD32 write" in said
    assert "+180.0% ± " in said and "-41.0% ± " in said


def test_a_shared_cap_is_named() -> None:
    figures = [
        fig("card A", (821.0, 820.0)),
        fig("card B", (815.0, 818.0)),
        fig("disk", (250.0, 251.0)),
    ]
    (said,) = kinds(finding_groups.derive(figures), "cap")
    assert "2 set-ups reach the same figure within 5%" in said and "shared limit" in said
    # one of the two so uncertain (its interval far wider than 5%) that no plateau shows
    loose = [
        fig("card A", (821.0, 820.0)),
        fig("card B", (500.0, 1100.0, 850.0)),
        fig("disk", (250.0, 251.0)),
    ]
    assert kinds(finding_groups.derive(loose), "cap") == []


def test_trust_counts_the_warnings_and_winners_say_so() -> None:
    figures = [fig("a", (200.0, 201.0), warned=(CACHE,)), fig("b", (100.0, 101.0))]
    found = finding_groups.derive(figures)
    trusted = kinds(found, "trust")
    assert any("1 of 2 figures rest on warned cases (page-cache on 1)" in s for s in trusted)
    assert "but 1 of these 2 figures carry warnings (page-cache)" in kinds(found, "winner")[0]


@pytest.mark.slow
def test_findings_come_first_and_cite_only_what_the_report_shows(tmp_path: Path) -> None:
    store = tmp_path / "devices.db"
    shutil.copyfile(GOLDEN / "devices.db", store)
    md = run_iolab(
        "report", "1", "--db", str(store), "--format", "markdown", cwd=tmp_path, check=True
    ).stdout
    sections = re.findall(r"^## (.+)$", md, re.M)
    assert sections[0] == "Findings" and sections[1] == "Results"
    said = md.split("### What the numbers show")[1].split("###")[0]
    rest = md.split("## Results")[1] + md.split("### Leaders per workload")[1]
    for figure in re.findall(r"[+-]?\d[\d,]*(?:\.\d+)?%?(?: ± [\d,.]+%?)?", said):
        if " ± " in figure:
            assert figure in rest or figure in md.split("### Leaders")[1], figure
    terminal = run_iolab("report", "1", "--db", str(store), cwd=tmp_path, check=True).stdout
    assert terminal.index("What the numbers show:") < terminal.index("Results")


def gap(setup: str, workload: str, pct: float) -> finding_details.ModelGap:
    return finding_details.ModelGap(
        workload, setup, "100 IOPS", f"{pct:.0f} IOPS", pct, f"{pct:.0f}%", 3
    )


@pytest.mark.parametrize(
    ("pcts", "said"),
    [
        ((95.0, 110.0), "within 50% to 150%: the model explains it"),
        ((90.0, 400.0), "far above it on w1: a cache"),
        ((30.0, 90.0), "far below it on w0: the array pays more than the rule counts"),
    ],
    ids=["explained", "cache", "overhead"],
)
def test_the_raid_model_against_the_measured_figures(pcts: tuple[float, ...], said: str) -> None:
    found = finding_groups.derive([], gaps=[gap("raid5", f"w{n}", p) for n, p in enumerate(pcts)])
    (sentence,) = kinds(found, "model")
    low, high = min(pcts), max(pcts)
    assert f"raid5 measures from {low:.0f}% " in sentence and f"to {high:.0f}% " in sentence
    assert said in sentence


def tail(
    setup: str, p50_us: float, p999_us: float, workload: str = "4k randread"
) -> finding_details.Tail:
    return finding_details.Tail(
        workload, setup, "read", p50_us * 1e3, p999_us * 1e3, f"{p50_us:g} µs", f"{p999_us:g} µs"
    )


def test_a_long_tail_and_a_leader_with_the_worse_tail_are_said() -> None:
    figures = [fig("fast", (200.0, 202.0, 198.0)), fig("steady", (100.0, 101.0, 99.0))]
    tails = [tail("fast", 80.0, 5000.0), tail("steady", 150.0, 400.0)]
    found = kinds(finding_groups.derive(figures, tails=tails), "latency")
    assert any("1 of 2 latency rows has a tail" in s and "p99.9 5000 µs" in s for s in found)
    assert any(
        "fast has the better figure but the worse tail: p99.9 5000 µs against steady's 400 µs" in s
        for s in found
    ), found


def test_no_latency_finding_when_tails_are_short_and_the_leader_is_also_steadier() -> None:
    figures = [fig("fast", (200.0, 202.0, 198.0)), fig("steady", (100.0, 101.0, 99.0))]
    tails = [tail("fast", 80.0, 300.0), tail("steady", 150.0, 400.0)]
    assert kinds(finding_groups.derive(figures, tails=tails), "latency") == []


def test_a_cost_keeps_its_median_and_range_for_the_costs_table() -> None:
    figures = [
        fig("wt", (100.0, 101.0, 99.0), "a"),
        fig("wb", (150.0, 151.0, 149.0), "a"),
        fig("wt", (100.0, 101.0, 99.0), "b"),
        fig("wb", (90.0, 91.0, 89.0), "b"),
    ]
    (cost,) = [f for f in finding_groups.derive(figures, baseline="wt") if f.kind == "cost"]
    median, lowest, highest = cost.spread
    assert median in cost.sentence and lowest.startswith("-10.0% ± ") and lowest.endswith("(b)")
    assert highest.startswith("+50.0% ± ") and highest.endswith("(a)")


@pytest.mark.slow
def test_compare_says_what_changed_between_runs_citing_the_comparison(tmp_path: Path) -> None:
    store = tmp_path / "store.db"
    shutil.copyfile(GOLDEN / "store.db", store)
    md = run_iolab(
        "compare", "1", "2", "--db", str(store), "--format", "markdown", cwd=tmp_path, check=True
    ).stdout
    sections = re.findall(r"^## (.+)$", md, re.M)
    assert sections[:2] == ["Findings", "Comparison"], sections
    said = md.split("### What the numbers show")[1].split("###")[0]
    assert "Against run 1, run 2 changes the figures by a median of" in said
    table = md.split("## Comparison")[1]
    for figure in re.findall(r"[+-]\d[\d,]*\.\d%(?: ± [\d,.]+%)", said):
        assert figure in table, figure  # each change cited is a cell of the comparison
    assert "on two" in said or "on one" in said, "a change names its set-up"


def test_json_carries_the_findings_the_text_says(tmp_path: Path) -> None:
    store = tmp_path / "devices.db"
    shutil.copyfile(GOLDEN / "devices.db", store)
    invoke = CliRunner().invoke
    text = invoke(main, ["report", "1", "--db", str(store)])
    found = json.loads(invoke(main, ["report", "1", "--db", str(store), "--format", "json"]).output)
    said = [f["sentence"] for f in found["findings"]]
    assert len(said) >= 3 and all(sentence in " ".join(text.output.split()) for sentence in said)
    assert {f["kind"] for f in found["findings"]} >= {"winner", "model", "trust"}
    cited = next(f for f in found["findings"] if f["kind"] == "winner")
    assert cited["cells"] and cited["cases"] > 0 and cited["significant"] in (True, False, None)


@pytest.mark.slow  # --export draws every chart
def test_the_csv_export_carries_the_findings(tmp_path: Path) -> None:
    store = tmp_path / "devices.db"
    shutil.copyfile(GOLDEN / "devices.db", store)
    invoke = CliRunner().invoke
    found = json.loads(invoke(main, ["report", "1", "--db", str(store), "--format", "json"]).output)
    said = [f["sentence"] for f in found["findings"]]
    cited = found["findings"][0]
    out = tmp_path / "out"
    done = invoke(main, ["report", "1", "--db", str(store), "--export", str(out), "-o", "-"])
    assert done.exit_code == 0, done.output
    with (out / "findings.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["sentence"] for r in rows] == said
    assert rows[0]["cells"] == ";".join(f"{c['workload']} @ {c['setup']}" for c in cited["cells"])


PUBLISHED = Path(__file__).parent / "fixtures" / "import" / "published"


def published_findings(
    tmp_path: Path, table: str, facts: tuple[str, ...] = (), baseline: tuple[str, ...] = ()
) -> dict[str, list[str]]:
    """The findings of a study's published table imported as a run, by kind."""
    db = tmp_path / f"{table}.db"
    invoke = CliRunner().invoke
    done = invoke(main, ["import", str(PUBLISHED / table), "--db", str(db), *facts])
    assert done.exit_code == 0, done.output
    report = invoke(main, ["report", "--db", str(db), "--format", "json", *baseline])
    by_kind: dict[str, list[str]] = {}
    for found in json.loads(report.output)["findings"]:
        by_kind.setdefault(found["kind"], []).append(found["sentence"])
    return by_kind


def test_study_a_the_card_caps_writes_whatever_the_drives(tmp_path: Path) -> None:
    """Study A's authors: behind the PERC, writes cap near 30k IOPS and 32m writes at 3.3 GB/s
    whatever the drives (the 15k rpm SAS pair included): the card's cache, not the drives."""
    caps = published_findings(tmp_path, "A_perc_h710p_ara_wb.csv")["cap"]
    (writes,) = [s for s in caps if s.startswith("4k rw=write: all 6 set-ups")]
    assert "SAS 15krpm 31,801" in writes and "not what differs between them" in writes
    assert any(s.startswith("32m rw=write: all 6 set-ups") and "3,352" in s for s in caps)
    (random,) = [s for s in caps if s.startswith("4k rw=randwrite: 5 set-ups")]
    assert "SAS" not in random and "a shared limit" in random  # the disks stay below
    assert not any(s.startswith("32m rw=read") for s in caps), "two of six alike is no cap"


def test_study_a_the_card_against_the_sata_ports(tmp_path: Path) -> None:
    """Study A's question, the drives behind the card or on the SATA ports: the card costs
    the 4k workloads, and write-back helps the 32m ones."""
    found = published_findings(
        tmp_path, "A_vertex3_raid_card_vs_none.csv", baseline=("--baseline", "no RAID card")
    )
    wb = next(s for s in found["cost"] if s.startswith("Against no RAID card, PERC H710P ARA+WB"))
    assert "median of -41.8% over 6 workloads" in wb and "+410.7% (32m rw=write)" in wb
    assert "helps 32m rw=read, 32m rw=write and costs 4k rw=read" in wb
    overall = found["overall"]
    assert overall == ["no RAID card leads on 4 of 6 workloads."], overall


def test_study_c_cached_figures_are_named_above_the_drives_limits(tmp_path: Path) -> None:
    """Study C's caveat, which its authors noticed late: the RAID0 of 4 wrote 821 MB/s, more
    than 4 x 170 MB/s; the findings name it as a cache's speed, not the drives'."""
    facts = ("--rated-mbps", "250,170")
    trust = published_findings(tmp_path, "C_x25e_raid_cards_dd.csv", facts)["trust"]
    (above,) = [s for s in trust if "(above-ceiling)" in s]
    assert above.startswith("2 figures are above the physical limit of the devices behind")
    assert "Adaptec 5805 RAID0 of 4 821.0 MB/s (dd 100M rw=write)" in above
    assert "Adaptec 5805 RAID1 of 2 227.0 MB/s (dd 100M rw=write)" in above  # one mirror's
    (fits,) = [s for s in trust if "(cache-size)" in s]
    assert fits.startswith("6 figures are from a test small enough to fit a cache")


def test_pooled_runs_are_repetitions_with_their_spread_stated(tmp_path: Path) -> None:
    """`report 1 2 --pool`: one column per set-up holding both runs' repetitions, and how far
    the runs' means lie apart per cell, cited from the Across runs table."""
    store = tmp_path / "store.db"
    shutil.copyfile(GOLDEN / "store.db", store)
    args = ["report", "1", "2", "--pool", "--db", str(store), "--format", "json"]
    report = json.loads(CliRunner().invoke(main, args).output)
    tables = {t["name"]: t for s in report["sections"] for t in s["tables"]}
    results = tables["results"]
    assert results["column_keys"][:2] == ["one", "two"]
    assert {c["n"] for r in results["rows"] for c in r["cells"][:2]} == {6}  # 3 + 3 each
    spread = tables["across-runs"]
    shown = {c["text"] for r in spread["rows"] for c in r["cells"]}
    (pooled,) = [f["sentence"] for f in report["findings"] if f["kind"] == "pooled"]
    assert pooled.startswith("Runs 1 and 2 read as repetitions of one another")
    cited = re.findall(
        r"(\d+\.\d%) apart at the median cell .* and (\d+\.\d%) at the widest", pooled
    )
    assert cited and set(cited[0]) <= shown, (cited, shown)
    widest = max(c["value"] for r in spread["rows"] for c in r["cells"])
    assert f"{widest:.1f}% at the widest" in pooled


def test_pooling_runs_whose_set_ups_differ_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "store.db"
    shutil.copyfile(GOLDEN / "store.db", store)
    with sqlite3.connect(store) as db:
        db.execute(
            "UPDATE setups SET definition = json_set(definition, '$.path', '/elsewhere') "
            "WHERE run_id = 2 AND name = 'one'"
        )
    done = CliRunner().invoke(main, ["report", "1", "2", "--pool", "--db", str(store)])
    assert done.exit_code == 1
    assert "set-up 'one' differs between run 1 and run 2; pool runs of one plan" in done.output
    alone = CliRunner().invoke(main, ["report", "1", "--pool", "--db", str(store)])
    assert alone.exit_code == 1 and "name two runs or more" in alone.output


def test_scaling_per_doubling_says_where_it_stops_paying() -> None:
    steps = tuple(
        (jobs, fig("one", (iops, iops * 1.01, iops * 0.99), f"rand numjobs={jobs}"))
        for jobs, iops in ((1, 10_000.0), (2, 19_000.0), (4, 30_000.0), (8, 31_000.0))
    )
    (said,) = kinds(
        finding_groups.derive(
            [f for _, f in steps], sweeps=[finding_sweeps.Sweep("one", "numjobs", steps)]
        ),
        "scaling",
    )
    assert said.startswith("one · rand numjobs=1 → rand numjobs=8: per doubling of numjobs, IOPS")
    assert "×1.90 from 1 to 2 (10,000 ± x → 19,000 ± x)" in said
    assert "×1.58 from 2 to 4" in said and "×1.03 from 4 to 8" in said
    assert said.endswith("it stops paying past numjobs=4 (best: numjobs=8, 31,000 ± x).")
    growing = finding_sweeps.growth(finding_sweeps.Sweep("one", "iodepth", steps[:2]))
    assert growing.sentence.endswith("still growing up to iodepth=2.")
    assert growing.cases == 6 and len(growing.cells) == 2


def test_a_curve_without_a_knee_says_so() -> None:
    flat = finding_details.LoadKnee("here", "4k randread", "41,000 IOPS", "310 µs", None)
    (said,) = kinds(finding_groups.derive([], knees=[flat]), "latency")
    assert said == (
        "here · 4k randread: no knee in the load curve within the noise: p99 stays near its "
        "low-load value up to the peak (41,000 IOPS, p99 310 µs)."
    )


def test_a_device_count_sweep_names_its_set_ups_and_its_one_workload() -> None:
    steps = tuple(
        (n, fig(f"raid0 of {n}", (iops, iops, iops), "4k randread"))
        for n, iops in ((1, 50_000.0), (2, 95_000.0), (4, 100_000.0))
    )
    found = finding_sweeps.growth(
        finding_sweeps.Sweep("raid0 of 1 / raid0 of 2 / raid0 of 4", "device_count", steps)
    )
    assert found.sentence.startswith(
        "raid0 of 1 / raid0 of 2 / raid0 of 4 · 4k randread: per doubling of device_count, "
        "IOPS ×1.90 from 1 to 2"
    )
    assert found.sentence.endswith(
        "it stops paying past device_count=2 (best: device_count=4, 100,000 ± x)."
    )
    assert len(found.cells) == 3


def test_one_device_is_the_first_point_of_the_striped_family_it_belongs_to() -> None:
    """A device_count sweep of 1, 2 and 4 builds the 1 as a plain device: it shares the
    family's filesystem and options, so it is the sweep's first point; an xfs device is not
    a point of a btrfs family."""
    btrfs: JSONObject = {"kind": "devices", "filesystem": "btrfs", "queue": {}}
    definitions: dict[str, JSONObject] = {
        "one": {**btrfs, "name": "one", "devices": ["/dev/a"], "raid": "none"},
        "xfs": {**btrfs, "name": "xfs", "devices": ["/dev/a"], "raid": "none", "filesystem": "xfs"},
        **{
            f"raid0 of {n}": {
                **btrfs,
                "name": f"raid0 of {n}",
                "raid": "btrfs",
                "level": "raid0",
                "devices": [f"/dev/d{i}" for i in range(n)],
            }
            for n in (2, 4)
        },
    }
    points = [
        scaling.Point(
            name,
            "4k randread",
            {"rw": "randread"},
            iops,
            None,
            *telemetry_view.devices_of(definitions[name]),
        )
        for name, iops in (
            ("one", 50_000.0),
            ("xfs", 48_000.0),
            ("raid0 of 2", 95_000.0),
            ("raid0 of 4", 100_000.0),
        )
    ]
    added = telemetry_view.single_devices(points, definitions)
    assert [(p.setup, p.devices) for p in added] == [("one", 1)]
    (sweep,) = scaling.sweeps([*points, *added], "device_count").values()
    assert sorted(sweep) == [1, 2, 4] and sweep[1][0].setup == "one"


def _steps(axis: str, figures: Mapping[int, tuple[float, ...]]) -> tuple[tuple[int, Figure], ...]:
    return tuple(
        (n, fig("set", values, f"4k randread {axis}={n}")) for n, values in figures.items()
    )


def test_one_io_in_flight_over_more_devices_is_never_still_growing() -> None:
    """A QD1 device-count sweep on a loaded host (4,630 → 8,976): one I/O uses one member at
    a time, so the sentence says more devices cannot help, not that it still grows."""
    steps = _steps("device_count", {1: (4_630.0,), 2: (6_100.0,), 4: (8_976.0,)})
    said = finding_sweeps.growth(
        finding_sweeps.Sweep("x1 / x2 / x4", "device_count", steps, in_flight=1)
    ).sentence
    assert "still growing" not in said and "stops paying" not in said
    assert "one I/O in flight (iodepth x numjobs = 1) uses one member at a time" in said
    assert "indicative: one repetition a point" in said
    deeper = finding_sweeps.growth(
        finding_sweeps.Sweep("x1 / x2 / x4", "device_count", steps, in_flight=32)
    ).sentence
    assert deeper.endswith(
        "still growing up to device_count=4; indicative: one repetition a "
        "point, no interval to judge the steps by."
    )


def test_a_dip_then_a_rise_is_not_a_stop_and_the_best_point_is_named() -> None:
    """8,172 → 7,968 from iodepth 1 to 2, then 16,550 at 16: the curve has not stopped
    paying past iodepth=1."""
    tight = {n: (v, v * 1.005, v * 0.995) for n, v in ((1, 8_172.0), (2, 7_968.0))}
    tight |= {n: (v, v * 1.005, v * 0.995) for n, v in ((4, 12_000.0), (16, 16_550.0))}
    said = finding_sweeps.growth(
        finding_sweeps.Sweep("loop5", "iodepth", _steps("iodepth", tight))
    ).sentence
    assert "past iodepth=1" not in said
    assert said.endswith("still growing up to iodepth=16.")
    flat_end = tight | {32: (16_600.0, 16_650.0, 16_550.0)}
    ended = finding_sweeps.growth(
        finding_sweeps.Sweep("loop5", "iodepth", _steps("iodepth", flat_end))
    ).sentence
    assert ended.endswith("it stops paying past iodepth=16 (best: iodepth=32, 16,600 ± x).")


def test_steps_within_the_noise_are_said_to_be_and_are_not_a_curve() -> None:
    """Two repetitions that spread wide: a step is not read as a gain or a stop."""
    wide = {1: (100.0, 900.0), 2: (60.0, 40.0), 4: (300.0, 340.0)}
    said = finding_sweeps.growth(
        finding_sweeps.Sweep("b", "device_count", _steps("device_count", wide), in_flight=8)
    ).sentence
    assert "within the noise from 1 to 2" in said


def _gap(level: str, cached: bool, pct: float) -> finding_details.ModelGap:
    return finding_details.ModelGap(
        "4k randread",
        f"{level} x4",
        "100 IOPS",
        f"{pct:.0f} IOPS",
        pct,
        f"{pct:.0f}%",
        3,
        level=level,
        cached=cached,
    )


def test_the_raid_model_blames_a_cache_only_where_one_is_in_the_stack() -> None:
    """Direct I/O on loop devices with no card: far above the model is the single device's
    figure being low, not a cache; RAID0's shortfall never speaks of copies or parity."""
    (above,) = finding_details.model([_gap("raid0", False, 194.0)])
    assert "answers" not in above.sentence and "with no cache in the stack" in above.sentence
    assert "the single device's figure the model scales from is likely low" in above.sentence
    (cached,) = finding_details.model([_gap("raid0", True, 194.0)])
    assert "a cache (the card's, the drive's or the host's page cache) answers" in cached.sentence
    (below,) = finding_details.model([_gap("raid0", False, 30.0)])
    assert "mirror" not in below.sentence and "parity" not in below.sentence
    (mirror,) = finding_details.model([_gap("raid10", False, 30.0)])
    assert "(mirror copies; a busy CPU" in mirror.sentence
    (parity,) = finding_details.model([_gap("raid5", False, 30.0)])
    assert "(parity updates; a busy CPU" in parity.sentence


def test_the_short_form_is_what_an_author_pastes(tmp_path: Path) -> None:
    """At most about 150 words of findings, no per-figure interval words (said once under
    them), and in the document nothing but the findings and their caveats."""
    store = tmp_path / "store.db"
    shutil.copyfile(GOLDEN / "store.db", store)  # a reader marks the store it opens
    done = CliRunner().invoke(
        main, ["report", "--db", str(store), "--short", "--format", "markdown"]
    )
    assert done.exit_code == 0, done.output
    said = done.output.split("### Caveats and legend")[0]
    findings_text = said.split("What the numbers show", 1)[1]
    assert len(findings_text.split()) <= 170  # 150 words and the list's marks
    assert "no useful interval)" not in findings_text
    assert "## Results" not in done.output and "## Environment" not in done.output
    terminal = CliRunner().invoke(main, ["report", "--db", str(store), "--short"])
    assert terminal.exit_code == 0 and len(terminal.output.splitlines()) <= 30
