"""Runs on several hosts (fio's client/server mode): per set-up, a "By host" table with each
host's own figure beside the aggregate iolab computed ("all hosts"); a host far below the
median host is marked (a slow client, link or server); a host lost mid-case reads "lost".
Where the runs hold cases on different numbers of hosts (a set-up's `host_count`), a chart of
the aggregate against the number of hosts and a table of the scaling efficiency: the
aggregate at N hosts over N times the aggregate at one host.

A set-up on more than FLEET_COLUMNS hosts, or a run whose plan says hosts_report = "each", is
a fleet: no column per host, but the Fleet and Each host tables of fleet_view.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import replace

from iolab.analysis.findings import Finding
from iolab.analysis.stats import summarize
from iolab.model import HOST_LOST, Code, Direction, DirectionMetrics
from iolab.report import summary
from iolab.report.cells import (
    MB,
    UNITS,
    WHERE_SHOWN,
    Cell,
    Row,
    Table,
    case_value,
    cell_values,
    shown_in,
    stat_cell,
)
from iolab.report.charts import Axis, Chart, Series, slug
from iolab.report.data import DataCase, Dataset, SetupInfo
from iolab.report.views.figures import y_axis
from iolab.store.rows import recorded_plan

ALL_HOSTS = "all hosts"
LOST = "lost"
SLOW_SHARE = 0.5  # a host under this share of the median host's figure is named
SLOW = "▼"
SLOW_FLAG = "slow host"
FLEET_COLUMNS = 12  # past this many hosts, no table has a column per host
CHART_TITLE = "Aggregate against the number of hosts"
EFFICIENCY_TITLE = "Scaling over hosts"
_ON_HOSTS = re.compile(r"\s+on\s+\d+\s+hosts?$")
Points = dict[
    tuple[str, str, str], dict[int, list[float]]
]  # (metric, base, workload) -> n -> values


def any_hosts(data: Dataset) -> bool:
    """Whether any case ran on hosts (or lost one)."""
    return data.on_hosts or HOST_LOST in data.codes


def blocks(data: Dataset, metric: str = "auto", chart: bool = True) -> list[Table | Chart]:
    """The Hosts section: a By host table per set-up, then the chart and the efficiency table
    where there are cases on different numbers of hosts; nothing for runs without hosts."""
    if not any_hosts(data):
        return []
    out: list[Table | Chart] = [table for _, table in _by_setup(data, metric)]
    if chart:
        out += charts(data, metric)
    if (found := efficiency(data, metric)) is not None:
        out.append(found)
    return out


# ---------------------------------------------------------------- by host


def host_value(metrics: Mapping[Direction, DirectionMetrics], metric: str) -> float:
    """One host's IOPS or MB/s, read + write + trim added."""
    if metric == "iops":
        return sum(m.iops for m in metrics.values())
    return sum(m.bw_bytes for m in metrics.values()) / MB


def lost_hosts(case: DataCase, candidates: Sequence[str]) -> list[str]:
    """The hosts a case lost: named by its host-lost warning, with no figures of their own."""
    named = {host for w in case.warnings if w.code == HOST_LOST for host in w.hosts}
    return [host for host in candidates if host in named and host not in case.hosts]


def _listed(data: Dataset, run_id: int) -> list[str]:
    """The hosts a run names in its environment, in the plan's order."""
    run = next((r for r in data.runs if r.id == run_id), None)
    found = run.environment.get("hosts") if run else None
    if not isinstance(found, list):
        return []
    return [str(h["host"]) for h in found if isinstance(h, Mapping) and "host" in h]


def setup_hosts(data: Dataset, setup: SetupInfo) -> list[str]:
    """A set-up's hosts: those its cases ran on or lost, in the plan's order."""
    cases = [c for c in data.cases if c.setup == setup.label]
    seen = list(dict.fromkeys(host for case in cases for host in case.hosts))
    listed = _listed(data, setup.run_id)
    lost = {host for case in cases for host in lost_hosts(case, [*listed, *seen])}
    found = [host for host in listed if host in seen or host in lost]
    return found + [host for host in seen if host not in found]


