"""`iolab import`'s facts of the set-ups, as the person wrote them on the command line, made
typed values: `--devices`, `--rated-iops`, `--rated-mbps` and `--cache` an `exchange.Facts`,
`--factor` the factors by set-up. Each flag may be given any number of times, for every set-up
(VALUE) or for one (SETUP=VALUE); a value that does not hold is a PlanError of one line saying
how to write it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from iolab import names, units
from iolab.errors import PlanError
from iolab.exchange.factored import Factors
from iolab.exchange.run_builder import Facts
from iolab.units import parse_size

FACT_FLAGS = ("--devices", "--rated-iops", "--rated-mbps", "--cache")
MAX_CACHE = 1024**5  # 1 PiB: more cache than any set-up has in front of it
SHOWN = 60  # characters of a flag's value quoted in a message


def facts(
    devices: Sequence[str] = (),
    rated_iops: Sequence[str] = (),
    rated_mbps: Sequence[str] = (),
    cache: Sequence[str] = (),
) -> Facts:
    """Every set-up's facts, and each named set-up's own: each value checked (finite,
    positive, a size, a block and pattern)."""
    found: dict[str, Facts] = {}  # by the set-up named; "": every set-up's
    for flag, values in zip(FACT_FLAGS, (devices, rated_iops, rated_mbps, cache), strict=True):
        for text in values:
            name, named, value = text.rpartition("=")
            if named and not name:
                raise PlanError(f"{flag} {_said(text)}: give VALUE, or SETUP=VALUE for one set-up")
            found[name] = _fact(flag, value, found.get(name, Facts()))
    every = found.pop("", Facts())
    return replace(every, named=tuple(found.items()))


def factors(texts: Sequence[str]) -> dict[str, Factors]:
    """--factor NAME=VALUE (every set-up) or SETUP=NAME=VALUE (one), by set-up ("": every
    set-up's), each checked by the rule of names (names.factor)."""
    found: dict[str, dict[str, str]] = {}
    for text in texts:
        parts = text.rsplit("=", 2)
        if len(parts) < 2:
            raise PlanError(f"--factor {_said(text)}: give NAME=VALUE, or SETUP=NAME=VALUE")
        setup, name, value = parts if len(parts) == 3 else ("", *parts)
        try:
            factor = names.factor(name), names.factor(value)
            setup = names.check(setup) if setup else ""
        except names.BadName as error:
            raise PlanError(f"--factor {_said(text)}: a name or value {error}") from None
        found.setdefault(setup, {})[factor[0]] = factor[1]
    return {setup: tuple(each.items()) for setup, each in found.items()}


def _fact(flag: str, text: str, into: Facts) -> Facts:
    """`into` with one flag's value."""
    if flag == "--devices":
        return replace(into, devices=_devices(text))
    if flag == "--cache":
        return replace(into, cache_bytes=_cache(text))
    if flag == "--rated-mbps":
        return replace(into, rated_bps=_rated(flag, text, 1e6))
    figures, at, shape = text.partition("@")
    rated = replace(into, rated_iops=_rated(flag, figures, 1.0))
    if not at:
        return rated
    block, random = _rated_shape(text, shape)
    return replace(rated, rated_block=block, rated_random=random)


def _devices(text: str) -> int:
    devices = _positive("--devices", text)
    if devices != int(devices) or devices > 4096:
        raise PlanError(f"--devices {_said(text)}: give a whole number, 1 to 4096")
    return int(devices)


def _cache(text: str) -> int:
    try:
        cache_bytes = parse_size(text)
    except ValueError:
        raise PlanError(f"--cache {_said(text)}: not a size; give one such as 512M or 1G") from None
    if not cache_bytes or cache_bytes > MAX_CACHE:
        raise PlanError(f"--cache {_said(text)}: give a size above 0 and at most 1P, such as 512M")
    return cache_bytes


def _said(text: str) -> str:
    """A flag's value as a message quotes it: escaped, and its start only when it is long."""
    shown = names.shown(text)
    return repr(shown if len(shown) <= SHOWN else f"{shown[:SHOWN]}... ({len(text):,} characters)")


def _rated_shape(text: str, shape: str) -> tuple[int, bool]:
    """'4k:random' -> the block and whether at random offsets, where rated IOPS hold."""
    block, _, pattern = shape.partition(":")
    try:
        size = parse_size(block)
    except ValueError:
        size = 0
    if not size or pattern not in ("", "random", "sequential"):
        raise PlanError(
            f"--rated-iops {_said(text)}: after @ give the block size and pattern the figures "
            "hold at, such as @4k:random or @128k:sequential"
        )
    return size, pattern != "sequential"


def _rated(flag: str, text: str, unit: float) -> tuple[float, float]:
    """One figure for both directions, or READ,WRITE."""
    parts = text.split(",")
    if len(parts) > 2 or not all(parts):
        raise PlanError(f"{flag} {_said(text)}: give one figure, or two as READ,WRITE")
    read, write = (_positive(flag, part) * unit for part in (parts[0], parts[-1]))
    return read, write


def _positive(flag: str, text: str) -> float:
    """A flag's number: finite and above 0."""
    try:
        value = units.number(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise PlanError(f"{flag} {_said(text)}: give a finite number above 0")
    return value
