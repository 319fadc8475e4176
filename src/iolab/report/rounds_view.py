"""Steady state by rounds (a plan's [steady] table): the determination table and the
convergence chart, per set-up, from what the run recorded with each set-up."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iolab.report.charts import Axis, Chart, Region, Series, slug
from iolab.report.data import Dataset
from iolab.report.model import Cell, Row, Table


def _rounds(data: Dataset) -> list[tuple[str, Mapping[str, Any]]]:
    """(set-up label, its determination) with values in the report's units (IOPS, MB/s)."""
    found: list[tuple[str, Mapping[str, Any]]] = []
    for setup in data.setups:
        d = setup.environment.get("steady_rounds")
        if isinstance(d, Mapping) and d.get("values"):
            scale = 1e6 if d.get("metric") == "bw" else 1.0
            shown = {
                "values": [float(v) / scale for v in d["values"]],
                "unit": "MB/s" if scale > 1 else "IOPS",
                "window_mean": float(d["window_mean"]) / scale,
            }
            found.append((setup.label, {**d, **shown}))
    return found


def _verdict(label: str, d: Mapping[str, Any]) -> str:
    first, last = d["window_rounds"]
    said = "reached" if d["steady"] else f"NOT reached in {d['most_rounds']} rounds"
    return (
        f"{label}: steady state {said}; measurement window rounds {first}-{last}, mean "
        f"{d['window_mean']:,.0f} {d['unit']}; data excursion {d['data_excursion']:.1%} (limit "
        f"{d['data_limit']:.0%}), slope excursion {d['slope_excursion']:.1%} (limit "
        f"{d['slope_limit']:.0%})"
    )


def tables(data: Dataset) -> list[Table]:
    """One determination table per set-up that ran in rounds."""
    out = []
    for label, d in _rounds(data):
        first, last = d["window_rounds"]
        rows = tuple(
            Row(
                str(number),
                (Cell(value, d["unit"], f"{value:,.0f}"),),
                ("yes" if first <= number <= last else "",),
            )
            for number, value in enumerate(d["values"], start=1)
        )
        out.append(
            Table(
                title=f"Steady state by rounds: {label}, tracking {d['track']}",
                row_header="round",
                columns=(d["track"],),
                rows=rows,
                notes=(_verdict(label, d),),
                name=f"steady-{slug(label)}",
                stub_headers=("in window",),
            )
        )
    return out


def charts(data: Dataset) -> list[Chart]:
    """The tracked value round by round, the measurement window shaded."""
    out = []
    for label, d in _rounds(data):
        first, last = d["window_rounds"]
        values = tuple(float(v) for v in d["values"])
        rounds = tuple(float(n) for n in range(1, len(values) + 1))
        mean = float(d["window_mean"])
        out.append(
            Chart(
                name=f"convergence-{slug(label)}",
                kind="line",
                title=f"Convergence to steady state: {label}",
                x=Axis("round"),
                y=Axis(d["track"], d["unit"]),
                series=(
                    Series(d["track"], rounds, values),
                    Series("window mean", (float(first), float(last)), (mean, mean)),
                ),
                regions=(Region(first - 0.5, last + 0.5, "measurement window"),),
                caption=_verdict(label, d),
            )
        )
    return out
