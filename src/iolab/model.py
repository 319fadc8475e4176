"""Plain value types that flow between the parts. No I/O here."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from iolab.usage import Telemetry

FioValue = str | int | float | bool
# What the store keeps as JSON (recorded environments, set-up definitions), typed as JSON:
# a reader narrows each value it reads (isinstance), nothing is Any.
JSON = None | bool | int | float | str | list["JSON"] | dict[str, "JSON"]
JSONObject = Mapping[str, JSON]
Direction = Literal["read", "write", "trim"]
Metric = Literal["iops", "bw", "lat"]
DIRECTIONS: tuple[Direction, ...] = ("read", "write", "trim")
METRICS: tuple[Metric, ...] = ("iops", "bw", "lat")
# A case's stretches: filling the target first, the ramp fio discards, the measured window
# (with fio's steady-state detection: the steady window), and the whole fio job around it.
Phase = Literal["precondition", "ramp", "measure", "job"]
PHASES: tuple[Phase, ...] = ("precondition", "ramp", "measure", "job")
HERE = ""  # the host of a result measured by this host's fio (or the aggregate over hosts)


def stable_hash(value: object) -> str:
    """A short hash of a JSON-able value that does not depend on dict order."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


RaidKind = Literal["none", "btrfs", "mdadm", "lvm"]
FsKind = Literal["none", "xfs", "ext4", "btrfs"]


@dataclass(frozen=True)
class Layout:
    """How a set-up is built on block devices the plan names; provisioned, then torn down.

    raid "btrfs" means a btrfs filesystem over all devices with `level` as its data profile
    (raid0/raid1/raid10/raid5/raid6/single) and `metadata` as its metadata profile.
    raid "mdadm" and "lvm" build one block device (level 0/1/4/5/6/10, `chunk`, `md_layout`)
    that `filesystem` then formats, or that fio uses raw when filesystem is "none".
    `degraded` (mdadm only): the last that many devices are left out, "missing", so the array
    starts degraded; they are neither checked nor written (see `layouts.present`).
    """

    devices: tuple[str, ...]
    raid: RaidKind = "none"
    level: str | None = None
    metadata: str | None = None
    chunk: str | None = None
    md_layout: str | None = None
    filesystem: FsKind = "none"
    mkfs_options: str = ""
    mount_options: str = ""
    queue: Mapping[str, str] = field(default_factory=dict)
    discard: bool = False
    setup_hook: str | None = None
    teardown_hook: str | None = None
    degraded: int = 0

    def definition(self) -> dict[str, object]:
        out = {k: v for k, v in self.__dict__.items() if v not in (None, "", False, {})}
        out["devices"] = list(self.devices)
        out["queue"] = dict(self.queue)
        return out

    @classmethod
    def from_definition(cls, data: JSONObject) -> Layout:
        text = _texts(data)
        devices, queue = data.get("devices"), data.get("queue")
        raid, fs = text("raid"), text("filesystem")
        return cls(
            tuple(str(d) for d in devices) if isinstance(devices, list) else (),
            raid=raid if raid in ("btrfs", "mdadm", "lvm") else "none",  # type: ignore[arg-type]
            level=text("level"),
            metadata=text("metadata"),
            chunk=text("chunk"),
            md_layout=text("md_layout"),
            filesystem=fs if fs in ("xfs", "ext4", "btrfs") else "none",  # type: ignore[arg-type]
            mkfs_options=text("mkfs_options") or "",
            mount_options=text("mount_options") or "",
            queue={k: str(v) for k, v in queue.items()} if isinstance(queue, dict) else {},
            discard=data.get("discard") is True,
            setup_hook=text("setup_hook"),
            teardown_hook=text("teardown_hook"),
            degraded=_whole(data.get("degraded")),
        )


