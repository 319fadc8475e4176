"""Steady state by rounds (a plan's [steady] table): the determination table and the
convergence chart, per set-up, from what the run recorded with each set-up. Each round's
figure is marked ⚑ with its case's warnings, as the results table's cells are, and the
verdict with those of the rounds of its measurement window (what its mean rests on)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from iolab.model import SteadyRecord
from iolab.report.cells import WARNED, Cell, Row, Table, warned
from iolab.report.charts import Axis, Chart, Region, Series, slug
from iolab.report.data import Dataset
from iolab.store import CaseRow


@dataclass(frozen=True)
class Shown:
    """A set-up's steady rounds in the report's units (IOPS, or MB/s)."""

    label: str
    record: SteadyRecord
    values: tuple[float, ...]
    window_mean: float
    unit: str
    cases: tuple[CaseRow, ...] = ()  # each value's case (the tracked workload's ok rounds)

    def case(self, number: int) -> list[CaseRow]:
        """Round `number`'s case (1-based), where the stored cases match the values."""
        matched = len(self.cases) == len(self.values) and 0 < number <= len(self.cases)
        return [self.cases[number - 1]] if matched else []


def _rounds(data: Dataset) -> list[Shown]:
    found = []
    for setup in data.setups:
        record = setup.steady
        if record is None or not record.values:
            continue
        scale, unit = (1e6, "MB/s") if record.metric == "bw" else (1.0, "IOPS")
        values = tuple(v / scale for v in record.values)
        ran = [c for c in data.cell(setup.label, record.track) if c.status == "ok"]
        cases = tuple(sorted(ran, key=lambda c: c.repetition))
        found.append(Shown(setup.label, record, values, record.window_mean / scale, unit, cases))
    return found


def _window_mark(shown: Shown) -> str:
    """ " ⚑ cpu-bound (rounds 4, 5)": the warnings of the window's rounds, as a cell's."""
    first, last = shown.record.window_rounds
    numbers = range(first, last + 1)
    each = {n: warned(Cell(1.0, "", ""), shown.case(n)).warnings for n in numbers}
    codes = list(dict.fromkeys(w.code for found in each.values() for w in found))
    if not codes:
        return ""
    rounds = [str(n) for n, found in each.items() if found]
    where = f"all {len(rounds)} rounds" if len(rounds) == len(numbers) > 2 else _rounds_said(rounds)
    return f" {WARNED} {', '.join(codes)} ({where})"


def _rounds_said(numbers: Sequence[str]) -> str:
    return f"round{'s' if len(numbers) > 1 else ''} {', '.join(numbers)}"


def _verdict(shown: Shown) -> str:
    r = shown.record
    first, last = r.window_rounds
    said = "reached" if r.steady else f"NOT reached in {r.most_rounds} rounds"
    return (
        f"{shown.label}: steady state {said}; measurement window rounds {first}-{last}, mean "
        f"{shown.window_mean:,.0f} {shown.unit}{_window_mark(shown)}; data excursion "
        f"{r.data_excursion:.1%} (limit "
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
                (warned(Cell(value, shown.unit, f"{value:,.0f}"), shown.case(number)),),
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
