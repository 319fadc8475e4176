"""A fleet's report from cases built here: 16 hosts, one slow, one lost in one workload; the
Fleet and Each host tables, the strip chart, the host-outlier line with what differs, and
every format rendering them (the runs on real fio servers are in test_fleet.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from iolab.model import JSON
from iolab.report import document, judged
from iolab.report.cells import Table
from iolab.report.charts import Chart
from iolab.report.data import Dataset
from iolab.report.formats import output
from iolab.report.run import Options
from iolab.report.views import fleet_view, hosts_view
from test_report_hosts import BIG, WORKLOAD, case, dataset

HOSTS = [f"10.0.1.{k}:8765" for k in range(1, 17)]
SLOW = HOSTS[6]


def inventory(host: str) -> JSON:
    scheduler = "none" if host == SLOW else "mq-deadline"
    return {"host": {"kernel": "6.1.0"}, "target": {"device": {"scheduler": scheduler}}}


def fleet_data(with_inventory: bool = True) -> Dataset:
    figures = {h: 12_100.0 + 10 * (k % 3) for k, h in enumerate(HOSTS)}
    cases = [
        case("rack", {**figures, SLOW: 7_140.0}),
        case("rack", {h: v / 10 for h, v in figures.items() if h != HOSTS[3]}, BIG, [HOSTS[3]]),
    ]
    data = dataset(cases, HOSTS)
    if with_inventory:
        run = data.runs[0]
        listed: list[JSON] = [{"host": h, "environment": inventory(h)} for h in HOSTS]
        data = replace(data, runs=(replace(run, environment={**run.environment, "hosts": listed}),))
    return data


def test_a_fleet_has_no_column_per_host_and_names_its_outlier() -> None:
    data = fleet_data()
    assert hosts_view.fleet(data, HOSTS) and hosts_view.blocks(data, chart=False) == []
    fleet_table, each, *charts = fleet_view.blocks(judged.fleets(data, "auto"))
    assert isinstance(fleet_table, Table) and isinstance(each, Table)
    assert all(isinstance(c, Chart) for c in charts)
    assert fleet_table.columns == ("median", "MAD", "lowest", "highest", "hosts", "outliers")
    row = fleet_table.rows[0]
    assert row.label == WORKLOAD and row.cells[4].text == "16"
    assert row.cells[5].text.startswith(f"{SLOW} (-")
    assert fleet_table.rows[1].cells[4].text == "15", "the lost host has no figure"
    assert [r.label for r in each.rows] == HOSTS
    assert each.rows[6].cells[0].text == "7,140 ▼" and each.rows[3].cells[1].text == "lost"
    assert [c.y.unit for c in charts if isinstance(c, Chart)] == ["IOPS", "MB/s = 10⁶ bytes/s"]
    strip = charts[0]
    assert isinstance(strip, Chart)
    assert len(strip.series[0].y) == 16 and strip.series[1].name.startswith(f"{SLOW} (")
    (line,) = fleet_view.warnings(judged.fleets(data, "auto"))
    assert line.startswith(f"host-outlier: rack: host {SLOW}: {WORKLOAD} 7,140 IOPS, 41% below")
    assert "the fleet's median 12,110 IOPS (robust z" in line and "over 16 hosts)" in line
    assert "; its scheduler is none where 15 of 16 run mq-deadline." in line


def test_without_inventory_the_line_says_so_and_every_format_renders() -> None:
    data = fleet_data(with_inventory=False)
    (line,) = fleet_view.warnings(judged.fleets(data, "auto"))
    assert '; its inventory is not known (host_env = "ssh" reads it).' in line
    doc = document.assemble(data, Options())
    for name in ("markdown", "table", "json", "html"):  # CSV: the tables by --export
        text = output.render(doc, name).text
        assert SLOW in text, name
    (odd,) = [f for f in doc.findings if f.group == "fleet rack"]
    assert odd.sentence == line.removeprefix("host-outlier: ") and odd.cells == (
        ("4k randread", "rack"),
    )
    markdown = output.render(doc, "markdown").text
    assert "### Fleet: rack" in markdown and "### Each host: rack" in markdown
    assert "host-outlier: rack" in markdown


def reported(mode: str) -> Dataset:
    """Two set-ups of 16 hosts, 3 repetitions: "even" (about 10,000 IOPS a host) and "skewed"
    (about 8,000 a host, but one host at 90,000: the larger sum, the smaller host)."""
    cases = []
    for rep in (1, 2, 3):
        even = {h: 10_000.0 + 10 * k + rep for k, h in enumerate(HOSTS)}
        skewed = {h: 8_000.0 + 10 * k + rep for k, h in enumerate(HOSTS)}
        cases += [
            case("even", even, repetition=rep),
            case("skewed", {**skewed, HOSTS[0]: 90_000.0}, repetition=rep),
        ]
    data = dataset(cases, HOSTS)
    run = replace(data.runs[0], plan_text=f'hosts_report = "{mode}"\n')
    return replace(data, runs=(run,))


def results_table(doc: document.Document) -> Table:
    table = next(s for s in doc.sections if s.title == "Results").blocks[0]
    assert isinstance(table, Table)
    return table


def test_each_makes_the_results_the_median_host_and_the_findings_compare_medians() -> None:
    doc = document.assemble(reported("each"), Options())
    (row,) = results_table(doc).rows
    assert [c.value for c in row.cells] == [10_077.0, 8_087.0], "the median host, not the sum"
    assert row.cells[0].text == "10,077 ± 2 [10,002 to 10,152]"
    assert row.cells[1].text == "8,087 ± 2 [8,012 to 90,000]"
    (note,) = [n for n in results_table(doc).notes if n.startswith("skewed: ")]
    assert 'hosts_report = "each"' in note and "median host, of 16 hosts" in note
    assert "never their sum" in note
    (winner,) = [f for f in doc.findings if f.kind == "winner"]
    assert winner.sentence.endswith("even leads by +24.6% ± 0.0%.")
    markdown = output.render(doc, "markdown").text
    assert "| 4k randread | IOPS | 10,077 ± 2 [10,002 to 10,152] | 8,087 ± 2 [8,012" in markdown


def test_sum_keeps_the_hosts_sum_in_the_results() -> None:
    doc = document.assemble(reported("sum"), Options())
    (row,) = results_table(doc).rows
    assert [c.value for c in row.cells] == [161_232.0, 211_230.0]
    assert not any("hosts_report" in n for n in results_table(doc).notes)
    (winner,) = [f for f in doc.findings if f.kind == "winner"]
    assert winner.sentence.endswith("skewed leads by +31.0% ± 0.0%.")


@pytest.mark.slow  # runs the runner over the fake executor and reports
def test_each_exports_every_host_of_every_case() -> None:
    doc = document.assemble(reported("each"), Options())
    each = [
        b
        for s in doc.sections
        for b in s.blocks
        if isinstance(b, Table) and b.title.startswith("Each host")
    ]
    assert [t.name for t in each] == ["each-host-even", "each-host-skewed"]
    assert all([r.label for r in t.rows] == HOSTS for t in each)
    assert each[1].rows[0].cells[0].text == "90,000 ▲"
    assert all(host in output.render(doc, "json").text for host in HOSTS)
    files = output.exported(doc)  # --export DIR: every table as CSV
    lines = files["each-host-skewed.csv"].decode().splitlines()
    assert lines[0] == "host,workload,value,unit,n,ci95_low,ci95_high,cov_pct,flags"
    assert lines[1] == f"{HOSTS[0]},{WORKLOAD},90000,IOPS,1,,,,outlier"
    assert len(lines) == 1 + len(HOSTS) and "each-host-even.csv" in files
    main = output.render(doc, "csv").text.splitlines()  # --format csv: the Results table
    assert main[1].startswith(f"{WORKLOAD},IOPS,even,10077,IOPS,3,")


def test_a_fleet_too_small_for_the_rule_says_not_judged_with_the_count() -> None:
    """Four hosts, one at 2% of the others: the rule needs 5 hosts, so the Fleet table says
    it did not judge, with the count, never "none" (issue 45)."""
    few = HOSTS[:4]
    data = dataset([case("rack", {**dict.fromkeys(few, 21_004.0), few[2]: 402.0})], few)
    data = replace(data, runs=(replace(data.runs[0], plan_text='hosts_report = "each"\n'),))
    fleet_table = fleet_view.blocks(judged.fleets(data, "auto"))[0]
    assert isinstance(fleet_table, Table)
    assert fleet_table.rows[0].cells[5].text == "not judged: 4 hosts, the rule needs 5"


def test_a_spread_from_the_load_generator_names_no_host() -> None:
    """On fio's null engine the hosts' figures are their servers' CPU: the rule that fires
    says the spread is the load generator's, in the warnings, the findings and the table."""
    figures = {h: 12_100.0 + 10 * (k % 3) for k, h in enumerate(HOSTS)}
    null = replace(case("rack", {**figures, SLOW: 7_140.0}), options={"ioengine": "null"})
    data = dataset([null], HOSTS)
    (line,) = fleet_view.warnings(judged.fleets(data, "auto"))
    assert line.startswith(f"host-outlier: rack: {WORKLOAD}: the hosts range from 7,140 to")
    assert "comes from the load generator, not the hosts' storage" in line and SLOW not in line
    fleet_table, each, *_ = fleet_view.blocks(judged.fleets(data, "auto"))
    assert isinstance(fleet_table, Table) and isinstance(each, Table)
    assert fleet_table.rows[0].cells[5].text.startswith("not named: the spread is the load")
    assert "▼" not in each.rows[6].cells[0].text
    doc = document.assemble(data, Options())
    (said,) = [f for f in doc.findings if f.group == "fleet rack"]
    assert said.sentence == line.removeprefix("host-outlier: ")
    assert not any(
        f.sentence == "No methodology check fired on the 1 figures." for f in doc.findings
    )
