"""One outgoing request: waiting for its response, with timeout, progress, logs and cancellation.

:class:`Outbound` is a session's sending side for what *we* start: requests
(:meth:`Outbound.request`) and notifications. Each request is an
:class:`OutboundCall` in the engine's table until it ends. The session's reader
never waits on a caller: it drops the response (or the
latest progress, or a log message that belongs to the call) into the
:class:`OutboundCall` and wakes the caller's task, which does everything else
(:meth:`OutboundCall.outcome`) — runs the progress and log callbacks, restarts the
timeout, and gives up. Giving up, whether by timeout or because the caller's own
task was cancelled, sends ``notifications/cancelled`` to the peer; a response that
arrives later finds no call waiting for it and is dropped.

**Progress** coalesces: the call holds the latest report only, and the caller sees
it before the response that may follow it on the wire. With
``SessionConfig.reset_timeout_on_progress`` each report restarts the timeout, never
past ``max_request_timeout`` (:class:`Deadlines`).

**Log messages routed to their call.** A peer may send ``notifications/message``
that belongs to one of our requests (a gateway's upstream logging while it serves
the call the gateway forwarded; the engine knows by the message's related request
id or the response stream it came on). A caller that passed ``on_log`` gets them,
in order, before the result; without it they go to the dispatcher like any
notification. The call holds at most ``MAX_PENDING_LOGS`` for a caller that is slow
to take them; when full the oldest is dropped (counted in ``dropped_logs``).
"""

from __future__ import annotations

import functools
import math
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import trio
from msgspec import UNSET, UnsetType

from ..protocol import types as t
from ..protocol.engine import Engine
from ..protocol.errors import ConnectionClosed, McpError
from ..protocol.jsonrpc import Envelope, RequestId
from ..protocol.lifecycle import SessionState
from ..transports.abc import Outgoing
from .config import SessionConfig
from .request import InboundRequest
from .rest import Rest
from .writer import Writer

