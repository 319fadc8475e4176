"""A RAID model that predicts: from one device's measured figures for a workload, what a RAID
level over N such devices should deliver, as a multiple (the factor) of the single device.

Terms. N members; `copies` of each data block (RAID1: N, RAID10 and btrfs raid1: 2, else 1);
`parity` members' worth of parity (RAID5: 1, RAID6: 2); D = N / copies - parity members' worth
of data (RAID0 N, RAID1 1, RAID10 N/2, RAID5 N-1, RAID6 N-2); chunk (md's default 512 KiB,
LVM's and btrfs's 64 KiB) and the stripe's data width W = D x chunk; Q = iodepth x numjobs,
the I/Os in flight; r the read share (1 read, 0 write, rwmixread/100 for a mixed workload).
The single device's IOPS and bandwidth for the same workload (pattern, block size, read
share, Q) are multiplied by one factor: they scale together at a fixed block size.

Deep queues (Q > 1): the members are kept busy, so the array's work spreads over them.

- R1 reads scale with the members holding data: random reads N at every level (mirrors share
  reads, parity rotates over all members); sequential reads N for RAID0/1/10 and N - parity
  for RAID5/6 (each member skips its parity chunks).
- R2 small random writes (bs < W) pay the write penalty, the member I/Os per write: 1 for
  RAID0, `copies` for mirrors (2 for RAID10 and a RAID1 pair), 4 for RAID5 (read old data and
  parity, write both), 6 for RAID6: factor N / penalty.
- R3 sequential writes, and random writes of a whole stripe (bs >= W), are full-stripe
  writes: parity is computed from the new data alone and the data members write in parallel,
  factor D.
- R4 a mixed workload adds the times of its reads and writes:
  1/F = (r rho / F_read + (1 - r) / F_write) / (r rho + 1 - r); rho as below (1 when unknown).

These are ceilings: they assume every member is as busy as the single device was. That needs
about N times the I/Os in flight that saturated the single device; below that, a measured
array under 100% of the prediction is expected (the device was latency-bound, and Little's
law holds the array's IOPS near Q / latency), and one far over it is a cache at work.

One I/O in flight (Q = 1): only the members that one I/O touches work, and it costs the
chain of its dependent steps, in units of the single device's time for the same I/O.

- L1 a read of bs <= chunk touches one member: factor 1 (random reads barely change). A
  larger read splits over k = min(ceil(bs / chunk), D) members that transfer in parallel:
  factor k.
- L2 a small write (bs <= chunk) on RAID0 is one member write (factor 1); on a mirror, the
  copies are written in parallel and the write ends with the slowest: factor
  1 / tail(copies). A larger write on RAID0 or a mirror, and a full-stripe write (bs >= W)
  on parity RAID, splits over k = min(ceil(bs / chunk), D) data members in parallel: factor k.
- L3 a smaller write on RAID5/6 is a read-modify-write chain: first read what parity needs
  (md takes the cheaper of read-modify-write, old data and parity, 1 + parity reads, and
  reconstruct-write, the other D - 1 data chunks), waiting for the slowest read; then write
  data and parity (1 + parity writes), waiting for the slowest write. Chain =
  rho x tail(reads) + tail(1 + parity); factor 1 / chain. rho is the single device's read
  time over its write time for that block size at QD1 (its random write IOPS over its random
  read IOPS) when both were measured, else 1: two round trips, half the single device or
  worse, not N / 4.
- L4 mixed: as R4.

tail(k) = 1 + spread x (H_k - 1), H_k = 1 + 1/2 + ... + 1/k: the expected slowest of k member
I/Os when a member's latency is a fixed part plus an exponential part that is `spread` of its
mean (spread 1: exponential, the textbook assumption, iolab's default; 0: constant). It is
applied to small member I/Os only: a large transfer's time is its bytes, which spread little.

Study B (one NVMe SSD vs md RAID5 of 3 and RAID10 of 4, 4k random at QD1): with a single
drive of about 13,000 random read and 55,000 random write IOPS at QD1 (datasheet-class:
about 77 and 18 us), the model predicts random reads unchanged, RAID10 random writes 33%
below the single drive (published: about 30%), RAID5 random writes 83% below (published:
about 75%; with rho unknown, 60% below). Where the model misses, and why:

- RAID5 at QD1 is predicted a little too slow: the read step is charged the drive's full
  random read time, while md's stripe cache serves stripes it still holds (a small test area
  revisits them) and a drive reads faster while it is idle from writes.
- RAID10 at QD1 lands on the published figure through the exponential tail, which also stands
  in for what it does not model: md's own per-I/O work (cloning the request, the write-intent
  bitmap that a large array has by default). A device with tight latencies behind a lean
  mirror loses less; a slow CPU loses more.
- md RAID1 and RAID10 keep one sequential read stream on one mirror (read balancing), so a
  single-job sequential read gets 1x (RAID1) or D (RAID10), not N; SSDs skip parity chunks
  for free, so RAID5/6 sequential reads may exceed N - parity.
- md RAID5/6 handle stripes in one kernel thread by default (group_thread_cnt = 0), which
  caps fast NVMe arrays' write throughput below N / 4 x single; filesystems add journal
  writes; RAID cards add caches (study A's and C's Write Back). None of these is modelled.
- Between QD1 and saturation the truth lies between the QD1 chain and the ceiling.
- md in the tests' user-mode kernel over image files (4k, 4 s, preconditioned): QD1 reads
  80-95% of the prediction, QD1 writes 125-130% (the images sit in the host's page cache, so
  member I/Os barely spread and the tail overcharges); at QD32 reads and RAID10 writes reach
  33-55% of the ceilings (that kernel does its disk I/O on one CPU: the single "device" was
  not saturated) and RAID5 writes 146% (the page cache beneath the images absorbs the reads).

Not modelled (no prediction): RAID4, linear and btrfs single/dup, degraded arrays.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from iolab import units
from iolab.layouts import RAIDS
from iolab.model import metric_for
from iolab.units import format_size, parse_size

KIB = 1024
SPREAD = 1.0  # member latency: a fixed part plus an exponential part of this share of its mean
DEFAULT_CHUNK = {"mdadm": 512 * KIB, "lvm": 64 * KIB, "btrfs": 64 * KIB}
LEVELS = ("0", "1", "5", "6", "10")  # what `iolab advise` ranks
MIXED = ("rw", "readwrite", "randrw")
_READS = {"read": 1.0, "randread": 1.0, "write": 0.0, "randwrite": 0.0}
_MD_COPIES = re.compile(r"^[nfo](\d+)$")


class ModelError(ValueError):
    """A workload or level the model cannot read; the message says what is allowed."""


@dataclass(frozen=True)
class RaidWorkload:
    """What the model needs of a workload: pattern, block size, read share, I/Os in flight."""

    random: bool
    read_share: float  # 1.0 all reads, 0.0 all writes
    bs: int  # bytes per I/O
    in_flight: int = 1  # iodepth x numjobs

    @property
    def metric(self) -> str:
        """What the model's figures for it are given in: IOPS, or MB/s for large blocks."""
        return metric_for({"bs": self.bs})

    @property
    def label(self) -> str:
        kind = "rand" if self.random else "seq"
        mix = {1.0: "read", 0.0: "write"}.get(self.read_share, f"{self.read_share:.0%} read")
        return f"{format_size(self.bs)} {kind} {mix} QD{self.in_flight}"


