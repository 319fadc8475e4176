"""What the readers find in a file: one job's results, in fio 3.x's JSON shape."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from iolab.model import CaseMetrics, FioValue, Sample

# Options that name where fio did its I/O or wrote its logs: recorded with the case, but two
# results of one job on two set-ups (two directories, two devices) are still one workload.
TARGET_KEYS = (
    "filename",
    "directory",
    "filename_format",
    "opendir",
    "nrfiles",
    "unique_filename",
    "write_bw_log",
    "write_iops_log",
    "write_lat_log",
    "write_hist_log",
    "description",
)


class UnreadableJob(ValueError):
    """A file iolab cannot import; str(error) says why, in a few words."""


@dataclass
class FoundJob:
    """One job's result found in a file: its fio job entries (several when numjobs ran without
    group_reporting, or when several hosts ran it), as fio 3.x's JSON shapes them."""

    file: Path
    name: str
    options: dict[str, FioValue]
    entries: list[dict[str, Any]]
    header: dict[str, Any] = field(default_factory=dict)  # "fio version", timestamp, ...
    raw: str | None = None  # the file's own text, when it holds exactly this job's result
    samples: list[Sample] = field(default_factory=list)
    metrics: CaseMetrics | None = None  # only for a job known from its logs alone
    hosts: bool = False  # entries carry fio's "hostname" and "port" (client/server)

    @property
    def fio_version(self) -> str:
        version = str(self.header.get("fio version", ""))
        return version if not version or version.startswith("fio") else f"fio-{version}"

    @property
    def timestamp(self) -> float | None:
        stamp = self.header.get("timestamp_ms") or self.header.get("timestamp")
        if not isinstance(stamp, int | float) or isinstance(stamp, bool) or stamp <= 0:
            return None
        return stamp / 1000 if "timestamp_ms" in self.header else float(stamp)

    def identity(self) -> tuple[str, tuple[tuple[str, str], ...]]:
        """What makes two results the same workload: the job's name and its options, less
        those that name the target or logs."""
        kept = sorted((k, str(v)) for k, v in self.options.items() if k not in TARGET_KEYS)
        return self.name, tuple(kept)


def fio_value(text: object) -> FioValue:
    """An option's value as fio printed it ("4", "4k", "randread"): whole numbers as int."""
    if isinstance(text, bool | int | float):
        return text
    value = str(text)
    return int(value) if value.isdigit() and len(value) < 19 else value


def options_of(*tables: object) -> dict[str, FioValue]:
    """fio's "global options" then "job options", merged, values typed."""
    out: dict[str, FioValue] = {}
    for table in tables:
        if isinstance(table, Mapping):
            out.update({str(k): fio_value(v) for k, v in table.items()})
    return out


def scaled(value: object, factor: int) -> int | float:
    """A number times `factor`, exactly as its decimal text says (µs 218.122092 -> ns
    218122.092), not as binary floating point would round it."""
    try:
        exact = Decimal(repr(value) if isinstance(value, float) else str(value)) * factor
    except InvalidOperation:
        raise UnreadableJob("a figure that is not a number") from None
    if not exact.is_finite():  # NaN or Infinity: float's, for the check to name its field
        return float(exact)
    return int(exact) if exact == exact.to_integral_value() else float(exact)


def percentile_key(text: str) -> str | None:
    """fio's percentile keys as fio 3.x writes them ("99.900000"); None for the "0.00"
    padding old fio repeated, or anything that is not a percentage."""
    try:
        share = float(text.rstrip("%"))
    except ValueError:
        return None
    return f"{share:.6f}" if 0 < share <= 100 else None
