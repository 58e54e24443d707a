"""Listening sockets that several processes share: ``SO_REUSEPORT``.

With ``--workers N`` every worker process opens its own listening socket on the
same address with ``SO_REUSEPORT`` set; the kernel (Linux, the BSDs) then spreads
incoming connections over them by a hash of the connection's addresses, so each
worker accepts its own share and no process hands connections to another. The
supervising process reserves the port first (:func:`reuse_port_socket` bound but not
listening: it takes no connections) so that ``port=0`` can pick one port for all.
"""

from __future__ import annotations

import socket

#: Connections waiting to be accepted, per socket.
BACKLOG = 1024


def reuse_port_supported() -> bool:
    """Whether this platform has ``SO_REUSEPORT``."""
    return hasattr(socket, "SO_REUSEPORT")


def reuse_port_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` with ``SO_REUSEPORT`` (and ``SO_REUSEADDR``),
    not listening yet. Raises OSError when the address cannot be bound."""
    if not reuse_port_supported():
        raise OSError("this platform has no SO_REUSEPORT: several workers cannot share a port")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
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
    sock.listen(BACKLOG)
    sock.setblocking(False)
    return sock
