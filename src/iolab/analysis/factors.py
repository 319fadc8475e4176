"""Findings per factor: where set-ups carry named factors (a card, a RAID level, a cache
policy), what one factor's level does to a workload's figure with every other factor held.

For a factor and two of its levels (each level against each later one, in the order the
plan or table gives them), each workload's set-ups are paired where all their other factors are
equal (the same card and level, say: "write-back" against "write-through"). A workload where
every pair moves the same way, each by at least CONSISTENT (10%), and, with repetitions, each
pair's difference significant (Welch's 95% interval excludes 0), is a consistent effect; it
needs two pairs or more ("on every card" over one card is a winner line, not a factor's).
One sentence per factor, pair of levels and direction, naming its workloads, the typical
ratio (the geometric mean of the pairs' ratios of medians) and its range:
"policy=write-back helps 4k rw=randwrite about 3.0x over policy=write-through on every
card (2.6x-3.4x; 3 pairs)". A pair's cells are the results table's, so every figure a finding
rests on is one the report shows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from iolab import names
from iolab.analysis.findings import Figure, Finding
from iolab.analysis.stats import compare
from iolab.model import CheckWarning
from iolab.names import and_list


class BadPivot(ValueError):
    """A pivot's text that is not ROWS:COLUMNS of factor names; str(error) says how."""


@dataclass(frozen=True)
class Pivot:
    """Which factors lay a pivot table out: rows (one or more) and columns (one or more)."""

    rows: tuple[str, ...]
    columns: tuple[str, ...]

    @property
    def said(self) -> str:
        return f"{', '.join(self.rows)} by {', '.join(self.columns)}"


def pivot(text: str) -> Pivot:
    """'card,level:policy' -> rows (card, level), columns (policy); each name by the rule of
    names (names.factor), each once."""
    rows_text, colon, columns_text = text.partition(":")
    if not colon:
        raise BadPivot("give ROWS:COLUMNS, factors parted by commas, e.g. card,level:policy")
    rows, columns = _factor_names(rows_text), _factor_names(columns_text)
    every = (*rows, *columns)
    if len(set(every)) < len(every):
        raise BadPivot("name each factor once")
    return Pivot(rows, columns)


def _factor_names(part: str) -> tuple[str, ...]:
    found = []
    for item in part.split(","):
        try:
            found.append(names.factor(item))
        except names.BadName as error:
            raise BadPivot(f"a factor's name {error}") from None
    return tuple(found)


CONSISTENT = 1.10  # every pair at least 10% apart, the same way: a factor's effect
MOST_NAMED = 3  # workloads named in a sentence; the rest counted
Factors = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Pair:
    """One workload on two set-ups that differ in one factor only: `base` at the reference
    level, `other` at the level compared with it."""

    base: Figure
    other: Figure

    @property
    def ratio(self) -> float:
        return self.other.median / self.base.median

    @property
    def holds(self) -> bool:
        """Apart by CONSISTENT or more, and not within the noise where there is an interval."""
        if max(self.ratio, 1 / self.ratio) < CONSISTENT:
            return False
        return compare(self.base.values, self.other.values).significant is not False


@dataclass(frozen=True)
class Effect:
    """A factor's level against its reference level, on the workloads where it held."""

    factor: str
    base: str
    level: str
    held: tuple[str, ...]  # the other factors held equal, by name
    pairs: tuple[Pair, ...]


def findings(figures: Sequence[Figure], factors: Mapping[str, Factors]) -> list[Finding]:
    """Each factor's consistent effects (see the module's words); `factors`: each set-up's
    (by its label in the results table); set-ups without factors take no part."""
    found = []
    for name in _shared(factors):
        levels = list(dict.fromkeys(dict(f)[name] for f in factors.values()))
        for index, base in enumerate(levels):
            for level in levels[index + 1 :]:
                found += [_said(e) for e in _effects(figures, factors, name, base, level)]
    return found


