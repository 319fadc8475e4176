"""A fleet: runs on more hosts than a table has room for (or with hosts_report = "each"),
where every host is its own subject.

Per set-up, a "Fleet" table (a row per workload: the hosts' median, MAD, lowest and highest,
how many hosts, and the outlier hosts named), then an "Each host" table (a row per host, a
column per workload), which the CSV export writes whole. The outliers (analysis.fleet: median
and MAD, |robust z| > 3.5) are host-outlier warnings, each with the host's figure, the fleet's,
and what differs in the host's inventory from the majority's. The hosts' figures, spreads and
outliers are judged once where the run is judged (report.judged.fleets); these views word
them.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

from iolab.analysis import fleet
from iolab.analysis.findings import Finding
from iolab.model import Code, Direction, DirectionMetrics
from iolab.report.cells import UNITS, WARNED, WHERE_SHOWN, Cell, Row, Table, format_value
from iolab.report.charts import Axis, Chart, Series, slug
from iolab.report.data import Dataset, SetupInfo
from iolab.report.views import hosts_view
from iolab.report.views.figures import y_axis
from iolab.store.rows import recorded_plan

OUTLIER = "outlier"
LOW, HIGH = "▼", "▲"
CODE = Code.HOST_OUTLIER


@dataclass(frozen=True)
class HostFigures:
    """One workload on a fleet's set-up: each host's figure (None: lost or none)."""

    name: str
    metric: str  # "iops" or "bw"
    figures: tuple[tuple[str, float | None], ...]
    outliers: tuple[fleet.Outlier, ...]
    spread: fleet.FleetSpread | None  # over the known figures; None without any
    generator: bool = False  # the rule fired where the spread is the load generator's

    def known(self) -> dict[str, float]:
        return {host: value for host, value in self.figures if value is not None}


class Fleet(NamedTuple):
    """A set-up run on a fleet, judged: its hosts and each workload's figures on them."""

    setup: SetupInfo
    hosts: tuple[str, ...]
    workloads: tuple[HostFigures, ...]


def blocks(fleets: Sequence[Fleet]) -> list[Table | Chart]:
    """Per fleet set-up: the Fleet table, the Each host table, and a strip chart per unit."""
    out: list[Table | Chart] = []
    for setup, hosts, workloads in fleets:
        out += [_fleet_table(setup, workloads), _each_table(setup, hosts, workloads)]
        out += [strip for unit in ("iops", "bw") if (strip := _strip(setup, workloads, unit))]
    return out


def warnings(fleets: Sequence[Fleet]) -> list[str]:
    """host-outlier: per set-up and host, the workloads where it lies far from the fleet; per
    workload whose spread is the load generator's, that line instead of naming hosts."""
    named = [_line(setup.label, host, found) for setup, host, found in _odd_hosts(fleets)]
    return named + [line for _, line in _generators(fleets)]


def _generators(fleets: Sequence[Fleet]) -> list[tuple[SetupInfo, str]]:
    """(set-up, line) where the rule fired on a spread that is the load generator's."""
    return [
        (setup, _generator_line(setup.label, w))
        for setup, _, workloads in fleets
        for w in workloads
        if w.generator
    ]


def findings(fleets: Sequence[Fleet]) -> list[Finding]:
    """A finding per odd host of a fleet: the host-outlier line, without its code."""
    out = []
    for setup, host, found in _odd_hosts(fleets):
        sentence = _line(setup.label, host, found).removeprefix(f"{CODE}: ")
        cells = tuple((o.workload, setup.label) for o in found)
        effect = 100 * max(abs(o.off) for o in found)
        out.append(
            Finding(
                "trust",
                sentence,
                found[0].spread.count,
                True,
                cells,
                effect=effect,
                group=f"fleet {setup.label}",
            )
        )
    for setup, line in _generators(fleets):
        sentence = line.removeprefix(f"{CODE}: ")
        out.append(Finding("trust", sentence, 1, True, (), group=f"fleet {setup.label}"))
    return out


