"""One outgoing request: waiting for its response, with timeout, progress and cancellation.

The session's reader never waits on a caller: it drops the response (or the
latest progress, or a log message that belongs to the call) into the
:class:`OutboundCall` and wakes the caller's task, which does everything else —
runs the progress and log callbacks, restarts the timeout, and gives up. Giving up,
whether by timeout or because the caller's own task was cancelled, sends
``notifications/cancelled`` to the peer; a response that arrives later finds no call
waiting for it and is dropped.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Awaitable, Callable

import attrs
import trio

from ..protocol import types as t
from ..protocol.engine import ConnectionClosed
from ..protocol.errors import McpError
from ..protocol.jsonrpc import Envelope, RequestId

__all__ = [
    "ConnectionClosed",
    "Deadlines",
    "LogCallback",
    "OutboundCall",
    "ProgressCallback",
    "RequestTimeout",
]

ProgressCallback = Callable[[t.ProgressParams], Awaitable[None]]
LogCallback = Callable[[t.LoggingMessageParams], Awaitable[None]]
#: Log messages one call holds for its caller; when full, the oldest is dropped (counted
#: in ``dropped_logs``): a chatty peer never grows the caller's memory.
MAX_PENDING_LOGS = 64


class RequestTimeout(TimeoutError):
    """An outbound request got no response in time (the peer was sent a cancellation)."""

    def __init__(self, method: str, request_id: RequestId, seconds: float) -> None:
        super().__init__(f"{method} (id {request_id}) got no response within {seconds:g} s")
        self.method = method
        self.request_id = request_id
        self.seconds = seconds


@attrs.define(eq=False, slots=True)
class OutboundCall:
    """The caller's side of one request in flight."""

    method: str
    response: Envelope | None = attrs.field(init=False, default=None)
    closed: McpError | None = attrs.field(init=False, default=None)
    _progress: t.ProgressParams | None = attrs.field(init=False, default=None)
    _logs: deque[t.LoggingMessageParams] | None = attrs.field(init=False, default=None)
    #: Log messages dropped because the caller did not take them fast enough.
    dropped_logs: int = attrs.field(init=False, default=0)
    _wakeup: trio.Event = attrs.field(init=False, factory=trio.Event)

    def deliver(self, response: Envelope) -> None:
        self.response = response
        self._wakeup.set()

    def deliver_progress(self, progress: t.ProgressParams) -> None:
        self._progress = progress
        self._wakeup.set()

    def deliver_log(self, params: t.LoggingMessageParams) -> None:
        logs = self._logs
        if logs is None:
            logs = self._logs = deque(maxlen=MAX_PENDING_LOGS)
        elif len(logs) == MAX_PENDING_LOGS:
            self.dropped_logs += 1
        logs.append(params)
        self._wakeup.set()

    def fail(self, error: McpError) -> None:
        self.closed = error
        self._wakeup.set()

    async def wait(self) -> None:
        await self._wakeup.wait()
        if self.response is None and self.closed is None:
            self._wakeup = trio.Event()

    def take_progress(self) -> t.ProgressParams | None:
        progress, self._progress = self._progress, None
        return progress

    def take_logs(self) -> list[t.LoggingMessageParams]:
        """The log messages delivered since last asked, oldest first."""
        logs = self._logs
        if not logs:
            return []
        taken = list(logs)
        logs.clear()
        return taken


@attrs.frozen
class Deadlines:
    """A soft timeout that progress may restart, under a hard ceiling it never can."""

    timeout: float | None
    ceiling: float | None
    started: float

    def soft(self, since: float) -> float:
        return math.inf if self.timeout is None else since + self.timeout

    def hard(self) -> float:
        return math.inf if self.ceiling is None else self.started + self.ceiling