__all__ = [
    "ConnectionClosed",
    "Deadlines",
    "LogCallback",
    "Outbound",
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

    async def outcome(
        self,
        clock: Deadlines,
        *,
        on_progress: ProgressCallback | None,
        on_log: LogCallback | None,
        restart_on_progress: bool,
        on_timeout: Callable[[], None],
    ) -> Envelope:
        """Wait for the response: run the callbacks as progress and log messages come in.

        Raises the error the call was closed with (:meth:`fail`), or, after calling
        ``on_timeout``, :class:`RequestTimeout` when ``clock`` runs out.
        """
        soft = clock.soft(clock.started)
        while True:
            with trio.move_on_at(min(soft, clock.hard())):
                await self.wait()
            if on_log is not None:
                logs = self.take_logs()
                if logs:
                    for message in logs:
                        await on_log(message)
                    continue  # more may have come in while they ran
            # Progress first: on the wire it came before the response that may follow it.
            progress = self.take_progress()
            if progress is not None:
                if restart_on_progress:
                    soft = clock.soft(trio.current_time())
                if on_progress is not None:
                    await on_progress(progress)
                # Newer progress (and the response behind it) may have come in while
                # the callback ran: look again before returning, so none is lost.
                continue
            if self.closed is not None:
                raise self.closed
            if self.response is not None:
                return self.response
            on_timeout()
            raise RequestTimeout(self.method, clock.request_id, clock.elapsed())

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
    """A soft timeout that progress may restart, under a hard ceiling it never can.

    ``timeout`` and ``ceiling`` are seconds (None: none), ``started`` the time
    (``trio.current_time()``) the request ``request_id`` was sent."""

    request_id: RequestId
    timeout: float | None
    ceiling: float | None
    started: float

    def soft(self, since: float) -> float:
        return math.inf if self.timeout is None else since + self.timeout

    def hard(self) -> float:
        return math.inf if self.ceiling is None else self.started + self.ceiling

    def elapsed(self) -> float:
        """Seconds since the request was sent (0 under a clock that is not finite)."""
        elapsed = trio.current_time() - self.started
        return elapsed if math.isfinite(elapsed) else 0.0


@attrs.define(eq=False)
class Outbound:
    """What a session sends of its own accord: requests, with their calls, and
    notifications (see the module docstring). Sending wakes a sleeping session
    (see :mod:`.rest`)."""

    engine: Engine[InboundRequest, OutboundCall]
    writer: Writer
    config: SessionConfig
    rest: Rest

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        timeout: float | UnsetType | None = UNSET,
        on_progress: ProgressCallback | None = None,
        on_log: LogCallback | None = None,
        related_request: RequestId | None = None,
        result_type: Any = None,
        on_id: Callable[[RequestId], None] | None = None,
    ) -> Any:
        """Send a request and wait for its result (decoded into the method's result type).

        ``on_log`` is awaited with each log message that belongs to this request (see
        the module docstring), in order, before the result is returned; without it they
        go to the dispatcher like any notification.

        ``on_id`` is told the request's id before it is sent (to route what the peer
        sends about it, such as a listen stream's notifications).

        ``timeout`` defaults to the session's ``request_timeout``; progress
        notifications restart it (up to ``max_request_timeout``) when the session is
        configured so. On timeout the peer is sent ``notifications/cancelled`` and
        :class:`RequestTimeout` is raised; if the calling task is cancelled, the peer
        is sent ``notifications/cancelled`` too. A late response is dropped. Once the
        peer has gone, :class:`ConnectionClosed` is raised at once. A result that does
        not decode into its type raises :class:`McpError` (-32603, "Invalid result of ...").
        """
        if self.rest.asleep:
            self.rest.wake()
        call = OutboundCall(method)
        engine, config = self.engine, self.config
        request_id, payload = engine.send_request(
            method, params, call, progress=on_progress is not None, logs=on_log is not None
        )
        if on_id is not None:
            on_id(request_id)
        seconds = config.request_timeout if timeout is UNSET else timeout
        clock = Deadlines(request_id, seconds, config.max_request_timeout, trio.current_time())
        try:
            sent = Outgoing(
                payload, related_request, method=method, request_id=request_id, params=params
            )
            await self.writer.send_then_wait(sent)
            response = await call.outcome(
                clock,
                on_progress=on_progress,
                on_log=on_log,
                restart_on_progress=config.reset_timeout_on_progress,
                on_timeout=functools.partial(self.cancel, request_id, method, "timed out"),
            )
        except trio.Cancelled:
            self.cancel(request_id, method, "the caller was cancelled")
            raise
        finally:
            engine.call_finished(request_id)
        return engine.read_result(method, response, result_type)

    async def notify(
        self,
        method: str,
        params: Any = None,
        *,
        related_request: RequestId | None = None,
        state: SessionState | None = None,
    ) -> None:
        """Send a notification (checked against the lifecycle and capabilities: the
        session's, or ``state``'s — a modern request's own, for one related to it)."""
        if self.rest.asleep:
            self.rest.wake()
        payload = self.engine.send_notification(method, params, state)
        await self.writer.send(Outgoing(payload, related_request, method=method, params=params))

    def notify_soon(self, method: str, params: Any = None) -> None:
        """Send a notification without waiting: queued now, or by a task if the queue is full."""
        if self.rest.asleep:
            self.rest.wake()
        payload = self.engine.send_notification(method, params)
        self.writer.send_soon(Outgoing(payload, method=method, params=params))

    def cancel(self, request_id: RequestId, method: str, reason: str) -> None:
        """Tell the peer we gave up on our request ``request_id``, without blocking."""
        payload = self.engine.cancel_request(request_id, method, reason)
        if payload is not None:
            if self.rest.asleep:
                self.rest.wake()
            cancelled = {"requestId": request_id, "reason": reason}
            sent = Outgoing(payload, method="notifications/cancelled", params=cancelled)
            self.writer.send_soon(sent)
