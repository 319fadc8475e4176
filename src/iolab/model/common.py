"""The plain types every record shares: fio values, JSON as the store keeps it, directions,
metrics, phases, and a stable hash."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Literal

from iolab.units import parse_size

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


MethodKind = Literal["peak", "curve"]


IOPS_MAX_BS = 64 * 1024


def metric_for(options: Mapping[str, object], forced: str = "auto") -> str:
    """IOPS for blocks up to 64 KiB, MB/s above, unless the user forces one: chosen once a
    case where it is read (store.CaseRow.metric), and where a plan's workload is run."""
    if forced in ("iops", "bw"):
        return forced
    return "iops" if parse_size(str(options.get("bs", "4k"))) <= IOPS_MAX_BS else "bw"
