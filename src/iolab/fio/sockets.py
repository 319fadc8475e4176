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
`Peers.of` says None and nothing is cut.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import socket
from collections.abc import Iterable, Iterator

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
def _sockets(pid: int, fds: Iterable[int]) -> Iterator[list[tuple[int, Peer, socket.socket]]]:
    """Copies of the process's connected sockets among `fds`, with their peers; closed
    afterwards."""
    held: list[tuple[int, Peer, socket.socket]] = []
    pidfd = os.pidfd_open(pid)
    try:
        for fd in fds:
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
                held.append((fd, (str(peer[0]), int(peer[1])), sock))
            else:
                sock.close()
        yield held
    finally:
        for _, _, sock in held:
            sock.close()
        os.close(pidfd)


def _socket_links(pid: int) -> dict[int, str]:
    """The process's sockets: each descriptor's link, "socket:[inode]" (an inode is one
    socket for as long as it lives)."""
    links = {}
    for name in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            link = os.readlink(f"/proc/{pid}/fd/{name}")
            if link.startswith("socket:"):
                links[int(name)] = link
    return links


class Peers:
    """A process's connections followed while it runs: each socket's peer is read once
    (pidfd_getfd), then only whether its descriptor is still open (/proc's fd links), so a
    poll of a fleet's client costs a listing, not a copy of every connection."""

    def __init__(self) -> None:
        self.known: dict[str, Peer | None] = {}  # by "socket:[inode]"; None: not connected

    def of(self, pid: int) -> set[Peer] | None:
        """The peers the process holds a connection to; None where they cannot be read."""
        try:
            links = _socket_links(pid)
            new = {fd: link for fd, link in links.items() if link not in self.known}
            if new:
                with _sockets(pid, new) as held:
                    found = {fd: peer for fd, peer, _ in held}
                self.known.update({link: found.get(fd) for fd, link in new.items()})
        except OSError:
            return None
        # a socket no longer open is forgotten: its inode may name a new one later
        self.known = {link: self.known[link] for link in links.values()}
        return {peer for peer in self.known.values() if peer is not None}


def cut(pid: int, targets: set[Peer]) -> set[Peer]:
    """Shut down the process's connections to `targets`; the peers cut."""
    done: set[Peer] = set()
    with contextlib.suppress(OSError), _sockets(pid, _socket_links(pid)) as held:
        for _, peer, sock in held:
            if peer in targets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                    done.add(peer)
    return done