def _odd_hosts(fleets: Sequence[Fleet]) -> Iterator[tuple[SetupInfo, str, list[fleet.Outlier]]]:
    """Each fleet set-up's hosts that are an outlier on some workload, with those outliers."""
    for setup, hosts, workloads in fleets:
        for host in hosts:
            found = [o for w in workloads for o in w.outliers if o.host == host]
            if found:
                yield setup, host, found


def _generator_line(setup: str, workload: HostFigures) -> str:
    unit = UNITS[workload.metric]
    found = workload.spread
    assert found is not None  # the rule fired on these figures

    def show(value: float) -> str:
        return format_value(value, workload.metric)

    return (
        f"{CODE}: {setup}: {workload.name}: the hosts range from {show(found.low)} to "
        f"{show(found.high)} {unit} around a median of {show(found.median)} {unit} over "
        f"{found.count} hosts, but this spread comes from the load generator, not the hosts' "
        "storage: fio's null engine moves no data, so each figure is the CPU its fio server "
        "got (on hosts that share CPUs, as servers on one machine do, their share of them); no "
        "host is named. Measure a real engine on the hosts' storage to compare them."
    )


def median_hosts(data: Dataset) -> Dataset:
    """With hosts_report = "each", every host is the subject: each ok case of such a run on
    hosts holds its median host's figures (per direction, every figure the median over the
    hosts) instead of their sum, so the Results table, its charts and the findings comparing
    set-ups read a host's figure. The data unchanged without such a run."""
    each = {r.id for r in data.runs if recorded_plan(r.plan_text).get("hosts_report") == "each"}
    if not each:
        return data
    cases = tuple(
        replace(c, metrics=median_host(c.hosts))
        if c.run_id in each and c.hosts and c.status == "ok"
        else c
        for c in data.cases
    )
    return replace(data, cases=cases)


def median_host(
    hosts: Mapping[str, Mapping[Direction, DirectionMetrics]],
) -> dict[Direction, DirectionMetrics]:
    """Per direction, the median over the hosts of each of its figures."""
    out: dict[Direction, DirectionMetrics] = {}
    for direction in dict.fromkeys(d for metrics in hosts.values() for d in metrics):
        found = [m[direction] for m in hosts.values() if direction in m]
        out[direction] = _median_metrics(direction, found)
    return out


def _median_metrics(direction: Direction, found: Sequence[DirectionMetrics]) -> DirectionMetrics:
    def middle(values: Sequence[float | None]) -> float | None:
        known = [v for v in values if v is not None]
        return statistics.median(known) if known else None

    keys = dict.fromkeys(k for m in found for k in m.percentiles_ns)
    percentiles = {
        k: statistics.median([m.percentiles_ns[k] for m in found if k in m.percentiles_ns])
        for k in keys
    }
    return DirectionMetrics(
        direction,
        statistics.median([m.iops for m in found]),
        statistics.median([m.bw_bytes for m in found]),
        round(statistics.median([m.io_bytes for m in found])),
        round(statistics.median([m.runtime_ms for m in found])),
        middle([m.lat_mean_ns for m in found]),
        middle([m.lat_max_ns for m in found]),
        percentiles,
    )


def results(table: Table, data: Dataset, fleets: Sequence[Fleet]) -> Table:
    """The Results table of a run with hosts_report = "each": each fleet set-up's figure (the
    median host's) followed by the range of its hosts, and a note that says so; the table
    unchanged otherwise. `data` holds the cases' own hosts (as median_hosts leaves them)."""
    if not hosts_view.any_hosts(data) or not hosts_view.each(data):
        return table
    ranges: dict[tuple[str, str], tuple[fleet.FleetSpread, str]] = {}
    notes = []
    for setup, hosts, workloads in fleets:
        notes.append(_results_note(setup.label, len(hosts)))
        for w in workloads:
            if (found := w.spread) is not None:
                ranges[(setup.label, w.name)] = (found, w.metric)
    if not ranges:
        return table
    rows = tuple(_ranged(row, table.column_keys, ranges) for row in table.rows)
    return replace(table, rows=rows, notes=(*table.notes, *notes))


