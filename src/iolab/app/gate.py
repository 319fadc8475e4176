"""A plan followed over time: `iolab history` and the gate, `iolab check`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from iolab.analysis import ab, gate_verdicts, history
from iolab.app.base import Ui, collector_paused, open_store
from iolab.errors import ReportError, StoreError
from iolab.plan import gate
from iolab.store import RunRow, Store
from iolab.store.figures import CaseFigures, PointFigures, of_row
from iolab.store.rows import CaseRow, recorded_plan


@dataclass(frozen=True)
class History:
    plan_name: str
    runs: tuple[RunRow, ...]
    series: tuple[history.RunSeries, ...]


def plan_history(db: str, plan_name: str | None, ui: Ui, run_ids: Sequence[int] = ()) -> History:
    """Every run of one plan (by name; default: the plan of the latest run measured here, not
    imported), and every imported run whose cases are the plan's (history.joins), oldest
    first, as series (analysis.history); or the runs named by `run_ids`, whatever their
    plans. Derived from the runs each time: nothing of it is kept in the database."""
    with collector_paused(), open_store(db, ui) as store:
        stored = store.runs()
        if not stored:
            raise StoreError(f"{db} holds no runs yet; run a plan first")
        if run_ids:
            named = sorted(
                (store.run(i) for i in dict.fromkeys(run_ids)), key=lambda r: r.started_at
            )
            title = " and ".join(dict.fromkeys(r.plan_name for r in named))
            return History(title, tuple(named), tuple(_series(store, named, history.WINDOW)))
        measured = [r for r in stored if r.origin.kind != "import"] or stored
        name = plan_name if plan_name is not None else measured[-1].plan_name
        return _derived(store, db, name, stored)


def _derived(store: Store, db: str, name: str, stored: Sequence[RunRow]) -> History:
    """The plan's runs and the imported runs that join them, oldest first, as series."""
    mine = [r for r in stored if r.plan_name == name]
    if not mine:
        plans = ", ".join(sorted({r.plan_name for r in stored}))
        raise StoreError(f"{db} holds no run of a plan named {name!r}; its plans: {plans}")
    last = max(mine, key=lambda r: r.started_at)
    latest = store.point_figures([last.id])
    setups = {p.setup for p in latest}  # an import's cases are read only if it may join
    joined = [
        r
        for r in stored
        if r.plan_name != name
        and r.origin.kind == "import"
        and {n for n, _, _ in store.setups(r.id)} <= setups
        and history.joins(latest, store.point_figures([r.id]))
    ]
    chosen = sorted([*mine, *joined], key=lambda r: r.started_at)
    window = gate.recorded_settings(chosen[-1].plan_text)[0] or history.WINDOW
    return History(name, tuple(chosen), tuple(_series(store, chosen, window)))


def _series(store: Store, runs: Sequence[RunRow], window: int) -> list[history.RunSeries]:
    """The runs' series (oldest first), their points read in one query; a figure that is
    not a finite number (an extreme value stored, a change from one next to 0) is refused
    before anything shows it."""
    by_run: dict[int, list[PointFigures]] = {r.id: [] for r in runs}
    for point in store.point_figures([r.id for r in runs]):
        by_run[point.run_id].append(point)
    found = history.series_of_points(runs, [p for r in runs for p in by_run[r.id]], window)
    odd = history.not_finite(found)
    if odd is not None:
        raise StoreError(
            f"{store.path}: refused, the history of its runs holds a figure that is not a "
            f"finite number ({odd}); check the figures stored there, or use another --db"
        )
    return found


@dataclass(frozen=True)
class CheckRequest:
    """`iolab check`'s flags: None where not given (the plan's [check], then the defaults)."""

    run_id: int | None
    baseline: int | None
    rules: Mapping[history.Metric, float]
    window: int | None = None
    strict: bool | None = None


CHECK_RUNS = 60  # the earlier runs a check reads, at least: its windows and change points


def check(db: str, request: CheckRequest, ui: Ui) -> gate_verdicts.Checked:
    """`iolab check`: the latest run (or RUN) of its plan against the runs of the plan before
    it (or up to and including --baseline), under the rules, window and strictness given,
    then its plan's [check], then the defaults."""
    with open_store(db, ui) as store:
        latest = store.run(request.run_id)
        base = store.run(request.baseline) if request.baseline is not None else None
        if base is not None and base.id == latest.id:  # every series would match itself
            raise ReportError(
                f"--baseline {base.id} is run {latest.id} itself, which cannot be judged against "
                "itself; give an earlier run of its plan"
            )
        window, strict = gate.recorded_settings(latest.plan_text)
        how = gate_verdicts.Gate(
            {**history.DEFAULT_RULES, **gate.recorded_rules(latest.plan_text), **request.rules},
            request.window or window or history.WINDOW,
            next((s for s in (request.strict, strict) if s is not None), True),
        )
        mine, elsewhere = _history_runs(store, latest, base, max(CHECK_RUNS, 3 * how.window))
        read = store.case_figures([r.id for r in mine])
        runs = [(r, read[r.id]) for r in mine]
        beside = _beside(store, latest.id) if _foreign(read[latest.id]) else ""
    found = history.series(runs, how.window, marks=False)
    measured = {(c.setup, c.workload) for c in read[latest.id]}
    verdicts = gate_verdicts.gate(found, latest.id, request.baseline, how, measured)
    return gate_verdicts.Checked(
        latest.id, latest.plan_name, how, tuple(verdicts), beside, len(mine) == 1, elsewhere
    )


