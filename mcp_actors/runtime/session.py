"""The session actor: the trio loop around one protocol engine — a reader, a writer, request actors.

A :class:`Session` speaks MCP with one peer over a
:class:`~mcp_actors.transports.abc.MessageStream`, for either role. What is
protocol (the lifecycle, the id tables, which error a bad message gets, encoding)
is the :class:`~mcp_actors.protocol.engine.Engine`'s; the session moves bytes and
runs tasks:

- **the reader** hands every inbound message to the engine and acts on the event it
  gets back, without ever waiting on user code: a request becomes an
  :class:`InboundRequest` actor (a task in its own cancel scope), a response, a
  progress notification or a log message that belongs to a call goes to the
  :class:`OutboundCall` waiting for it (a transport that knows on whose response
  stream a message came says so: :meth:`~.abc.MessageStream.receive_related`), a
  cancellation cancels the named request's scope, other notifications go to the
  dispatcher, and an answer the engine wrote itself (an error, ``ping``) is sent;
- **the writer** (:class:`~.writer.Writer`) sends everything, in order: from a
  bounded queue, pending progress first, many messages in one write; when it is
  idle, the reader may write an answer itself;
- **the dispatcher** (a server's or a client's) is what gives methods meaning.

**Sleeping.** Over a transport that can hold a session's input while nobody reads
it (Streamable HTTP, where an idle session is most of a server's sessions), an idle
session gives up its tasks: when the transport offers it rest (its reader's
``receive`` ends with ``transport.rest_offered`` set, see :class:`MessageStream`),
and nothing is in flight (no request, no outbound call, no actor, nothing queued),
:meth:`Session.run` returns with the session *asleep* — its engine, state and
transport kept, no task, no nursery, no queues. It is still a supervised actor:
the first thing that concerns it — input the transport receives, a message sent to
it, :meth:`Session.close` — wakes it, and its host (the
:class:`~.supervisor.Supervisor` that started it) runs it again, in the same root
nursery, with the same failure containment. A session without a host never sleeps.

A request whose handler is declared never to wait (the dispatcher's
``serves_inline``: a tool registered with ``inline=True``) is served by the reader
itself, without a task or a cancel scope of its own (see :mod:`.inline`).

A handler that fails with anything but an :class:`McpError` is a bug: the peer
gets a bare "Internal error", the log a rate-limited traceback (see
:mod:`.internal_errors`).
"""

from __future__ import annotations

import functools
import logging
import math
import types
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeGuard, runtime_checkable

import attrs
import trio
from msgspec import UNSET, UnsetType

from ..protocol.engine import Engine, ServerDescription, progress_token
from ..protocol.errors import McpError
from ..protocol.events import (
    BatchReceived,
    CancelRequested,
    Event,
    LogReceived,
    NotificationReceived,
    ProgressReceived,
    Reply,
    RequestReceived,
    ResponseReceived,
)
from ..protocol.jsonrpc import RequestId
from ..protocol.lifecycle import SessionState
from ..protocol.versions import Revision
from ..transports.abc import MessageStream, MessageTooLarge, Outgoing, TransportClosed
from .config import SessionConfig
from .inline import Waiting, start_inline
from .internal_errors import INTERNAL_ERROR, internal_errors
from .outbound import (
    ConnectionClosed,
    Deadlines,
    LogCallback,
    OutboundCall,
    ProgressCallback,
    RequestTimeout,
)
from .request import InboundRequest, ProgressStream
from .writer import Writer

log = logging.getLogger("mcp_actors.session")


class Dispatcher(Protocol):
    """What gives methods meaning: implemented by the server and by the client."""

    async def handle_request(self, request: InboundRequest, params: Any) -> Any:
        """Serve one request; return the result Struct or raise :class:`McpError`."""

    def handle_notification(self, method: str, params: Any) -> None:
        """Take one notification. Must not block: hand slow work to ``Session.submit``."""

    def serves_inline(self, request: InboundRequest) -> bool:
        """Whether ``request``'s handler is declared never to wait (see :mod:`.inline`)."""


@runtime_checkable
class ServerDispatcher(Dispatcher, Protocol):
    """A server's dispatcher also says what the server is, for the ``initialize`` answer."""

    def describe_server(self, revision: Revision, *, stateless: bool) -> ServerDescription: ...


def _is_server(dispatcher: Dispatcher) -> TypeGuard[ServerDispatcher]:
    return _describes_server(type(dispatcher))


@functools.cache
def _describes_server(dispatcher_type: type) -> bool:
    """Whether dispatchers of this type are a :class:`ServerDispatcher` (asked once per
    type: a runtime protocol check walks the protocol's members every time)."""
    return issubclass(dispatcher_type, ServerDispatcher)


