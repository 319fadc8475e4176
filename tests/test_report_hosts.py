"""Reports of runs on several hosts: a real run on three `fio --server` processes (loopback
addresses) shows each host's stored figures beside the stored aggregate; the chart and the
scaling efficiency over the number of hosts, the slow host and the lost host, from cases
built here."""

from __future__ import annotations

import csv
import re
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from conftest import run_iolab
from fleet_servers import Fleet
from iolab.model import CheckWarning, Direction, DirectionMetrics
from iolab.report import document
from iolab.report.cells import Table, format_value
from iolab.report.charts import Chart
from iolab.report.data import DataCase, Dataset, SetupInfo
from iolab.report.formats import markdown, output, terminal
from iolab.report.run import Options
from iolab.report.views import hosts_view
from iolab.store import RunRow
from test_hosts import plan_text

WORKLOAD, BIG = "4k randread", "128k read"


@pytest.fixture
def three(workdir: Path) -> Iterator[tuple[Fleet, list[str]]]:
    made = Fleet(workdir, net=6)
    try:
        yield made, made.start(3)
    finally:
        made.stop_all()


def stored(db: Path) -> dict[str, float]:
    """The stored read IOPS of the run's one case: per host, and "" for the aggregate."""
    with sqlite3.connect(db) as con:
        rows = con.execute(
            "SELECT m.host, m.iops FROM metrics m JOIN cases c ON c.id = m.case_id"
            " WHERE m.direction = 'read' AND m.phase = 'measure' AND m.round = 0"
        ).fetchall()
    return {str(host): float(iops) for host, iops in rows}


def grid(text: str, title: str) -> list[list[str]]:
    """The rows (header first) of the Markdown table under `### title`."""
    lines = text.split(f"### {title}\n\n", 1)[1].splitlines()
    rows = lines[: lines.index("")]
    del rows[1]  # the alignment line
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]


@pytest.mark.fio
@pytest.mark.hosts
def test_a_run_on_three_hosts_reports_each_host_and_the_aggregate(
    three: tuple[Fleet, list[str]], workdir: Path
) -> None:
    servers, hosts = three
    (workdir / "plan.toml").write_text(plan_text(hosts, servers.dirs))
    run_iolab("run", "plan.toml", cwd=workdir, check=True)
    figures = stored(workdir / "iolab.db")
    assert set(figures) == {"", *hosts}
    page = run_iolab("report", "--format", "markdown", cwd=workdir, check=True).stdout
    assert "## Hosts" in page
    header, row = grid(page, "By host: scratch")
    assert header == ["workload", "metric", *hosts, "all hosts"]
    expected = [format_value(figures[h], "iops") for h in [*hosts, ""]]
    assert row[2:] == expected and row[1] == "IOPS"
    assert "all hosts: the aggregate iolab computed" in page

    main = list(
        csv.DictReader(
            run_iolab("report", "--format", "csv", cwd=workdir, check=True).stdout.splitlines()
        )
    )
    assert [r["setup"] for r in main] == ["scratch"]  # the main table: the aggregate
    assert float(main[0]["value"]) == pytest.approx(figures[""], rel=1e-5)
    run_iolab("report", "--export", "tables", cwd=workdir, check=True)
    by_host = list(csv.DictReader((workdir / "tables" / "hosts-scratch.csv").open()))
    assert {r["host"]: float(r["value"]) for r in by_host} == {
        **{h: pytest.approx(figures[h], rel=1e-5) for h in hosts},
        "all hosts": pytest.approx(figures[""], rel=1e-5),
    }
    assert {r["unit"] for r in by_host} == {"IOPS"}


# ---------------------------------------------------------------- cases built here


def metrics(iops: float) -> dict[Direction, DirectionMetrics]:
    return {"read": DirectionMetrics("read", iops, iops * 4096, int(iops * 4096), 1000, 1e5, 1e6)}


