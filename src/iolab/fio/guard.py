"""fio's keeper: runs fio as its child and makes sure no fio process outlives iolab.

Started by iolab as `python guard.py FIO ARGS...` in a session of its own. fio forks its job
processes into sessions of their own, so neither a process group kill nor a parent-death
signal reaches them all; this process is their subreaper instead (orphans come back to it)
and kills every descendant when:
- its stdin closes: iolab, which holds the other end, has died, even by SIGKILL;
- it gets SIGTERM: iolab gives up on fio (timeout, or fio ignored a polite stop).
SIGINT is passed on to fio, which stops its jobs as on Ctrl-C. It exits with fio's status,
having written fio's own wall time (seconds, from its start to its end) to `fio-wall.txt` in
its working directory: what iolab costs around fio is the rest (issue 47).
Runs with `python -I -S`, so it imports nothing of iolab's.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from types import FrameType

PR_SET_CHILD_SUBREAPER = 36
WALL_FILE = "fio-wall.txt"
KILL_ROUNDS = 100


def descendants() -> list[int]:
    """Every process below this one, from /proc's parent links."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [os.getpid()]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def reap() -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


def kill_all() -> None:
    """SIGKILL every descendant until none is left (fio may fork while we kill)."""
    for _ in range(KILL_ROUNDS):
        pids = descendants()
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)
        reap()


def watch_parent() -> None:
    """Block on stdin; when it closes, iolab is gone: kill everything and leave.

    Signals are blocked here: the kernel may hand a process signal to any thread, and one
    taken by this thread would leave the main thread asleep in its wait, its handler unrun.
    """
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    sys.stdin.buffer.read()
    kill_all()
    os._exit(137)


def main(argv: list[str]) -> int:
    ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    started = time.monotonic()
    fio = subprocess.Popen(argv, stdin=subprocess.DEVNULL)

    def forward(signum: int, frame: FrameType | None) -> None:
        fio.send_signal(signum)

    def give_up(signum: int, frame: FrameType | None) -> None:
        kill_all()
        os._exit(137)

    signal.signal(signal.SIGINT, forward)
    signal.signal(signal.SIGTERM, give_up)
    threading.Thread(target=watch_parent, daemon=True).start()
    # blocks in waitpid until fio ends (a wait with a timeout polls, and notices fio's end up
    # to 50 ms late, every case); a signal interrupts it, its handler runs, the wait goes on
    code = fio.wait()
    wall = time.monotonic() - started
    kill_all()
    with contextlib.suppress(OSError), open(WALL_FILE, "x") as handle:
        handle.write(f"{wall:.6f}")
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    os._exit(main(sys.argv[1:]))  # not sys.exit: the stdin thread may still be reading
