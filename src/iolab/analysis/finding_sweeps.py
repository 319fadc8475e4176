"""Scaling findings: over a numjobs, iodepth or device-count sweep, the gain per doubling from
each value to the next, citing the figures, and where it stops paying (under 10% a doubling)
or that it still grows; analysis.scaling's flat-scaling (where the telemetry names the limit)
folded into the sweep's sentence.

A workload family swept over a second axis (numjobs at iodepth 1, 8 and 32) has one sweep
per value of it and per set-up: they make one sentence per family and axis, grouped by where
each stops ("stops paying past numjobs=8 on x1 at iodepth=8 (...), x2 at iodepth=1 (...);
still growing up to numjobs=16 on x1 at iodepth=1 (...)"), rather than a line per sweep.

A curve is read against its noise and as a whole: a step is a gain only where it is beyond
the two points' 95% intervals (with one repetition a point has none: the sentence says it
is indicative, once); a sweep stops paying at the first point that no later point beats by
10% a doubling beyond the noise, and names the curve's best point, so a dip then a rise is
not a stop; a device-count sweep at one I/O in flight (iodepth x numjobs = 1) is never
"still growing": one I/O uses one member at a time, whatever the figures' noise says.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from iolab.analysis.findings import Figure, Finding, but, some, warned_of
from iolab.analysis.scaling import Flat
from iolab.analysis.stats import compare
from iolab.model import CheckWarning, Code

STOPS = 1.10  # a doubling that gains less than 10% has stopped paying


@dataclass(frozen=True)
class Sweep:
    """One set-up's figures over a numjobs or iodepth sweep (or striped set-ups' over their
    device count, `setup` naming them all), the other options alike: (value of the axis, its
    figure) in order."""

    setup: str
    axis: str
    steps: tuple[tuple[int, Figure], ...]
    in_flight: int | None = None  # iodepth x numjobs, where every point has the same

    @property
    def one_in_flight(self) -> bool:
        """A device-count sweep at one I/O in flight: more members cannot help."""
        return self.axis == "device_count" and self.in_flight == 1

    @property
    def figures(self) -> list[Figure]:
        return [f for _, f in self.steps]

    @cached_property
    def stop(self) -> tuple[int, Figure, Figure] | None:
        """Where the curve stops paying (`_stop`), worked out once a sweep."""
        return _stop(self)

    @cached_property
    def at(self) -> str:
        """Where in its family the sweep runs: its first point without the swept axis
        ("iodepth=8" for a numjobs sweep at iodepth 8); "" for a workload of its own."""
        point = self.steps[0][1].point
        return re.sub(rf"(^| ){re.escape(self.axis)}=\S+", "", point).strip()

    @property
    def who(self) -> str:
        return f"{self.setup} at {self.at}" if self.at else self.setup


def _factor(low: int, before: Figure, high: int, after: Figure) -> float:
    return float((after.median / before.median) ** (1 / math.log2(high / low)))


def beyond_noise(before: Figure, after: Figure) -> bool | None:
    """Whether two points differ beyond their 95% intervals (Welch's); None where either
    has one repetition (no interval: the step is indicative)."""
    if len(before.values) < 2 or len(after.values) < 2:
        return None
    return _significant(before.values, after.values)


@functools.lru_cache(maxsize=4096)
def _significant(before: tuple[float, ...], after: tuple[float, ...]) -> bool | None:
    """Welch's verdict on two points' repetitions, worked out once a pair: a sweep's
    sentence asks it of each pair several times (where it stops, whether within the noise,
    each step's words)."""
    return compare(list(before), list(after)).significant


def _pays(low: int, before: Figure, high: int, after: Figure) -> bool:
    """A later point that beats an earlier one by 10% a doubling, beyond the noise."""
    return _factor(low, before, high, after) >= STOPS and beyond_noise(before, after) is not False


def _stop(sweep: Sweep) -> tuple[int, Figure, Figure] | None:
    """The first value that no later point beats by 10% a doubling beyond the noise, its
    figure, and the curve's best figure past it; None where the last step still pays."""
    steps = sweep.steps
    for at, (low, before) in enumerate(steps[:-1]):
        later = steps[at + 1 :]
        if not any(_pays(low, before, high, after) for high, after in later):
            best = max(later, key=lambda step: step[1].median)[1]
            return low, before, best
    return None


def _best(sweep: Sweep) -> tuple[int, Figure]:
    return max(sweep.steps, key=lambda step: step[1].median)


def _indicative(sweep: Sweep) -> str:
    """ "; indicative: one repetition a point, no interval" where the steps have none."""
    steps = sweep.steps
    if any(beyond_noise(a, b) is None for (_, a), (_, b) in itertools.pairwise(steps)):
        return "; indicative: one repetition a point, no interval to judge the steps by"
    return ""


def _end(sweep: Sweep) -> str:
    """How the sentence ends: where the curve stops paying and its best point, or that it
    still grows, or that one I/O in flight cannot use more members."""
    first, last = sweep.steps[0], sweep.steps[-1]
    if sweep.one_in_flight:
        return (
            "one I/O in flight (iodepth x numjobs = 1) uses one member at a time, so more "
            f"devices cannot help at this load ({first[1].shown} → {last[1].shown}: noise)"
        )
    stop = sweep.stop
    if stop is None:
        return f"still growing up to {sweep.axis}={last[0]}"
    value, figure = _best(sweep)
    best = "" if value == stop[0] else f" (best: {sweep.axis}={value}, {figure.shown})"
    if _noisy(sweep, stop[0]):  # a gain that would pay, but within the noise
        return f"no gain beyond the noise past {sweep.axis}={stop[0]}{best}"
    return f"it stops paying past {sweep.axis}={stop[0]}{best}"


def _noisy(sweep: Sweep, low: int) -> bool:
    """Whether a later point beats the one at `low` by 10% a doubling, but within the noise."""
    before = dict(sweep.steps)[low]
    return any(
        _factor(low, before, high, after) >= STOPS and beyond_noise(before, after) is False
        for high, after in sweep.steps
        if high > low
    )


def _step(low: int, before: Figure, high: int, after: Figure) -> str:
    factor = _factor(low, before, high, after)
    noise = " within the noise" if beyond_noise(before, after) is False else ""
    return f"×{factor:.2f}{noise} from {low} to {high} ({before.shown} → {after.shown})"


def _gain(sweep: Sweep) -> float:
    """The whole sweep's gain, first value to last, in percent."""
    first, last = sweep.steps[0][1].median, sweep.steps[-1][1].median
    return abs(100 * (last / first - 1)) if first > 0 else 0.0


def _flat_of(sweep: Sweep, flats: Sequence[Flat]) -> Flat | None:
    """The flat-scaling warning about this sweep: the same axis, set-ups and workloads."""
    setups = set(sweep.setup.split(" / "))
    workloads = {f.workload for f in sweep.figures}
    return next(
        (
            w
            for w in flats
            if w.axis == sweep.axis and set(w.setups) == setups and set(w.workloads) == workloads
        ),
        None,
    )


def growth(sweep: Sweep, flat: Flat | None = None) -> Finding:
    """The gain per doubling from each value of the sweep to the next; where flat-scaling
    found it flat, the limit it names."""
    parts = [
        _step(low, before, high, after)
        for (low, before), (high, after) in itertools.pairwise(sweep.steps)
    ]
    end = _end(sweep) + _indicative(sweep)
    if flat is not None:
        end += f"; flat from {sweep.axis}={flat.low} (limit: {flat.limit})"
    figures = sweep.figures
    start, close = figures[0].workload, figures[-1].workload
    where = start if start == close else f"{start} → {close}"
    head = f"{sweep.setup} · {where}: "
    said = f"{head}per doubling of {sweep.axis}, {figures[0].unit} {', '.join(parts)}; {end}"
    # the short form: the curve's ends and where it stops, not every step
    brief = (
        f"{head}{figures[0].unit} {figures[0].shown} → {figures[-1].shown} over {sweep.axis} "
        f"{sweep.steps[0][0]} to {sweep.steps[-1][0]}; {end}"
    )
    cells = tuple((f.workload, f.setup) for f in figures)
    return Finding(
        "scaling",
        f"{said}{but(figures)}.",
        sum(len(f.values) for f in figures),
        None,
        cells,
        warned_of(figures),
        effect=_gain(sweep),
        group=f"{figures[0].group} · {sweep.axis}",
        plain=f"{brief}.",
    )


def scaling(flat: CheckWarning) -> Finding:
    """A flat-scaling warning no sweep of the findings holds, as it was said."""
    return Finding("scaling", flat.message, 0, None, (), group=Code.FLAT_SCALING)


def sweep_findings(sweeps: Sequence[Sweep], flats: Sequence[CheckWarning]) -> list[Finding]:
    """One finding per workload family and axis (a sweep alone keeps its per-doubling
    sentence), flat-scaling folded in; a flat-scaling warning that belongs to no sweep
    shown is said as it is."""
    typed = [w for w in flats if isinstance(w, Flat)]
    by_group: dict[tuple[str, str, str], list[Sweep]] = {}
    for sweep in sweeps:
        first = sweep.steps[0][1]
        by_group.setdefault((first.group, sweep.axis, first.unit), []).append(sweep)
    found = []
    used: list[CheckWarning] = []
    for (group, axis, unit), members in by_group.items():
        folded = {id(s): _flat_of(s, typed) for s in members}
        used += [w for w in folded.values() if w is not None]
        if len(members) == 1:
            found.append(growth(members[0], folded[id(members[0])]))
        else:
            found.append(_family(group, axis, unit, members, [*folded.values()]))
    found += [scaling(w) for w in flats if w not in used]
    return found


def _family(
    group: str, axis: str, unit: str, sweeps: Sequence[Sweep], flats: Sequence[Flat | None]
) -> Finding:
    """Several sweeps of one family over one axis: where each stops paying, grouped by that
    value, which still grow, and the limits flat-scaling named."""
    stops: dict[int, list[str]] = {}
    noisy: dict[int, list[str]] = {}
    growing, single = [], []
    for sweep in sweeps:
        first, last = sweep.steps[0][1], sweep.steps[-1][1]
        stop = sweep.stop
        if sweep.one_in_flight:
            single.append(f"{sweep.who} ({first.shown} → {last.shown})")
        elif stop is None:
            growing.append(f"{sweep.who} ({first.shown} → {last.shown})")
        else:
            low, before, best = stop
            kept = noisy if _noisy(sweep, low) else stops
            kept.setdefault(low, []).append(f"{sweep.who} ({before.shown} → {best.shown})")
    limits: dict[str, list[str]] = {}
    for sweep, flat in zip(sweeps, flats, strict=True):
        if flat is not None:
            limits.setdefault(flat.limit, []).append(sweep.who)

    def clauses(most: int) -> str:
        """The sentence's clauses, each naming at most `most` sweeps ("and N more")."""
        out = [f"past {axis}={low} on {some(stops[low], most)}" for low in sorted(stops)]
        out[:1] = [f"stops paying {clause}" for clause in out[:1]]
        out += [
            f"no gain beyond the noise past {axis}={n} on {some(noisy[n], most)}" for n in noisy
        ]
        if growing:
            top = max(s.steps[-1][0] for s in sweeps)
            out.append(f"still growing up to {axis}={top} on {some(growing, most)}")
        if single:
            out.append(
                f"one I/O in flight, so more devices cannot help, on {some(single, most)} (noise)"
            )
        if limits:
            named = "; ".join(f"{limit} on {some(who, most)}" for limit, who in limits.items())
            out.append(f"where flat, the limit: {named}")
        head = f"{group}, per doubling of {axis} ({unit}): "
        return head + "; ".join(out) + next((_indicative(s) for s in sweeps if _indicative(s)), "")

    said = clauses(3)
    figures = [f for s in sweeps for f in s.figures]
    cells = tuple(dict.fromkeys((f.workload, f.setup) for f in figures))
    return Finding(
        "scaling",
        f"{said}{but(figures)}.",
        sum(len(f.values) for f in figures),
        None,
        cells,
        warned_of(figures),
        effect=max(_gain(s) for s in sweeps),
        group=f"{group} · {axis}",
        plain=f"{clauses(1)}.",  # the short form's: one sweep named per clause
        points=tuple(growth(s, f) for s, f in zip(sweeps, flats, strict=True)),
    )
