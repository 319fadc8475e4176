"""The runner: a plan checked into a campaign, then run case by case, saved after each.

`campaign` checks and orders (nothing is written); `executing` runs, records and cleans up.
"""