@dataclass(frozen=True)
class CardPolicy:
    """A RAID card's cache policy a set-up asks for on one virtual drive, through one tool
    (storcli, perccli, megacli, ssacli, arcconf); a part left None is left as it is."""

    tool: str
    vd: str  # as the tool names it: "/c0/v0", "-L0 -a0", "slot=0 ld 1", "1 LOGICALDRIVE 0"
    write_cache: str | None = None
    read_ahead: str | None = None
    io_policy: str | None = None
    drive_cache: str | None = None
    cache_ratio: str | None = None  # Smart Array's read/write split of its cache: "25/75"

    def fields(self) -> dict[str, str]:
        """The parts asked for, by their plan keys."""
        asked = {
            "write_cache": self.write_cache,
            "read_ahead": self.read_ahead,
            "io_policy": self.io_policy,
            "drive_cache": self.drive_cache,
            "cache_ratio": self.cache_ratio,
        }
        return {key: value for key, value in asked.items() if value is not None}

    def definition(self) -> dict[str, object]:
        return {"tool": self.tool, "vd": self.vd, **self.fields()}

    @classmethod
    def from_definition(cls, data: JSONObject) -> CardPolicy:
        text = _texts(data)
        return cls(
            text("tool") or "", text("vd") or "", text("write_cache"), text("read_ahead"),
            text("io_policy"), text("drive_cache"), text("cache_ratio"),
        )  # fmt: skip


@dataclass(frozen=True)
class Setup:
    """One named way to prepare a target: an existing path, or a layout built on devices."""

    name: str
    path: str = ""
    layout: Layout | None = None
    precondition: str = "none"  # none, sequential, random or both: filled before its cases
    cache_bytes: int = 0  # a cache in front of the target the plan declares (a RAID card's)
    facts: tuple[tuple[str, float], ...] = ()  # an import's: device_count, rated_iops, rated_bps
    host_paths: tuple[tuple[str, str], ...] = ()  # on hosts: (host, its path) where it differs
    host_count: int = 0  # on hosts: the first this many run its cases (0: all of them)
    controller: CardPolicy | None = None  # a RAID card's policy set before its cases
    drive_cache: str | None = None  # a plain disk's own write cache (sysfs cache_type)

    @property
    def kind(self) -> str:
        return "path" if self.layout is None else "devices"

    def definition(self) -> dict[str, object]:
        extra: dict[str, object] = (
            {"precondition": self.precondition} if self.precondition != "none" else {}
        )
        if self.cache_bytes:
            extra["cache_bytes"] = self.cache_bytes
        extra.update(self.facts)
        if self.host_paths:
            extra["hosts"] = dict(self.host_paths)
        if self.host_count:
            extra["host_count"] = self.host_count
        if self.controller is not None:
            extra["controller"] = self.controller.definition()
        if self.drive_cache is not None:
            extra["drive_cache"] = self.drive_cache
        if self.layout is None:
            return {"name": self.name, "kind": "path", "path": self.path, **extra}
        return {"name": self.name, "kind": "devices", **self.layout.definition(), **extra}

    @classmethod
    def from_definition(cls, data: JSONObject) -> Setup:
        """The set-up as the store keeps its definition (any version's; what is missing or
        of another shape is left at its default): the report reads this, not the JSON."""
        text = _texts(data)
        facts = tuple(
            (key, float(v)) for key in FACT_KEYS if isinstance(v := data.get(key), int | float)
        )
        hosts = data.get("hosts")
        card = data.get("controller")
        return cls(
            text("name") or "",
            path=text("path") or "",
            layout=Layout.from_definition(data) if data.get("kind") == "devices" else None,
            precondition=text("precondition") or "none",
            cache_bytes=_whole(data.get("cache_bytes")),
            facts=facts,
            host_paths=tuple((k, str(v)) for k, v in hosts.items())
            if isinstance(hosts, dict)
            else (),
            host_count=_whole(data.get("host_count")),
            controller=CardPolicy.from_definition(card) if isinstance(card, dict) else None,
            drive_cache=text("drive_cache"),
        )


FACT_KEYS = ("device_count", "rated_iops", "rated_bps")  # an import's facts (exchange.build)


def _texts(data: JSONObject) -> Callable[[str], str | None]:
    def text(key: str) -> str | None:
        value = data.get(key)
        return None if value is None or isinstance(value, dict | list) else str(value)

    return text


def _whole(value: JSON) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