def _shared(factors: Mapping[str, Factors]) -> list[str]:
    """The factors every set-up with factors names, in the order they are given."""
    given = [f for f in factors.values() if f]
    if len(given) < 2:
        return []
    names = [k for k, _ in given[0]]
    return [n for n in names if all(n in dict(f) for f in given)]


def _effects(
    figures: Sequence[Figure], factors: Mapping[str, Factors], name: str, base: str, level: str
) -> list[Effect]:
    """The workloads where `level` moves the figure one way against `base` on every pair,
    grouped by that way (up, down)."""
    others = tuple(k for k, _ in next(f for f in factors.values() if f) if k != name)
    ways: dict[bool, list[Pair]] = {}
    for workload in dict.fromkeys(f.workload for f in figures):
        pairs = _pairs([f for f in figures if f.workload == workload], factors, name, base, level)
        if len(pairs) >= 2 and all(p.holds for p in pairs):
            up = {p.ratio > 1 for p in pairs}
            if len(up) == 1:
                ways.setdefault(up.pop(), []).extend(pairs)
    return [Effect(name, base, level, others, tuple(p)) for _, p in sorted(ways.items())]


def _pairs(
    figures: Sequence[Figure], factors: Mapping[str, Factors], name: str, base: str, level: str
) -> list[Pair]:
    """One workload's set-ups at `base` and at `level` with all other factors equal."""

    def rest(setup: str) -> Factors:
        return tuple((k, v) for k, v in factors.get(setup, ()) if k != name)

    at = {(dict(factors.get(f.setup, ())).get(name), rest(f.setup)): f for f in figures}
    return [
        Pair(found, other)
        for (value, held), found in at.items()
        if value == base
        and found.median > 0
        and (other := at.get((level, held))) is not None
        and other.median > 0
    ]


def _said(effect: Effect) -> Finding:
    ratios = [p.ratio for p in effect.pairs]
    typical = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    workloads = list(dict.fromkeys(p.base.workload for p in effect.pairs))
    named = and_list(workloads[:MOST_NAMED])
    if len(workloads) > MOST_NAMED:
        named = f"{', '.join(workloads[:MOST_NAMED])} and {len(workloads) - MOST_NAMED} more"
    up = typical > 1
    base = f"{effect.factor}={effect.base}"
    said = (
        f"helps {named} about {_times(typical)} over {base}"
        if up
        else (f"slows {named} to about {_times(typical)} of {base}'s")
    )
    every = f"on every {' and '.join(effect.held)}" if effect.held else "on every pair"
    sentence = (
        f"{effect.factor}={effect.level} {said} {every} ({_times(min(ratios))}-"
        f"{_times(max(ratios))}; {len(ratios)} pairs{_but(effect.pairs)})."
    )
    cells = tuple(
        dict.fromkeys((f.workload, f.setup) for p in effect.pairs for f in (p.base, p.other))
    )
    warned = _warned([f.warnings for p in effect.pairs for f in (p.base, p.other)])
    intervals = [compare(p.base.values, p.other.values).significant for p in effect.pairs]
    cases = sum(len(f.values) for p in effect.pairs for f in (p.base, p.other))
    return Finding("factor", sentence, cases, None if None in intervals else True, cells, warned)


def _times(ratio: float) -> str:
    """A ratio as people read it: 3.0x, 0.45x."""
    return f"{ratio:.1f}x" if ratio >= 1 else f"{ratio:.2f}x"


def _but(pairs: Sequence[Pair]) -> str:
    """ "; but 2 of these 6 figures carry warnings (published)": the reader must not miss it."""
    shown = list({(f.workload, f.setup): f for p in pairs for f in (p.base, p.other)}.values())
    codes = [w.code for w in _warned([f.warnings for f in shown])]
    if not codes:
        return ""
    warned = sum(1 for f in shown if f.warnings)
    return f"; but {warned} of these {len(shown)} figures carry warnings ({', '.join(codes)})"


def _warned(each: Sequence[tuple[CheckWarning, ...]]) -> tuple[CheckWarning, ...]:
    return tuple({w.code: w for warnings in each for w in warnings}.values())