class ActorHost(Protocol):
    """Where actors run: a session (they end with it) or the supervisor (they outlive it)."""

    def start_actor(self, actor: Callable[[], Awaitable[None]]) -> None: ...


class SessionHost(ActorHost, Protocol):
    """Where a session runs (the supervisor): it also runs an asleep session again."""

    def resume_session(self, session: Session) -> None:
        """Run ``session`` again (it was asleep and something woke it)."""


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
    #: The lifecycle state (phase, revision, both sides' capabilities), shared with the
    #: engine: a plain attribute, read on every request (set it only at creation).
    state: SessionState
    dispatcher: Dispatcher
    config: SessionConfig = attrs.field(factory=SessionConfig)

    _engine: Engine[InboundRequest, OutboundCall] = attrs.field(init=False)
    _writer: Writer = attrs.field(init=False)
    _nursery: trio.Nursery | None = attrs.field(init=False, default=None)
    #: The slow-notification queue and its task, made by the first :meth:`submit` of
    #: each stretch awake (most sessions never need them).
    _notify_send: trio.MemorySendChannel[Callable[[], Awaitable[None]]] | None = attrs.field(
        init=False, default=None
    )
    _notify_receive: trio.MemoryReceiveChannel[Callable[[], Awaitable[None]]] | None = attrs.field(
        init=False, default=None
    )
    #: The scopes of the running actors (the set made by the first actor).
    _actors: set[trio.CancelScope] | None = attrs.field(init=False, default=None)
    #: Set once the peer stopped sending: no new actor starts.
    _draining: bool = attrs.field(init=False, default=False)
    #: Whether a task runs :meth:`run` now; whether the session sleeps (see the module
    #: docstring); whether :meth:`close` was called.
    _running: bool = attrs.field(init=False, default=False)
    _asleep: bool = attrs.field(init=False, default=False)
    _closing: bool = attrs.field(init=False, default=False)
    _dropped_notifications: int = attrs.field(init=False, default=0)
    #: Set once no request is in flight, while the session finishes them (see _drain).
    _answered_all: trio.Event | None = attrs.field(init=False, default=None)
    _received: int = attrs.field(init=False, default=0)
    closed: trio.Event = attrs.field(init=False, factory=trio.Event)
    #: Called once when the session ends (e.g. to drop it from a registry).
    closed_callbacks: list[Callable[[], None]] = attrs.field(init=False, factory=list)
    #: Where actors that may outlive this session run (a parked MRTR handler), and what
    #: runs the session again once it slept: the supervisor that started the session;
    #: None: nowhere but the session itself (it then never sleeps).
    host: SessionHost | None = attrs.field(init=False, default=None)

    def __attrs_post_init__(self) -> None:
        dispatcher = self.dispatcher
        describe = dispatcher.describe_server if _is_server(dispatcher) else None
        # The engine makes each request's actor object: an InboundRequest of this session
        # (a bound method: unlike functools.partial, no argument tuple is built per call).
        open_request = types.MethodType(InboundRequest, self)
        self._engine = Engine(
            self.state,
            open_request,
            describe,
            max_in_flight=self.config.max_in_flight,
            modern_only=self.transport.modern_only,
        )
        encode_progress = functools.partial(
            self._engine.encode_notification, "notifications/progress"
        )
        self._writer = Writer(
            self.transport, encode_progress, self.close, self.config.outbound_queue_size
        )

    # -- running -------------------------------------------------------------------

    async def run(
        self, *, task_status: trio.TaskStatus[Session] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Serve the session until the peer goes away or :meth:`close` is called.

        Or until it falls asleep (see the module docstring): then it returns with the
        session kept, and its host calls ``run`` again when something wakes it.
        """
        self._running = True
        task_status.started(self)
        ended = True
        try:
            while not self._closing:
                if not await self._serve_awake():
                    break
                if self._asleep:  # not woken while the tasks wound down
                    ended = False
                    return
        finally:
            self._running = False
            if ended:
                self._asleep = False
                self._shut_down()
                with trio.CancelScope(shield=True):
                    await self.transport.aclose()

    async def _serve_awake(self) -> bool:
        """One stretch awake, with a nursery and tasks: True if the session fell asleep."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                self._writer.attach(nursery.start_soon)
                if self._notify_receive is not None:  # work submitted while it slept
                    nursery.start_soon(self._notification_loop, self._notify_receive)
                while True:
                    await self._read_loop()
                    if not self.transport.rest_offered:
                        await self._drain()  # the peer has gone
                        return False
                    if self._idle():
                        self._fall_asleep()
                        return True
                    # Something is in flight: the offer lapses, the reader reads on.
        finally:
            self._nursery = None
            self._writer.detach()
        return False  # closed

    def _idle(self) -> bool:
        """Whether nothing is in flight: no request, no outbound call, no actor, nothing
        queued or being written (the writer and a notification task waiting, alone)."""
        nursery, notify = self._nursery, self._notify_receive
        tasks = 1 if self._writer.running else 0
        if notify is not None:
            queue = notify.statistics()
            if queue.current_buffer_used or not queue.tasks_waiting_receive:
                return False
            tasks += 1
        return (
            self.host is not None
            and not self._closing
            and nursery is not None
            and len(nursery.child_tasks) == tasks
            and not self._actors
            and self._engine.inbound_count == 0
            and self._engine.outbound_count == 0
            and self._writer.idle
        )

    def _fall_asleep(self) -> None:
        """Give up the tasks (all waiting on empty queues) and the queues; keep the rest."""
        assert self._nursery is not None
        self._asleep = True
        self._writer.rest()
        if self._notify_send is not None:
            self._notify_send.close()
        self._notify_send = self._notify_receive = None
        self._nursery.cancel_scope.cancel()
        self.transport.rest(self.wake)  # last: it may wake the session at once

    def wake(self) -> None:
        """Something concerns this session: if it sleeps, run it again (in its host).

        Called by the transport when input arrives or it closes, and by everything that
        sends to the session; does nothing to a session awake.
        """
        if not self._asleep:
            return
        self._asleep = False
        if not self._running:  # else the task winding down serves on instead
            assert self.host is not None  # a session without a host never sleeps
            self.host.resume_session(self)

    @property
    def asleep(self) -> bool:
        """Whether the session sleeps: no task, kept until something wakes it."""
        return self._asleep

    @property
    def peer_gone(self) -> bool:
        """Whether the peer stopped sending (the session is ending): a request sent now
        fails at once with :class:`ConnectionClosed`."""
        return self._engine.peer_gone

    def close(self) -> None:
        """End the session now: in-flight requests are cancelled, the transport closed."""
        self._closing = True
        if self._asleep:
            self.wake()  # it runs again, only to end
        elif self._nursery is not None:
            self._nursery.cancel_scope.cancel()

    def start_actor(self, actor: Callable[[], Awaitable[None]]) -> None:
        """Run ``actor()`` as a long-lived task of this session (e.g. a subscription).

        It lives in the session's nursery, so it ends with the session: it is
        cancelled once the peer has stopped sending, or when the session is closed.
        An exception it raises ends the session, so an actor contains its own
        failures. Raises RuntimeError if the session is not running (or already
        draining).
        """
        if self._nursery is None or self._draining:
            raise RuntimeError("the session is not running")
        self._nursery.start_soon(self._run_actor, actor)

    async def _run_actor(self, actor: Callable[[], Awaitable[None]]) -> None:
        scope = trio.CancelScope()
        if self._draining:
            return
        if self._actors is None:
            self._actors = set()
        self._actors.add(scope)
        try:
            with scope:
                await actor()
        finally:
            if self._actors is not None:
                self._actors.discard(scope)

    async def _drain(self) -> None:
        """The peer stopped sending: cancel what it asked for, flush what is queued, stop.

        A peer that closes its end (stdin at EOF, a dropped connection) is gone: nobody
        waits for the answers of its requests any more, so they are cancelled at once
        rather than left to run on. What is already queued is still written.

        Unless the peer can still read (:attr:`~.abc.MessageStream.answers_after_input_ends`:
        stdio, where a client may write its requests and close its end, then read the
        answers): there the requests in flight get ``SessionConfig.eof_grace`` seconds
        to finish and be answered before the rest are cancelled. No new request is
        read meanwhile, and none of ours can be sent: the peer sends no answers.
        """
        self._engine.peer_closed()
        self._fail_outbound()
        grace = self.config.eof_grace
        if self.transport.answers_after_input_ends and grace > 0 and self._engine.inbound_count:
            self._answered_all = trio.Event()
            with trio.move_on_after(grace):
                await self._answered_all.wait()
        for request in self._engine.inbound:
            request.cancel("the peer closed the connection")
        self._draining = True
        actors, self._actors = self._actors or set(), None
        for scope in actors:
            scope.cancel()
        if self._notify_send is not None:
            self._notify_send.close()
        self._writer.close()

    def _shut_down(self) -> None:
        self._engine.close()
        self._fail_outbound()
        self.closed.set()
        for callback in self.closed_callbacks:
            callback()

    def _fail_outbound(self) -> None:
        for call in self._engine.outbound:
            call.fail(ConnectionClosed(call.method))

    def statistics(self) -> SessionStatistics:
        return SessionStatistics(
            inbound_requests=self._engine.inbound_count,
            outbound_calls=self._engine.outbound_count,
            queued_messages=self._writer.queued,
            queued_notifications=(
                0
                if self._notify_receive is None
                else self._notify_receive.statistics().current_buffer_used
            ),
            dropped_notifications=self._dropped_notifications,
            messages_received=self._received,
            messages_sent=self._writer.sent,
        )

    # -- the reader ------------------------------------------------------------------

    async def _read_loop(self) -> None:
        transport = self.transport
        receive = transport.receive
        receive_related = transport.receive_related if transport.relates_messages else None
        related: RequestId | None = None
        engine = self._engine
        serves_inline = self.dispatcher.serves_inline
        while True:
            try:
                if receive_related is None:
                    data = await receive()
                else:
                    data, related = await receive_related()
            except TransportClosed:
                return
            except MessageTooLarge as too_large:
                await self._reply(engine.receive_oversized(str(too_large), too_large.limit))
                continue
            self._received += 1
            event = engine.receive(data, related)
            if event is None:
                continue
            if type(event) is RequestReceived:
                request = event.request
                if serves_inline(request):
                    await self._serve_inline(request)
                else:
                    request.scope = trio.CancelScope()
                    assert self._nursery is not None
                    self._nursery.start_soon(self._serve, request)
            elif type(event) is Reply:
                await self._reply(event)
            elif type(event) is BatchReceived:
                assert self._nursery is not None
                self._nursery.start_soon(self._serve_batch, event)
            else:
                self._deliver(event)

    def _deliver(self, event: Event[InboundRequest, OutboundCall]) -> None:
        """Act on an event that needs no waiting: it is handed to whoever it concerns."""
        if type(event) is ResponseReceived:
            event.call.deliver(event.response)
        elif type(event) is NotificationReceived:
            self.dispatcher.handle_notification(event.method, event.params)
        elif type(event) is CancelRequested:
            event.request.cancel(event.reason)
        elif type(event) is ProgressReceived:
            event.call.deliver_progress(event.progress)
        elif type(event) is LogReceived:
            event.call.deliver_log(event.params)

    async def _reply(self, reply: Reply) -> None:
        request_id = reply.request_id
        message = Outgoing(reply.payload, request_id, request_id is not None)
        await self._writer.send_from_reader(message)

    async def _serve_batch(self, batch: BatchReceived[InboundRequest, OutboundCall]) -> None:
        """Serve a batch's requests concurrently; answer with one array of their responses.

        Every answer goes in that array: the engine's replies (an invalid element, a
        request that may not run) and each request's response.
        """
        answers: list[bytes] = []

        async def serve_one(request: InboundRequest) -> None:
            payload = await self._run_request(request)
            if payload is not None:
                answers.append(payload)

        async with trio.open_nursery() as nursery:
            for event in batch.events:
                if type(event) is Reply:
                    answers.append(event.payload)
                elif type(event) is RequestReceived:
                    event.request.scope = trio.CancelScope()
                    nursery.start_soon(serve_one, event.request)
                else:
                    self._deliver(event)
        if answers:
            await self._writer.send(Outgoing(self._engine.encode_batch(answers)))
        self._answered()

    # -- inbound request actors --------------------------------------------------------

    async def _serve(self, request: InboundRequest) -> None:
        payload = await self._run_request(request)
        if payload is not None:
            await self._writer.send_from_reader(Outgoing(payload, request.id, True))
        self._answered()

    def _answered(self) -> None:
        """A request actor has handed its answer over: the last one ends the grace of
        :meth:`_drain`."""
        if self._answered_all is not None and not self._engine.inbound_count:
            self._answered_all.set()

    async def _serve_inline(self, request: InboundRequest) -> None:
        """Serve a request declared never to wait, in the reader (see :mod:`.inline`)."""
        try:
            step = start_inline(self._handle(request))
            if type(step) is bytes:
                payload = step
            else:
                assert isinstance(step, Waiting)
                log.warning(
                    "handler for %s (id %r) waited although it was declared inline;"
                    " the reader finishes it",
                    request.method,
                    request.id,
                )
                payload = await step.finish()
        finally:
            if request.progress is not None:
                request.progress.closed = True
            self._engine.finished(request.id)
        await self._writer.send_from_reader(Outgoing(payload, request.id, True))

    async def _run_request(self, request: InboundRequest) -> bytes | None:
        """Run a request's handler in its cancel scope: the encoded answer, None if cancelled."""
        payload: bytes | None = None
        assert request.scope is not None
        try:
            with request.scope:
                payload = await self._handle(request)
        finally:
            request.close_progress()
            self._engine.finished(request.id)
        return payload

    async def _handle(self, request: InboundRequest) -> bytes:
        """Serve one request: the one place where an exception becomes a JSON-RPC error."""
        engine = self._engine
        try:
            params = request.decode_params()
        except McpError as invalid:
            return engine.respond_error(request.id, invalid)
        if getattr(params, "meta", None):  # most requests carry no _meta: no call
            token = progress_token(params)
            if token is not None:
                request.progress = ProgressStream(token, request.id, self._writer)
        try:
            result = await self.dispatcher.handle_request(request, params)
            return engine.respond(request.id, result)
        except McpError as error:
            return engine.respond_error(request.id, error)
        except Exception:
            internal_errors.report(log, "handler for %s (id %r) failed", request.method, request.id)
            return engine.respond_error(request.id, INTERNAL_ERROR)

    # -- outbound --------------------------------------------------------------------

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
        :class:`~mcp_actors.protocol.engine.Engine`), in order, before the result is
        returned; without it they go to the dispatcher like any notification.

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
        if self._asleep:
            self.wake()
        call = OutboundCall(method)
        engine = self._engine
        request_id, payload = engine.send_request(
            method, params, call, progress=on_progress is not None, logs=on_log is not None
        )
        if on_id is not None:
            on_id(request_id)
        seconds = self.config.request_timeout if timeout is UNSET else timeout
        clock = Deadlines(seconds, self.config.max_request_timeout, trio.current_time())
        try:
            await self._writer.send_then_wait(Outgoing(payload, related_request))
            soft = clock.soft(clock.started)
            while True:
                with trio.move_on_at(min(soft, clock.hard())):
                    await call.wait()
                if on_log is not None:
                    logs = call.take_logs()
                    if logs:
                        for message in logs:
                            await on_log(message)
                        continue  # more may have come in while they ran
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
                self._cancel_remote(request_id, method, "timed out")
                raise RequestTimeout(method, request_id, _elapsed(clock))
        except trio.Cancelled:
            self._cancel_remote(request_id, method, "the caller was cancelled")
            raise
        finally:
            engine.call_finished(request_id)
        if call.closed is not None:
            raise call.closed
        assert call.response is not None
        return engine.read_result(method, call.response, result_type)

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
        if self._asleep:
            self.wake()
        payload = self._engine.send_notification(method, params, state)
        await self._writer.send(Outgoing(payload, related_request))

    def notify_soon(self, method: str, params: Any = None) -> None:
        """Send a notification without waiting: queued now, or by a task if the queue is full."""
        if self._asleep:
            self.wake()
        self._writer.send_soon(Outgoing(self._engine.send_notification(method, params)))

    def submit(self, work: Callable[[], Awaitable[None]]) -> None:
        """Queue slow notification work for the session's notification task; drop if full.

        The queue (``notification_queue_size``) and its task are made by the first
        work of each stretch awake.
        """
        if self._asleep:
            self.wake()
        send = self._notify_send
        if send is None and not self._draining:
            send, receive = trio.open_memory_channel[Callable[[], Awaitable[None]]](
                self.config.notification_queue_size
            )
            self._notify_send, self._notify_receive = send, receive
            if self._nursery is not None:  # else the session starts it when it runs
                self._nursery.start_soon(self._notification_loop, receive)
        try:
            if send is None:
                raise trio.ClosedResourceError
            send.send_nowait(work)
        except (trio.WouldBlock, trio.ClosedResourceError):
            self._dropped_notifications += 1
            log.warning("notification queue full: dropped a notification")

    def _cancel_remote(self, request_id: RequestId, method: str, reason: str) -> None:
        """Tell the peer we gave up on our request, without blocking."""
        payload = self._engine.cancel_request(request_id, method, reason)
        if payload is not None:
            if self._asleep:
                self.wake()
            self._writer.send_soon(Outgoing(payload))

    async def _notification_loop(
        self, queue: trio.MemoryReceiveChannel[Callable[[], Awaitable[None]]]
    ) -> None:
        async for work in queue:
            try:
                await work()
            except Exception:
                internal_errors.report(log, "a notification handler failed")


def _elapsed(clock: Deadlines) -> float:
    elapsed = trio.current_time() - clock.started
    return elapsed if math.isfinite(elapsed) else 0.0
