"""Listening sockets that several processes share: ``SO_REUSEPORT``.

With ``--workers N`` every worker process accepts on its own listening socket on
the same address with ``SO_REUSEPORT`` set; the kernel (Linux, the BSDs) then
spreads incoming connections over them by a hash of the connection's addresses, so
each worker accepts its own share and no process hands connections to another.
(One socket that every worker accepts on would not spread them: whichever worker
wakes first takes a whole burst.)

``SO_REUSEPORT`` lets *any* process of the same user join the group, so a second
deployment started on a port already served would silently take half its
connections. :func:`claim_shared_port` refuses that: it first binds the address
without ``SO_REUSEPORT`` (which fails with ``EADDRINUSE`` while anything listens
there), and opens the workers' sockets while that probe still holds the address.
The supervising process opens them all before it starts a worker and keeps them
open: a worker started again accepts on the same socket, and the connections
queued there meanwhile are not lost.
"""

from __future__ import annotations

import socket

#: Connections waiting to be accepted, per socket.
BACKLOG = 1024


def reuse_port_supported() -> bool:
    """Whether this platform has ``SO_REUSEPORT``."""
    return hasattr(socket, "SO_REUSEPORT")


def _tcp_socket(host: str) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.socket(family, socket.SOCK_STREAM)


def reuse_port_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` with ``SO_REUSEPORT`` (and ``SO_REUSEADDR``),
    not listening yet. Raises OSError when the address cannot be bound."""
    if not reuse_port_supported():
        raise OSError("this platform has no SO_REUSEPORT: several workers cannot share a port")
    sock = _tcp_socket(host)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def listening_reuse_port_socket(host: str, port: int) -> socket.socket:
    """:func:`reuse_port_socket`, listening and non-blocking: one worker's share of the port."""
    sock = reuse_port_socket(host, port)
    try:
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


def claim_shared_port(host: str, port: int, count: int) -> list[socket.socket]:
    """``count`` listening sockets sharing ``host:port`` (``port=0``: one free port for
    all), provided nothing else listens there: else OSError ``EADDRINUSE``, as for a
    single server. The probe has ``SO_REUSEADDR`` (connections of a server that just
    stopped, in ``TIME_WAIT``, do not hold the port) and is bound, not listening,
    while the sockets are opened, so it does not conflict with them."""
    probe = _tcp_socket(host)
    sockets: list[socket.socket] = []
    try:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((host, port))
        bound_port = probe.getsockname()[1]
        for _ in range(count):
            sockets.append(listening_reuse_port_socket(host, bound_port))
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    finally:
        probe.close()
    return sockets
