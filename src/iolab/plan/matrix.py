"""A plan's matrix as text (one line per case, under the options each [[workload]] shares),
or as JSON for scripts."""

from __future__ import annotations

import json
from collections.abc import Sequence

from iolab.model import Plan, Workload


def matrix_lines(plan: Plan) -> list[str]:
    """Lines (ending in newlines) that `iolab show` prints; linear in the number of cases."""
    lines = ["# options per [[workload]]; swept values are in each case's workload name\n"]
    firsts: dict[int, Workload] = {}
    for workload in plan.workloads:
        firsts.setdefault(workload.table, workload)
    for table, first in firsts.items():  # every point of a table shares what is not swept
        shared = " ".join(f"{k}={v}" for k, v in first.recorded.items() if k not in first.axes)
        lines.append(f"# {table + 1}: {shared}\n")
    if plan.hosts is not None:
        hosts = ", ".join(plan.hosts.addresses)
        lines.append(f"# every case runs on the hosts at once (fio --server on each): {hosts}\n")
        for setup in plan.setups:
            on = f"the first {setup.host_count}" if setup.host_count else "every host"
            moved = "".join(f"; {h}: {p}" for h, p in setup.host_paths)
            lines.append(f"# set-up {setup.name!r}: {setup.path} on {on}{moved}\n")
    if any(w.method is not None for w in plan.workloads):
        lines.append(
            "# a search (method) adds the points it tries, and a curve its loads, between a "
            "start and its start again\n"
        )
    for number, case in enumerate(plan.cases(), start=1):
        lines.append(f"{number:>4}  {case.setup.name}  {case.workload.name}  #{case.repetition}\n")
    return lines


def matrix_json(plan: Plan, commands: Sequence[tuple[str, list[list[str]]]]) -> str:
    """What `iolab show --json` prints: the set-ups (their definitions and the commands that
    build and tear them down, as argument lists) and every case with its fio options."""
    built = dict(commands)
    out = {
        "plan": plan.name,
        "setups": [
            {"name": s.name, "definition": s.definition(), "commands": built.get(s.name, [])}
            for s in plan.setups
        ],
        "cases": [
            {
                "number": number,
                "setup": case.setup.name,
                "workload": case.workload.name,
                "repetition": case.repetition,
                "options": case.workload.recorded,
            }
            for number, case in enumerate(plan.cases(), start=1)
        ],
    }
    return json.dumps(out, indent=2, ensure_ascii=False, default=str) + "\n"
