"""A plan followed over time: `iolab history` and the gate, `iolab check`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from iolab.analysis import gate_verdicts, history, history_kept
from iolab.app.base import Ui, open_store
from iolab.errors import ReportError, StoreError
from iolab.plan import gate
from iolab.store import RunRow, Store
from iolab.store.figures import CaseFigures


@dataclass(frozen=True)
class History:
    plan_name: str
    runs: tuple[RunRow, ...]
    series: tuple[history.RunSeries, ...]


def plan_history(db: str, plan_name: str | None, ui: Ui, run_ids: Sequence[int] = ()) -> History:
    """Every run of one plan (by name; default: the plan of the latest run measured here, not
    imported), and every imported run
    whose cases are the plan's (history.joins), oldest first, as series (analysis.history);
    or the runs named by `run_ids`, whatever their plans."""
    with open_store(db, ui) as store:
        stored = store.runs()
        if not stored:
            raise StoreError(f"{db} holds no runs yet; run a plan first")
        if run_ids:
            named = sorted(
                (store.run(i) for i in dict.fromkeys(run_ids)), key=lambda r: r.started_at
            )
            named_cases = store.case_figures([r.id for r in named])
            chosen = [(r, named_cases[r.id]) for r in named]
            title = " and ".join(dict.fromkeys(r.plan_name for r in named))
            return History(title, tuple(named), tuple(history.series(chosen)))
        measured = [r for r in stored if r.origin.kind != "import"] or stored
        name = plan_name if plan_name is not None else measured[-1].plan_name
        return _kept(store, name, stored) or _derived(store, db, name, stored)


def keep_history(store: Store, db: str, name: str) -> History:
    """The plan's history derived from the runs, and kept in the store (store.derived) for
    the next `iolab history`: `iolab run` keeps its plan's as it ends (a reading command
    writes nothing, so `history` never keeps one)."""
    at = store.revision()  # before what the history is derived from is read
    found = _derived(store, db, name, store.runs())
    store.keep(
        history_kept.KEY.format(name),
        history_kept.method(),
        at,
        history_kept.encode([r.id for r in found.runs], found.series),
    )
    return found


def _kept(store: Store, name: str, stored: Sequence[RunRow]) -> History | None:
    """The plan's history as the store kept it, if nothing changed since it was derived."""
    kept = store.kept(history_kept.KEY.format(name), history_kept.method())
    found = history_kept.decode(kept) if kept is not None else None
    by_id = {r.id: r for r in stored}
    if found is None or any(i not in by_id for i in found.run_ids):
        return None
    return History(name, tuple(by_id[i] for i in found.run_ids), found.series)


def _derived(store: Store, db: str, name: str, stored: Sequence[RunRow]) -> History:
    """The plan's runs and the imported runs that join them, oldest first, as series."""
    mine = [r for r in stored if r.plan_name == name]
    read = store.case_figures([r.id for r in mine])
    own = [(r, read[r.id]) for r in mine]
    if not own:
        plans = ", ".join(sorted({r.plan_name for r in stored}))
        raise StoreError(f"{db} holds no run of a plan named {name!r}; its plans: {plans}")
    latest = max(own, key=lambda found: found[0].started_at)[1]
    setups = {c.setup for c in latest}  # an import's cases are read only if it may join
    imported = [
        (r, store.case_figures([r.id])[r.id])
        for r in stored
        if r.plan_name != name
        and r.origin.kind == "import"
        and {n for n, _, _ in store.setups(r.id)} <= setups
    ]
    joined = [(r, cases) for r, cases in imported if history.joins(latest, cases)]
    chosen = sorted([*own, *joined], key=lambda found: found[0].started_at)
    window = gate.recorded_settings(chosen[-1][0].plan_text)[0] or history.WINDOW
    found = history.series(chosen, window)
    return History(name, tuple(r for r, _ in chosen), tuple(found))


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