def check_ab(db: str, request: CheckRequest, ui: Ui) -> gate_verdicts.Checked:
    """`iolab check --ab`: the latest run (or RUN), whose plan interleaved its set-ups, each
    set-up against the baseline (the plan's, else the first) by their paired rounds."""
    with open_store(db, ui) as store:
        run = store.run(request.run_id)
        if recorded_plan(run.plan_text).get("order") != "interleaved":
            raise ReportError(
                f"run {run.id} did not interleave its set-ups: --ab judges a run whose plan "
                'has order = "interleaved" (each repetition a round of every set-up, A B B A)'
            )
        cases = store.cases(run.id)
        beside = _beside(store, run.id) if _foreign([of_row(c) for c in cases]) else ""
    _, strict = gate.recorded_settings(run.plan_text)
    how = gate_verdicts.Gate(
        {**history.DEFAULT_RULES, **gate.recorded_rules(run.plan_text), **request.rules},
        strict=next((s for s in (request.strict, strict) if s is not None), True),
    )
    base = run.baseline or (cases[0].setup if cases else "")
    verdicts = [
        ab.judge((run.id, run.started_at), rounds, how.rules[rounds.metric], load)
        for rounds, load in _rounds(cases, base)
        if rounds.metric in how.rules
    ]
    others = sorted({c.setup for c in cases} - {base})
    said = f"{', '.join(others) or 'no other set-up'} against {base}"
    paired = f"{said}, {len({c.repetition for c in cases})} interleaved rounds"
    ordered = sorted(verdicts, key=lambda v: (not v.regression, v.judged))
    return gate_verdicts.Checked(run.id, run.plan_name, how, tuple(ordered), beside, paired=paired)


def _rounds(cases: Sequence[CaseRow], base: str) -> list[tuple[ab.Rounds, frozenset[str]]]:
    """Each other set-up x workload x metric of an interleaved run: its rounds beside the
    baseline's, and the load its cases and the baseline's carried."""
    figures: dict[tuple[str, str, history.Metric], dict[int, float]] = {}
    loads: dict[tuple[str, str], set[str]] = {}
    for case in cases:
        found = of_row(case)
        loads.setdefault((case.setup, case.workload), set()).update(
            found.codes & {history.FOREIGN, history.CPU_BOUND}
        )
        if case.status != "ok":
            continue
        for metric, value in _figures(found):
            figures.setdefault((case.setup, case.workload, metric), {})[case.repetition] = value
    out = []
    for (setup, workload, metric), b in figures.items():
        a = figures.get((base, workload, metric))
        if setup == base or a is None:
            continue
        load = frozenset(loads[(setup, workload)] | loads.get((base, workload), set()))
        out.append((ab.Rounds(base, setup, workload, metric, a, b), load))
    return out


def _figures(found: CaseFigures) -> list[tuple[history.Metric, float]]:
    """A case's figures as the gate's series read them (history.figures_of): its primary
    (IOPS or MB/s by its options) and its p99 completion latency in µs, where it has them."""
    return [
        (metric, value)
        for metric in (history.primary(found.options), "p99")
        for value in history.figures_of([found], metric)
    ]


def _foreign(cases: Sequence[CaseFigures]) -> bool:
    return any(history.FOREIGN in c.codes for c in cases)


def _beside(store: Store, run_id: int) -> str:
    """What the run's foreign-load warnings say of the other load, each once: "other
    processes used 54% of the CPUs the jobs may use"."""
    said: dict[str, None] = {}
    for case in store.cases(run_id):
        for warned in case.warnings:
            if warned.code == history.FOREIGN:
                text = warned.message.partition(": ")[2].partition(" (the busiest")[0]
                said[text.partition(". The figure")[0]] = None
    return "; ".join(list(said)[:3])


def _history_runs(
    store: Store, latest: RunRow, base: RunRow | None, most: int
) -> tuple[list[RunRow], int]:
    """The runs a check reads, oldest first: the plan's latest `most` runs on the latest's
    host before it (or up to and including --baseline), and the latest (alone: the plan's
    first run there); and how many of the plan's runs were left out for another host."""
    until = base.started_at if base is not None else latest.started_at
    mine = [
        r
        for r in store.runs()
        if r.plan_name == latest.plan_name and r.id != latest.id and r.started_at <= until
    ]
    host = _host(latest)
    earlier = [r for r in mine if host is None or _host(r) in (None, host)]
    if base is not None and base.id not in {r.id for r in earlier}:
        earlier.append(base)  # another plan's or host's run, named: judged against it
    earlier.sort(key=lambda r: r.started_at)
    kept = {r.id for r in earlier}
    return [*earlier[-most:], latest], sum(r.id not in kept for r in mine)


def _host(run: RunRow) -> str | None:
    """The host a run ran on, where it recorded one (an import may not)."""
    name = run.environment.get("hostname")
    return name if isinstance(name, str) and name else None
