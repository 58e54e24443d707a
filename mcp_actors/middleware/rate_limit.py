"""A rate limit per caller: a token bucket each, refusing requests beyond it."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import attrs
import trio

from ..protocol import errors
from ..protocol.errors import McpError
from ..runtime.middleware import Call, CallNext, Middleware


def caller_or_session(call: Call) -> Hashable:
    """The default key: the authenticated caller, else the session (one bucket each)."""
    return call.caller if call.caller is not None else ("session", id(call.session))


@attrs.define(eq=False)
class RateLimit(Middleware):
    """At most ``rate`` requests per second per caller, with bursts of up to ``burst``.

    Each caller (``key(call)``; default: the authenticated caller, else the session)
    has a bucket of ``burst`` tokens refilled at ``rate`` per second; a request takes
    one, and one arriving at an empty bucket is refused with -32000 ("rate limited",
    ``data.retryAfterSeconds``) without reaching the handler. Only requests of the
    ``direction`` given count (default: inbound, what a server is sent).

    Bounded: at most ``max_callers`` buckets are kept; beyond that the one used
    longest ago is dropped (that caller starts again with a full bucket).
    """

    rate: float
    burst: int = 10
    key: Callable[[Call], Hashable] = caller_or_session
    max_callers: int = 10_000
    direction: str = "inbound"
    _buckets: OrderedDict[Hashable, tuple[float, float]] = attrs.field(
        init=False, factory=OrderedDict
    )
    refused: int = attrs.field(init=False, default=0)

    def __attrs_post_init__(self) -> None:
        if not self.rate > 0 or self.burst < 1 or self.max_callers < 1:
            raise ValueError("RateLimit needs rate > 0, burst >= 1 and max_callers >= 1")

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        if call.direction == self.direction:
            wait = self._take(self.key(call))
            if wait > 0:
                self.refused += 1
                raise McpError(
                    errors.REQUEST_REJECTED,
                    f"rate limited: at most {self.rate:g} requests per second"
                    f" (bursts of {self.burst}); retry in {wait:.3f} s",
                    {"retryAfterSeconds": wait},
                )
        return await call_next(call)

    def _take(self, key: Hashable) -> float:
        """Take a token from ``key``'s bucket: 0, or the seconds until one is there."""
        now = trio.current_time()
        tokens, then = self._buckets.pop(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - then) * self.rate)
        wait = 0.0
        if tokens >= 1:
            tokens -= 1
        else:
            wait = (1 - tokens) / self.rate
        self._buckets[key] = (tokens, now)
        while len(self._buckets) > self.max_callers:
            self._buckets.popitem(last=False)
        return wait

    @property
    def callers(self) -> int:
        """How many callers' buckets are held now."""
        return len(self._buckets)
