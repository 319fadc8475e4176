"""One set-up's record in a run, typed: what the runner learns of it as its cases go (the
target and what the builder made, the RAID card, the preconditioning, the steady rounds, the
peak and curve searches), saved and loaded whole by the store.

The store keeps it as the JSON it always kept (the setups table's `environment`), under the
keys "target", "layout", "log", "controller", "precondition", "steady_rounds" and
"peak_search": `SetupRecord.from_json` reads what any iolab version stored, and `to_json`
writes those keys, so a database written before the record was typed reads the same.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import TypeVar

from iolab.errors import JSONShapeError
from iolab.model import JSONObject, PeakRecord, SteadyRecord, codec
from iolab.targets.facts import JSONDict, LayoutFacts, LogLine, SetupFacts, TargetFacts

T = TypeVar("T")


@dataclass(frozen=True)
class Fill:
    """One preconditioning job that filled the target: what it wrote, in how long, how fast."""

    job: str
    written_bytes: int
    seconds: float
    bw_bytes: float

    @classmethod
    def from_json(cls, data: object) -> Fill | None:
        """As stored; None for anything else (a damaged or foreign value)."""
        if not isinstance(data, Mapping):
            return None
        try:
            return cls(
                str(data["job"]), int(data["written_bytes"]), float(data["seconds"]),
                float(data["bw_bytes"]),
            )  # fmt: skip
        except (KeyError, TypeError, ValueError):
            return None


@dataclass(frozen=True)
class SetupRecord:
    """Everything a run recorded about one of its set-ups."""

    facts: SetupFacts = field(default_factory=SetupFacts)  # target, layout, the builder's log
    controller: JSONObject | None = None  # the card and its drive as the card's tool read them
    precondition: tuple[Fill, ...] = ()
    steady: SteadyRecord | None = None  # what [steady] rounds found
    searches: Mapping[str, PeakRecord] = field(default_factory=dict)  # by workload

    def to_json(self) -> JSONDict:
        out = self.facts.to_json()
        if self.controller is not None:
            out["controller"] = dict(self.controller)
        if self.precondition:
            out["precondition"] = [asdict(fill) for fill in self.precondition]
        if self.steady is not None:
            out["steady_rounds"] = codec.to_json(self.steady)
        if self.searches:
            out["peak_search"] = {name: codec.to_json(r) for name, r in self.searches.items()}
        return out

    @classmethod
    def from_json(cls, data: JSONObject) -> SetupRecord:
        """What any version stored; a part it lacks, or one that is damaged, is left empty
        (a damaged fill or search is left out, the others kept)."""
        controller, fills = data.get("controller"), data.get("precondition")
        return cls(
            SetupFacts.from_json(data),
            controller if isinstance(controller, Mapping) else None,
            tuple(f for f in map(Fill.from_json, fills) if f) if isinstance(fills, list) else (),
            _kept(SteadyRecord, data.get("steady_rounds")),
            _searches(data.get("peak_search")),
        )


def _kept(cls: type[T], data: object) -> T | None:
    """`data` read as a `cls`; None where it is absent or damaged."""
    try:
        return codec.from_json(cls, data, "a set-up's record")
    except JSONShapeError:
        return None


def _searches(data: object) -> dict[str, PeakRecord]:
    if not isinstance(data, Mapping):
        return {}
    found = {str(name): _kept(PeakRecord, record) for name, record in data.items()}
    return {name: record for name, record in found.items() if record is not None}


class Recorder:
    """One set-up's record as its run goes: each change saved whole (by `save`: the store's)."""

    def __init__(self, save: Callable[[SetupRecord], None]) -> None:
        self.record = SetupRecord()
        self._save = save

    def set(self, record: SetupRecord) -> None:
        self.record = record
        self._save(record)

    def target(self, target: TargetFacts) -> None:
        self.set(replace(self.record, facts=replace(self.record.facts, target=target)))

    def built(self, layout: LayoutFacts, log: Iterable[LogLine]) -> None:
        """What the builder made, and the commands it ran."""
        facts = replace(self.record.facts, layout=layout, log=tuple(log))
        self.set(replace(self.record, facts=facts))

    def controller(self, card: JSONObject) -> None:
        self.set(replace(self.record, controller=card))

    def filled(self, fills: Iterable[Fill]) -> None:
        self.set(replace(self.record, precondition=tuple(fills)))

    def __call__(self, data: JSONObject) -> None:
        """The steady rounds' record ("steady_rounds") or the searches' ("peak_search"), as
        runner.repeats and runner.search hand them."""
        given, now = SetupRecord.from_json(data), self.record
        steady = given.steady if "steady_rounds" in data else now.steady
        searches = given.searches if "peak_search" in data else now.searches
        self.set(replace(now, steady=steady, searches=searches))
