"""What `iolab import` is told of set-ups beyond their figures: their factors (a published
table's set-up columns, `--factor [SETUP=]NAME=VALUE`), and tables of percentages (study E's
Write Back over Write Through) as a run of Ratios of `--setup` against `--baseline`."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path

from iolab import names
from iolab.errors import PlanError
from iolab.exchange import published
from iolab.exchange.found_jobs import UnreadableJob
from iolab.exchange.run_builder import BuiltRun
from iolab.model import Origin, Plan, Ratio, Setup

Factors = tuple[tuple[str, str], ...]
ByName = Mapping[str, Factors]  # by set-up name; "": every set-up's


def check_named(factors: ByName, have: Sequence[str]) -> None:
    """Every set-up --factor names is one the import has (PlanError naming those it has)."""
    missing = [name for name in factors if name and name not in have]
    if missing:
        raise PlanError(
            f"--factor names set-up {names.shown(missing[0])!r}, which this import does not have; "
            f"its set-ups are {', '.join(map(repr, have)) or 'none'}"
        )


def of(factors: ByName, setup: str) -> Factors:
    """A set-up's factors: every set-up's, then its own (a later value of a name wins)."""
    return tuple({**dict(factors.get("", ())), **dict(factors.get(setup, ()))}.items())


def with_factors(
    built: BuiltRun, tables: Mapping[tuple[str, Path], Factors], flags: ByName
) -> BuiltRun:
    """The set-ups with their factors: a table's own, then --factor's."""
    every = dict(_tables(tables, {s.name for s in built.plan.setups}))
    for name, found in flags.items():
        every[name] = (*every.get(name, ()), *found)
    if not every:
        return built
    setups = {
        s.name: dataclasses.replace(s, factors=(*s.factors, *of(every, s.name)))
        for s in built.plan.setups
    }
    results = tuple(
        (
            dataclasses.replace(
                r, case=dataclasses.replace(r.case, setup=setups[r.case.setup.name])
            ),
            position,
        )
        for r, position in built.results
    )
    plan = dataclasses.replace(built.plan, setups=tuple(setups.values()))
    return dataclasses.replace(built, plan=plan, results=results)


def _tables(tables: Mapping[tuple[str, Path], Factors], built: set[str]) -> dict[str, Factors]:
    """The tables' factors by the set-up names the run has: a name several tables share is
    told apart by its file's name ("Areca 1680i RAID0 of 4 (C_dd)", as build names it)."""
    found = {}
    for (setup, path), factors in tables.items():
        apart = f"{setup} ({names.shown(path.stem)})"
        found[apart if apart in built else setup] = factors
    return found


def ratios(text: str, setup: str | None, baseline: str | None) -> list[Ratio]:
    """A table of percentages as Ratios of --setup against --baseline; UnreadableJob (that file's
    line) when either is not given, or they are one set-up."""
    if setup is None or baseline is None:
        raise UnreadableJob(
            "a table of percentages (one set-up's figures as a share of another's): give the "
            "set-up it describes and the one it is relative to, --setup NAME --baseline NAME"
        )
    if setup == baseline:
        raise UnreadableJob("a table of percentages: --setup and --baseline name one set-up")
    found = published.ratios(text)
    for ratio in found:
        try:
            names.check(ratio.workload)
        except names.BadName as error:
            raise UnreadableJob(f"workload name {error}") from None
    return [dataclasses.replace(r, setup=setup, baseline=baseline) for r in found]


def ratio_run(path: Path, digest: str, found: Sequence[Ratio], factors: ByName) -> RatioRun:
    """A table of percentages as a run of its own: the set-up it describes and its baseline,
    no case."""
    setup, baseline = found[0].setup, found[0].baseline
    setups = tuple(Setup(name, factors=of(factors, name)) for name in (setup, baseline))
    plan = Plan(
        name=f"published {path.name}",
        description=f"{setup}'s figures as a share of {baseline}'s, from {path}",
        origin="import",
        source="import",
        text=f"{path}\n",
        setups=setups,
        workloads=(),
    )
    origin = Origin("import", (str(path),), "published", "", (digest,))
    workloads = len({r.workload for r in found})
    said = (
        f"{len(found)} figures of {setup} relative to {baseline} ({workloads} workloads) from "
        f"{path} (published shares, not measurements)"
    )
    return RatioRun(plan, origin, said)


@dataclasses.dataclass(frozen=True)
class RatioRun:
    plan: Plan
    origin: Origin
    said: str  # a line saying what the run holds, after "run N: "
