"""The session actor: one peer connection, one reader task, one serialized writer task.

A :class:`Session` speaks JSON-RPC with one peer over a
:class:`~mcp_actors.transports.abc.MessageStream`, for either role. Its shape:

- **the reader** decodes every inbound message and routes it without ever
  waiting on user code: a request becomes an :class:`InboundRequest` actor (a
  task in its own cancel scope), a response or a progress notification is handed
  to the :class:`OutboundCall` waiting for it, ``notifications/cancelled``
  cancels the named request's scope, other notifications go to the dispatcher;
- **the writer** takes encoded messages from a bounded queue, always sends
  pending progress first, and hands the transport everything queued at once so
  that many small messages cost one write. Only when it is idle may the reader
  write an answer itself, over a transport whose writes do not wait
  (:meth:`Session._send_from_reader`); the two never write at the same time;
- **the dispatcher** (a server's or a client's) is what gives methods meaning.

A request whose handler the dispatcher vouches never waits (``runs_inline``: a
call to an ``async def`` tool with no ``await`` in it) is served by the reader
itself, without a task or a cancel scope of its own (:meth:`Session._serve_inline`):
it cannot be cancelled anyway, since it is over before the reader reads the next
message, and the task spawn and cancel scope were most of its cost.

Bad input is answered, never fatal: a parse error, an invalid request, an
unknown method, bad params or an oversized message each get their JSON-RPC
error, and the reader reads on. A handler that fails with anything but an
:class:`McpError` is a bug: the peer gets a bare "Internal error", the log a
rate-limited traceback (see :mod:`.internal_errors`).
"""

from __future__ import annotations

import contextvars
import functools
import logging
import math
import types
from collections.abc import Awaitable, Callable, Generator
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
    BatchItem,
    Envelope,
    InvalidMessage,
    InvalidPayload,
    NotificationMessage,
    RequestId,
    RequestMessage,
    ResultMessage,
    decode,
    decode_payload,
    encode_error,
)
from ..protocol.lifecycle import Phase, SessionState
from ..protocol.methods import MethodSpec
from ..protocol.modern import ModernRequest, admit, is_modern_method, is_modern_request
from ..transports.abc import MessageStream, MessageTooLarge, Outgoing, TransportClosed
from .config import SessionConfig
from .internal_errors import INTERNAL_ERROR, internal_errors
from .outbound import ConnectionClosed, Deadlines, OutboundCall, ProgressCallback, RequestTimeout
from .request import InboundRequest, ProgressStream

log = logging.getLogger("mcp_actors.session")

_encode = msgspec.json.Encoder().encode
_EMPTY_RESULT = msgspec.Raw(b"{}")
_TICK = Outgoing(b"")  # wakes the writer to flush pending progress; never written
#: The scope of requests served inline: never entered, never cancelled (nothing can
#: cancel a request that is over before the reader reads on).
_INERT_SCOPE = trio.CancelScope()
#: Answers the reader queues in a row before it lets the writer run (see _send_from_reader).
_YIELD_EVERY = 32


