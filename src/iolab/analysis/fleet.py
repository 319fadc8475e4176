"""A fleet: the same workload on many hosts, and the hosts that are not like the others.

The rule is Iglewicz and Hoaglin's modified z-score: per workload, the fleet's median and its
median absolute deviation (MAD); a host's robust z is 0.6745 (x - median) / MAD, and a host is
an outlier when |z| > 3.5 and it lies at least MIN_OFF (10%) from the median. A fleet of
equal hosts has a MAD near 0, where a host 3% off would be 3.5 z away: real, but not what a
fleet's owner acts on, and on a shared or busy machine hosts differ by that much from one
run to the next. The MAD has a floor of 1% of the median (no division by 0). It needs
OUTLIER_MIN_HOSTS hosts: under that, "the majority" means little.

What differs: each host's inventory (`iolab env --json`, read over SSH) reduced to the facts
that set a storage figure (device model and firmware, kernel, fio version, CPU governor,
filesystem, mount options, scheduler; its first disk's own account: drive model and firmware,
and its temperature); an outlier's facts that differ from the majority's are said beside it
("its scheduler is none where 31 of 32 run mq-deadline"), and a drive HOTTER_C or more above
the fleet's median temperature ("its drive is at 71 °C where the fleet's median is 35 °C").
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

Z_SCALE = 0.6745  # the normal's MAD over its standard deviation
Z_LIMIT = 3.5  # Iglewicz and Hoaglin's cut
MAD_FLOOR = 0.01  # of the median
MIN_OFF = 0.10  # an outlier lies at least this far from the median, as a share of it
OUTLIER_MIN_HOSTS = 5
# the inventory facts compared, in the order they are said: (name, where in iolab env --json)
FACTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("device model", ("target", "device", "model")),
    ("firmware", ("target", "device", "firmware")),
    ("kernel", ("host", "kernel")),
    ("fio version", ("host", "fio_version")),
    ("CPU governor", ("host", "governor")),
    ("filesystem", ("target", "filesystem", "fstype")),
    ("mount options", ("target", "filesystem", "options")),
    ("scheduler", ("target", "device", "scheduler")),
    ("drive model", ("health", "model")),  # the first disk's own account (smartctl)
    ("drive firmware", ("health", "firmware")),
)
HOTTER_C = 10  # a drive this much above the fleet's median temperature is named


@dataclass(frozen=True)
class FleetSpread:
    """A workload's figures over the fleet: median, MAD (floored), range, host count."""

    median: float
    mad: float  # as measured
    scale: float  # the MAD the z-scores divide by: at least MAD_FLOOR of the median
    low: float
    high: float
    count: int


@dataclass(frozen=True)
class Outlier:
    """A host far from the fleet in one workload, and what differs in its inventory."""

    setup: str
    workload: str
    host: str
    value: float
    unit: str
    spread: FleetSpread
    z: float
    differs: tuple[str, ...] = ()
    known: bool = False  # whether the host's inventory was read (host_env)

    @property
    def off(self) -> float:
        """How far from the median, as a fraction of it (-0.41: 41% below)."""
        return self.value / self.spread.median - 1 if self.spread.median else 0.0


def spread(values: Sequence[float]) -> FleetSpread | None:
    """The fleet's median and MAD; None without a figure."""
    if not values:
        return None
    middle = statistics.median(values)
    mad = statistics.median(abs(v - middle) for v in values)
    scale = max(mad, MAD_FLOOR * abs(middle))
    return FleetSpread(middle, mad, scale, min(values), max(values), len(values))


def robust_z(value: float, found: FleetSpread) -> float:
    """Iglewicz and Hoaglin's modified z-score of one host (0 where the fleet is all 0)."""
    return Z_SCALE * (value - found.median) / found.scale if found.scale > 0 else 0.0