@dataclass(frozen=True)
class Single:
    """One device's measured figures for a workload."""

    iops: float
    bw_bytes: float  # bytes per second
    read_time_ratio: float = 1.0  # rho: its read time over its write time at this bs, QD1


@dataclass(frozen=True)
class Geometry:
    """A RAID level over `devices` members."""

    level: str  # "0", "1", "5", "6", "10"
    devices: int
    copies: int = 1
    parity: int = 0
    chunk: int = DEFAULT_CHUNK["mdadm"]

    @property
    def name(self) -> str:
        extra = (
            f" ({self.copies} copies)" if self.level == "1" and self.copies != self.devices else ""
        )
        return f"RAID{self.level}{extra}"

    @property
    def data(self) -> float:
        """Members' worth of data: D."""
        return self.devices / self.copies - self.parity

    @property
    def penalty(self) -> int:
        """Member I/Os per small random write."""
        return 2 * (1 + self.parity) if self.parity else self.copies

    @property
    def tolerates(self) -> int:
        """Member failures survived whichever members fail."""
        return self.parity or self.copies - 1

    def capacity(self, device_bytes: int) -> int:
        """Usable bytes over members of this size (as iolab.layouts reckons them)."""
        return int(self.data * device_bytes)


@dataclass(frozen=True)
class RaidPrediction:
    """The array's figures for one workload, with the rule that gave them."""

    factor: float  # the array as a multiple of the single device
    iops: float
    bw_bytes: float
    rule: str  # e.g. "QD1: read 1, then write 2 (x0.17)"
    ceiling: bool  # deep-queue rules: the most the array should reach, not a point estimate