class Dispatcher(Protocol):
    """What gives methods meaning: implemented by the server and by the client."""

    async def handle_request(self, request: InboundRequest, params: Any) -> Any:
        """Serve one request; return the result Struct or raise :class:`McpError`."""

    def handle_notification(self, method: str, params: Any) -> None:
        """Take one notification. Must not block: hand slow work to ``Session.submit``."""

    # Optional: ``runs_inline(request) -> bool``, true when the request's handler is
    # known never to wait (see ``Session._serve_inline``). Absent means never.
    # Optional (servers): ``capabilities(revision) -> ServerCapabilities``, what a request
    # of a modern revision is served with. Absent: the session's own capabilities.


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
    _actors: set[trio.CancelScope] | None = attrs.field(init=False, factory=set)
    _dropped_notifications: int = attrs.field(init=False, default=0)
    _received: int = attrs.field(init=False, default=0)
    _sent: int = attrs.field(init=False, default=0)
    closed: trio.Event = attrs.field(init=False, factory=trio.Event)
    #: Called once when the session ends (e.g. to drop it from a registry).
    closed_callbacks: list[Callable[[], None]] = attrs.field(init=False, factory=list)
    _runs_inline: Callable[[InboundRequest], bool] | None = attrs.field(init=False, default=None)
    _checked: dict[str, MethodSpec] = attrs.field(init=False, factory=dict)
    _direct_writes: bool = attrs.field(init=False, default=False)
    _direct_writing: bool = attrs.field(init=False, default=False)
    _direct_done: trio.Event | None = attrs.field(init=False, default=None)
    _queued_by_reader: int = attrs.field(init=False, default=0)
    _checked_for: tuple[object, object] | None = attrs.field(init=False, default=None)

    def __attrs_post_init__(self) -> None:
        self._runs_inline = getattr(self.dispatcher, "runs_inline", None)
        self._direct_writes = self.transport.direct_writes
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
        cancelled once the peer has stopped sending, or when the session is closed.
        An exception it raises ends the session, so an actor contains its own
        failures. Raises RuntimeError if the session is not running (or already
        draining).
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
        """The peer stopped sending: cancel what it asked for, flush what is queued, stop.

        A peer that closes its end (stdin at EOF, a dropped connection) is gone: nobody
        waits for the answers of its requests any more, so they are cancelled at once
        rather than left to run on. What is already queued is still written.
        """
        self._reading = False
        self._fail_outbound(ConnectionClosed)
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
            if (
                method == "ping"
                and request_id is not None
                and not self._is_modern(method, envelope.params)
            ):  # fast path: the reader answers
                await self._send_from_reader(
                    Outgoing(_result(request_id, _EMPTY_RESULT), request_id, True)
                )
                return
            request = await self._admit(envelope, inline_ok=True)
            if request is None:
                return
            if request.inline:
                await self._serve_inline(request)
            else:
                assert self._nursery is not None
                self._nursery.start_soon(self._serve, request)

    async def _admit(self, envelope: Envelope, *, inline_ok: bool = False) -> InboundRequest | None:
        """Check an inbound request; answer it at once if it cannot run, else make its actor.

        With ``inline_ok`` a request the dispatcher vouches never waits is marked
        ``inline`` and not registered: it will be over before the next message is read.
        """
        request_id = envelope.id
        method = envelope.method
        assert isinstance(request_id, (int, str)) and isinstance(method, str)
        modern: ModernRequest | None = None
        try:
            if self._is_modern(method, envelope.params):
                spec, modern = self._modern_admission(request_id, method, envelope.params)
            else:
                spec = self._admission(request_id, method)
        except McpError as error:
            await self._send_error(request_id, error)
            return None
        request = InboundRequest(request_id, method, spec, envelope.params, self, _INERT_SCOPE)
        request.modern = modern
        if method == "initialize":
            # Served inline: nothing else is valid until it is done, and it cannot be cancelled.
            request.scope = trio.CancelScope()
            payload = await self._run_request(request)
            if payload is not None:
                await self._send(Outgoing(payload, request_id, True))
            return None
        runs_inline = self._runs_inline
        if inline_ok and runs_inline is not None and runs_inline(request):
            request.inline = True  # keeps the inert scope: it is never entered nor cancelled
            return request
        request.scope = trio.CancelScope()
        self._inbound[request_id] = request
        return request

    def _admission(self, request_id: RequestId, method: str) -> MethodSpec:
        """The method's spec if a request may run now; raises the McpError to answer if not."""
        spec = self._check_inbound(method)
        self._check_room(request_id)
        return spec

    def _check_room(self, request_id: RequestId) -> None:
        if request_id in self._inbound:
            raise errors.invalid_request(f"request id {request_id!r} is already in use")
        if len(self._inbound) >= self.config.max_in_flight:
            raise McpError(
                errors.REQUEST_REJECTED,
                f"too many requests in flight (limit {self.config.max_in_flight})",
            )

    # -- the modern era (2026-07-28): each request on its own ----------------------------

    def _is_modern(self, method: str, raw_params: msgspec.Raw | UnsetType) -> bool:
        """Whether a request to this server is of the modern era (its ``_meta`` or its
        method says so).

        One endpoint serves both eras and the process is never locked to one: a
        modern request is served on its own whatever the legacy session's phase.
        """
        return self.state.role == "server" and (
            is_modern_request(raw_params) or is_modern_method(method)
        )

    def _modern_admission(
        self, request_id: RequestId, method: str, raw_params: msgspec.Raw | UnsetType
    ) -> tuple[MethodSpec, ModernRequest]:
        """A modern request's ladder (``protocol.modern.admit``), then the session's limits."""
        capabilities = getattr(self.dispatcher, "capabilities", None)
        local = self.state.local_capabilities
        assert isinstance(local, t.ServerCapabilities)
        admitted = admit(
            method,
            raw_params,
            supported=self.state.supported_versions,
            local_capabilities=capabilities if capabilities is not None else lambda _: local,
        )
        self._check_room(request_id)
        return admitted

    def _check_inbound(self, method: str) -> MethodSpec:
        """``state.check_inbound``, remembered per method once the session is operating
        (its answer then depends only on the negotiated revision and capabilities)."""
        state = self.state
        if state.phase is not Phase.OPERATING:
            return state.check_inbound(method)
        checked_for = self._checked_for
        if (
            checked_for is None
            or checked_for[0] is not state.revision
            or checked_for[1] is not state.local_capabilities
        ):
            self._checked.clear()
            self._checked_for = (state.revision, state.local_capabilities)
        spec = self._checked.get(method)
        if spec is None:
            spec = self._checked[method] = state.check_inbound(method)
        return spec

    def _receive_response(self, envelope: Envelope) -> None:
        call = self._outbound.pop(envelope.id, None)  # type: ignore[arg-type]
        if call is None:
            log.debug("dropped a response to unknown or abandoned request %r", envelope.id)
            return
        call.deliver(envelope)

    def _receive_notification(self, method: str, raw_params: msgspec.Raw | Any) -> None:
        try:
            spec = self.state.check_inbound(method)
            params = decode_payload(
                spec.params_decoder, raw_params if raw_params is not UNSET else b"{}"
            )
        except McpError as error:
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
        """Serve a batch's requests concurrently; answer with one array of their responses.

        Every answer goes in that array: an invalid element's error, a request that
        may not run (unknown method, id in use, too many in flight) and each response.
        """
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
                    refusal = errors.invalid_request("initialize must not be batched")
                    answers.append(self._error(item.id, refusal))
                else:
                    request_id = item.id
                    assert request_id is not None  # decode() refuses a request with a null id
                    try:
                        spec = self._admission(request_id, item.method)
                    except McpError as error:
                        answers.append(self._error(request_id, error))
                        continue
                    request = InboundRequest(
                        request_id, item.method, spec, item.params, self, trio.CancelScope()
                    )
                    self._inbound[request_id] = request
                    nursery.start_soon(serve_one, request)
        if answers:
            await self._send(Outgoing(b"[" + b",".join(answers) + b"]"))

    # -- inbound request actors --------------------------------------------------------

    async def _serve(self, request: InboundRequest) -> None:
        payload = await self._run_request(request)
        if payload is not None:
            await self._send(Outgoing(payload, request.id, True))

    async def _serve_inline(self, request: InboundRequest) -> None:
        """Serve a request whose handler never waits, in the reader: no task, no cancel scope.

        The handler coroutine is stepped once, in a copy of the reader's context (as a
        task would get, so context variables it sets do not leak); it finishes in that
        step. Should it wait after all (a dispatcher that vouched wrongly), it is not
        lost: the reader finishes it, logs a warning, and reads on afterwards — slower,
        and deaf to ``notifications/cancelled`` meanwhile, but correct.
        """
        context = contextvars.copy_context()
        coroutine = self._handle(request)
        try:
            trap = context.run(coroutine.send, None)
        except StopIteration as done:
            payload: bytes = done.value
        else:
            log.warning(
                "handler for %s (id %r) waited although it was to run inline;"
                " the reader finished it",
                request.method,
                request.id,
            )
            payload = await _finish(coroutine, trap, context)
        finally:
            if request.progress is not None:
                request.progress.closed = True
        await self._send_from_reader(Outgoing(payload, request.id, True))

    async def _send_from_reader(self, message: Outgoing) -> None:
        """Send an answer from the reader, as cheaply as the writer's state allows.

        If the writer is idle (waiting, nothing queued, no progress pending), the
        transport's writes do not normally wait and no further input is at hand, the
        reader writes the message itself: nothing can be overtaken, and a
        request/response exchange costs one pass of the scheduler instead of two.
        Otherwise the message is queued without a schedule point when there is room,
        so that the writer takes a whole burst of answers at once when the reader
        next waits for input.
        """
        if self._direct_writes and not self._dirty_progress and not self.transport.input_ready():
            statistics = self._receive_channel.statistics()
            if statistics.current_buffer_used == 0 and statistics.tasks_waiting_receive:
                await self._write_direct(message)
                return
        try:
            self._send_channel.send_nowait(message)
        except trio.WouldBlock:
            await self._send(message)
        except trio.ClosedResourceError:
            log.debug("session closed: dropped an outgoing message")
        else:
            self._queued_by_reader += 1
            if self._queued_by_reader >= _YIELD_EVERY:
                # A long burst of input: let the writer send what is ready, so that the
                # peer works on those answers while we read on.
                self._queued_by_reader = 0
                await trio.lowlevel.cancel_shielded_checkpoint()

    async def _write_direct(self, message: Outgoing) -> None:
        self._direct_writing = True
        try:
            await self.transport.send_all((message,))
            self._sent += 1
        except TransportClosed:
            log.debug("transport closed under the reader")
            self.close()
        finally:
            self._direct_writing = False
            if self._direct_done is not None:
                self._direct_done.set()
                self._direct_done = None

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
            self._inbound.pop(request.id, None)
        return payload

    async def _handle(self, request: InboundRequest) -> bytes:
        if request.method == "ping":
            return _result(request.id, _EMPTY_RESULT)
        try:
            params = request.decode_params()
        except McpError as invalid:
            return self._error(request.id, invalid)
        meta = getattr(params, "meta", UNSET)
        if meta is not UNSET and meta is not None:
            token = meta.get("progressToken")
            if isinstance(token, (int, str)) and not isinstance(token, bool):
                request.progress = ProgressStream(token, request.id, self)
        try:
            result = await self.dispatcher.handle_request(request, params)
            return _result(request.id, result)
        except McpError as error:
            return self._error(request.id, error)
        except Exception:
            internal_errors.report(log, "handler for %s (id %r) failed", request.method, request.id)
            return self._error(request.id, INTERNAL_ERROR)

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
        is sent ``notifications/cancelled`` too. A late response is dropped. Once the
        peer has gone, :class:`ConnectionClosed` is raised at once. A result that does
        not decode into its type raises :class:`McpError` (-32603, "Invalid result of ...").
        """
        spec = self.state.check_outbound(method)
        if not self._reading:  # the peer is gone: no response can ever arrive
            raise ConnectionClosed(method)
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
                    # Newer progress (and the response behind it) may have come in while
                    # the callback ran: look again before returning, so none is lost.
                    continue
                if call.response is not None or call.closed is not None:
                    break
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
        if spec is not None and decoder_type is spec.result and spec.result_decoder is not None:
            decoder = spec.result_decoder
        else:
            decoder = _result_decoder(decoder_type)
        try:
            return decode_payload(decoder, raw)
        except InvalidPayload as invalid:
            # The peer's fault, not our caller's params: -32603 whatever the decode said.
            raise McpError(
                errors.INTERNAL_ERROR, f"Invalid result of {method}: {invalid.detail}"
            ) from None

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
        return encode_error(request_id, error, self.state.revision)

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
                    while self._direct_writing:  # the reader's own write waited: let it end
                        if self._direct_done is None:
                            self._direct_done = trio.Event()
                        await self._direct_done.wait()
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
                internal_errors.report(log, "a notification handler failed")


def _result(request_id: RequestId, result: Any) -> bytes:
    return _encode(ResultMessage(JSONRPC_VERSION, request_id, result))


@functools.lru_cache(maxsize=64)
def _result_decoder(result_type: Any) -> msgspec.json.Decoder[Any]:
    """A decoder for a caller's own result type (``Any`` when None), built once per type."""
    return msgspec.json.Decoder(Any if result_type is None else result_type)


@types.coroutine
def _finish(coroutine: Any, trap: Any, context: contextvars.Context) -> Generator[Any, Any, bytes]:
    """Drive a coroutine that has already yielded ``trap`` to completion in the current task."""
    while True:
        try:
            value = yield trap
        except BaseException as error:
            try:
                trap = context.run(coroutine.throw, error)
            except StopIteration as done:
                result: bytes = done.value
                return result
        else:
            try:
                trap = context.run(coroutine.send, value)
            except StopIteration as done:
                result = done.value
                return result


def _set_meta(params: Any, key: str, value: Any) -> None:
    if isinstance(params, dict):
        params.setdefault("_meta", {})[key] = value
        return
    meta = params.meta
    params.meta = {key: value} if meta is UNSET or meta is None else {**meta, key: value}


def _elapsed(clock: Deadlines) -> float:
    elapsed = trio.current_time() - clock.started
    return elapsed if math.isfinite(elapsed) else 0.0
