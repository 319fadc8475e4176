"""A run that died: found by its evidence record (its process gone), and what it made
cleaned up, only what still carries iolab's mark."""

from __future__ import annotations

from dataclasses import dataclass

from iolab.errors import Resume
from iolab.store import Store
from iolab.targets import evidence, evidence_mounts, process
from iolab.targets.controllers import apply


@dataclass(frozen=True)
class Recovered:
    """A run whose iolab died: what was (or, for a reading command, would be) done about it."""

    said: str
    resume: Resume


def recover(store: Store) -> list[Recovered]:
    """For `iolab run`: the runs of this database whose iolab died. What this host's record of
    each says it made is removed where it still carries iolab's proof (the database's own rows
    cause nothing); runs the database marks running, whose process on this host is gone, are
    marked interrupted. Each said in one line, with the run to resume."""
    said = []
    cleaned = set()
    running = dict(store.running())
    for record in evidence.records_of(store.path):
        if not evidence.dead(record):
            continue
        done = [words for made in record.made if (words := remove_made(made, record.token))]
        record.delete()
        cleaned.add(record.run_id)
        was = record.run_id in running
        if was:
            store.finish_run(record.run_id, "interrupted")
        if was or done:
            what = "; marked interrupted" if was else ""
            what += f"; {'; '.join(done)}" if done else "; nothing of it was left to remove"
            said.append(_said(store, record.run_id, f"process {record.owner.pid}", what))
    for run_id, owner in running.items():
        if run_id in cleaned or not _gone(owner):
            continue
        store.finish_run(run_id, "interrupted")
        what = "; marked interrupted; nothing removed (this host has no record of what it made)"
        said.append(_said(store, run_id, f"process {_pid(owner)}", what))
    return said


def dead_runs(store: Store) -> list[Recovered]:
    """For the commands that only read: the runs of this database whose iolab died, said in
    one line each; nothing is removed, unmounted, restored or written."""
    said = []
    recorded = set()
    for record in evidence.records_of(store.path):
        recorded.add(record.run_id)
        if evidence.dead(record):
            words = (
                f"run {record.run_id}'s iolab (pid {record.owner.pid}) died; the next "
                "'iolab run' on this database removes what it left"
            )
            said.append(Recovered(words, Resume(record.run_id, str(store.path))))
    for run_id, owner in store.running():
        if run_id not in recorded and _gone(owner):
            words = (
                f"run {run_id} is marked running, but its iolab (pid {_pid(owner)}) is "
                "gone; this host has no record of what it made, so iolab removes "
                "nothing"
            )
            said.append(Recovered(words, Resume(run_id, str(store.path))))
    return said


def _said(store: Store, run_id: int, who: str, what: str) -> Recovered:
    return Recovered(
        f"run {run_id} was left running by {who}, which is gone{what}",
        Resume(run_id, str(store.path)),
    )


def _gone(owner: object) -> bool:
    """Whether the database says the run's process was on this host and it is gone (a
    database's word: it may mark the run interrupted, never remove anything)."""
    return isinstance(owner, dict) and process.alive(owner) is False


def _pid(owner: object) -> str:
    pid = owner.get("pid") if isinstance(owner, dict) else None
    return str(pid) if isinstance(pid, int) else "unknown"


def remove_made(made: evidence.Made, token: str, live: bool = False) -> str:
    """Remove one thing a run made, if it is still there and still the run's (its proof:
    never the record alone); a card's policy (or a disk's write cache) the run set is
    restored. What was done, in words ("" for nothing). `live`: the run that made it removes
    it (on a filesystem that takes no mark, it knows the file by its device and inode)."""
    if made.kind == apply.KIND:
        return apply.restored_words(made.path) if apply.restore_from(made.path) else ""
    if made.kind == evidence.FILE and evidence.remove_file(made, token, live):
        return f"removed {made.path}"
    if made.kind == evidence.DIR and evidence_mounts.remove_dir(made, token):
        return f"removed {made.path}"
    if made.kind == evidence.MOUNT and evidence_mounts.unmount(made):
        return f"unmounted {made.path}"
    return ""