def geometry(
    kind: str,
    level: str,
    devices: int,
    chunk: str | int | None = None,
    md_layout: str | None = None,
) -> Geometry | None:
    """The geometry of a set-up's RAID, as its definition spells it (mdadm and LVM "5",
    "10"; btrfs "raid5", "raid1c3"); None for what the model does not cover."""
    raid = RAIDS.get(kind)
    if raid is None or devices < 2:
        return None
    spelled = raid.spell(level).removeprefix("raid")
    copies = _copies(kind, spelled, devices, md_layout)
    base = {"1c3": "1", "1c4": "1"}.get(spelled, spelled)
    if base not in LEVELS or copies is None:
        return None
    parity = {"5": 1, "6": 2}.get(base, 0)
    size = parse_size(chunk) if chunk else DEFAULT_CHUNK[kind]
    return Geometry(base, devices, copies, parity, size)


def _copies(kind: str, level: str, devices: int, md_layout: str | None) -> int | None:
    if level in ("1c3", "1c4"):
        return int(level[-1])
    if level == "1":
        return 2 if kind == "btrfs" else devices
    if level == "10":
        found = _MD_COPIES.match(md_layout or "n2") if kind == "mdadm" else None
        return int(found.group(1)) if found else (2 if kind != "mdadm" else None)
    return 1


def fewest(level: str) -> int:
    """The fewest members md builds the level over."""
    return RAIDS["mdadm"].levels[level].fewest


FEWEST = {level: fewest(level) for level in LEVELS}  # of each level `iolab advise` ranks


def workload(options: Mapping[str, object]) -> RaidWorkload | None:
    """A stored workload's fio options as the model reads them; None for trims, and for
    values it cannot read (fio's "4k,64k" split block sizes, ...)."""
    try:
        return _read(options)
    except ValueError:
        return None


def _read(options: Mapping[str, object]) -> RaidWorkload | None:
    rw = str(options.get("rw", options.get("readwrite", "read")))
    if rw in _READS:
        share = _READS[rw]
    elif rw in MIXED:
        share = _mix_share(options)
    else:
        return None
    depth = _count(options.get("iodepth", 1)) * _count(options.get("numjobs", 1))
    return RaidWorkload(rw.startswith("rand"), share, parse_size(options.get("bs", "4k")), depth)


def _mix_share(options: Mapping[str, object]) -> float:
    if "rwmixread" in options:
        return _count(options["rwmixread"]) / 100
    if "rwmixwrite" in options:
        return 1 - _count(options["rwmixwrite"]) / 100
    return 0.5


def _count(value: object) -> int:
    return units.whole(str(value))  # ASCII digits: "3_2" is not 32


def parse_workload(text: str) -> RaidWorkload:
    """RW:BS[:QD[:READ%]], e.g. "randwrite:4k:1", "read:1m:8", "randrw:4k:32:70"."""
    parts = text.split(":")
    rw = parts[0]
    if rw not in (*_READS, *MIXED) or not 2 <= len(parts) <= 4:
        raise ModelError(
            f"workload {text!r} is not RW:BS[:QD[:READ%]] (e.g. randwrite:4k:1, randrw:4k:32:70)"
            f"; RW is one of {', '.join((*_READS, *MIXED))}"
        )
    if len(parts) == 4 and rw not in MIXED:
        raise ModelError(
            f"workload {text!r}: a read share goes with a mixed RW ({', '.join(MIXED)})"
        )
    options: dict[str, object] = {"rw": rw, "bs": parts[1]}
    if len(parts) > 2:
        options["iodepth"] = parts[2]
    if len(parts) > 3:
        options["rwmixread"] = parts[3].removesuffix("%")
    try:
        found = _read(options)
    except ValueError as error:
        raise ModelError(f"workload {text!r}: {error}") from None
    if found is None or found.bs <= 0 or found.in_flight < 1 or not 0 <= found.read_share <= 1:
        raise ModelError(f"workload {text!r}: BS, QD and READ% must be positive (READ% <= 100)")
    return found


