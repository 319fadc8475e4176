"""The runner: a plan checked into a campaign, then run case by case, saved after each.

`campaign` checks and orders (nothing is written); `execute` runs, records and cleans up.
"""

from iolab.runner.campaign import (
    Campaign,
    Consent,
    Step,
    build,
    check,
    locked,
    mountpoint,
    rejected_workload,
    resolve,
)
from iolab.runner.execute import Listener, execute, recover, run_step, start

__all__ = [
    "Campaign",
    "Consent",
    "Listener",
    "Step",
    "build",
    "check",
    "execute",
    "locked",
    "mountpoint",
    "recover",
    "rejected_workload",
    "resolve",
    "run_step",
    "start",
]