def each(data: Dataset) -> bool:
    """Whether a run's plan makes every host its own subject (hosts_report = "each")."""
    return any(recorded_plan(run.plan_text).get("hosts_report") == "each" for run in data.runs)


def fleet(data: Dataset, hosts: Sequence[str]) -> bool:
    """Whether a set-up's hosts are a fleet (fleet_view's tables, not a column per host)."""
    return len(hosts) > FLEET_COLUMNS or each(data)


def _host_cell(group: Sequence[DataCase], host: str, metric: str) -> Cell:
    """The host's median over the ok repetitions (over what a failed case kept, when none is
    ok); "lost" where it sent no result."""
    used = [c for c in group if c.status == "ok"] or list(group)
    values = [host_value(c.hosts[host], metric) for c in used if host in c.hosts]
    if values:
        return stat_cell(values, UNITS[metric], metric)
    if any(lost_hosts(case, [host]) for case in group):
        return Cell(None, UNITS[metric], LOST, flags=(LOST,))
    return Cell(None, UNITS[metric], "—")


def _all_cell(group: Sequence[DataCase], metric: str) -> Cell:
    values, failed = cell_values(group, metric)
    if values:
        return stat_cell(values, UNITS[metric], metric)
    return Cell(None, UNITS[metric], "failed" if failed else "—")


def slow(cells: Sequence[Cell]) -> list[tuple[int, float, float]]:
    """(index, share of the median host, the median) of each host under SLOW_SHARE of the
    median host's figure; none with fewer than two figures."""
    values = [c.value for c in cells if c.value is not None]
    if len(values) < 2:
        return []
    middle = statistics.median(values)
    if middle <= 0:
        return []
    return [
        (i, c.value / middle, middle)
        for i, c in enumerate(cells)
        if c.value is not None and c.value < SLOW_SHARE * middle
    ]


def _row(workload: str, group: Sequence[DataCase], hosts: Sequence[str], metric: str) -> Row:
    chosen = shown_in(group[0], metric)
    cells = [_host_cell(group, host, chosen) for host in hosts]
    for index, _, _ in slow(cells):
        cell = cells[index]
        cells[index] = Cell(
            cell.value,
            cell.unit,
            f"{cell.text} {SLOW}",
            cell.summary,
            flags=(*cell.flags, SLOW_FLAG),
        )
    return Row(workload, (*cells, _all_cell(group, chosen)), (UNITS[chosen],))


def _by_setup(data: Dataset, metric: str) -> list[tuple[SetupInfo, Table]]:
    out = []
    for setup in data.setups:
        hosts = setup_hosts(data, setup)
        if not hosts or fleet(data, hosts):
            continue
        rows = tuple(
            _row(workload, group, hosts, metric)
            for workload in data.workloads()
            if (group := data.cell(setup.label, workload))
        )
        table = Table(
            f"By host: {setup.label}",
            "workload",
            (*hosts, ALL_HOSTS),
            rows,
            _notes(rows),
            name=f"hosts-{slug(setup.label)}",
            stub_headers=("metric",),
            column_header="host",
        )
        out.append((setup, _shortened(table)))
    return out


def _notes(rows: Sequence[Row]) -> tuple[str, ...]:
    cells = [cell for row in rows for cell in row.cells]
    notes = [
        f"{ALL_HOSTS}: the aggregate iolab computed from the hosts' own results, their sum "
        "(IOPS and bandwidth added; latency percentiles merged from the hosts' json+ "
        'histograms), not fio\'s "All clients" entry.'
    ]
    if any(c.summary and c.summary.n > 1 for c in cells):
        notes.append(
            "Each value is the median of its repetitions ± the half-width of the 95% "
            "confidence interval (Student's t)."
        )
    if any(SLOW_FLAG in c.flags for c in cells):
        notes.append(
            f"{SLOW}: under {SLOW_SHARE:.0%} of the median host's figure (see the "
            "slow-host warnings)."
        )
    if any(LOST in c.flags for c in cells):
        notes.append(
            f"{LOST}: the host sent no result; the case failed and the other hosts' figures "
            "are kept (iolab run --resume runs it again on every host)."
        )
    return tuple(notes)


