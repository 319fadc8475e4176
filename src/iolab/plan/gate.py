"""The plan's `[check]` table: how much worse each metric may get before `iolab check` fails
a run (a percentage of the baseline's median, beyond the noise as well).

    [check]
    iops = "5%"    # IOPS may drop 5%
    bw = "5%"      # bandwidth (MB/s) likewise
    p99 = "10%"    # the 99th percentile of completion latency may rise 10%
    window = 10    # the earlier runs a run is judged against (4 to 1000)
    strict = true  # a run not judged fails the build (exit 5); false: exits 0, said

Rules on the command line (`iolab check --rule iops=2`) win over the plan's, which win over
the defaults (analysis.history.DEFAULT_RULES). The run records its plan's text, so `iolab
check` reads the rules of the run it judges.
"""

from __future__ import annotations

from typing import Any

from iolab import units
from iolab.analysis.history import METRICS, Metric
from iolab.choices import HISTORY_LEAST, HISTORY_MOST_WINDOW
from iolab.plan.common import Where, known_keys, table_value
from iolab.store.rows import recorded_plan

MOST = 1000.0  # a rule above 1000% is a typo, not a gate
SETTINGS = ("window", "strict")


def allowance(value: object) -> float | None:
    """5, 5.0, "5" and "5%" -> 5.0; None for anything else (a number as units.number reads
    it: "5_0", "1e2", "inf" or other scripts' digits are not one), or outside 0-1000%."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = units.number(value.strip().removesuffix("%"))
        except ValueError:
            return None
    if not isinstance(value, int | float) or not 0 <= value <= MOST:
        return None
    return float(value)


def rules(data: dict[str, Any], top: Where) -> tuple[tuple[Metric, float], ...]:
    """The `[check]` table of a plan, checked: (metric, allowed %) in the order written."""
    if "check" not in data:
        return ()
    where = Where(top.source, top.text, "check")
    table = table_value(data["check"], top, "check")
    known_keys(table, (*METRICS, *SETTINGS), where, "[check]")
    if "window" in table and window(table["window"]) is None:
        raise where.fail(
            "window",
            f"window = {table['window']!r} must be a whole number of "
            f"runs from {HISTORY_LEAST} to {HISTORY_MOST_WINDOW}",
        )
    if "strict" in table and not isinstance(table["strict"], bool):
        raise where.fail("strict", f"strict = {table['strict']!r} must be true or false")
    out = []
    for name in METRICS:
        if name in table:
            allowed = allowance(table[name])
            if allowed is None:
                raise where.fail(
                    name,
                    f'{name} = {table[name]!r} must be a percentage from 0 to 1000, such as "5%"',
                )
            out.append((name, allowed))
    return tuple(out)


def recorded_rules(plan_text: str) -> dict[Metric, float]:
    """The `[check]` rules of a run's recorded plan text; none for a job file, an import, or
    a plan without the table (the plan was checked when it ran)."""
    table = recorded_plan(plan_text).get("check", {})
    if not isinstance(table, dict):
        return {}
    found = {name: allowance(table.get(name)) for name in METRICS}
    return {name: value for name, value in found.items() if value is not None}


def window(value: object) -> int | None:
    """A window of earlier runs: a whole number from HISTORY_LEAST to HISTORY_MOST_WINDOW;
    None otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if HISTORY_LEAST <= value <= HISTORY_MOST_WINDOW else None


def recorded_settings(plan_text: str) -> tuple[int | None, bool | None]:
    """The `[check]` window and strict of a run's recorded plan text (None where unset)."""
    table = recorded_plan(plan_text).get("check", {})
    if not isinstance(table, dict):
        return None, None
    strict = table.get("strict")
    return window(table.get("window")), strict if isinstance(strict, bool) else None
