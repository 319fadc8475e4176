"""Plans: TOML loading, validation with file:line errors, presets, matrix expansion.

Nothing here runs fio or touches a target; `fio.jobfile.fio_accepts` backs up pass-through options.
"""