def _shortened(table: Table) -> Table:
    """Past summary.TABLE_ROWS rows, the rows with a slow or lost host first, then the others
    in plan order; the CSV export keeps them all."""
    if len(table.rows) <= summary.TABLE_ROWS:
        return table
    marked = [i for i, r in enumerate(table.rows) if any(c.flags for c in r.cells[:-1])]
    rest = [i for i in range(len(table.rows)) if i not in set(marked)]
    kept = sorted([*marked, *rest][: summary.TABLE_ROWS])
    shown: list[int] = []
    for index in kept:
        if shown and shown[-1] != index - 1:
            shown.append(-1)
        shown.append(index)
    told = (
        f"{len(kept):,} of {len(table.rows):,} workloads shown, those with a slow or lost "
        "host first; every row is in the CSV (--export DIR)"
    )
    return replace(table, shown=tuple(shown), left_out=told)


def warnings(data: Dataset, metric: str = "auto") -> list[str]:
    """slow-host: per set-up and host, the workloads where it delivered under SLOW_SHARE of
    the median host."""
    return [_slow_line(setup, host, said) for setup, host, said, _ in _slow_hosts(data, metric)]


def findings(data: Dataset, metric: str = "auto") -> list[Finding]:
    """A finding per slow host, as its warning says it (without its code and advice), with
    its share of the set-up's total: under hosts_report = "sum" the figure the results show
    is that total, and the findings must say what the warnings say."""
    out = []
    for setup, host, said, shares in _slow_hosts(data, metric):
        least = min(shares)
        sentence = (
            f"{setup}: host {host} delivered {'; '.join(said[:WHERE_SHOWN])} of the median "
            f"host, {least:.0%} of the set-up's total: the total is held back by one host"
        )
        out.append(
            Finding(
                "trust",
                f"{sentence}.",
                len(said),
                None,
                (),
                effect=100 * (1 - least),
                group=f"hosts {setup}",
            )
        )
    return out


def _slow_hosts(data: Dataset, metric: str) -> list[tuple[str, str, list[str], list[float]]]:
    """(set-up, host, what it delivered per workload, its share of the total per workload)
    for each slow host."""
    if not any_hosts(data):
        return []
    out = []
    for setup, table in _by_setup(data, metric):
        found: dict[str, tuple[list[str], list[float]]] = {}
        for row in table.rows:
            total = row.cells[-1].value or 0.0
            for index, share, middle in slow(row.cells[:-1]):
                value = row.cells[index].value or 0.0
                said, shares = found.setdefault(table.columns[index], ([], []))
                said.append(
                    f"{share:.0%} in {row.label} ({value:,.0f} of {middle:,.0f} {row.stubs[0]})"
                )
                shares.append(value / total if total > 0 else 0.0)
        out += [(setup.label, host, said, shares) for host, (said, shares) in found.items()]
    return out


def _slow_line(setup: str, host: str, said: Sequence[str]) -> str:
    more = f"; and {len(said) - WHERE_SHOWN:,} more" if len(said) > WHERE_SHOWN else ""
    return (
        f"{Code.SLOW_HOST}: {setup}: host {host} delivered {'; '.join(said[:WHERE_SHOWN])}{more} "
        "of the median host. Check that client: its network link, its CPU load, its fio server "
        "and the storage it reaches."
    )


# ---------------------------------------------------------------- number of hosts


def base_name(label: str) -> str:
    """A set-up's name without its " on N hosts" (as a set-up's host_count names it)."""
    return _ON_HOSTS.sub("", label)


def points(data: Dataset, metric: str = "auto") -> Points:
    """The ok cases' aggregates by (metric, base set-up, workload), then number of hosts."""
    out: Points = {}
    for case in data.cases:
        chosen = shown_in(case, metric)
        value = case_value(case, chosen)
        if value is None or not case.hosts:
            continue
        key = (chosen, base_name(case.setup), case.workload)
        out.setdefault(key, {}).setdefault(len(case.hosts), []).append(value)
    return out


def _counts(found: Points) -> list[int]:
    return sorted({n for by_count in found.values() for n in by_count})


