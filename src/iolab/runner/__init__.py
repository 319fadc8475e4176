"""The runner: a plan checked into a campaign, then run case by case, saved after each.

`campaign` checks and orders (nothing is written); `execute` runs, records and cleans up.
"""

from iolab.runner.campaign import (
    Campaign,
    CampaignStep,
    Consent,
    ask_hosts,
    check,
    locked,
    mountpoint,
    plan_campaign,
    rejected_workload,
    resolve,
)
from iolab.runner.execute import execute, run_step, start
from iolab.runner.listener import Listener
from iolab.runner.recovery import dead_runs, recover

__all__ = [
    "Campaign",
    "CampaignStep",
    "Consent",
    "Listener",
    "ask_hosts",
    "check",
    "dead_runs",
    "execute",
    "locked",
    "mountpoint",
    "plan_campaign",
    "recover",
    "rejected_workload",
    "resolve",
    "run_step",
    "start",
]
