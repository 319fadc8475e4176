"""One set-up's record in a run, typed: what the runner learns of it as its cases go (the
target and what the builder made, the RAID card, the preconditioning, the steady rounds, the
peak and curve searches), saved and loaded whole by the store.

The store keeps it as the JSON it always kept (the setups table's `environment`), under the
keys "target", "layout", "log", "controller", "precondition", "steady_rounds",
"peak_search", "drives" and "drive_cache": `codec.from_json(SetupRecord, ...)` reads what any iolab
version stored, and `codec.to_json` writes those keys, so a database written before the
record was typed reads the same.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace

from iolab.model import JSONObject, PeakRecord, SteadyRecord, codec
from iolab.model.codec import spec
from iolab.model.drive import CacheSetting, DriveLog
from iolab.model.facts import LayoutFacts, LogLine, SetupFacts, TargetFacts

_PART = spec(omit="none", tolerant=True)


@dataclass(frozen=True)
class Fill:
    """One preconditioning job that filled the target: what it wrote, in how long, how fast."""

    job: str
    written_bytes: int
    seconds: float
    bw_bytes: float


@dataclass(frozen=True)
class SetupRecord:
    """Everything a run recorded about one of its set-ups. Read tolerantly: a part that is
    absent or damaged is left empty (a damaged fill or search is left out, the others kept)."""

    # target, layout, the builder's log: their keys at the top of the record
    facts: SetupFacts = field(default_factory=SetupFacts, metadata=spec(spread=True))
    # the card and its drive as the card's tool read them
    controller: JSONObject | None = field(default=None, metadata=_PART)
    precondition: tuple[Fill, ...] = field(default=(), metadata=spec(omit="empty", tolerant=True))
    steady: SteadyRecord | None = field(  # what [steady] rounds found
        default=None, metadata=spec("steady_rounds", omit="none", tolerant=True)
    )
    searches: Mapping[str, PeakRecord] = field(  # by workload
        default_factory=dict, metadata=spec("peak_search", omit="empty", tolerant=True)
    )
    # its drives' own account, read after it was built and after each case
    drives: DriveLog | None = field(default=None, metadata=_PART)
    # a plain disk's own write cache, as set and read back (drive_cache)
    drive_cache: tuple[CacheSetting, ...] = field(
        default=(), metadata=spec(omit="empty", tolerant=True)
    )


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

    def drive_cache(self, settings: Iterable[CacheSetting]) -> None:
        self.set(replace(self.record, drive_cache=tuple(settings)))

    def drives(self, log: DriveLog) -> None:
        self.set(replace(self.record, drives=log))

    def filled(self, fills: Iterable[Fill]) -> None:
        self.set(replace(self.record, precondition=tuple(fills)))

    def __call__(self, data: JSONObject) -> None:
        """The steady rounds' record ("steady_rounds") or the searches' ("peak_search"), as
        runner.repeats and runner.search hand them."""
        given, now = codec.from_json(SetupRecord, data, "a method's record"), self.record
        steady = given.steady if "steady_rounds" in data else now.steady
        searches = given.searches if "peak_search" in data else now.searches
        self.set(replace(now, steady=steady, searches=searches))
