"""A plan's matrix as text: one line per case, under the options each [[workload]] shares."""

from __future__ import annotations

from iolab.model import Plan


def matrix_lines(plan: Plan) -> list[str]:
    """Lines (ending in newlines) that `iolab show` prints; linear in the number of cases."""
    lines = ["# options per [[workload]]; swept values are in each case's workload name\n"]
    tables: dict[int, list[dict[str, object]]] = {}
    for workload in plan.workloads:
        tables.setdefault(workload.table, []).append(dict(workload.options))
    for table, points in tables.items():
        first = points[0]
        shared = [k for k, v in first.items() if all(p.get(k) == v for p in points)]
        lines.append(f"# {table + 1}: {' '.join(f'{k}={first[k]}' for k in shared)}\n")
    for number, case in enumerate(plan.cases(), start=1):
        lines.append(f"{number:>4}  {case.setup.name}  {case.workload.name}  #{case.repetition}\n")
    return lines
