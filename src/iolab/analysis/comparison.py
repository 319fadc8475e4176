"""Checks on comparing runs: what differs in their making, and what they can resolve.

- `mixed-versions`: the runs' fio or kernel versions differ (between runs, or within one
  import of files from several fio versions), so a difference may be theirs.
- `few-repeats`: the machine's own noise floor (the median coefficient of variation of the
  cells' repetitions) and the number of repetitions set the smallest difference a comparison
  can tell from noise: t(0.975, 2n-2) x CoV x sqrt(2/n). A difference called significant
  below twice that is flagged: the intervals see only the noise within a run, not the drift
  between runs, so with few repetitions such calls are fragile.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence

from iolab.analysis.stats import Difference, Summary, t975
from iolab.model import CheckWarning, Code

VERSION_KEYS = (("fio_version", "fio"), ("kernel", "kernel"))
FRAGILE_FACTOR = 2.0


def _versions(value: object) -> tuple[str, ...]:
    """The versions one run records: an import of files from several fio versions lists them
    all ("fio-3.1, fio-3.33"); () when it recorded none."""
    listed = {part.strip() for part in str(value or "").split(",")}
    return tuple(sorted(listed - {"", "?"}))


def mixed_versions(hosts: Sequence[tuple[int, Mapping[str, object]]]) -> CheckWarning | None:
    """(run id, its host facts) of the runs in a report or comparison: their fio or kernel
    versions differ, between the runs or within one (an import of several fio versions). A
    run that did not record a version (an import knows no kernel) is left out of that one."""
    said = []
    for key, name in VERSION_KEYS:
        values = {run: found for run, env in hosts if (found := _versions(env.get(key)))}
        if len({v for found in values.values() for v in found}) > 1:
            said.append(
                f"{name} " + ", ".join(f"run {r}: {' and '.join(v)}" for r, v in values.items())
            )
    if not said:
        return None
    whose = "the runs were" if len(hosts) > 1 else f"the cases of run {hosts[0][0]} were"
    advice = (
        "Compare runs made with the same fio and kernel, or re-run the reference."
        if len(hosts) > 1
        else "Import each version's results as a run of its own, or re-run them with one fio."
    )
    return CheckWarning(
        Code.MIXED_VERSIONS,
        f"{whose} made with different software ({'; '.join(said)}): a difference may "
        "come from it, not from the storage.",
        advice,
    )


def smallest_resolvable(summaries: Sequence[Summary]) -> tuple[float, int] | None:
    """(the smallest difference, as a share of the mean, that n repetitions can tell from
    this machine's noise floor; n), from the cells' summaries; None without repetitions."""
    covs = [s.cov for s in summaries if s.cov is not None]
    counts = [s.n for s in summaries if s.n > 1]
    if not covs or not counts:
        return None
    n = min(counts)
    floor = statistics.median(covs)
    return t975(2 * n - 2) * floor * math.sqrt(2 / n), n


def few_repeats(
    summaries: Sequence[Summary], differences: Sequence[Difference]
) -> CheckWarning | None:
    resolvable = smallest_resolvable(summaries)
    if resolvable is None:
        return None
    share, n = resolvable
    fragile = [
        d
        for d in differences
        if d.significant
        and d.change_pct is not None
        and abs(d.change_pct) / 100 < FRAGILE_FACTOR * share
    ]
    if not fragile:
        return None
    return CheckWarning(
        Code.FEW_REPEATS,
        f"with {n} repetitions and this machine's noise floor, differences under about "
        f"{share:.1%} cannot be told from noise; {len(fragile)} change(s) called significant "
        f"are under {FRAGILE_FACTOR * share:.1%} and may not hold.",
        'Repeat more (repeat = "auto"), and run the compared plans interleaved.',
    )


CEILING_MARGIN = 1.05  # measurement noise allowed above the physical bound


def above_ceiling(
    single: Mapping[str, float],
    others: Sequence[tuple[str, float, str, float, str]],
    advice: Mapping[tuple[str, str], str] | None = None,
) -> list[CheckWarning]:
    """Results above what their devices can do together: a set-up measuring more than the
    most its members can deliver, as a multiple of the one device on the same workload (N
    devices for reads; for writes the members' worth of data, 1 for a mirror: see
    raid_model.Geometry.data). Study C's 4-drive RAID0 wrote 821 MB/s over drives rated
    170 MB/s. `single`: workload -> the one device's value; `others`: (set-up, its ceiling
    as a multiple of one device, workload, value, what the ceiling is); `advice`: (set-up,
    workload) -> what to do, where it differs from the general advice (checks.ceiling_advice)."""
    found = []
    for setup, most, workload, value, why in others:
        alone = single.get(workload)
        if not alone or most <= 0 or value <= CEILING_MARGIN * most * alone:
            continue
        found.append(
            CheckWarning(
                Code.ABOVE_CEILING,
                f"{setup} measured {value / alone:.1f}x one device on {workload}, above the "
                f"{most:g}x {why}: a cache, not the devices, answered.",
                (advice or {}).get(
                    (setup, workload),
                    "Make the test area larger than every cache (card, drive, page cache), or "
                    "use direct=1.",
                ),
            )
        )
    return found