def charts(data: Dataset, metric: str = "auto") -> list[Chart]:
    """The aggregate against the number of hosts, a line per workload (and base set-up), one
    chart per unit; none unless the cases ran on at least two different numbers of hosts."""
    found = points(data, metric)
    counts = _counts(found)
    if len(counts) < 2:
        return []
    several = len({base for _, base, _ in found}) > 1
    repeated = any(len(v) > 1 for by_count in found.values() for v in by_count.values())
    out = []
    for chosen in ("iops", "bw"):
        lines = {key: by_count for key, by_count in found.items() if key[0] == chosen}
        if lines:
            out.append(_chart(chosen, lines, counts, several, repeated))
    return out


def _chart(
    metric: str, lines: Points, counts: Sequence[int], several: bool, repeated: bool
) -> Chart:
    xs = tuple(float(n) for n in counts)
    series = []
    for (_, base, workload), by_count in lines.items():
        found = [summarize(by_count[n]) if n in by_count else None for n in counts]
        series.append(
            Series(
                f"{base} / {workload}" if several else workload,
                xs,
                tuple(s.median if s else None for s in found),
                tuple(s.half_width if s else None for s in found),
            )
        )
    axis = y_axis(metric)
    caption = (
        "Each point is iolab's aggregate over the case's hosts (their sum); the table "
        f"{EFFICIENCY_TITLE!r} gives the efficiency against one host."
    )
    if repeated:
        caption += " Median of the repetitions; error bars show the 95% confidence interval."
    return Chart(
        name=f"hosts-aggregate-{metric}",
        kind="line",
        title=f"{CHART_TITLE}: {axis.title} {_lines(series, several)}",
        x=Axis("hosts", "fio servers", ticks=tuple((x, f"{x:g}") for x in xs)),
        y=axis,
        series=tuple(series),
        caption=caption,
        legend="",
    )


def _lines(series: Sequence[Series], several: bool) -> str:
    """What the lines are, or the one line's name (a chart of one line has no legend)."""
    if len(series) == 1:
        return f"of {series[0].name}"
    return f"(one line per {'set-up and workload' if several else 'workload'})"


def efficiency(data: Dataset, metric: str = "auto") -> Table | None:
    """Per base set-up and workload: the aggregate at each number of hosts, and its scaling
    efficiency, aggregate(N) / (N x aggregate(1)); None without a one-host point to start
    from and another number of hosts."""
    found = points(data, metric)
    counts = _counts(found)
    if len(counts) < 2 or counts[0] != 1:
        return None
    rows = [
        _efficiency_row(key, by_count, counts)
        for key, by_count in found.items()
        if 1 in by_count and len(by_count) > 1
    ]
    if not rows:
        return None
    columns: list[str] = []
    for n in counts:
        columns.append(f"{n} host{'s' if n > 1 else ''}")
        columns += [f"efficiency at {n}"] if n > 1 else []
    return Table(
        EFFICIENCY_TITLE,
        "workload",
        tuple(columns),
        tuple(rows),
        (
            "efficiency at N: the aggregate at N hosts ÷ (N × the aggregate at 1 host); 100% is "
            "linear scaling, less is what the hosts' shared storage, network or servers gave up.",
        ),
        name="hosts-scaling",
        stub_headers=("setup", "metric"),
        column_header="figure",
    )


def _efficiency_row(
    key: tuple[str, str, str], by_count: Mapping[int, list[float]], counts: Sequence[int]
) -> Row:
    metric, base, workload = key
    unit = UNITS[metric]
    one = statistics.median(by_count[1])
    cells = []
    for n in counts:
        values = by_count.get(n)
        cells.append(stat_cell(values, unit, metric) if values else Cell(None, unit, "—"))
        if n > 1:
            cells.append(_efficiency_cell(statistics.median(values) if values else None, n, one))
    return Row(workload, tuple(cells), (base, unit))


def _efficiency_cell(value: float | None, n: int, one: float) -> Cell:
    if value is None or one <= 0:
        return Cell(None, "%", "n/a")
    pct = 100 * value / (n * one)
    return Cell(pct, "%", f"{pct:.0f}%", heat=pct)