MethodKind = Literal["peak", "curve"]


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
class SteadyRecord:
    """What `[steady]` rounds found for one set-up: every round's tracked figure (IOPS, or
    bytes/s for a bandwidth workload) and the determination over its window, as the runner
    records it with the set-up and the report reads it back."""

    track: str
    metric: Literal["iops", "bw"]
    values: tuple[float, ...]
    window_rounds: tuple[int, int]  # the first and last round of the measurement window
    window_mean: float
    data_excursion: float
    data_limit: float
    slope_excursion: float
    slope_limit: float
    steady: bool
    most_rounds: int

    def to_json(self) -> dict[str, object]:
        out = dataclasses.asdict(self)
        out["values"], out["window_rounds"] = list(self.values), list(self.window_rounds)
        return out

    @classmethod
    def from_json(cls, data: object) -> SteadyRecord | None:
        """The record as stored; None for anything else (a damaged or foreign value)."""
        if not isinstance(data, Mapping):
            return None
        try:
            first, last = (int(n) for n in data["window_rounds"])
            return cls(
                str(data["track"]), "bw" if data.get("metric") == "bw" else "iops",
                tuple(float(v) for v in data["values"]), (first, last),
                float(data["window_mean"]), float(data["data_excursion"]),
                float(data["data_limit"]), float(data["slope_excursion"]),
                float(data["slope_limit"]), bool(data["steady"]), int(data["most_rounds"]),
            )  # fmt: skip
        except (KeyError, TypeError, ValueError):
            return None


@dataclass(frozen=True)
class PeakPoint:
    """One point a peak search measured: its figure (None: it failed or was refused)."""

    numjobs: int
    iodepth: int
    workload: str
    value: float | None


@dataclass(frozen=True)
class PeakWinner:
    """The search's highest point, measured until it has three values: their median and 95%
    interval, the noise they show (at least the margin), and the points tied with it."""

    numjobs: int
    iodepth: int
    workload: str
    values: tuple[float, ...]
    median: float
    low: float | None
    high: float | None
    cov: float | None
    noise: float
    tied: tuple[str, ...]


@dataclass(frozen=True)
class CurvePoint:
    """One load of a latency-against-load curve: what was asked (percent of the peak's IOPS;
    None: the peak itself, unthrottled), what was delivered, and the slower direction's
    completion latency percentiles."""

    load_pct: int | None
    asked_iops: float | None
    workload: str
    ok: bool
    delivered_iops: float
    p50_ns: float | None
    p99_ns: float | None
    p999_ns: float | None
    delivered: bool  # at least analysis.peak.DELIVERED_SHARE of the rate asked


@dataclass(frozen=True)
class SloPoint:
    """The most IOPS a curve held within its latency target (`slo = "p99<=2ms"`): the highest
    load whose percentile met it, measured again for an interval (load None and no values:
    no load met it)."""

    target: str
    load_pct: int | None
    workload: str
    iops: tuple[float, ...]  # each repetition's delivered IOPS
    latency_ns: tuple[float, ...]  # each repetition's percentile named by the target
    peak: bool = False  # the unthrottled peak itself met it


@dataclass(frozen=True)
class Curve:
    peak_iops: float
    points: tuple[CurvePoint, ...]
    knee: int | None
    knee_factor: float
    delivered_share: float
    slo: SloPoint | None = None


@dataclass(frozen=True)
class Drift:
    """The search's start point measured again after it, against its first measurement."""

    start: float
    again: float
    change: float


