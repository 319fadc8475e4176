"""Plans: TOML loading, validation with file:line errors, presets, matrix expansion.

Nothing here runs fio or touches a target; `fio.jobfile.fio_accepts` backs up pass-through options.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iolab import lazy

if TYPE_CHECKING:
    from iolab.plan.checks import CHECKS, RW_NAMES
    from iolab.plan.common import Overrides
    from iolab.plan.load import (
        MAX_CASES,
        load_file,
        load_preset,
        locate,
        parse_plan,
        preset_names,
        preset_text,
    )
    from iolab.plan.matrix import matrix_json, matrix_lines
    from iolab.plan.workloads import BUILTIN_DEFAULTS

# Each name is imported from its module when first asked for (PEP 562), as in iolab.app: a
# command that reads one module of the package (`iolab history`, plan.gate) does not load
# the plan loader and its checks.
__getattr__ = lazy.resolver(
    __name__,
    {
        "checks": ("CHECKS", "RW_NAMES"),
        "common": ("Overrides",),
        "load": (
            "MAX_CASES",
            "load_file",
            "load_preset",
            "locate",
            "parse_plan",
            "preset_names",
            "preset_text",
        ),
        "matrix": ("matrix_json", "matrix_lines"),
        "workloads": ("BUILTIN_DEFAULTS",),
    },
)


__all__ = [
    "BUILTIN_DEFAULTS",
    "CHECKS",
    "MAX_CASES",
    "RW_NAMES",
    "Overrides",
    "load_file",
    "load_preset",
    "locate",
    "matrix_json",
    "matrix_lines",
    "parse_plan",
    "preset_names",
    "preset_text",
]
