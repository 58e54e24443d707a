"""The session actor: one peer connection, one reader task, one serialized writer task.

A :class:`Session` speaks JSON-RPC with one peer over a
:class:`~mcp_actors.transports.abc.MessageStream`, for either role. Its shape:

- **the reader** decodes every inbound message and routes it without ever
  waiting on user code: a request becomes an :class:`InboundRequest` actor (a
  task in its own cancel scope), a response or a progress notification is handed
  to the :class:`OutboundCall` waiting for it, ``notifications/cancelled``
  cancels the named request's scope, other notifications go to the dispatcher;
- **the writer** is the only task that touches the transport's sending side. It
  takes encoded messages from a bounded queue, always sends pending progress
  first, and hands the transport everything queued at once so that many small
  messages cost one write;
- **the dispatcher** (a server's or a client's) is what gives methods meaning.

Bad input is answered, never fatal: a parse error, an invalid request, an
unknown method, bad params or an oversized message each get their JSON-RPC
error, and the reader reads on.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import attrs
import msgspec
import trio
from msgspec import UNSET, UnsetType

from ..protocol import errors
from ..protocol import types as t
from ..protocol.errors import McpError
from ..protocol.jsonrpc import (
    JSONRPC_VERSION,
    AnonymousErrorMessage,
    BatchItem,
    Envelope,
    ErrorMessage,
    ErrorObject,
    InvalidMessage,
    NotificationMessage,
    RequestId,
    RequestMessage,
    ResultMessage,
    decode,
)
from ..protocol.lifecycle import Phase, SessionState
from ..transports.abc import MessageStream, MessageTooLarge, Outgoing, TransportClosed
from .config import SessionConfig
from .groups import describe
from .outbound import ConnectionClosed, Deadlines, OutboundCall, ProgressCallback, RequestTimeout
from .request import InboundRequest, ProgressStream

log = logging.getLogger("mcp_actors.session")

_encode = msgspec.json.Encoder().encode
_EMPTY_RESULT = msgspec.Raw(b"{}")
_TICK = Outgoing(b"")  # wakes the writer to flush pending progress; never written


class Dispatcher(Protocol):
    """What gives methods meaning: implemented by the server and by the client."""

    async def handle_request(self, request: InboundRequest, params: Any) -> Any:
        """Serve one request; return the result Struct or raise :class:`McpError`."""

    def handle_notification(self, method: str, params: Any) -> None:
        """Take one notification. Must not block: hand slow work to ``Session.submit``."""


@attrs.frozen
class SessionStatistics:
    """A snapshot of one session's actors and queues."""

    inbound_requests: int
    outbound_calls: int
    queued_messages: int
    queued_notifications: int
    dropped_notifications: int
    messages_received: int
    messages_sent: int


