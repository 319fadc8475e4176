"""The runner: a plan checked into a campaign, then run case by case, saved after each.

`campaign` checks and orders (nothing is written); `execute` runs, records and cleans up.
"""

from iolab.runner.campaign import (
    Campaign,
    CampaignStep,
    Consent,
    ask_hosts,
    build,
    check,
    locked,
    mountpoint,
    rejected_workload,
    resolve,
)
from iolab.runner.execute import dead_runs, execute, recover, run_step, start
from iolab.runner.listener import Listener

__all__ = [
    "Campaign",
    "CampaignStep",
    "Consent",
    "Listener",
    "ask_hosts",
    "build",
    "check",
    "dead_runs",
    "execute",
    "locked",
    "mountpoint",
    "recover",
    "rejected_workload",
    "resolve",
    "run_step",
    "start",
]
