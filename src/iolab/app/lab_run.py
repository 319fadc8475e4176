"""`iolab run --lab`: a plan's set-ups on devices (md, LVM, btrfs RAID) built and measured in
the lab kernel, on sparse image files standing in for the plan's devices (as `iolab
rehearse` builds them: same names inside, `app.rehearsal`), with the plan's own
workloads, repetitions and runtimes.

The figures say how the software RAID behaves (its write penalty, its scaling over members,
what a filesystem costs on it), not how fast the real disks are: every image lives on this
host's disk, through its page cache. So every case is stored with a `virtual-lab` warning,
which reports show on every cell in every format. Set-ups on paths are not run in the lab
(there is nothing to build); hooks and RAID-card policies are left out (no card is there).
The run is stored with a "lab" origin naming the host the lab ran on, under the user's plan
file (not the lab's copy of it, removed with its folder): reports say so at the top.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import socket
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from iolab import layouts
from iolab.app import rehearsal
from iolab.errors import TargetError
from iolab.model import JSON, CheckWarning, Code, Origin, Plan, Setup
from iolab.targets import lab, scratch

RUN_TIMEOUT_S = 6 * 3600
LAB = CheckWarning(
    Code.VIRTUAL_LAB,
    "measured in iolab's virtual lab (a kernel of its own, image files as disks): the "
    "figures show how the RAID software behaves (its penalties, its scaling), not how fast "
    "the real devices are.",
    "Compare lab figures with each other, or with the RAID model; measure the real devices "
    "for their speed.",
)


def plan_text(plan: Plan) -> str:
    """The plan's set-ups on devices (hooks and card policies left out) and every workload
    point, with the plan's repetitions."""
    chosen = [s for s in plan.setups if s.layout is not None]
    parts = [f"name = {rehearsal.toml_value(plan.name)}\nrepeat = {plan.repeat}\n"]
    report: dict[str, object] = {"metric": plan.metric}
    if plan.baseline in {s.name for s in chosen}:
        report["baseline"] = plan.baseline
    if plan.charts:  # the author's chart titles and captions, for the report of the run
        report["charts"] = {c.chart: _words(c.title, c.caption) for c in plan.charts}
    parts.append(rehearsal.table("[report]", report))
    parts += [rehearsal.table("[[setup]]", {"name": s.name, **_built(s)}) for s in chosen]
    parts += [
        rehearsal.table("[[workload]]", {"name": w.name, **dict(w.options)}) for w in plan.workloads
    ]
    return "\n".join(parts)


def _words(title: str, caption: str) -> dict[str, str]:
    return {k: v for k, v in (("title", title), ("caption", caption)) if v}


def as_stored(tables: dict[str, list[dict[str, JSON]]], plan: Plan, backend: str) -> Origin:
    """The lab's run as the user's database keeps it (`tables` as Store.dump gave them,
    changed in place): every case marked virtual-lab, the run under the user's plan file;
    returns its origin, "lab", on this host, in the lab kernel `backend` names."""
    for run in tables["runs"]:
        run["plan_source"] = plan.source
    for case in tables["cases"]:
        kept = case["warnings"]
        case["warnings"] = [*(kept if isinstance(kept, list) else []), LAB.stored()]
    return Origin(kind="lab", hostname=socket.gethostname(), lab=backend)


def _built(setup: Setup) -> dict[str, object]:
    """The set-up as the lab builds it: its layout without hooks, and its drive_cache (set
    and read back in the lab, or refused there in one line: never measured without it)."""
    assert setup.layout is not None
    skipped = ("setup_hook", "teardown_hook")
    built = {k: v for k, v in setup.layout.definition().items() if k not in skipped}
    return {**built, **({"drive_cache": setup.drive_cache} if setup.drive_cache else {})}


@contextlib.contextmanager
def measured(plan: Plan, say: Callable[[str], None]) -> Iterator[tuple[Path, str]]:
    """Run the plan's device set-ups in the lab kernel; yields the database the run inside
    left (removed with its images after the block) and the kernel it ran in, in words.
    TargetError (one line) when there is no kernel, nothing to run, or the run inside could
    not start."""
    problem = lab.missing()
    if problem:
        raise TargetError(problem)
    chosen = [s for s in plan.setups if s.layout is not None]
    if not chosen:
        raise TargetError(
            "the plan builds no set-up on devices; there is nothing to run in the lab"
        )
    left = [s.name for s in plan.setups if s.layout is None]
    if left:
        say(f"not run in the lab (paths, nothing to build): {', '.join(left)}")
    found = rehearsal.disks(plan)
    with scratch.folder(say) as folder:
        (folder / "plan.toml").write_text(plan_text(plan))
        with rehearsal.booted(folder, found, plan) as kernel:
            say(
                f"measuring {len(chosen)} set-up(s) in the virtual lab on sparse images: "
                f"{rehearsal.mapping_line(found, kernel)}"
            )
            ready = kernel.run(rehearsal.udev_rules(found, kernel.disks))
            if ready.returncode != 0:
                said = rehearsal.last_said(ready.output)
                raise TargetError(f"the lab kernel could not name its disks: {said}")
            done = kernel.run(_command(folder, chosen), RUN_TIMEOUT_S)
            backend = kernel.backend_words
        db = folder / "lab.db"
        for line in done.output.splitlines():
            if line.startswith(("✓", "✗", "  !")):
                say(line)
        if not db.exists():
            raise TargetError(
                f"the run in the lab stored nothing: {rehearsal.last_said(done.output)}"
            )
        yield db, backend


def _command(folder: Path, chosen: list[Setup]) -> str:
    named = dict.fromkeys(d for s in chosen if s.layout for d in layouts.present(s.layout))
    confirm = [word for device in named for word in ("--yes-destroy", device)]
    path = os.environ.get("PYTHONPATH")
    argv = [
        sys.executable,
        "-m",
        "iolab",
        "run",
        str(folder / "plan.toml"),
        "--db",
        str(folder / "lab.db"),
        "--new",
        *confirm,
    ]
    return ("" if path is None else f"PYTHONPATH={shlex.quote(path)} ") + shlex.join(argv)
