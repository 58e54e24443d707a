"""Backing off from an authorization server that fails.

A resource server asks its authorization server for keys, metadata and introspection
answers on behalf of whoever sends a token — an attacker included. When the
authorization server is down or answers 500, asking again for every incoming token
would turn a flood of garbage tokens into a flood of requests against a server that is
already struggling. So after a failed exchange the next one waits: :class:`Backoff`'s
``first`` seconds (1 by default), doubling with each further failure up to ``cap``
(60 by default) — 1, 2, 4, 8, 16, 32, 60, 60 ... — and a success starts over. While
it waits, what needed the exchange is refused at once without a request.

:class:`Retry` keeps that state for one kind of exchange (a JWKS, a discovery, an
introspection endpoint). Its times are trio's clock (:func:`trio.current_time`: monotonic,
and a test's ``MockClock`` moves it).
"""

from __future__ import annotations

import math

import attrs
import trio
from attrs.validators import gt, instance_of, lt


@attrs.frozen
class Backoff:
    """How long to wait before asking a failing authorization server again (module
    docstring): ``first`` seconds after a failure, doubling up to ``cap``."""

    first: float = attrs.field(default=1.0, validator=[instance_of((int, float)), gt(0)])
    cap: float = attrs.field(default=60.0, validator=[instance_of((int, float)), lt(math.inf)])

    def __attrs_post_init__(self) -> None:
        if self.cap < self.first:
            raise ValueError(f"cap ({self.cap}) must not be less than first ({self.first})")


@attrs.define(eq=False)
class Retry:
    """Whether an exchange may be tried now, given how the last ones went.

    ``healthy`` is true only after a success (not before the first exchange): callers
    that want one exchange at a time while the server is not known to work (a probe)
    look at it. A failure reported while already waiting (a concurrent exchange that
    failed too) does not lengthen the wait.
    """

    backoff: Backoff = Backoff()
    healthy: bool = attrs.field(init=False, default=False)
    _wait: float = attrs.field(init=False, default=0.0)
    _until: float = attrs.field(init=False, default=-math.inf)

    def remaining(self) -> float:
        """Seconds before the next exchange may be tried (0: now)."""
        return max(0.0, self._until - trio.current_time())

    def ready(self) -> bool:
        """Whether an exchange may be tried now."""
        return self.remaining() == 0.0

    def failed(self) -> float:
        """Record a failed exchange; returns the seconds until the next try."""
        self.healthy = False
        if self.ready():
            self._wait = min(self.backoff.cap, self._wait * 2 or self.backoff.first)
            self._until = trio.current_time() + self._wait
        return self.remaining()

    def succeeded(self) -> None:
        """Record a successful exchange: no more waiting."""
        self.healthy = True
        self._wait = 0.0
        self._until = -math.inf
