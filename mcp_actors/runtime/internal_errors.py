"""Internal errors — bugs, not bad input — told to no peer, and logged without flooding the log.

A peer that finds a way to make a handler fail can repeat it as fast as it can
send. Two rules keep that harmless:

- the peer is answered with a bare ``Internal error`` (-32603): no exception type,
  message or path leaves the process (they may hold secrets, and they help an
  attacker more than a legitimate client);
- the log gets the traceback of the first :attr:`InternalErrorLog.burst` errors of
  each :attr:`InternalErrorLog.interval`; past that, one line says that tracebacks
  are being held back, and the first error of a later interval is preceded by one
  line counting how many were. One process-wide budget (:data:`internal_errors`),
  since a flood may come from many sessions at once.

(A tool that raises is not an internal error: its exception is the tool's result,
``isError`` with the message, as :mod:`mcp_actors.server.tools` documents.)
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Final

import attrs

from ..protocol import errors
from ..protocol.errors import McpError

#: What the peer is told about any internal error.
INTERNAL_ERROR: Final = McpError(errors.INTERNAL_ERROR, "Internal error")


@attrs.define
class InternalErrorLog:
    """Logs internal errors with a rate limit: ``burst`` tracebacks per ``interval`` seconds."""

    burst: int = 10
    interval: float = 60.0
    clock: Callable[[], float] = time.monotonic
    _window_start: float | None = attrs.field(init=False, default=None)
    _logged: int = attrs.field(init=False, default=0)
    _held_back: int = attrs.field(init=False, default=0)

    def report(self, logger: logging.Logger, message: str, *args: object) -> None:
        """Log the exception being handled (call from an ``except`` block) if the budget allows."""
        now = self.clock()
        if self._window_start is None or now - self._window_start >= self.interval:
            if self._held_back:
                logger.error(
                    "%d more internal errors were not logged (at most %d tracebacks per %g s)",
                    self._held_back,
                    self.burst,
                    self.interval,
                )
            self._window_start, self._logged, self._held_back = now, 0, 0
        if self._logged < self.burst:
            self._logged += 1
            logger.error(message, *args, exc_info=True)
            return
        if not self._held_back:
            logger.error(
                "internal errors are coming fast: further tracebacks are held back for %g s",
                self.interval - (now - self._window_start),
            )
        self._held_back += 1

    @property
    def held_back(self) -> int:
        """Errors of the current interval whose traceback was not logged."""
        return self._held_back


#: The process-wide budget every session reports to.
internal_errors: Final = InternalErrorLog()
