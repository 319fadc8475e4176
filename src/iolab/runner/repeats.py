"""More repetitions than the plan lists: `repeat = "auto"` (until the 95% interval is narrow)
and `[steady]` rounds (SNIA PTS: until the tracked workload is steady). After a case, it
decides which cases come next, runs them through the case runner it is handed, and reads what
is stored; steady rounds end in a typed record (model.SteadyRecord) kept with the set-up."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from iolab.analysis import stats, steady
from iolab.model import Case, Setup, SteadyRecord, SteadyRounds, codec, metric_for
from iolab.model.facts import JSONDict
from iolab.runner import precondition
from iolab.runner.campaign import Campaign, CampaignStep
from iolab.runner.listener import Listener
from iolab.store import Store
from iolab.targets.path import Prepared

CaseRunner = Callable[[CampaignStep, Prepared, str], None]  # runs one case and keeps its result


class Repeats:
    """Repetitions and rounds beyond the plan's, for one run."""

    def __init__(
        self, campaign: Campaign, store: Store, run_id: int, listener: Listener, case: CaseRunner
    ) -> None:
        self.campaign, self.store, self.run_id = campaign, store, run_id
        self.listener, self.case = listener, case

    def repeat_more(self, step: CampaignStep, target: Prepared, state: str) -> str:
        """repeat = "auto": after a point's planned repetitions, more until its interval is
        within the target (or the most repetitions ran); says how close it came."""
        auto, case = self.campaign.plan.auto_repeat, step.case
        if auto is None or case.repetition != self.campaign.plan.repeat:
            return state
        values = self.values(case)
        while (number := self.next_repetition(case)) <= auto.most and _too_wide(
            values, auto.target
        ):  # failed repetitions count too: this ends
            extra = CampaignStep(replace(case, repetition=number), step.position)
            self.case(extra, target, state)
            state = precondition.after(state, case.workload.options)
            values = self.values(case)
        width = stats.relative_half_width(values) if len(values) > 1 else None
        reached = "n/a" if width is None else f"±{width:.1%}"
        verdict = "within" if width is not None and width <= auto.target else "NOT within"
        self.listener.note(
            f"{case.setup.name} · {case.workload.name}: {len(values)} repetitions, 95% interval "
            f"{reached}, {verdict} the ±{auto.target:.1%} asked"
        )
        return state

    def rounds_more(
        self, step: CampaignStep, target: Prepared, state: str, record: Callable[[JSONDict], None]
    ) -> str:
        """[steady] rounds: after the first `window` rounds, a round more (every workload)
        until the tracked workload is steady or the most rounds ran; the determination is
        recorded with the set-up, and said."""
        plan, case = self.campaign.plan, step.case
        rounds = plan.rounds
        if rounds is None or case.repetition != plan.repeat or case.workload != plan.workloads[-1]:
            return state
        positions = {w.name: n for n, w in enumerate(plan.workloads)}
        verdict = self.judge(case.setup, rounds)
        number = case.repetition
        while (verdict is None or not verdict.steady) and number < rounds.most:
            number += 1
            for workload in plan.workloads:
                extra = CampaignStep(Case(case.setup, workload, number), positions[workload.name])
                self.case(extra, target, state)
                state = precondition.after(state, workload.options)
            verdict = self.judge(case.setup, rounds)
        if verdict is None:
            self.listener.note(
                f"{case.setup.name}: steady state NOT reached after {number} rounds: too few "
                f"rounds of {rounds.track} ran to the end to judge"
            )
            return state
        tracked = next(w for w in plan.workloads if w.name == rounds.track)
        metric = "bw" if metric_for(tracked.options) == "bw" else "iops"
        found = _determination(verdict, rounds, self.tracked(case.setup, rounds), metric)
        record({"steady_rounds": codec.to_json(found)})
        said = "reached" if verdict.steady else "NOT reached"
        self.listener.note(
            f"{case.setup.name}: steady state {said} after {verdict.rounds} rounds "
            f"(excursion {verdict.data_excursion:.1%}, slope {verdict.slope_excursion:.1%})"
        )
        return state

    def tracked(self, setup: Setup, rounds: SteadyRounds) -> list[float]:
        """The tracked workload's primary figure, round by round."""
        workload = next(w for w in self.campaign.plan.workloads if w.name == rounds.track)
        metric = metric_for(workload.options)
        rows = sorted(
            (
                row
                for row in self.store.cases(self.run_id, setup.name, rounds.track)
                if row.status == "ok"
            ),
            key=lambda row: row.repetition,
        )
        return [row.total(metric) for row in rows]

    def judge(self, setup: Setup, rounds: SteadyRounds) -> steady.Determination | None:
        return steady.determine(self.tracked(setup, rounds), rounds)

    def values(self, case: Case) -> list[float]:
        """The primary figure of every ok repetition of a case's point stored in this run
        (also those stored before a resume)."""
        metric = metric_for(case.workload.options)
        return [
            row.total(metric)
            for row in self.store.cases(self.run_id, case.setup.name, case.workload.name)
            if row.status == "ok"
        ]

    def next_repetition(self, case: Case) -> int:
        stored = [
            row.repetition
            for row in self.store.cases(self.run_id, case.setup.name, case.workload.name)
        ]
        return max(stored, default=0) + 1


def _determination(
    verdict: steady.Determination, rounds: SteadyRounds, values: list[float], metric: str
) -> SteadyRecord:
    """The determination a report shows: every round's tracked value and the verdict."""
    return SteadyRecord(
        rounds.track,
        "bw" if metric == "bw" else "iops",
        tuple(values),
        (verdict.first_round, verdict.rounds),
        verdict.mean,
        verdict.data_excursion,
        rounds.data_excursion,
        verdict.slope_excursion,
        rounds.slope_excursion,
        verdict.steady,
        rounds.most,
    )


def _too_wide(values: list[float], target: float) -> bool:
    width = stats.relative_half_width(values) if len(values) > 1 else None
    return width is None or width > target
