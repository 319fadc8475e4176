"""The use cases behind the commands, as functions of plain values, one module per use case:
`running` (run a plan, rehearse; the virtual lab's run in `lab_run`, the
rehearsal itself in `rehearsal`), `reporting` (report, compare, runs), `gate` (history, check),
`advising` (advise, env), `transfer` (import, export), `peak_search` (peak), and `base`, what
they share. The cli parses and prints; these decide. Everything that talks to the person goes
through a `Ui`; errors are raised as iolab's typed errors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iolab import lazy

if TYPE_CHECKING:
    from iolab.app.advising import AdviseRequest, advise, environment_of
    from iolab.app.base import (
        DEFAULT_DB,
        RunOutcome,
        RunRequest,
        Ui,
        load_plan,
        open_store,
        pick_run,
        restores_pending,
        restores_said,
    )
    from iolab.app.gate import CHECK_RUNS, CheckRequest, History, check, plan_history
    from iolab.app.peak_search import PeakRequest, peak
    from iolab.app.reporting import compare, report, runs
    from iolab.app.running import (
        job_files,
        plan_toml,
        provision_commands,
        rehearse,
        run,
        run_document,
        run_plan,
    )
    from iolab.app.transfer import EXPORT_FORMATS, export_run, import_files

# Each name is imported from its module when first asked for (PEP 562), so that a command
# loads only the use cases it calls: `iolab history` never loads the runner or the reports.
__getattr__ = lazy.resolver(
    __name__,
    {
        "advising": ("AdviseRequest", "advise", "environment_of"),
        "base": (
            "DEFAULT_DB",
            "RunOutcome",
            "RunRequest",
            "Ui",
            "load_plan",
            "open_store",
            "pick_run",
            "restores_pending",
            "restores_said",
        ),
        "gate": ("CHECK_RUNS", "CheckRequest", "History", "check", "plan_history"),
        "peak_search": ("PeakRequest", "peak"),
        "reporting": ("compare", "report", "runs"),
        "running": (
            "job_files",
            "plan_toml",
            "provision_commands",
            "rehearse",
            "run",
            "run_document",
            "run_plan",
        ),
        "transfer": ("EXPORT_FORMATS", "export_run", "import_files"),
    },
)


__all__ = [
    "CHECK_RUNS",
    "DEFAULT_DB",
    "EXPORT_FORMATS",
    "AdviseRequest",
    "CheckRequest",
    "History",
    "PeakRequest",
    "RunOutcome",
    "RunRequest",
    "Ui",
    "advise",
    "check",
    "compare",
    "environment_of",
    "export_run",
    "import_files",
    "job_files",
    "load_plan",
    "open_store",
    "peak",
    "pick_run",
    "plan_history",
    "plan_toml",
    "provision_commands",
    "rehearse",
    "report",
    "restores_pending",
    "restores_said",
    "run",
    "run_document",
    "run_plan",
    "runs",
]