# ---------------------------------------------------------------- the rules


def tail(k: int, spread: float = SPREAD) -> float:
    """The expected slowest of k member I/Os, in units of one's mean."""
    return 1 + spread * (sum(1 / i for i in range(1, k + 1)) - 1)


def _pieces(array: Geometry, bs: int) -> float:
    """Data members one I/O of bs spreads over (at most D)."""
    return min(math.ceil(bs / array.chunk), array.data)


def read_factor(array: Geometry, w: RaidWorkload) -> tuple[float, str]:
    if w.in_flight == 1:
        k = _pieces(array, w.bs)
        return k, "one member" if k == 1 else f"split over {k:g} members"
    if w.random or not array.parity:
        return array.devices, f"{array.devices} members read"
    return array.data, f"{array.data:g} data members read"


def write_factor(
    array: Geometry, w: RaidWorkload, rho: float = 1.0, spread: float = SPREAD
) -> tuple[float, str]:
    width = array.data * array.chunk
    if w.in_flight > 1:
        if not w.random or w.bs >= width:
            return array.data, f"full stripe, {array.data:g} data members"
        return array.devices / array.penalty, f"{array.devices} / penalty {array.penalty}"
    small = w.bs <= array.chunk
    if array.parity and w.bs < width:
        reads = max(1, min(1 + array.parity, int(array.data) - 1))
        chain = rho * tail(reads, spread) + tail(1 + array.parity, spread)
        return 1 / chain, f"read {reads}, then write {1 + array.parity}"
    if small and array.copies > 1:
        return 1 / tail(array.copies, spread), f"slowest of {array.copies} copies"
    if small:
        return 1.0, "one member"
    k = _pieces(array, w.bs)
    return k, f"split over {k:g} members"


def factor(
    array: Geometry, w: RaidWorkload, rho: float = 1.0, spread: float = SPREAD
) -> tuple[float, str]:
    """The array as a multiple of one device for workload `w`, and the rule's words."""
    r = w.read_share
    fr, read_rule = read_factor(array, w)
    fw, write_rule = write_factor(array, w, rho, spread)
    if r == 1:
        return fr, read_rule
    if r == 0:
        return fw, write_rule
    weight = r * rho + (1 - r)
    mixed = weight / (r * rho / fr + (1 - r) / fw)
    return mixed, f"reads: {read_rule}; writes: {write_rule}"


def predict(
    array: Geometry, w: RaidWorkload, single: Single, spread: float = SPREAD
) -> RaidPrediction:
    """The array's IOPS and bandwidth for `w`, from the single device's for the same `w`."""
    found, words = factor(array, w, single.read_time_ratio, spread)
    ceiling = w.in_flight > 1
    rule = f"{'ceiling' if ceiling else 'QD1'}: {words} (x{found:.2f})"
    return RaidPrediction(found, single.iops * found, single.bw_bytes * found, rule, ceiling)


# ---------------------------------------------------------------- advice


@dataclass(frozen=True)
class Ranked:
    """One level's predictions for the user's workloads, and its overall score."""

    array: Geometry
    predictions: tuple[RaidPrediction, ...]

    @property
    def score(self) -> float:
        """The geometric mean of the factors: the typical multiple of one device."""
        factors = [max(p.factor, 1e-9) for p in self.predictions]
        return math.exp(sum(math.log(f) for f in factors) / len(factors)) if factors else 0.0


def rank(
    devices: int, needs: Sequence[tuple[RaidWorkload, Single]], chunk: int | None = None
) -> list[Ranked]:
    """RAID levels 0, 1, 5, 6, 10 that `devices` members can build, best first: by score,
    then failures tolerated, then capacity."""
    found = []
    for level in LEVELS:
        array = geometry("mdadm", level, devices, chunk)
        if array is None or devices < fewest(level):
            continue
        predictions = tuple(predict(array, w, single) for w, single in needs)
        found.append(Ranked(array, predictions))
    return sorted(found, key=lambda r: (-round(r.score, 6), -r.array.tolerates, -r.array.data))