@attrs.define(eq=False)
class Session:
    """One JSON-RPC peer connection and the actors serving it (see the module docstring)."""

    transport: MessageStream
    state: SessionState
    dispatcher: Dispatcher
    config: SessionConfig = attrs.field(factory=SessionConfig)

    _inbound: dict[RequestId, InboundRequest] = attrs.field(init=False, factory=dict)
    _outbound: dict[RequestId, OutboundCall] = attrs.field(init=False, factory=dict)
    _progress_tokens: dict[t.ProgressToken, OutboundCall] = attrs.field(init=False, factory=dict)
    _dirty_progress: dict[ProgressStream, None] = attrs.field(init=False, factory=dict)
    _tick_queued: bool = attrs.field(init=False, default=False)
    _next_id: int = attrs.field(init=False, default=1)
    _nursery: trio.Nursery | None = attrs.field(init=False, default=None)
    _send_channel: trio.MemorySendChannel[Outgoing] = attrs.field(init=False)
    _receive_channel: trio.MemoryReceiveChannel[Outgoing] = attrs.field(init=False)
    _notify_send: trio.MemorySendChannel[Callable[[], Awaitable[None]]] = attrs.field(init=False)
    _notify_receive: trio.MemoryReceiveChannel[Callable[[], Awaitable[None]]] = attrs.field(
        init=False
    )
    _reading: bool = attrs.field(init=False, default=True)
    _idle: trio.Event = attrs.field(init=False, factory=trio.Event)
    _actors: set[trio.CancelScope] | None = attrs.field(init=False, factory=set)
    _dropped_notifications: int = attrs.field(init=False, default=0)
    _received: int = attrs.field(init=False, default=0)
    _sent: int = attrs.field(init=False, default=0)
    closed: trio.Event = attrs.field(init=False, factory=trio.Event)
    #: Called once when the session ends (e.g. to drop it from a registry).
    closed_callbacks: list[Callable[[], None]] = attrs.field(init=False, factory=list)

    def __attrs_post_init__(self) -> None:
        self._send_channel, self._receive_channel = trio.open_memory_channel[Outgoing](
            self.config.outbound_queue_size
        )
        self._notify_send, self._notify_receive = trio.open_memory_channel[
            Callable[[], Awaitable[None]]
        ](self.config.notification_queue_size)

    # -- running -------------------------------------------------------------------

    async def run(
        self, *, task_status: trio.TaskStatus[Session] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Serve the session until the peer goes away or :meth:`close` is called."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                nursery.start_soon(self._write_loop)
                nursery.start_soon(self._notification_loop)
                task_status.started(self)
                await self._read_loop()
                await self._drain(nursery)
        finally:
            self._shut_down()
            with trio.CancelScope(shield=True):
                await self.transport.aclose()

    def close(self) -> None:
        """End the session now: in-flight requests are cancelled, the transport closed."""
        if self._nursery is not None:
            self._nursery.cancel_scope.cancel()

    def start_actor(self, actor: Callable[[], Awaitable[None]]) -> None:
        """Run ``actor()`` as a long-lived task of this session (e.g. a subscription).

        It lives in the session's nursery, so it ends with the session: it is
        cancelled once the peer has stopped sending and in-flight requests are
        done, or when the session is closed. An exception it raises ends the
        session, so an actor contains its own failures. Raises RuntimeError if the
        session is not running (or already draining).
        """
        if self._nursery is None or self._actors is None:
            raise RuntimeError("the session is not running")
        self._nursery.start_soon(self._run_actor, actor)

    async def _run_actor(self, actor: Callable[[], Awaitable[None]]) -> None:
        scope = trio.CancelScope()
        if self._actors is None:
            return
        self._actors.add(scope)
        try:
            with scope:
                await actor()
        finally:
            if self._actors is not None:
                self._actors.discard(scope)

    async def _drain(self, nursery: trio.Nursery) -> None:
        """The peer stopped sending: let running requests answer (briefly), then flush and stop."""
        self._reading = False
        self._fail_outbound(ConnectionClosed)
        if self._inbound:
            with trio.move_on_after(5):
                await self._idle.wait()
        for request in list(self._inbound.values()):
            request.cancel("the peer closed the connection")
        actors, self._actors = self._actors or set(), None
        for scope in actors:
            scope.cancel()
        self._notify_send.close()
        await self._send_channel.aclose()

    def _shut_down(self) -> None:
        self.state.close()
        self._fail_outbound(ConnectionClosed)
        self.closed.set()
        for callback in self.closed_callbacks:
            callback()

    def _fail_outbound(self, error: Callable[[str], McpError]) -> None:
        for call in self._outbound.values():
            call.fail(error(call.method))

    def statistics(self) -> SessionStatistics:
        return SessionStatistics(
            inbound_requests=len(self._inbound),
            outbound_calls=len(self._outbound),
            queued_messages=self._receive_channel.statistics().current_buffer_used,
            queued_notifications=self._notify_receive.statistics().current_buffer_used,
            dropped_notifications=self._dropped_notifications,
            messages_received=self._received,
            messages_sent=self._sent,
        )

    # -- the reader ------------------------------------------------------------------

    async def _read_loop(self) -> None:
        receive = self.transport.receive
        while True:
            try:
                data = await receive()
            except TransportClosed:
                return
            except MessageTooLarge as too_large:
                await self._send_error(
                    None,
                    McpError(errors.INVALID_REQUEST, str(too_large), {"limit": too_large.limit}),
                )
                continue
            self._received += 1
            try:
                message = decode(data)
            except InvalidMessage as invalid:
                await self._send_error(invalid.request_id, invalid)
                continue
            if isinstance(message, list):
                await self._receive_batch(message)
            else:
                await self._route(message)

    async def _route(self, envelope: Envelope) -> None:
        method = envelope.method
        if method is UNSET:
            self._receive_response(envelope)
        elif envelope.id is UNSET:
            self._receive_notification(method, envelope.params)
        else:
            request_id = envelope.id
            if method == "ping" and request_id is not None:  # fast path: the reader answers
                await self._send(Outgoing(_result(request_id, _EMPTY_RESULT), request_id, True))
                return
            request = await self._admit(envelope)
            if request is not None:
                assert self._nursery is not None
                self._nursery.start_soon(self._serve, request)

    async def _admit(self, envelope: Envelope) -> InboundRequest | None:
        """Check an inbound request; answer it at once if it cannot run, else make its actor."""
        request_id = envelope.id
        method = envelope.method
        assert isinstance(request_id, (int, str)) and isinstance(method, str)
        try:
            spec = self.state.check_inbound(method)
            if request_id in self._inbound:
                raise errors.invalid_request(f"request id {request_id!r} is already in use")
            if len(self._inbound) >= self.config.max_in_flight:
                raise McpError(
                    errors.REQUEST_REJECTED,
                    f"too many requests in flight (limit {self.config.max_in_flight})",
                )
        except McpError as error:
            await self._send_error(request_id, error)
            return None
        request = InboundRequest(request_id, method, spec, envelope.params, self)
        if method == "initialize":
            # Served inline: nothing else is valid until it is done, and it cannot be cancelled.
            payload = await self._run_request(request)
            if payload is not None:
                await self._send(Outgoing(payload, request_id, True))
            return None
        self._inbound[request_id] = request
        return request

    def _receive_response(self, envelope: Envelope) -> None:
        call = self._outbound.pop(envelope.id, None)  # type: ignore[arg-type]
        if call is None:
            log.debug("dropped a response to unknown or abandoned request %r", envelope.id)
            return
        call.deliver(envelope)

    def _receive_notification(self, method: str, raw_params: msgspec.Raw | Any) -> None:
        try:
            spec = self.state.check_inbound(method)
            params = spec.params_decoder.decode(raw_params if raw_params is not UNSET else b"{}")
        except (McpError, msgspec.ValidationError) as error:
            log.debug("ignored notification %s: %s", method, error)
            return
        if method == "notifications/cancelled":
            request = self._inbound.get(params.request_id)
            if request is not None:
                request.cancel(params.reason or None)
        elif method == "notifications/progress":
            call = self._progress_tokens.get(params.progress_token)
            if call is not None:
                call.deliver_progress(params)
        else:
            self.dispatcher.handle_notification(method, params)

    async def _receive_batch(self, items: list[BatchItem]) -> None:
        if not self.state.revision.batches:
            await self._send_error(
                None,
                errors.invalid_request(
                    f"JSON-RPC batches are not allowed in protocol revision {self.state.revision}"
                ),
            )
            return
        assert self._nursery is not None
        self._nursery.start_soon(self._serve_batch, items)

    async def _serve_batch(self, items: list[BatchItem]) -> None:
        """Serve a batch's requests concurrently; answer with one array of their responses."""
        answers: list[bytes] = []

        async def serve_one(request: InboundRequest) -> None:
            payload = await self._run_request(request)
            if payload is not None:
                answers.append(payload)

        async with trio.open_nursery() as nursery:
            for item in items:
                if isinstance(item, InvalidMessage):
                    answers.append(self._error(item.request_id, item))
                elif item.method is UNSET:
                    self._receive_response(item)
                elif item.id is UNSET:
                    self._receive_notification(item.method, item.params)
                elif item.method == "initialize":
                    answers.append(
                        _error(item.id, errors.invalid_request("initialize must not be batched"))
                    )
                elif (request := await self._admit(item)) is not None:
                    nursery.start_soon(serve_one, request)
        if answers:
            await self._send(Outgoing(b"[" + b",".join(answers) + b"]"))

    # -- inbound request actors --------------------------------------------------------

    async def _serve(self, request: InboundRequest) -> None:
        payload = await self._run_request(request)
        if payload is not None:
            await self._send(Outgoing(payload, request.id, True))

    async def _run_request(self, request: InboundRequest) -> bytes | None:
        """Run one request's handler in its cancel scope; the encoded answer, or None if cancelled.

        This is the one place where an exception becomes a JSON-RPC error.
        """
        payload: bytes | None = None
        try:
            with request.scope:
                payload = await self._handle(request)
        finally:
            if request.progress is not None:
                request.progress.closed = True
            finished = self._inbound.pop(request.id, None) is not None
            if finished and not self._inbound and not self._reading:
                self._idle.set()
        return payload

    async def _handle(self, request: InboundRequest) -> bytes:
        if request.method == "ping":
            return _result(request.id, _EMPTY_RESULT)
        try:
            params = request.decode_params()
        except msgspec.ValidationError as invalid:
            return _error(request.id, errors.invalid_params(str(invalid)))
        meta = getattr(params, "meta", UNSET)
        if meta is not UNSET and meta is not None:
            token = meta.get("progressToken")
            if isinstance(token, (int, str)) and not isinstance(token, bool):
                request.progress = ProgressStream(token, request.id, self)
        try:
            result = await self.dispatcher.handle_request(request, params)
            return _result(request.id, result)
        except McpError as error:
            return _error(request.id, error)
        except Exception as error:
            log.exception("handler for %s (id %r) failed", request.method, request.id)
            detail = describe(error)
            return _error(request.id, McpError(errors.INTERNAL_ERROR, f"Internal error: {detail}"))

    # -- outbound --------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        timeout: float | UnsetType | None = UNSET,
        on_progress: ProgressCallback | None = None,
        related_request: RequestId | None = None,
        result_type: Any = None,
    ) -> Any:
        """Send a request and wait for its result (decoded into the method's result type).

        ``timeout`` defaults to the session's ``request_timeout``; progress
        notifications restart it (up to ``max_request_timeout``) when the session is
        configured so. On timeout the peer is sent ``notifications/cancelled`` and
        :class:`RequestTimeout` is raised; if the calling task is cancelled, the peer
        is sent ``notifications/cancelled`` too. A late response is dropped.
        """
        spec = self.state.check_outbound(method)
        if params is None:
            params = t.EmptyParams()
        request_id = self._next_id
        self._next_id += 1
        call = OutboundCall(request_id, method)
        if on_progress is not None:
            _set_meta(params, "progressToken", request_id)
            self._progress_tokens[request_id] = call
        self._outbound[request_id] = call
        seconds = self.config.request_timeout if timeout is UNSET else timeout
        clock = Deadlines(seconds, self.config.max_request_timeout, trio.current_time())
        try:
            payload = _encode(RequestMessage(JSONRPC_VERSION, request_id, method, params))
            await self._send(Outgoing(payload, related_request))
            soft = clock.soft(clock.started)
            while True:
                with trio.move_on_at(min(soft, clock.hard())):
                    await call.wait()
                # Progress first: on the wire it came before the response that may follow it.
                progress = call.take_progress()
                if progress is not None:
                    if self.config.reset_timeout_on_progress:
                        soft = clock.soft(trio.current_time())
                    if on_progress is not None:
                        await on_progress(progress)
                if call.response is not None or call.closed is not None:
                    break
                if progress is None:
                    self._cancel_remote(call, "timed out")
                    raise RequestTimeout(method, request_id, _elapsed(clock))
        except trio.Cancelled:
            self._cancel_remote(call, "the caller was cancelled")
            raise
        finally:
            self._outbound.pop(request_id, None)
            self._progress_tokens.pop(request_id, None)
        if call.closed is not None:
            raise call.closed
        response = call.response
        assert response is not None
        if response.error is not UNSET:
            raise McpError(response.error.code, response.error.message, response.error.data)
        decoder_type = result_type or (spec.result if spec is not None else None)
        raw = response.result
        assert raw is not UNSET
        if decoder_type is None:
            return msgspec.json.decode(raw)
        if spec is not None and decoder_type is spec.result and spec.result_decoder is not None:
            return spec.result_decoder.decode(raw)
        return msgspec.json.decode(raw, type=decoder_type)

    async def notify(
        self, method: str, params: Any = None, *, related_request: RequestId | None = None
    ) -> None:
        """Send a notification (checked against the lifecycle and capabilities)."""
        self.state.check_outbound(method)
        message = NotificationMessage(
            JSONRPC_VERSION, method, t.EmptyParams() if params is None else params
        )
        await self._send(Outgoing(_encode(message), related_request))

    def notify_soon(self, method: str, params: Any = None) -> None:
        """Send a notification without waiting: queued now, or by a task if the queue is full."""
        self.state.check_outbound(method)
        message = NotificationMessage(
            JSONRPC_VERSION, method, t.EmptyParams() if params is None else params
        )
        self._send_soon(Outgoing(_encode(message)))

    def submit(self, work: Callable[[], Awaitable[None]]) -> None:
        """Queue slow notification work for the session's notification task; drop if full."""
        try:
            self._notify_send.send_nowait(work)
        except (trio.WouldBlock, trio.ClosedResourceError):
            self._dropped_notifications += 1
            log.warning("notification queue full: dropped a notification")

    def _cancel_remote(self, call: OutboundCall, reason: str) -> None:
        """Tell the peer we gave up on ``call`` (never for ``initialize``), without blocking."""
        self._outbound.pop(call.id, None)
        if call.method == "initialize" or self.state.phase is Phase.CLOSED:
            return
        params = t.CancelledParams(request_id=call.id, reason=reason)
        self._send_soon(
            Outgoing(
                _encode(NotificationMessage(JSONRPC_VERSION, "notifications/cancelled", params))
            )
        )

    def _send_soon(self, message: Outgoing) -> None:
        try:
            self._send_channel.send_nowait(message)
        except trio.WouldBlock:
            if self._nursery is not None:
                self._nursery.start_soon(self._send, message)
        except trio.ClosedResourceError:
            pass

    def _schedule_progress(self, stream: ProgressStream) -> None:
        self._dirty_progress[stream] = None
        if not self._tick_queued:
            try:
                self._send_channel.send_nowait(_TICK)
                self._tick_queued = True
            except (trio.WouldBlock, trio.ClosedResourceError):
                pass  # the writer is busy; it flushes progress before its next write

    async def _send(self, message: Outgoing) -> None:
        try:
            await self._send_channel.send(message)
        except trio.ClosedResourceError:
            log.debug("session closed: dropped an outgoing message")

    async def _send_error(self, request_id: RequestId | None, error: McpError) -> None:
        payload = self._error(request_id, error)
        await self._send(Outgoing(payload, request_id, request_id is not None))

    def _error(self, request_id: RequestId | None, error: McpError) -> bytes:
        return _error(request_id, error, self.state.revision.anonymous_error_omits_id)

    # -- the writer ------------------------------------------------------------------

    async def _write_loop(self) -> None:
        receive = self._receive_channel
        send_all = self.transport.send_all
        try:
            async for first in receive:
                batch = [first] if first is not _TICK else []
                while True:
                    try:
                        item = receive.receive_nowait()
                    except (trio.WouldBlock, trio.EndOfChannel):
                        break
                    if item is not _TICK:
                        batch.append(item)
                if self._dirty_progress:
                    batch[:0] = self._take_progress()
                self._tick_queued = False
                if batch:
                    await send_all(batch)
                    self._sent += len(batch)
        except TransportClosed:
            log.debug("transport closed under the writer")
            self.close()

    def _take_progress(self) -> list[Outgoing]:
        messages = []
        for stream in self._dirty_progress:
            progress = stream.take()
            if progress is not None:
                payload = _encode(
                    NotificationMessage(JSONRPC_VERSION, "notifications/progress", progress)
                )
                messages.append(Outgoing(payload, stream.request_id))
        self._dirty_progress.clear()
        return messages

    async def _notification_loop(self) -> None:
        async for work in self._notify_receive:
            try:
                await work()
            except Exception:
                log.exception("a notification handler failed")


def _result(request_id: RequestId, result: Any) -> bytes:
    return _encode(ResultMessage(JSONRPC_VERSION, request_id, result))


def _error(request_id: RequestId | None, error: McpError, omit_missing_id: bool = True) -> bytes:
    data = UNSET if error.data is None else error.data
    body = ErrorObject(error.code, error.message, data)
    if request_id is None and omit_missing_id:
        return _encode(AnonymousErrorMessage(JSONRPC_VERSION, body))
    return _encode(ErrorMessage(JSONRPC_VERSION, request_id, body))


def _set_meta(params: Any, key: str, value: Any) -> None:
    if isinstance(params, dict):
        params.setdefault("_meta", {})[key] = value
        return
    meta = params.meta
    params.meta = {key: value} if meta is UNSET or meta is None else {**meta, key: value}


def _elapsed(clock: Deadlines) -> float:
    elapsed = trio.current_time() - clock.started
    return elapsed if math.isfinite(elapsed) else 0.0