@dataclass(frozen=True)
class PeakRecord:
    """What a peak or curve search found for one workload on one set-up, as the runner
    records it with the set-up (environment "peak_search", by workload) and the report
    reads it back."""

    method: MethodKind
    metric: Literal["iops", "bw"]
    bounds: tuple[tuple[int, int], tuple[int, int]]  # numjobs, iodepth
    grid: int  # the points the bounds hold
    margin: float
    steps: tuple[str, ...]
    points: tuple[PeakPoint, ...]
    winner: PeakWinner | None
    curve: Curve | None = None
    drift: Drift | None = None

    def to_json(self) -> dict[str, object]:
        out = dataclasses.asdict(self)
        numjobs, iodepth = self.bounds
        out["bounds"] = {"numjobs": list(numjobs), "iodepth": list(iodepth)}
        for key in ("curve", "drift"):
            if out[key] is None:
                del out[key]
        stored: dict[str, object] = json.loads(json.dumps(out))  # tuples as lists
        return stored

    @classmethod
    def from_json(cls, data: object) -> PeakRecord | None:
        """The record as stored; None for anything else (a damaged or foreign value)."""
        if not isinstance(data, Mapping):
            return None
        try:
            return cls(
                "curve" if data["method"] == "curve" else "peak",
                "bw" if data["metric"] == "bw" else "iops",
                (_pair(data["bounds"]["numjobs"]), _pair(data["bounds"]["iodepth"])),
                int(data["grid"]), float(data["margin"]), tuple(str(s) for s in data["steps"]),
                tuple(PeakPoint(int(p["numjobs"]), int(p["iodepth"]), str(p["workload"]),
                                _number(p["value"])) for p in data["points"]),
                _winner(data["winner"]), _curve(data.get("curve")), _drift(data.get("drift")),
            )  # fmt: skip
        except (KeyError, TypeError, ValueError, AttributeError):
            return None


def _pair(value: object) -> tuple[int, int]:
    low, high = (int(v) for v in value)  # type: ignore[attr-defined]
    return low, high


def _number(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]


def _winner(data: object) -> PeakWinner | None:
    if data is None:
        return None
    if not isinstance(data, Mapping):
        raise TypeError("winner")
    return PeakWinner(
        int(data["numjobs"]), int(data["iodepth"]), str(data["workload"]),
        tuple(float(v) for v in data["values"]), float(data["median"]), _number(data["low"]),
        _number(data["high"]), _number(data["cov"]), float(data["noise"]),
        tuple(str(t) for t in data["tied"]),
    )  # fmt: skip


def _curve(data: object) -> Curve | None:
    if not data:
        return None
    if not isinstance(data, Mapping):
        raise TypeError("curve")
    points = tuple(_curve_point(p) for p in data["points"])
    knee = data.get("knee")
    return Curve(
        float(data["peak_iops"]), points, None if knee is None else int(knee),
        float(data["knee_factor"]), float(data["delivered_share"]), _slo(data.get("slo")),
    )  # fmt: skip


def _slo(data: object) -> SloPoint | None:
    if not data:
        return None
    if not isinstance(data, Mapping):
        raise TypeError("slo")
    load = data["load_pct"]
    return SloPoint(
        str(data["target"]), None if load is None else int(load), str(data["workload"]),
        tuple(float(v) for v in data["iops"]), tuple(float(v) for v in data["latency_ns"]),
        bool(data.get("peak", False)),
    )  # fmt: skip


def _curve_point(p: Mapping[str, object]) -> CurvePoint:
    load = p["load_pct"]
    return CurvePoint(
        None if load is None else int(load),  # type: ignore[call-overload]
        _number(p["asked_iops"]), str(p["workload"]), bool(p["ok"]),
        float(p["delivered_iops"]),  # type: ignore[arg-type]
        _number(p["p50_ns"]), _number(p["p99_ns"]), _number(p["p999_ns"]), bool(p["delivered"]),
    )  # fmt: skip


def _drift(data: object) -> Drift | None:
    if not data:
        return None
    if not isinstance(data, Mapping):
        raise TypeError("drift")
    return Drift(float(data["start"]), float(data["again"]), float(data["change"]))


@dataclass(frozen=True)
class Hosts:
    """The fio servers (fio --server) a plan's cases run on, every case on all at once."""

    addresses: tuple[str, ...]  # "host:port", as iolab shows and stores them
    lost_after_s: float = 30.0  # how long a host may stay silent after the others reported
    on_lost: Literal["continue", "stop"] = "continue"
    # a command that prints a host's `iolab env --json` ({host}, {path} filled in); () for none
    env_command: tuple[str, ...] = ()


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
            }
        )

    def cases(self) -> list[Case]:
        """The matrix, set-up by set-up, so each set-up is provisioned once; in rounds mode
        round by round (every workload once per round)."""
        reps = range(1, self.repeat + 1)
        if self.rounds:
            return [Case(s, w, r) for s in self.setups for r in reps for w in self.workloads]
        return [Case(s, w, r) for s in self.setups for w in self.workloads for r in reps]


