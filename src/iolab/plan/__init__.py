"""Plans: TOML loading, validation with file:line errors, presets, matrix expansion.

Nothing here runs fio or touches a target; `fio.jobfile.fio_accepts` backs up pass-through options.
"""

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
