"""A fleet's report from cases built here: 16 hosts, one slow, one lost in one workload; the
Fleet and Each host tables, the strip chart, the host-outlier line with what differs, and
every format rendering them (the runs on real fio servers are in test_fleet.py)."""

from __future__ import annotations

from dataclasses import replace

from iolab.model import JSON
from iolab.report import document
from iolab.report.cells import Table
from iolab.report.charts import Chart
from iolab.report.data import Dataset
from iolab.report.formats import output
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
    fleet_table, each, *charts = fleet_view.blocks(data)
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
    (line,) = fleet_view.warnings(data)
    assert line.startswith(f"host-outlier: rack: host {SLOW}: {WORKLOAD} 7,140 IOPS, 41% below")
    assert "the fleet's median 12,110 IOPS (robust z" in line and "over 16 hosts)" in line
    assert "; its scheduler is none where 15 of 16 run mq-deadline." in line


def test_without_inventory_the_line_says_so_and_every_format_renders() -> None:
    data = fleet_data(with_inventory=False)
    (line,) = fleet_view.warnings(data)
    assert '; its inventory is not known (host_env = "ssh" reads it).' in line
    doc = document.build(data, document.Options())
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
