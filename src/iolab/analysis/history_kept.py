"""A plan's history as the store keeps it (store.derived): the runs it joined and its series,
points, steps and change points, in columns, so that the next `iolab history` reads it back
in a tenth of the time it takes to read 150,000 cases and judge 100,000 points again.

Not model.codec: a long history is 100,000 points, and a codec that checks each field of
each point against its type costs a second; here a series is a few flat lists. A value that
does not read back as one (kept by hand, or damaged) is no value: the history is derived
again, never shown from it.

`METHOD` names what derives a history: iolab's version and a digest of the analysis code
(this module's neighbours that make the series, and the store's reading of the figures), so
that a changed iolab never reads what another one derived.
"""

from __future__ import annotations

import array
import dataclasses
import functools
import hashlib
import importlib.util
import itertools
import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from iolab.analysis import history
from iolab.version import __version__

KEY = "history {}"  # the key of a plan's history, by its name
DERIVED_BY = (  # the modules whose code derives a history
    "iolab.analysis.history",
    "iolab.analysis.changepoint",
    "iolab.analysis.stats",
    "iolab.store.figures",
    __name__,
)


class Kept(NamedTuple):
    """A plan's history read back: the runs it joined (ids, oldest first) and its series."""

    run_ids: tuple[int, ...]
    series: tuple[history.RunSeries, ...]


@functools.cache
def method() -> str:
    """iolab's version and a digest of the code that derives a history."""
    digest = hashlib.sha256(__version__.encode())
    for module in DERIVED_BY:
        found = importlib.util.find_spec(module)  # its file, without importing it (numpy)
        source = found.origin if found is not None else None
        if source is not None and Path(source).is_file():
            digest.update(Path(source).read_bytes())
    return f"{__version__} {digest.hexdigest()[:16]} {sys.byteorder}"


def encode(run_ids: Sequence[int], series: Sequence[history.RunSeries]) -> bytes:
    """The history in columns: a JSON head (the runs, and each series' names, steps, change
    points, load warnings and how many points and values it has), a NUL byte (never in JSON
    text), then each series' run ids, start times, repetition counts and values as arrays of
    64-bit numbers in this machine's byte order (part of `method`)."""
    head: list[object] = []
    body = bytearray()
    for one in series:
        points = one.points
        counts = [len(p.values) for p in points]
        head.append(
            [
                one.setup,
                one.workload,
                one.metric,
                len(points),
                sum(counts),
                {i: " ".join(sorted(p.load)) for i, p in enumerate(points) if p.load},
                [dataclasses.astuple(s) for s in one.steps],
                [dataclasses.astuple(c) for c in one.changes],
            ]
        )
        body += array.array("q", [p.run_id for p in points]).tobytes()
        body += array.array("d", [p.started_at for p in points]).tobytes()
        body += array.array("q", counts).tobytes()
        body += array.array("d", [v for p in points for v in p.values]).tobytes()
    text = json.dumps({"runs": list(run_ids), "series": head}, separators=(",", ":"))
    return text.encode() + b"\0" + bytes(body)


def decode(kept: bytes) -> Kept | None:
    """The history `encode` wrote; None for anything else."""
    head, _, body = kept.partition(b"\0")
    try:
        found = json.loads(head)
        columns = _Columns(memoryview(body))
        series = tuple(_read_series(row, columns) for row in found["series"])
        if columns.at != len(body):
            raise ValueError("more bytes than the series have")
        return Kept(tuple(_int(i) for i in found["runs"]), series)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError):
        return None


class _Columns:
    """The arrays after the head, read in order."""

    def __init__(self, body: memoryview) -> None:
        self.body, self.at = body, 0

    def take(self, kind: str, count: int) -> list[Any]:
        found = array.array(kind)
        found.frombytes(self.body[self.at : self.at + count * found.itemsize])
        if len(found) != count:
            raise ValueError("fewer bytes than the series have")
        self.at += count * found.itemsize
        return found.tolist()


def _read_series(row: object, columns: _Columns) -> history.RunSeries:
    setup, workload, metric, n, size, loads, steps, changes = _row(row, 8)
    if metric not in history.METRICS or not isinstance(setup, str) or not isinstance(workload, str):
        raise ValueError("not a series")
    if not isinstance(loads, dict) or not isinstance(steps, list) or not isinstance(changes, list):
        raise ValueError("not a series")
    runs, at = columns.take("q", _int(n)), columns.take("d", _int(n))
    counts, flat = columns.take("q", _int(n)), columns.take("d", _int(size))
    if sum(counts) != size or (counts and min(counts) < 1):
        raise ValueError("repetition counts that are not the values'")
    load = [_load(str(loads.get(str(i), ""))) for i in range(len(runs))] if loads else None
    # a long history is 100,000 points: made in C loops (map) where it can
    points = tuple(
        map(history.RunPoint, runs, at, _grouped(flat, counts), load or [frozenset()] * len(runs))
    )
    return history.RunSeries(
        setup,
        workload,
        metric,
        points,
        tuple(_step(s) for s in steps),
        tuple(_change(c) for c in changes),
    )


def _grouped(flat: list[float], counts: list[int]) -> Iterable[tuple[float, ...]]:
    """Each point's values, `counts[i]` of them, from the flat list."""
    if counts and min(counts) == max(counts):  # the same repetitions in every run
        return zip(*[iter(flat)] * counts[0], strict=True)
    taken = iter(flat)
    return (tuple(itertools.islice(taken, n)) for n in counts)


@functools.cache  # few distinct ones: most points carry none
def _load(codes: str) -> frozenset[str]:
    return frozenset(codes.split())


def _step(row: object) -> history.RunStep:
    run, change, half, significant, facts, back = _row(row, 6)
    return history.RunStep(
        _int(run),
        _float(change),
        _maybe_float(half),
        None if significant is None else _bool(significant),
        _facts(facts),
        None if back is None else _int(back),
    )


def _change(row: object) -> history.RunChange:
    run, p_value, before, after, change, half, facts = _row(row, 7)
    return history.RunChange(
        _int(run),
        _float(p_value),
        _float(before),
        _float(after),
        _maybe_float(change),
        _maybe_float(half),
        _facts(facts),
    )


def _row(row: object, size: int) -> list[object]:
    if not isinstance(row, list) or len(row) != size:
        raise ValueError(f"not a row of {size}")
    return row


def _int(v: object) -> int:
    if type(v) is not int:
        raise ValueError("not an integer")
    return v


def _float(v: object) -> float:
    if not isinstance(v, int | float) or isinstance(v, bool):
        raise ValueError("not a number")
    return float(v)


def _maybe_float(v: object) -> float | None:
    return None if v is None else _float(v)


def _bool(v: object) -> bool:
    if not isinstance(v, bool):
        raise ValueError("not true or false")
    return v


def _facts(v: object) -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ValueError("not a list of texts")
    return tuple(v)
