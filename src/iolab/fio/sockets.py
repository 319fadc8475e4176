"""The TCP connections of a fio client process, seen and cut from outside it.

fio's client keeps one connection per server and closes it once that server has sent its
result, so the connections still open are the hosts still running: that is how iolab sees
each host's state while one client drives the fleet (fio prints nothing per host until the
end). A server that stops answering (SIGSTOP, a hung machine) keeps its connection open and
the client waits on it (fio 3.33 ignores SIGTERM and SIGINT there, or gives up on its own
about 40 s later); shutting that one connection down makes the client say "client:
host=... disconnected", and write every other host's result.

Both go through pidfd_getfd (Linux 5.6): a copy of the client's socket in this process, its
peer read, and for a cut, shutdown() on it, which the client's own descriptor shares. It needs
the right to trace the process (the client is iolab's own descendant); where it is refused,
`peers` says None and nothing is cut.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import socket
from collections.abc import Iterator

SYS_PIDFD_GETFD = 438  # the same number on every Linux architecture
_libc = ctypes.CDLL(None, use_errno=True)

Peer = tuple[str, int]  # (IP address, port) as getpeername says it


def child_pid(pid: int) -> int | None:
    """The first child of `pid` (fio under its keeper), or None."""
    try:
        found = open(f"/proc/{pid}/task/{pid}/children").read().split()  # noqa: SIM115
    except OSError:
        return None
    return int(found[0]) if found else None


@contextlib.contextmanager
def _sockets(pid: int) -> Iterator[list[tuple[Peer, socket.socket]]]:
    """Copies of the process's connected sockets, with their peers; closed afterwards."""
    held: list[tuple[Peer, socket.socket]] = []
    pidfd = os.pidfd_open(pid)
    try:
        for fd in _socket_fds(pid):
            copy = _libc.syscall(SYS_PIDFD_GETFD, pidfd, fd, 0)
            if copy < 0:
                raise OSError(ctypes.get_errno(), "pidfd_getfd")
            sock = socket.socket(fileno=copy)
            try:
                peer = sock.getpeername()
            except OSError:
                sock.close()
                continue
            if isinstance(peer, tuple):
                held.append(((str(peer[0]), int(peer[1])), sock))
            else:
                sock.close()
        yield held
    finally:
        for _, sock in held:
            sock.close()
        os.close(pidfd)


def _socket_fds(pid: int) -> list[int]:
    fds = []
    for name in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/{pid}/fd/{name}").startswith("socket:"):
                fds.append(int(name))
    return fds


def peers(pid: int) -> set[Peer] | None:
    """The peers the process holds a connection to; None where they cannot be read."""
    try:
        with _sockets(pid) as held:
            return {peer for peer, _ in held}
    except OSError:
        return None


def cut(pid: int, targets: set[Peer]) -> set[Peer]:
    """Shut down the process's connections to `targets`; the peers cut."""
    done: set[Peer] = set()
    with contextlib.suppress(OSError), _sockets(pid) as held:
        for peer, sock in held:
            if peer in targets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                    done.add(peer)
    return done
