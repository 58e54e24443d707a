"""Timing and logging: how long each request took, how it ended, per method."""

from __future__ import annotations

import logging
from typing import Any

import attrs
import trio

from ..protocol.errors import McpError
from ..protocol.methods import METHODS
from ..runtime.middleware import Call, CallNext, Middleware

#: Where the times of methods outside the known table are counted (a peer may send
#: any method name: counting each apart would let it grow the table without bound).
OTHER = "(other)"


@attrs.define
class MethodTiming:
    """Requests of one method so far: how many, how many failed, total and worst seconds."""

    calls: int = 0
    errors: int = 0
    total_seconds: float = 0.0
    max_seconds: float = 0.0


@attrs.define(eq=False)
class Timing(Middleware):
    """Times every request, logs one line per request to ``logger`` at ``level``, and
    keeps per-method totals (:meth:`statistics`). A request that raises is logged with
    the error's code (or type) and counted as an error; a cancelled one is logged as
    such. Time is Trio's clock, so a test's ``MockClock`` governs it."""

    logger: logging.Logger = attrs.field(factory=lambda: logging.getLogger("mcp_actors.timing"))
    level: int = logging.INFO
    _methods: dict[str, MethodTiming] = attrs.field(init=False, factory=dict)

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        started = trio.current_time()
        outcome = "ok"
        try:
            return await call_next(call)
        except McpError as error:
            outcome = f"error {error.code}"
            raise
        except trio.Cancelled:
            outcome = "cancelled"
            raise
        except Exception as error:
            outcome = f"error {type(error).__name__}"
            raise
        finally:
            elapsed = trio.current_time() - started
            self._record(call.method, elapsed, failed=outcome != "ok")
            self.logger.log(
                self.level,
                "%s %s %s (%s) %.3f ms",
                call.role,
                call.direction,
                call.method,
                outcome,
                elapsed * 1000,
            )

    def _record(self, method: str, elapsed: float, *, failed: bool) -> None:
        key = method if method in METHODS else OTHER
        timing = self._methods.setdefault(key, MethodTiming())
        timing.calls += 1
        timing.errors += failed
        timing.total_seconds += elapsed
        timing.max_seconds = max(timing.max_seconds, elapsed)

    def statistics(self) -> dict[str, MethodTiming]:
        """Per method (unknown methods together under :data:`OTHER`), a copy."""
        return {method: attrs.evolve(timing) for method, timing in self._methods.items()}
