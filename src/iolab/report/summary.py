"""Big reports stay readable: past a size, tables and charts show the ends of one ranking of
the workloads, and say what they left out.

The ranking. With several set-ups, a workload's score is the mean over the other set-ups of
log(median / the reference's median), the reference being the baseline (or the first
set-up): the top are the workloads where the others gain most on it, the bottom those where
they lose most. With one set-up, the score is log(median / the median of every workload
measured in the same unit), so the top and bottom are its highest and lowest figures. The
workloads in between are left out of the tables and charts people read (the CSV of the
results keeps every row); each summary says how many it shows and of how many.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence

from iolab.report.cells import case_value, shown_in
from iolab.store import CaseRow

TABLE_ROWS, TABLE_ENDS = 200, 100  # a results table past 200 rows shows 100 + 100
BAR_WORKLOADS, BAR_ENDS = 40, 15  # bars: 15 + 15 workloads past 40
HEAT_ROWS, HEAT_ENDS = 40, 20  # the change heat map: 20 + 20 rows past 40
LATENCY_WORKLOADS, LATENCY_ENDS = 40, 20  # the latency table: 20 + 20 workloads past 40
CHARTED, CHARTED_ENDS = 12, 1  # time series and exceedance curves: 1 + 1 workloads past 12
SCALING_CHARTS = 8  # more scaling charts than this become one chart per swept field


def reference(labels: Sequence[str], baseline: str | None) -> str | None:
    """What the ranking compares with: the baseline, else the first set-up."""
    if baseline in labels:
        return baseline
    return labels[0] if labels else None


def _medians(cases: Iterable[CaseRow]) -> dict[str, dict[str, float]]:
    """workload -> set-up -> median of its ok repetitions (IOPS: ratios are those of MB/s)."""
    values: dict[str, dict[str, list[float]]] = {}
    for case in cases:
        value = case_value(case, "iops")
        if value is not None and value > 0:
            values.setdefault(case.workload, {}).setdefault(case.setup, []).append(value)
    return {w: {s: _median(v) for s, v in by_setup.items()} for w, by_setup in values.items()}


def _median(values: list[float]) -> float:
    """statistics.median, without its sort for one repetition (most cells of a big sweep)."""
    return values[0] if len(values) == 1 else statistics.median(values)


def scores(cases: Sequence[CaseRow], labels: Sequence[str], ref: str | None) -> dict[str, float]:
    """Each workload's place in the ranking (see the module's text); none when unmeasured."""
    medians = _medians(cases)
    if len(labels) > 1 and ref is not None:
        out = {}
        for workload, by_setup in medians.items():
            base = by_setup.get(ref)
            others = [math.log(v / base) for s, v in by_setup.items() if s != ref and base]
            if others:
                out[workload] = statistics.fmean(others)
        return out
    metric = {c.workload: shown_in(c) for c in cases}
    groups: dict[str, list[float]] = {}
    for workload, by_setup in medians.items():
        groups.setdefault(metric[workload], []).extend(by_setup.values())
    middle = {m: statistics.median(v) for m, v in groups.items()}
    return {
        w: math.log(statistics.fmean(by_setup.values()) / middle[metric[w]])
        for w, by_setup in medians.items()
    }


_LAST: list[tuple[Sequence[CaseRow], tuple[str, ...], str | None, list[str]]] = []


def ranked(cases: Sequence[CaseRow], labels: Sequence[str], ref: str | None) -> list[str]:
    """Workloads from the highest score to the lowest (ties in plan order). The last ranking
    is kept: a report asks for it once per table or chart of the same cases."""
    for seen, seen_labels, seen_ref, order in _LAST:
        if seen is cases and seen_labels == tuple(labels) and seen_ref == ref:
            return order
    found = scores(cases, labels, ref)
    position = {w: i for i, w in enumerate(dict.fromkeys(c.workload for c in cases))}
    order = sorted(found, key=lambda w: (-found[w], position[w]))
    _LAST[:] = [(cases, tuple(labels), ref, order)]
    return order


def ends(order: Sequence[str], count: int) -> tuple[list[str], list[str]]:
    """The first `count` and the last `count` of `order` (the last from the lowest up)."""
    if len(order) <= 2 * count:
        return list(order), []
    return list(order[:count]), list(reversed(order[-count:]))


def about(top: int, bottom: int, total: int, labels: Sequence[str], ref: str | None) -> str:
    """What a summary shows, in words."""
    if len(labels) > 1 and ref is not None:
        others = [s for s in labels if s != ref]
        one = len(others) == 1
        who = f"{others[0]} gains" if one else "the other set-ups gain"
        return (
            f"{top + bottom} of {total:,} workloads shown: the {top} where {who} most on "
            f"{ref} and the {bottom} where {'it loses' if one else 'they lose'} most (by the "
            "change of the medians)"
        )
    return (
        f"{top + bottom} of {total:,} workloads shown: the {top} highest and the {bottom} "
        "lowest (each against the median of the workloads measured in its unit)"
    )


def positions(names: Sequence[str], top: Sequence[str], bottom: Sequence[str]) -> tuple[int, ...]:
    """Row indices for Table.shown: the top, a gap (-1), the bottom; every row of a workload
    (a mixed one has a row per direction and its total)."""
    index: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        index.setdefault(name, []).append(i)
    head = [i for w in top for i in index.get(w, ())]
    tail = [i for w in bottom for i in index.get(w, ())]
    return (*head, -1, *tail) if tail else tuple(head)


def charted(
    cases: Sequence[CaseRow], labels: Sequence[str], ref: str | None
) -> tuple[str, ...] | None:
    """The workloads that get time series and exceedance curves: all (None) up to CHARTED,
    else the ends of the ranking."""
    names = list(dict.fromkeys(c.workload for c in cases))
    if len(names) <= CHARTED:
        return None
    top, bottom = ends(ranked(cases, labels, ref), CHARTED_ENDS)
    return tuple(top + bottom)


def charted_note(charted: Sequence[str] | None, total: int, what: str) -> str:
    """A caption's words for charts drawn for a few of many workloads."""
    if charted is None:
        return ""
    return (
        f"{what} drawn for {len(charted)} of {total:,} workloads: the first and the last of the "
        "ranking of the results table."
    )
