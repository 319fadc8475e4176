"""The use cases behind the commands, as functions of plain values, one module per use case:
`running` (run a plan, rehearse; the virtual lab's run in `lab_run`, the
rehearsal itself in `rehearsal`), `reporting` (report, compare, runs), `gate` (history, check),
`advising` (advise, env), `transfer` (import, export), `peak_search` (peak), and `base`, what
they share. The cli parses and prints; these decide. Everything that talks to the person goes
through a `Ui`; errors are raised as iolab's typed errors.
"""