def _results_note(setup: str, count: int) -> str:
    return (
        f'{setup}: hosts_report = "each": each figure is the fleet\'s median host, of {count:,} '
        "hosts (per direction, every figure the median over the hosts; the median of the "
        "repetitions of that), never their sum; [lowest to highest] is the range of the hosts' "
        "own figures (the Fleet and Each host tables under Hosts hold every host's)."
    )


def _ranged(
    row: Row,
    keys: Sequence[str],
    ranges: Mapping[tuple[str, str], tuple[fleet.FleetSpread, str]],
) -> Row:
    if not row.whole:
        return row
    cells = []
    for key, cell in zip(keys, row.cells, strict=True):
        if (key, row.label) not in ranges or cell.value is None:
            cells.append(cell)
            continue
        found, metric = ranges[(key, row.label)]
        said = f"[{format_value(found.low, metric)} to {format_value(found.high, metric)}]"
        figure, warned, codes = cell.text.partition(f" {WARNED}")
        cells.append(replace(cell, text=f"{figure} {said}{warned}{codes}"))
    return replace(row, cells=tuple(cells))


# ---------------------------------------------------------------- tables


def _fleet_table(setup: SetupInfo, workloads: Sequence[HostFigures]) -> Table:
    rows = tuple(_fleet_row(w) for w in workloads)
    notes = (
        "Over the hosts' own figures (each the median of its repetitions): the median, the "
        "median absolute deviation (MAD), the lowest and the highest. An outlier lies more "
        f"than {fleet.Z_LIMIT} robust z and at least {fleet.MIN_OFF:.0%} from the median "
        f"(Iglewicz and Hoaglin: z = {fleet.Z_SCALE} (x - median) / MAD, the MAD at least "
        f"{fleet.MAD_FLOOR:.0%} of the median; at least {fleet.OUTLIER_MIN_HOSTS} hosts); see "
        f"the {CODE} warnings.",
    )
    return Table(
        f"Fleet: {setup.label}",
        "workload",
        ("median", "MAD", "lowest", "highest", "hosts", "outliers"),
        rows,
        notes,
        name=f"fleet-{slug(setup.label)}",
        stub_headers=("metric",),
        column_header="figure",
    )


def _fleet_row(workload: HostFigures) -> Row:
    unit = UNITS[workload.metric]
    found = workload.spread
    if found is None:
        return Row(
            workload.name, (*(Cell(None, unit, "—") for _ in range(5)), Cell(None, "", "")), (unit,)
        )

    def figure(value: float) -> Cell:
        return Cell(value, unit, format_value(value, workload.metric))

    named = ", ".join(f"{o.host} ({o.z:+.1f})" for o in workload.outliers)
    flags = (OUTLIER,) if named else ()
    cells = (
        figure(found.median),
        figure(found.mad),
        figure(found.low),
        figure(found.high),
        Cell(float(found.count), "hosts", f"{found.count:,}"),
        Cell(None, "", named or _no_outlier(found.count, workload.generator), flags=flags),
    )
    return Row(workload.name, cells, (unit,))


def _no_outlier(hosts: int, generator: bool = False) -> str:
    """ "none" where the rule judged the hosts; under its least count, that it could not;
    where the spread is the load generator's (the null engine), that none is named."""
    if generator:
        return "not named: the spread is the load generator's (null engine)"
    if hosts < fleet.OUTLIER_MIN_HOSTS:
        return f"not judged: {hosts} hosts, the rule needs {fleet.OUTLIER_MIN_HOSTS}"
    return "none"


