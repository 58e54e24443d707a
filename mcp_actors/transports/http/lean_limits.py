"""What one connection of the lean HTTP server may cost, and how long it may take.

:class:`LeanLimits` bounds the lean front end (:mod:`.lean`): header bytes and time, idle
keep-alive, pipelined read-ahead, graceful shutdown, and the connection gate's caps and
send timeout (:mod:`.connection_gate`). Every field is checked when the limits are made.
"""

from __future__ import annotations

import math
from typing import Any

import attrs

from .connection_gate import ConnectionGate


def _positive(instance: Any, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < math.inf:
        return
    raise ValueError(f"LeanLimits.{attribute.name} must be a positive finite number: {value!r}")


def _positive_or_none(instance: Any, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None:
        _positive(instance, attribute, value)


def _integer(instance: Any, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise ValueError(f"LeanLimits.{attribute.name} must be an integer: {value!r}")


def _not_negative(instance: Any, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"LeanLimits.{attribute.name} must be an integer >= 0: {value!r}")


@attrs.frozen
class LeanLimits:
    """What one connection of the lean server may cost, and how long it may take."""

    #: Request line plus headers, in bytes; beyond it the answer is 431 and the
    #: connection closes.
    max_header_size: int = attrs.field(default=16 * 1024, validator=_positive)
    #: Seconds from a request's first byte until its headers are complete; beyond it the
    #: connection closes.
    header_timeout: float = attrs.field(default=10.0, validator=_positive)
    #: Seconds an idle keep-alive connection waits for its next request before closing
    #: (up to a second more: the connection gate's sweep closes it).
    keep_alive_timeout: float = attrs.field(default=5.0, validator=_positive)
    #: Bytes of pipelined requests read ahead while a response is being written (kept
    #: as received, parsed in their turn); past it the connection is not read until
    #: that response is done.
    max_pipelined_bytes: int = attrs.field(default=64 * 1024, validator=[_integer, _positive])
    #: Seconds :meth:`LeanHttpServer.shutdown` lets requests in progress finish.
    graceful_timeout: float = attrs.field(default=5.0, validator=_positive)
    #: Connections served at once; None: no cap (see :mod:`.connection_gate`).
    max_connections: int | None = attrs.field(default=1000, validator=[_integer, _positive_or_none])
    #: Connections served at once from one client IP address; None: no cap.
    max_connections_per_client: int | None = attrs.field(
        default=100, validator=[_integer, _positive_or_none]
    )
    #: Connections kept beyond the caps for health checks and new clients.
    connection_reserve: int = attrs.field(default=16, validator=_not_negative)
    #: Seconds a peer may accept no bytes of a reply before it is dropped (its requests
    #: cancelled); None: no limit.
    send_timeout: float | None = attrs.field(default=30.0, validator=_positive_or_none)

    def gate(self, read_size: int | None = None) -> ConnectionGate:
        """A gate that admits connections under these limits (``read_size``: see
        :attr:`ConnectionGate.read_size`)."""
        return ConnectionGate(
            self.max_connections,
            self.max_connections_per_client,
            self.connection_reserve,
            self.send_timeout,
            read_size,
        )
