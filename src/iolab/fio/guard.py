"""fio's keeper: runs fio as its child and makes sure no fio process outlives iolab.

Started by iolab in a session of its own, with `python -I -S` (it imports nothing of
iolab's), in one of two ways:
- `guard.py --serve`, once a process (`fio.local`; for `iolab run`, once a run): its stdin
  is one end of a Unix socket pair whose other end iolab holds; each message on it is one fio
  to run (its command, its working directory, and the descriptors of its stdout and stderr,
  passed with SCM_RIGHTS). The keeper starts that fio, and when it ends answers with fio's
  exit status and its own wall time (seconds, from its start to its end: what iolab costs
  around fio is the rest, issue 47), then waits for the next. A keeper started a case cost
  0.08-0.2 s a case on a loaded host.
- `guard.py FIO ARGS...`, once a fio (`fio.hosts`): runs that one fio, with its stdin a pipe
  from iolab, and exits with fio's status.

fio forks its job processes into sessions of their own, so neither a process group kill nor
a parent-death signal reaches them all; this process is their subreaper instead (orphans come
back to it) and kills every descendant when:
- its stdin closes (or, serving, answers end of file): iolab, which holds the other end, has
  died, even by SIGKILL;
- it gets SIGTERM: iolab gives up on fio (timeout, or fio ignored a polite stop); it exits.
SIGINT is passed on to fio (the one running, serving), which stops its jobs as on Ctrl-C.
After each fio ends, whatever it left behind is killed too.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from types import FrameType
from typing import NoReturn

PR_SET_CHILD_SUBREAPER = 36
KILL_ROUNDS = 100
REQUEST_MAX = 1 << 20  # one request's bytes: a command line and a folder
SERVE = "--serve"


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


def childless() -> bool:
    """No child left, living or dead: then no descendant either (a subreaper's descendants
    are its children's), and /proc need not be read."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return False


def kill_all() -> None:
    """SIGKILL every descendant until none is left (fio may fork while we kill)."""
    for _ in range(KILL_ROUNDS):
        if childless():
            return
        pids = descendants()
        if not pids:
            reap()
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)
        reap()


def give_up(signum: int, frame: FrameType | None) -> NoReturn:
    kill_all()
    os._exit(137)


def watch_parent() -> None:
    """Block on stdin; when it closes, iolab is gone: kill everything and leave.

    Signals are blocked here: the kernel may hand a process signal to any thread, and one
    taken by this thread would leave the main thread asleep in its wait, its handler unrun.
    """
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    sys.stdin.buffer.read()
    kill_all()
    os._exit(137)


def once(argv: list[str]) -> int:
    """Run one fio; its exit status."""
    fio = subprocess.Popen(argv, stdin=subprocess.DEVNULL)

    def forward(signum: int, frame: FrameType | None) -> None:
        fio.send_signal(signum)

    signal.signal(signal.SIGINT, forward)
    threading.Thread(target=watch_parent, daemon=True).start()
    # blocks in waitpid until fio ends (a wait with a timeout polls, and notices fio's end up
    # to 50 ms late); a signal interrupts it, its handler runs, the wait goes on
    code = fio.wait()
    kill_all()
    return status(code)


def status(code: int) -> int:
    return code if code >= 0 else 128 - code


class Server:
    """One fio at a time, as iolab asks on the socket that is this process's stdin."""

    def __init__(self) -> None:
        self.channel = socket.socket(fileno=0)
        self.fio: subprocess.Popen[bytes] | None = None
        signal.signal(signal.SIGINT, self.forward)

    def forward(self, signum: int, frame: FrameType | None) -> None:
        if self.fio is not None and self.fio.returncode is None:
            self.fio.send_signal(signum)

    def serve(self) -> None:
        while True:
            message, fds, _, _ = socket.recv_fds(self.channel, REQUEST_MAX, 2)
            if not message:
                break  # iolab is gone, or done with fio
            try:
                answer = self.run(message, fds)
            except OSError as error:  # no such program, no such folder
                answer = {"error": f"fio could not be started: {error.strerror}"}
            try:
                self.channel.send(json.dumps(answer).encode())
            except OSError:
                break
        kill_all()

    def run(self, message: bytes, fds: list[int]) -> dict[str, object]:
        """Run the fio asked for; its exit status and wall time, or why it did not start.
        The descriptors passed are closed once fio holds them: iolab sees fio's stdout end
        with fio (and anything it left, killed here)."""
        try:
            asked = json.loads(message)
            argv, cwd = [str(a) for a in asked["argv"]], str(asked["cwd"])
            started = time.monotonic()
            self.fio = subprocess.Popen(
                argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=fds[0], stderr=fds[1]
            )
        except (ValueError, KeyError, TypeError, IndexError) as error:
            return {"error": f"iolab's keeper was asked wrongly ({error!r})"}
        finally:
            for fd in fds:
                os.close(fd)
        code = self.wait(self.fio)
        wall = time.monotonic() - started
        kill_all()
        self.fio = None
        return {"code": status(code), "wall": wall}

    def wait(self, fio: subprocess.Popen[bytes]) -> int:
        """fio's exit status, as soon as it ends; if iolab goes meanwhile (end of file on
        the socket), everything is killed and this process ends."""
        ended = os.pidfd_open(fio.pid)
        try:
            ready, _, _ = select.select([ended, self.channel.fileno()], [], [])
        finally:
            os.close(ended)
        if ended not in ready:
            # end of file: iolab is gone. It asks nothing while fio runs: if it did, nothing
            # would watch for its end any more, so fio is not let run either
            give_up(signal.SIGTERM, None)
        return fio.wait()


def main(argv: list[str]) -> int:
    ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    signal.signal(signal.SIGTERM, give_up)
    if argv == [SERVE]:
        Server().serve()
        return 0
    return once(argv)


if __name__ == "__main__":
    os._exit(main(sys.argv[1:]))  # not sys.exit: the stdin thread may still be reading