def case(
    setup: str,
    hosts: Mapping[str, float],
    workload: str = WORKLOAD,
    lost: Sequence[str] = (),
    repetition: int = 1,
) -> DataCase:
    """A case on `hosts` (their IOPS); with `lost`, failed as the runner stores it."""
    warned = (
        CheckWarning("host-lost", f"{', '.join(lost)} sent no result.", "Check them.", tuple(lost)),
    )
    bs = "128k" if workload == BIG else "4k"
    return DataCase(
        setup=setup,
        workload=workload,
        workload_position=0 if workload == WORKLOAD else 1,
        repetition=repetition,
        options={"rw": workload.split()[1], "bs": bs},
        status="failed" if lost else "ok",
        error="lost" if lost else None,
        metrics={} if lost else metrics(sum(hosts.values())),
        warnings=warned if lost else (),
        hosts={h: metrics(v) for h, v in hosts.items()},
        run_id=1,
    )


def dataset(cases: Sequence[DataCase], listed: Sequence[str] = ()) -> Dataset:
    labels = list(dict.fromkeys(c.setup for c in cases))
    run = RunRow(
        1,
        "on hosts",
        "plan",
        "hash",
        "",
        {},
        0.0,
        1.0,
        "done",
        len(cases),
        len(cases),
        0,
        None,
        "auto",
        {"hostname": "lab", "hosts": [{"host": h} for h in listed]},
    )
    setups = tuple(SetupInfo(s, 1, s, {"kind": "path", "path": "/srv"}, {}) for s in labels)
    return Dataset((run,), setups, tuple(cases), {}, {})


H = ["10.0.0.1:8765", "10.0.0.2:8765", "10.0.0.3:8765"]


def spread(per_host: float, count: int) -> dict[str, float]:
    return dict.fromkeys(H[:count], per_host)


def scaling_cases(workloads: Sequence[str] = (WORKLOAD,)) -> list[DataCase]:
    """scratch on 1, 2 and 3 hosts: 1000 IOPS on one, 950 each on two, 800 each on three."""
    return [
        case(f"scratch on {n} host{'s' if n > 1 else ''}", spread(per_host, n), workload)
        for workload in workloads
        for n, per_host in ((1, 1000.0), (2, 950.0), (3, 800.0))
    ]


def section(doc: document.Document, title: str = "Hosts") -> document.Section:
    return next(s for s in doc.sections if s.title == title)


def test_the_aggregate_against_the_number_of_hosts_and_its_efficiency() -> None:
    data = dataset(scaling_cases((WORKLOAD, BIG)), H)
    charts = hosts_view.charts(data)
    assert [c.name for c in charts] == ["hosts-aggregate-iops", "hosts-aggregate-bw"]
    iops = charts[0]
    assert iops.title == f"{hosts_view.CHART_TITLE}: I/O rate of {WORKLOAD}"  # one line: named
    assert iops.x.label == "hosts (fio servers)" and iops.y.unit == "IOPS"
    assert [(s.name, s.x, s.y) for s in iops.series] == [
        (WORKLOAD, (1.0, 2.0, 3.0), (1000.0, 1900.0, 2400.0))
    ]
    assert charts[1].y.unit.startswith("MB/s") and charts[1].series[0].y[0] == pytest.approx(
        1000 * 4096 / 1e6
    )
    table = hosts_view.efficiency(data)
    assert table is not None
    assert table.columns == ("1 host", "2 hosts", "efficiency at 2", "3 hosts", "efficiency at 3")
    row = table.rows[0]
    assert (row.label, row.stubs) == (WORKLOAD, ("scratch", "IOPS"))
    assert [c.text for c in row.cells] == ["1,000", "1,900", "95%", "2,400", "80%"]
    assert row.cells[2].value == pytest.approx(95.0) and row.cells[4].value == pytest.approx(80.0)


def test_set_ups_apart_and_no_chart_for_one_number_of_hosts() -> None:
    cases = scaling_cases()
    nvme = [case(c.setup.replace("scratch", "nvme"), dict.fromkeys(c.hosts, 2000.0)) for c in cases]
    names = [s.name for s in hosts_view.charts(dataset([*cases, *nvme], H))[0].series]
    assert names == [f"scratch / {WORKLOAD}", f"nvme / {WORKLOAD}"]
    one_count = dataset([case("scratch", spread(900.0, 3))], H)
    assert hosts_view.charts(one_count) == [] and hosts_view.efficiency(one_count) is None
    no_single = dataset(scaling_cases()[1:], H)
    assert hosts_view.charts(no_single) and hosts_view.efficiency(no_single) is None