def _each_table(setup: SetupInfo, hosts: Sequence[str], workloads: Sequence[HostFigures]) -> Table:
    rows = tuple(Row(host, tuple(_host_cell(w, host) for w in workloads)) for host in hosts)
    notes = [f"{LOW} {HIGH}: an outlier, below or above the fleet (see the {CODE} warnings)."]
    if any(hosts_view.LOST in c.flags for r in rows for c in r.cells):
        notes.append(
            f"{hosts_view.LOST}: the host sent no result; the case failed and the "
            "other hosts' figures are kept."
        )
    return Table(
        f"Each host: {setup.label}",
        "host",
        tuple(f"{w.name} ({UNITS[w.metric]})" for w in workloads),
        rows,
        tuple(notes),
        name=f"each-host-{slug(setup.label)}",
        column_header="workload",
        column_keys=tuple(w.name for w in workloads),
    )


def _host_cell(workload: HostFigures, host: str) -> Cell:
    unit = UNITS[workload.metric]
    value = dict(workload.figures).get(host)
    if value is None:
        return Cell(None, unit, hosts_view.LOST, flags=(hosts_view.LOST,))
    text = format_value(value, workload.metric)
    odd = next((o for o in workload.outliers if o.host == host), None)
    if odd is None:
        return Cell(value, unit, text)
    return Cell(value, unit, f"{text} {LOW if odd.z < 0 else HIGH}", flags=(OUTLIER,))


def _strip(setup: SetupInfo, workloads: Sequence[HostFigures], metric: str) -> Chart | None:
    """One point per host and workload, a workload's hosts on one vertical line from the
    lowest to the highest; each outlier its own point, named in the legend. None without a
    figure in this unit."""
    shown = [w for w in workloads if w.metric == metric and w.known()]
    if not shown:
        return None
    series = [
        Series(w.name, tuple(float(i) for _ in w.known()), tuple(sorted(w.known().values())))
        for i, w in enumerate(shown)
    ]
    series += [
        Series(f"{o.host} ({w.name}, z {o.z:+.1f})", (float(i),), (o.value,), color=len(shown) + n)
        for n, (i, w, o) in enumerate((i, w, o) for i, w in enumerate(shown) for o in w.outliers)
    ]
    return Chart(
        name=f"fleet-{slug(setup.label)}-{metric}",
        kind="line",
        title=f"Each host per workload: {setup.label}, {y_axis(metric).title}",
        x=Axis("workload", ticks=tuple((float(i), w.name) for i, w in enumerate(shown))),
        y=y_axis(metric),
        series=tuple(series),
        legend="",
        caption="One point per host; a workload's hosts lie on one vertical line from the "
        "lowest to the highest. Each outlier is a point of its own, named in the legend.",
    )


# ---------------------------------------------------------------- the warning


def _line(setup: str, host: str, found: Sequence[fleet.Outlier]) -> str:
    said = [_said(o) for o in found[:WHERE_SHOWN]]
    more = f"; and {len(found) - WHERE_SHOWN:,} more workloads" if len(found) > WHERE_SHOWN else ""
    why = _differs(found[0])
    return (
        f"{CODE}: {setup}: host {host}: {'; '.join(said)}{more}; {why}. "
        "Check that host: its storage, its settings and its load."
    )


def _differs(outlier: fleet.Outlier) -> str:
    if outlier.differs:
        return "; ".join(outlier.differs)
    if outlier.known:
        names = ", ".join(name for name, _ in fleet.FACTS)
        return f"none of its inventory facts ({names}) differs from the majority's"
    return 'its inventory is not known (host_env = "ssh" reads it)'


def _said(outlier: fleet.Outlier) -> str:
    metric = "iops" if outlier.unit == "IOPS" else "bw"
    s = outlier.spread

    def show(value: float) -> str:
        return format_value(value, metric)

    side = "below" if outlier.off < 0 else "above"
    return (
        f"{outlier.workload} {show(outlier.value)} {outlier.unit}, {abs(outlier.off):.0%} {side} "
        f"the fleet's median {show(s.median)} {outlier.unit} (robust z {outlier.z:+.1f}; MAD "
        f"{show(s.mad)}, range {show(s.low)} to {show(s.high)} over {s.count} hosts)"
    )
