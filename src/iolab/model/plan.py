"""A validated plan and what it expands to: methods, workloads, cases, hosts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from iolab.model.common import (
    FioValue,
    MethodKind,
    stable_hash,
)
from iolab.model.setup import Setup


@dataclass(frozen=True)
class Method:
    """How iolab searches a workload (`method = "peak"` or `"curve"`, plan.methods and
    runner.search), kept apart from fio's options: the search's bounds, the margin a step
    must beat (as the plan gave it), and which of the search's own cases this one is."""

    kind: MethodKind
    numjobs: tuple[int, int]
    iodepth: tuple[int, int]
    margin: FioValue | None = None  # "3%" or 0.03 as given; None: analysis.peak's default
    again: bool = False  # the start point measured again after the search
    curve_load: int | None = None  # a curve point: the load asked, percent of the peak
    slo: str = ""  # a curve's latency target, "p99<=2ms": the most IOPS within it is found

    def recorded(self) -> dict[str, FioValue]:
        """The method as a stored case's options carry it (and `iolab show` prints it)."""
        out: dict[str, FioValue] = {"method": self.kind}
        if self.margin is not None:
            out["peak_margin"] = self.margin
        out["peak_numjobs"] = "{}-{}".format(*self.numjobs)
        out["peak_iodepth"] = "{}-{}".format(*self.iodepth)
        if self.again:
            out["peak_again"] = 1
        if self.curve_load is not None:
            out["curve_load"] = self.curve_load
        if self.slo:
            out["slo"] = self.slo
        return out


@dataclass(frozen=True)
class Workload:
    """One point of a workload sweep: fio options with single values (and how iolab searches
    it, for a method workload)."""

    name: str
    options: Mapping[str, FioValue]
    axes: tuple[str, ...] = ()
    table: int = 0  # which [[workload]] of the plan it comes from
    method: Method | None = None

    def get(self, key: str, default: FioValue | None = None) -> FioValue | None:
        return self.options.get(key, default)

    @property
    def recorded(self) -> dict[str, FioValue]:
        """fio's options and the method's keys, as the store keeps them with each case."""
        extra = self.method.recorded() if self.method is not None else {}
        return {**self.options, **extra}


@dataclass(frozen=True)
class Case:
    """One set-up x one workload point x one repetition."""

    setup: Setup
    workload: Workload
    repetition: int

    @property
    def key(self) -> str:
        return stable_hash(
            {
                "setup": self.setup.definition(),
                "workload": self.workload.name,
                "options": self.workload.recorded,
                "repetition": self.repetition,
            }
        )


@dataclass(frozen=True)
class AutoRepeat:
    """`repeat = "auto"`: repeat each case past the plan's first repetitions until the 95%
    interval's half-width is within `target` of the mean, or `most` repetitions ran."""

    target: float = 0.02
    most: int = 10


@dataclass(frozen=True)
class SteadyRounds:
    """A plan's `[steady]` table: its workloads run in rounds until the tracked one is steady
    over the last `window` rounds (SNIA PTS; see analysis.steady), at most `most` rounds."""

    track: str  # the workload point judged
    window: int = 5
    data_excursion: float = 0.20
    slope_excursion: float = 0.10
    most: int = 25


@dataclass(frozen=True)
class Hosts:
    """The fio servers (fio --server) a plan's cases run on, every case on all at once."""

    addresses: tuple[str, ...]  # "host:port", as iolab shows and stores them
    lost_after_s: float = 30.0  # how long a host may stay silent after the others reported
    on_lost: Literal["continue", "stop"] = "continue"
    # a command that prints a host's `iolab env --json` ({host}, {path} filled in); () for none
    env_command: tuple[str, ...] = ()
    # "sum": the hosts are one subject (their aggregate); "each": every host is its own
    report: Literal["sum", "each"] = "sum"


@dataclass(frozen=True)
class ChartText:
    """An author's words for one chart of the report ([report.charts.<chart>]): its title and
    caption in place of iolab's ("" keeps iolab's)."""

    chart: str  # the chart's id: its name in the report (its image file's, its anchor's)
    title: str = ""
    caption: str = ""


@dataclass(frozen=True)
class Plan:
    """A validated plan: what to run, where, how often, and how to report it."""

    name: str
    description: str
    origin: str
    source: str
    text: str
    setups: tuple[Setup, ...]
    workloads: tuple[Workload, ...]
    repeat: int = 1
    baseline: str | None = None
    auto_repeat: AutoRepeat | None = None
    rounds: SteadyRounds | None = None
    metric: Literal["auto", "iops", "bw"] = "auto"
    hosts: Hosts | None = None
    check: tuple[tuple[str, float], ...] = ()  # [check]: (metric, allowed worsening in %)
    notes: tuple[str, ...] = ()  # what iolab did with the plan that the person should know
    charts: tuple[ChartText, ...] = ()  # [report.charts]: the author's chart titles, captions
    # "interleaved": each repetition a round of every set-up, in A B, B A order (ABBA)
    order: Literal["setups", "interleaved"] = "setups"

    @property
    def hash(self) -> str:
        return stable_hash(
            {
                "setups": [s.definition() for s in self.setups],
                "workloads": [[w.name, dict(w.options)] for w in self.workloads],
                "repeat": self.repeat,
                **({"auto": vars(self.auto_repeat)} if self.auto_repeat else {}),
                **({"rounds": vars(self.rounds)} if self.rounds else {}),
                **({"hosts": list(self.hosts.addresses)} if self.hosts else {}),
                **({"order": self.order} if self.order != "setups" else {}),
            }
        )

    def cases(self) -> list[Case]:
        """The matrix, set-up by set-up, so each set-up is provisioned once; in rounds mode
        round by round (every workload once per round); interleaved, repetition by
        repetition, the set-ups in the order `blocks` gives."""
        reps = range(1, self.repeat + 1)
        if self.order == "interleaved":
            return [
                Case(s, w, r) for s, r in self.blocks() if r is not None for w in self.workloads
            ]
        if self.rounds:
            return [Case(s, w, r) for s in self.setups for r in reps for w in self.workloads]
        return [Case(s, w, r) for s in self.setups for w in self.workloads for r in reps]

    def blocks(self) -> list[tuple[Setup, int | None]]:
        """What runs in one go, in order: each set-up once, all its cases (repetition None);
        interleaved, each set-up once per repetition, forward then backward (A B, B A, A B,
        ...), so that every set-up sees the same neighbours and drift, paired round by round."""
        if self.order != "interleaved":
            return [(s, None) for s in self.setups]
        out: list[tuple[Setup, int | None]] = []
        for r in range(1, self.repeat + 1):
            ordered = self.setups if r % 2 else tuple(reversed(self.setups))
            out += [(s, r) for s in ordered]
        return out