def test_the_hosts_section_in_the_document_and_its_options() -> None:
    data = dataset(scaling_cases(), H)
    built = document.assemble(data, Options())
    titles = [s.title for s in built.sections]
    assert titles[:3] == ["Findings", "Results", "Hosts"]
    kinds = [type(b).__name__ for b in section(built).blocks]
    assert kinds == ["Table", "Table", "Table", "Chart", "Table"]
    first = section(built).blocks[0]
    assert isinstance(first, Table) and first.columns == (H[0], "all hosts")
    skipped = document.assemble(data, Options(skip=("scaling",)))
    assert not any(isinstance(b, Chart) for b in section(skipped).blocks)
    assert built.main_table().name == "results"
    page = output.render(built, "html").text
    shown = re.findall(r'data-(?:table|chart)="(hosts-[^"]+)"', page)
    assert shown == [
        *(f"hosts-scratch-on-{n}" for n in ("1-host", "2-hosts", "3-hosts")),
        "hosts-aggregate-iops",
        "hosts-scaling",
    ]
    plain = dataset([case("scratch", {})], [])
    assert "Hosts" not in [s.title for s in document.assemble(plain, Options()).sections]


def test_a_slow_host_is_marked_and_warned_in_every_report() -> None:
    data = dataset([case("scratch", {H[0]: 1000.0, H[1]: 980.0, H[2]: 300.0})], H)
    built = document.assemble(data, Options())
    table = section(built).blocks[0]
    assert isinstance(table, Table)
    cells = table.rows[0].cells
    assert [c.text for c in cells] == ["1,000", "980", "300 ▼", "2,280"]
    assert cells[2].flags == ("slow host",)
    line = f"slow-host: scratch: host {H[2]} delivered 31% in {WORKLOAD} (300 of 980 IOPS)"
    assert line in terminal.render_document(built, width=200)
    page = markdown.render_document(built)
    assert line in page and "▼: under 50% of the median host's figure" in page
    even = dataset([case("scratch", {H[0]: 1000.0, H[1]: 980.0, H[2]: 600.0})], H)
    assert hosts_view.warnings(even) == []


def test_a_lost_host_reads_lost_beside_the_hosts_that_answered() -> None:
    lost = case("scratch", {H[0]: 1000.0, H[2]: 990.0}, lost=[H[1]])
    data = dataset([lost], H)
    table = section(document.assemble(data, Options())).blocks[0]
    assert isinstance(table, Table)
    assert table.columns == (*H, "all hosts")
    assert [c.text for c in table.rows[0].cells] == ["1,000", "lost", "990", "failed"]
    assert any(note.startswith("lost: the host sent no result") for note in table.notes)
    again = case("scratch", spread(1000.0, 3), repetition=2)
    table = hosts_view.blocks(dataset([lost, again], H))[0]
    assert isinstance(table, Table)
    assert [c.text for c in table.rows[0].cells] == ["1,000", "1,000", "1,000", "3,000"]


def test_a_slow_host_under_sum_is_a_finding_and_nothing_says_no_check_fired() -> None:
    """Under hosts_report = "sum" the results show the total; the findings say what the
    slow-host warning says (the host's share of the total), never "No methodology check
    fired" as if the hosts were quiet (issue 45)."""
    data = dataset([case("scratch", {H[0]: 1000.0, H[1]: 980.0, H[2]: 300.0})], H)
    built = document.assemble(data, Options())
    (slow,) = [f for f in built.findings if f.group == "hosts scratch"]
    assert slow.sentence == (
        f"scratch: host {H[2]} delivered 31% in {WORKLOAD} (300 of 980 IOPS) of the median "
        "host, 13% of the set-up's total: the total is held back by one host."
    )
    quiet = [f.sentence for f in built.findings if f.sentence.startswith("No methodology")]
    assert all(s.endswith("but the hosts behind them differ: see below.") for s in quiet)
    even = dataset([case("scratch", {H[0]: 1000.0, H[1]: 980.0, H[2]: 600.0})], H)
    calm = document.assemble(even, Options())
    assert not [f for f in calm.findings if f.group.startswith("hosts ")]
