"""Steady state by rounds (a plan's [steady] table): the determination table and the
convergence chart, per set-up, from what the run recorded with each set-up."""

from __future__ import annotations

from dataclasses import dataclass

from iolab.model import SteadyRecord
from iolab.report.cells import Cell, Row, Table
from iolab.report.charts import Axis, Chart, Region, Series, slug
from iolab.report.data import Dataset


@dataclass(frozen=True)
class Shown:
    """A set-up's steady rounds in the report's units (IOPS, or MB/s)."""

    label: str
    record: SteadyRecord
    values: tuple[float, ...]
    window_mean: float
    unit: str


def _rounds(data: Dataset) -> list[Shown]:
    found = []
    for setup in data.setups:
        record = setup.steady
        if record is None or not record.values:
            continue
        scale, unit = (1e6, "MB/s") if record.metric == "bw" else (1.0, "IOPS")
        values = tuple(v / scale for v in record.values)
        found.append(Shown(setup.label, record, values, record.window_mean / scale, unit))
    return found


def _verdict(shown: Shown) -> str:
    r = shown.record
    first, last = r.window_rounds
    said = "reached" if r.steady else f"NOT reached in {r.most_rounds} rounds"
    return (
        f"{shown.label}: steady state {said}; measurement window rounds {first}-{last}, mean "
        f"{shown.window_mean:,.0f} {shown.unit}; data excursion {r.data_excursion:.1%} (limit "
        f"{r.data_limit:.0%}), slope excursion {r.slope_excursion:.1%} (limit "
        f"{r.slope_limit:.0%})"
    )


def tables(data: Dataset) -> list[Table]:
    """One determination table per set-up that ran in rounds."""
    out = []
    for shown in _rounds(data):
        first, last = shown.record.window_rounds
        rows = tuple(
            Row(
                str(number),
                (Cell(value, shown.unit, f"{value:,.0f}"),),
                ("yes" if first <= number <= last else "",),
            )
            for number, value in enumerate(shown.values, start=1)
        )
        out.append(
            Table(
                title=f"Steady state by rounds: {shown.label}, tracking {shown.record.track}",
                row_header="round",
                columns=(shown.record.track,),
                rows=rows,
                notes=(_verdict(shown),),
                name=f"steady-{slug(shown.label)}",
                stub_headers=("in window",),
            )
        )
    return out


def charts(data: Dataset) -> list[Chart]:
    """The tracked value round by round, the measurement window shaded."""
    out = []
    for shown in _rounds(data):
        first, last = shown.record.window_rounds
        rounds = tuple(float(n) for n in range(1, len(shown.values) + 1))
        mean, track = shown.window_mean, shown.record.track
        out.append(
            Chart(
                name=f"convergence-{slug(shown.label)}",
                kind="line",
                title=f"Convergence to steady state: {shown.label}",
                x=Axis("round"),
                y=Axis(track, shown.unit),
                series=(
                    Series(track, rounds, shown.values),
                    Series("window mean", (float(first), float(last)), (mean, mean)),
                ),
                regions=(Region(first - 0.5, last + 0.5, "measurement window"),),
                caption=_verdict(shown),
            )
        )
    return out
