"""Figures published relative to a baseline's (a table of percentages, study E's Write Back
over Write Through), shown as what they are: a share of the baseline's figure ("55.7% of
9264-8i write-through, 0.56x"), each with its ⚑ published, in a table of their own beside
the measured results, never in an IOPS column, never ranked and never cited by a finding.

Where the report also holds measured runs with both set-ups (by name) on the same workload
(its rw, bs, iodepth and rwmixread), the measured share (the ratio of the medians) stands
beside the published one.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from iolab.model import CheckWarning, Code, FioValue, Ratio
from iolab.report.cells import WARNED, WARNED_LEGEND, Cell, Row, Table, cell_values, warned
from iolab.report.data import DataCase, Dataset
from iolab.units import parse_size

TITLE = "Relative to a baseline (published shares, not measurements)"
NAME = "ratios"
PUBLISHED_SHARE = CheckWarning(
    Code.PUBLISHED,
    "a share of another set-up's figure, as a study printed it: iolab measured neither, and "
    "knows of their making only what the table says; it is no IOPS or MB/s of its own.",
    "Run both set-ups here to set measured figures and their own share beside it.",
)
WORDS = {"iops": "IOPS", "bw": "MB/s"}


def table(data: Dataset) -> Table | None:
    """One row per set-up, baseline and workload; a column per direction and metric, and the
    measured share beside each where the report has one."""
    if not data.ratios:
        return None
    rows: dict[tuple[str, str, str], dict[tuple[str, str], Ratio]] = {}
    for ratio in data.ratios:
        key = (ratio.workload, ratio.setup, ratio.baseline)
        rows.setdefault(key, {})[(ratio.direction, ratio.metric)] = ratio
    kinds = list(dict.fromkeys((r.direction, r.metric) for r in data.ratios))
    options = {(r.workload, r.setup, r.baseline): r.options for r in data.ratios}
    measured = any(_measured(data, options[key], *key[1:], kind) for key in rows for kind in kinds)
    columns: list[str] = []
    for direction, metric in kinds:
        columns.append(f"{direction} {WORDS[metric]}: published")
        columns += [f"{direction} {WORDS[metric]}: measured here"] if measured else []
    built = tuple(
        Row(
            workload,
            tuple(
                _cells(
                    data, options[(workload, setup, base)], (setup, base), found, kinds, measured
                )
            ),
            (setup, base),
        )
        for (workload, setup, base), found in rows.items()
    )
    return Table(
        TITLE,
        "workload",
        tuple(columns),
        built,
        _notes(measured),
        name=NAME,
        stub_headers=("set-up", "of baseline"),
        column_header="share",
    )


def _cells(
    data: Dataset,
    options: Mapping[str, FioValue],
    pair: tuple[str, str],
    found: dict[tuple[str, str], Ratio],
    kinds: Sequence[tuple[str, str]],
    measured: bool,
) -> list[Cell]:
    cells = []
    for kind in kinds:
        ratio = found.get(kind)
        cells.append(_published(ratio) if ratio else Cell(None, "%", "—"))
        if measured:
            share = _measured(data, options, *pair, kind)
            cells.append(
                Cell(None, "%", "—") if share is None else warned(_share(share[0]), share[1])
            )
    return cells


def _published(ratio: Ratio) -> Cell:
    text = f"{_said(ratio.value)} {WARNED} {PUBLISHED_SHARE.code}"
    return Cell(
        ratio.percent,
        "% of baseline",
        text,
        flags=(PUBLISHED_SHARE.code,),
        warnings=(PUBLISHED_SHARE,),
    )


def _share(value: float) -> Cell:
    return Cell(value * 100, "% of baseline", _said(value))


def _said(value: float) -> str:
    """A share as people read it: "55.7% (0.56x)"."""
    return f"{value * 100:,.1f}% ({value:,.2f}x)"


def _measured(
    data: Dataset, options: Mapping[str, FioValue], setup: str, base: str, kind: tuple[str, str]
) -> tuple[float, list[DataCase]] | None:
    """The measured share of `setup` over `base` on the workload in one direction (the ratio
    of their medians, where the report measured both, by set-up name, on that workload), and
    the cases it rests on (their warnings mark it)."""
    direction, metric = kind
    figures, behind = [], []
    for name in (setup, base):
        labels = {s.label for s in data.setups if s.name == name}
        cases = [c for c in data.cases if c.setup in labels and _same(options, c.options)]
        values, _ = cell_values(cases, metric, direction)
        figures.append(statistics.median(values) if values else None)
        behind += cases
    mine, theirs = figures
    return None if mine is None or not theirs else (mine / theirs, behind)


def _same(published: Mapping[str, FioValue], measured: Mapping[str, FioValue]) -> bool:
    """The same workload: rw, block size, depth and read share (fio's defaults where unsaid)."""
    if str(published.get("rw")) != str(measured.get("rw", "read")):
        return False
    for key, default in (("iodepth", 1), ("rwmixread", 50)):
        if str(published.get(key, default)) != str(measured.get(key, default)):
            return False
    return _size(published.get("bs")) == _size(measured.get("bs", "4k"))


def _size(value: FioValue | None) -> int | None:
    try:
        return parse_size(str(value)) if value is not None else None
    except ValueError:
        return None


def _notes(measured: bool) -> tuple[str, ...]:
    notes = [
        "each published cell: the set-up's figure as a share of its baseline's, as the table "
        "printed it (100% = the same; 0.56x = 56% of it); no IOPS or MB/s of its own, so it "
        "is neither ranked with measured figures nor cited by a finding.",
        f"{WARNED} {PUBLISHED_SHARE.code}: {PUBLISHED_SHARE}",
        WARNED_LEGEND,
    ]
    if measured:
        notes.insert(
            1,
            "measured here: the same share of this report's runs, the set-up's "
            "median over its baseline's, where both ran the workload.",
        )
    return tuple(notes)
