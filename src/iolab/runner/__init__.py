"""The runner: a plan checked into a campaign, then run case by case, saved after each.

`campaign` checks and orders (nothing is written); `executing` runs, records and cleans up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iolab import lazy

if TYPE_CHECKING:
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
    from iolab.runner.executing import execute, run_step, start
    from iolab.runner.listener import Listener
    from iolab.runner.recovery import dead_runs, recover

# Each name is imported from its module when first asked for (PEP 562), as in iolab.app: a
# reading command that looks for dead runs (recovery) loads neither the campaign nor fio.
# (No name here is also a module's: importing that module would put it in the name's place.)
__getattr__ = lazy.resolver(
    __name__,
    {
        "campaign": (
            "Campaign",
            "CampaignStep",
            "Consent",
            "ask_hosts",
            "check",
            "locked",
            "mountpoint",
            "plan_campaign",
            "rejected_workload",
            "resolve",
        ),
        "executing": ("execute", "run_step", "start"),
        "listener": ("Listener",),
        "recovery": ("dead_runs", "recover"),
    },
)


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