@dataclass(frozen=True)
class DirectionMetrics:
    """What fio measured for one direction (read, write or trim) of one case."""

    direction: Direction
    iops: float
    bw_bytes: float
    io_bytes: int
    runtime_ms: int
    lat_mean_ns: float | None
    lat_max_ns: float | None
    percentiles_ns: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class CaseMetrics:
    """One case's parsed fio result, all jobs of the case aggregated."""

    directions: tuple[DirectionMetrics, ...]
    usr_cpu: float
    sys_cpu: float
    runtime_ms: int
    error: int

    def direction(self, name: Direction) -> DirectionMetrics | None:
        return next((d for d in self.directions if d.direction == name), None)

    @property
    def total_iops(self) -> float:
        return sum(d.iops for d in self.directions)

    @property
    def total_bw_bytes(self) -> float:
        return sum(d.bw_bytes for d in self.directions)


HOST_LOST = "host-lost"  # the warning code of a case a host sent no result for


NOTE_CODES = frozenset({"device-busy"})  # said under the table as notes; no ⚑ on the cell


@dataclass(frozen=True)
class CheckWarning:
    """A methodology or measurement problem, with what to do about it; or, for the codes in
    NOTE_CODES, a note for the reader that says nothing against the figure (no ⚑)."""

    code: str
    message: str
    advice: str
    hosts: tuple[str, ...] = ()  # the hosts it is about (host-lost: those that sent nothing)

    def __str__(self) -> str:
        return f"{self.message} {self.advice}"

    @property
    def note(self) -> bool:
        """A note for the reader (a busy device), not a figure iolab cannot vouch for."""
        return self.code in NOTE_CODES

    def stored(self) -> dict[str, JSON]:
        """As the store keeps it: hosts only when it names some."""
        out: dict[str, JSON] = {"code": self.code, "message": self.message, "advice": self.advice}
        if self.hosts:
            out["hosts"] = list[JSON](self.hosts)
        return out


@dataclass(frozen=True)
class Sample:
    """One point of a per-interval time series from fio's logs."""

    metric: Metric
    direction: Direction
    time_ms: int
    value: float


@dataclass(frozen=True)
class Window:
    """One stretch of a case besides its main measurement: a preconditioning pass, a ramp, a
    steady-state round, or one host's share of a case run on several hosts."""

    metrics: CaseMetrics
    phase: Phase = "measure"
    round: int = 0
    host: str = HERE
    samples: tuple[Sample, ...] = ()


@dataclass(frozen=True)
class Origin:
    """Where a run's results come from: a plan iolab ran, or files it imported."""

    kind: Literal["plan", "import"] = "plan"
    files: tuple[str, ...] = ()
    fio_version: str = ""
    hostname: str = ""
    digests: tuple[str, ...] = ()  # sha256 of each file imported, so none is imported twice


@dataclass(frozen=True)
class Result:
    """One case's outcome: its main measurement (phase measure, on this host or aggregated
    over hosts), and any other windows it had."""

    case: Case
    status: Literal["ok", "failed"]
    started_at: float
    ended_at: float
    metrics: CaseMetrics | None = None
    error: str | None = None
    raw_json: str | None = None
    job_file: str = ""
    warnings: tuple[CheckWarning, ...] = ()
    samples: tuple[Sample, ...] = ()
    windows: tuple[Window, ...] = ()
    target_state: str = ""  # what the target had seen before the case (see runner.precondition)
    telemetry: Telemetry | None = None  # the host's CPUs and the devices, per second (local)

    def all_windows(self) -> tuple[Window, ...]:
        """The main measurement as a window, then the others."""
        main = () if self.metrics is None else (Window(self.metrics, samples=self.samples),)
        return main + self.windows
