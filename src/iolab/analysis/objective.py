"""A latency objective for a load curve (--slo p99=2ms): its form, its bounds, its words."""

from __future__ import annotations

import re

from iolab import units

SLO_KEYS = {"p50": "p50_ns", "p99": "p99_ns", "p99.9": "p999_ns"}  # as CurvePoint has them


_TIME_NS = {"ns": 1.0, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}


_SLO = re.compile(r"(p50|p99|p99\.9)<=([0-9.]+)(ns|us|µs|ms|s)", re.ASCII)


SLO_NS = (1e3, 3600e9)  # a latency target from 1 µs to an hour: what a storage stack can mean


SLO_BOUNDS = "from 1 µs to 1 hour"


SLO_FORM = (
    'a latency target such as "p99<=2ms" (p50, p99 or p99.9; ns, us, ms or s; the number in '
    f"ASCII digits, with no exponent), {SLO_BOUNDS}"
)


def slo(text: object) -> tuple[str, float] | None:
    """ "p99<=2ms" -> ("p99", 2e6): the percentile (p50, p99 or p99.9) and its limit in ns;
    None when the text is not one (spaces and case aside: no other character passes; the
    number as units.number reads it), or its limit is outside SLO_NS."""
    found = _slo_form(text)
    return found if found is not None and SLO_NS[0] <= found[1] <= SLO_NS[1] else None


def slo_problem(text: object) -> str | None:
    """What a latency target must be, when it is not one: its form, or its bounds."""
    if _slo_form(text) is None:
        return SLO_FORM
    return None if slo(text) is not None else f"a latency target {SLO_BOUNDS}"


def _slo_form(text: object) -> tuple[str, float] | None:
    found = _SLO.fullmatch(slo_text(str(text)))
    if found is None:
        return None
    key, number, unit = found.groups()
    try:
        return key, units.number(number) * _TIME_NS[unit]
    except ValueError:
        return None


def slo_text(text: str) -> str:
    """A latency target as iolab writes it ("p99 <= 2 ms" -> "p99<=2ms"); checked by slo()."""
    return text.replace(" ", "").lower()