def far(figures: Mapping[str, float]) -> list[tuple[str, float]]:
    """The hosts whose |robust z| is over Z_LIMIT and that lie MIN_OFF or more from the
    median, with their z, furthest first; none under OUTLIER_MIN_HOSTS hosts."""
    found = spread(list(figures.values()))
    if found is None or found.count < OUTLIER_MIN_HOSTS:
        return []
    scored = [
        (host, robust_z(value, found))
        for host, value in figures.items()
        if abs(value - found.median) >= MIN_OFF * abs(found.median)
    ]
    return sorted([(h, z) for h, z in scored if abs(z) > Z_LIMIT], key=lambda hz: -abs(hz[1]))


@dataclass(frozen=True)
class Inventory:
    """The facts of one host that set a storage figure (None: not known)."""

    host: str
    facts: tuple[tuple[str, str | None], ...]
    temperature_c: float | None = None  # its first disk's, where smartctl read it

    def get(self, name: str) -> str | None:
        return dict(self.facts).get(name)


def inventory(host: str, environment: object) -> Inventory:
    """A host's facts from its `iolab env --json` document (anything else: none known)."""
    document = dict(environment) if isinstance(environment, Mapping) else {}
    document["health"] = _health(environment)  # ours, whatever the document holds there
    facts = tuple((name, _dig(document, path)) for name, path in FACTS)
    temperature = _health(environment).get("temperature_c")
    hot = temperature if isinstance(temperature, int | float) else None
    return Inventory(host, facts, None if isinstance(hot, bool) else hot)


def _health(environment: object) -> Mapping[str, object]:
    """The first disk's own account in an `iolab env --json` document ({} if none)."""
    target = environment.get("target") if isinstance(environment, Mapping) else None
    if not isinstance(target, Mapping):
        return {}
    disks, devices = target.get("disks"), target.get("devices")
    if not isinstance(disks, list) or not disks or not isinstance(devices, Mapping):
        return {}
    device = devices.get(str(disks[0]))
    health = device.get("health") if isinstance(device, Mapping) else None
    return health if isinstance(health, Mapping) else {}


def _dig(document: object, path: tuple[str, ...]) -> str | None:
    for key in path:
        if not isinstance(document, Mapping):
            return None
        document = document.get(key)
    if document is None or isinstance(document, Mapping | list):
        return None
    return str(document)


def differs(host: str, fleet: Sequence[Inventory]) -> tuple[str, ...]:
    """What `host` has that the majority of the hosts (known in that fact) has not: "its
    scheduler is none where 31 of 32 run mq-deadline"."""
    own = next((inv for inv in fleet if inv.host == host), None)
    if own is None:
        return ()
    said = []
    for name, _ in FACTS:
        mine = own.get(name)
        known = Counter(v for inv in fleet if (v := inv.get(name)) is not None)
        if mine is None or len(known) < 2:
            continue
        common, count = known.most_common(1)[0]
        if common != mine and count * 2 > sum(known.values()):
            verb = "are" if name.endswith("s") else "is"
            said.append(
                f"its {name} {verb} {mine} where {count} of {sum(known.values())} run {common}"
            )
    return (*said, *_hotter(own, fleet))


def _hotter(own: Inventory, fleet: Sequence[Inventory]) -> list[str]:
    """Its drive HOTTER_C or more above the fleet's median temperature."""
    known = [inv.temperature_c for inv in fleet if inv.temperature_c is not None]
    if own.temperature_c is None or len(known) < 2:
        return []
    median = statistics.median(known)
    if own.temperature_c - median < HOTTER_C:
        return []
    return [f"its drive is at {own.temperature_c:g} °C where the fleet's median is {median:g} °C"]


def outliers(
    setup: str, workload: str, unit: str, figures: Mapping[str, float], fleet: Sequence[Inventory]
) -> list[Outlier]:
    """The workload's outlier hosts on a set-up, each with what differs in its inventory."""
    found = spread(list(figures.values()))
    if found is None:
        return []
    known = {inv.host for inv in fleet if any(value is not None for _, value in inv.facts)}
    return [
        Outlier(
            setup,
            workload,
            host,
            figures[host],
            unit,
            found,
            z,
            differs(host, fleet),
            host in known,
        )
        for host, z in far(figures)
    ]
