"""Workloads with a method: `method = "peak"` searches numjobs x iodepth for the highest
figure, `method = "curve"` finds it (or takes the workload's fixed point) and then runs at
10% to 100% of its IOPS (see analysis.peak).

With a method, `numjobs` and `iodepth` are the search's bounds, `[low, high]` (a single value
fixes that axis), not sweep axes; any other list is still a sweep, each point searched on
its own. A method workload point is planned as two cases: its start (the search's first
point, named with its numjobs and iodepth) and, after the search, the start again (named
"... again"): the search runs between them, adding cases as it goes, and the second shows
whether the target drifted meanwhile. Because the closing case stays to run until the search
is done, a run interrupted during a search resumes it (`iolab run --resume RUN`), reusing the
points stored.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from iolab.analysis import objective, peak
from iolab.errors import PlanError
from iolab.model import Method, Workload
from iolab.plan.checks import CHECKS, MAX_IODEPTH, MAX_JOBS
from iolab.plan.common import Where

SYNC_ENGINES = ("sync", "psync", "vsync", "pvsync", "pvsync2", "mmap")


def bounds(merged: dict[str, Any], where: Where) -> dict[str, Any]:
    """A method workload's numjobs and iodepth as the search's bounds: the options start at
    the search's first point and keep the bounds in peak_numjobs and peak_iodepth."""
    for key in peak.SET_BY_IOLAB:
        if key in merged:
            raise where.fail(key, f"{key} is set by iolab itself; drop it")
    method = merged.get("method")
    if method is None:
        if "peak_margin" in merged:
            raise where.fail("peak_margin", 'peak_margin goes with method = "peak" or "curve"')
        if "slo" in merged:
            raise where.fail("slo", 'slo goes with method = "curve"')
        return merged
    if "slo" in merged and method != "curve":
        raise where.fail("slo", 'slo goes with method = "curve": the curve finds its point')
    out = dict(merged)
    spans: dict[str, tuple[int, int]] = {}
    for key in ("numjobs", "iodepth"):
        value = merged[key]
        if isinstance(value, list):
            whole = all(isinstance(v, int) and not isinstance(v, bool) for v in value)
            if len(value) != 2 or not whole or value[0] > value[1]:
                raise where.fail(
                    key,
                    f"with method = {method!r}, {key} = [low, high] gives the search's bounds "
                    f"(e.g. [1, 64]), not {value!r}",
                )
            low, high = value
        else:
            low = high = value
        out[f"peak_{key}"] = f"{low}-{high}"
        spans[key] = (low, high)
    out["numjobs"], out["iodepth"] = peak.first_point(peak.Bounds(**spans))
    deepest = spans["iodepth"][1]
    if out.get("ioengine") in SYNC_ENGINES and deepest > 1:
        raise where.fail(
            "iodepth",
            f"iodepth up to {deepest} has no effect with ioengine = {out['ioengine']!r}; "
            'use ioengine = "libaio" or "io_uring", or search numjobs only (iodepth = 1)',
        )
    return out


def points(expanded: list[Workload]) -> list[Workload]:
    """Each method point as two: its start, named with its numjobs and iodepth, and the
    start again, measured after the search. The method's keys leave fio's options for a
    typed `Workload.method`."""
    out: list[Workload] = []
    for workload in expanded:
        if "method" not in workload.options:
            out.append(workload)
            continue
        start, method = split(workload)
        options = start.options
        name = peak.point_name(workload.name, (int(options["numjobs"]), int(options["iodepth"])))
        again = replace(start, name=f"{name} again", method=replace(method, again=True))
        out += [replace(start, name=name), again]
    return out


def split(workload: Workload) -> tuple[Workload, Method]:
    """A workload whose options still hold its method's keys, with them as a `Method`."""
    options = dict(workload.options)
    kind = options.pop("method")
    margin = options.pop("peak_margin", None)
    method = Method(
        "curve" if kind == "curve" else "peak",
        peak.span(str(options.pop("peak_numjobs"))),
        peak.span(str(options.pop("peak_iodepth"))),
        margin,
        slo=objective.slo_text(str(options.pop("slo", ""))),
    )
    return replace(workload, options=options, method=method), method


def check_plan(workloads: tuple[Workload, ...], auto: bool, rounds: bool, top: Where) -> None:
    """A search decides its own cases: it does not mix with repeat = "auto" or [steady]."""
    searched = next((w for w in workloads if w.method is not None), None)
    if searched is None or searched.method is None or not (auto or rounds):
        return
    said = 'repeat = "auto"' if auto else "[steady] rounds"
    raise top.fail(
        "repeat" if auto else "steady",
        f"workload {searched.name!r} has method = {searched.method.kind!r}, which does "
        f"not mix with {said}: run them as two plans",
    )


def command_plan(
    rw: str, bs: str, curve: bool, numjobs: str, iodepth: str, slo: str | None = None
) -> str:
    """The plan `iolab peak` runs: one workload searched on one set-up (the target comes as
    an override, like `iolab run --target`). Values are checked here, so that a fault names
    the flag that gave it."""
    for flag, value in (("rw", rw), ("bs", bs)):
        problem = CHECKS[flag](value)
        if problem:
            raise PlanError(f"--{flag} {value!r} {problem}")
    bounds = {
        flag: _bounds(flag, text) for flag, text in (("numjobs", numjobs), ("iodepth", iodepth))
    }
    if slo is not None and objective.slo(slo) is None:
        raise PlanError(f"--slo {slo!r} must be {objective.slo_problem(slo)}")
    method = "curve" if curve or slo is not None else "peak"
    return (
        "\n".join(
            [
                f'name = "{method} {bs} {rw}"',
                f'description = "iolab peak: {bs} {rw}, numjobs {numjobs} x iodepth {iodepth}"',
                "[[setup]]",
                'name = "target"',
                'path = "."',
                "[[workload]]",
                f'rw = "{rw}"',
                f'bs = "{bs}"',
                f'method = "{method}"',
                *(f"{flag} = [{low}, {high}]" for flag, (low, high) in bounds.items()),
                *([f'slo = "{objective.slo_text(slo)}"'] if slo is not None else []),
            ]
        )
        + "\n"
    )


def _bounds(flag: str, text: str) -> tuple[int, int]:
    """ "1-64" (or "8") as bounds within fio's limits."""
    try:
        low, high = peak.span(text)
    except ValueError:
        low = high = 0
    top = MAX_JOBS if flag == "numjobs" else MAX_IODEPTH
    if not 1 <= low <= high <= top:
        raise PlanError(f"--{flag} {text!r} must be LOW-HIGH (or one value), from 1 to {top:,}")
    return low, high
