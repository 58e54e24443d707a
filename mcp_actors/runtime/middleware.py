"""Middleware: code that runs around every request and notification, in both roles.

A :class:`Middleware` sees each :class:`Call` — its method, its decoded params, the
caller's identity, which side of the connection we are and which way it goes — and
decides what happens next: pass it on (``await call_next(call)``, perhaps with other
params: ``attrs.evolve(call, params=...)``; on a server, even a call of another
method, served as part of the same request), short-circuit with a result of its own
(return it) or an error (raise :class:`~mcp_actors.protocol.errors.McpError`), and
look at or replace what came back. Timing, logging, rate limits and allow-lists are
middleware (see :mod:`mcp_actors.middleware` for shipped ones).

Order: the first middleware given is the outermost. With ``[a, b]`` a request goes
through ``a``, then ``b``, then the handler; the result comes back through ``b``,
then ``a``.

Where it runs:

- a **server** runs its middleware around every request a client sends
  (``direction="inbound"``), in the request's own actor — so it is cancelled with the
  request, and an exception it raises is contained exactly like a handler's: the
  client gets an error (-32603 for anything but an ``McpError``) and the session
  goes on. Notifications from the client go through :meth:`Middleware.on_notification`
  on the session's reader: it must not block, and one that raises is logged and the
  notification dropped.
  What the protocol engine answers itself (``initialize``, ``ping``, a malformed
  message) never reaches middleware. The requests a server sends its client in a
  legacy session (``ctx.elicit``, ``ctx.sample``, ``ctx.request``...) go through it
  too (``direction="outbound"``); in the modern era those questions travel inside the
  request's result instead, and no outbound call is made.
- a **client** runs its middleware around every call it makes
  (``direction="outbound"``) and every request its server sends it (sampling,
  elicitation, roots: ``direction="inbound"``).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal

import attrs

from .internal_errors import internal_errors

log = logging.getLogger("mcp_actors.middleware")

Role = Literal["server", "client"]
Direction = Literal["inbound", "outbound"]


@attrs.frozen(slots=True)
class Call:
    """One request or notification as middleware sees it.

    ``caller`` is the identity the transport authenticated (None where there is
    none). ``session`` is what handles it: the server's ``ServerSession``, the
    client's ``Client`` (an outbound call) or its dispatcher (a request from the
    server). ``request_id`` is None for a notification and for an outbound call (whose
    id is chosen when it is sent).
    """

    method: str
    params: Any
    role: Role
    direction: Direction
    caller: object | None = None
    session: object | None = None
    request_id: str | int | None = None


CallNext = Callable[[Call], Awaitable[Any]]
NotifyNext = Callable[[Call], None]


class Middleware:
    """Base class of middleware: override what you need; the defaults pass calls on."""

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        """Around one request: return its result (usually ``await call_next(call)``)."""
        return await call_next(call)

    def on_notification(self, call: Call, call_next: NotifyNext) -> None:
        """Around one notification; runs on the reader, so it must not block."""
        call_next(call)


def check_middleware(value: Sequence[Middleware]) -> tuple[Middleware, ...]:
    """``value`` as a tuple, each item checked to be a :class:`Middleware`."""
    items = tuple(value)
    for item in items:
        if not isinstance(item, Middleware):
            raise TypeError(f"middleware must be Middleware instances, not {item!r}")
    return items


async def run_request(middleware: Sequence[Middleware], call: Call, endpoint: CallNext) -> Any:
    """``endpoint(call)`` with ``middleware`` around it, the first outermost."""
    return await _link(middleware, 0, endpoint)(call)


def _link(middleware: Sequence[Middleware], index: int, endpoint: CallNext) -> CallNext:
    if index == len(middleware):
        return endpoint
    layer = middleware[index]
    inner = _link(middleware, index + 1, endpoint)

    async def step(call: Call) -> Any:
        return await layer.on_request(call, inner)

    return step


def run_notification(middleware: Sequence[Middleware], call: Call, endpoint: NotifyNext) -> None:
    """``endpoint(call)`` with ``middleware`` around it; an exception is logged and the
    notification dropped (it never reaches the reader)."""

    def link(index: int) -> NotifyNext:
        if index == len(middleware):
            return endpoint
        layer, inner = middleware[index], link(index + 1)
        return lambda call: layer.on_notification(call, inner)

    try:
        link(0)(call)
    except Exception:
        internal_errors.report(log, "middleware failed on %s; notification dropped", call.method)
