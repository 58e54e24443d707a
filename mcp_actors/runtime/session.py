"""The session actor: the trio loop around one protocol engine — a reader, a writer, request actors.

A :class:`Session` speaks MCP with one peer over a
:class:`~mcp_actors.transports.abc.MessageStream`, for either role. What is
protocol (the lifecycle, the id tables, which error a bad message gets, encoding)
is the :class:`~mcp_actors.protocol.engine.Engine`'s; what methods mean is the
:class:`~.dispatch.Dispatcher`'s; the session moves bytes and runs tasks:

- **the reader** hands every inbound message to the engine and acts on the event it
  gets back, without ever waiting on user code: a request becomes an
  :class:`InboundRequest` actor (a task in its own cancel scope), a response, a
  progress notification or a log message that belongs to a call goes to the
  :class:`~.outbound.OutboundCall` waiting for it (a transport that knows on whose
  response stream a message came says so: :meth:`~.abc.MessageStream.receive_related`),
  a cancellation cancels the named request's scope (and lets its handler see that
  before the next message is read: :func:`.request.let_cancelled_run`), other
  notifications go to the dispatcher, and an answer the engine wrote itself (an
  error, ``ping``) is sent;
- **the writer** (:class:`~.writer.Writer`) sends everything, in order: from a
  bounded queue, pending progress (:mod:`.progress`) first, many messages in one
  write; when it is idle, the reader may write an answer itself.

Around that loop, each in a module of its own: our own requests to the peer
(:mod:`.outbound`), slow notification work (:mod:`.notifications`), long-lived
actors (:mod:`.actors`), an idle session's sleep and wake (:mod:`.rest`: a session
with a host may return from :meth:`Session.run` asleep and run again when woken),
and the grace requests in flight get when the peer's input ends (:mod:`.eof`).

A request whose handler is declared never to wait (the dispatcher's
``serves_inline``: a tool registered with ``inline=True``, a server's own lists) is
served by the reader itself, without a task or a cancel scope of its own (see
:mod:`.inline`).

A handler that fails with anything but an :class:`McpError` is a bug: the peer
gets a bare "Internal error", the log a rate-limited traceback (see
:mod:`.internal_errors`).
"""

from __future__ import annotations

import functools
import types
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol

import attrs
import trio
from msgspec import UNSET, UnsetType

from ..protocol.engine import Engine
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
from ..transports.abc import (
    MessageStream,
    MessageTooLarge,
    Outgoing,
    TransportClosed,
    answer_of,
)
from .actors import ActorHost, Actors
from .companions import Companions, StartTask
from .config import SessionConfig
from .dispatch import Dispatcher, is_server
from .eof import EofGrace
from .notifications import Notifications
from .outbound import ConnectionClosed, LogCallback, Outbound, OutboundCall, ProgressCallback
from .request import InboundRequest, let_cancelled_run
from .rest import Rest
from .serving import InlineStarted, Serving
from .writer import Writer

#: What the session reads before it can act on it: an event, or a request served inline
#: whose answer still has to go out (see :meth:`Session._serve_without_nursery`).
Pending = Event[InboundRequest, OutboundCall] | InlineStarted
#: The events :meth:`Session._deliver` hands over without waiting, which a session of
#: one exchange acts on before (and often instead of) opening a nursery.
_DELIVERED_AT_ONCE = frozenset(
    {ResponseReceived, NotificationReceived, ProgressReceived, LogReceived}
)


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
    _notifications: Notifications = attrs.field(init=False)
    _actors: Actors = attrs.field(init=False, factory=Actors)
    _rest: Rest = attrs.field(init=False)
    _eof: EofGrace = attrs.field(init=False)
    _serving: Serving = attrs.field(init=False)
    #: Our requests and notifications to the peer: made when first used (most
    #: sessions, one per stateless HTTP request, never send one).
    _outbound_part: Outbound | None = attrs.field(init=False, default=None)
    _nursery: trio.Nursery | None = attrs.field(init=False, default=None)
    #: Starts a task of the session: its nursery's, or its companions' (see _serve_alone).
    _start_task: StartTask | None = attrs.field(init=False, default=None)
    _companions: Companions | None = attrs.field(init=False, default=None)
    #: Whether :meth:`close` was called.
    _closing: bool = attrs.field(init=False, default=False)
    _received: int = attrs.field(init=False, default=0)
    #: Set once the session has ended: made when first asked for (see :attr:`closed`).
    _closed_event: trio.Event | None = attrs.field(init=False, default=None)
    _ended: bool = attrs.field(init=False, default=False)
    #: Called once when the session ends (see :meth:`when_closed`).
    _closed_callbacks: list[Callable[[], None]] | None = attrs.field(init=False, default=None)
    #: Where actors that may outlive this session run (a parked MRTR handler), and what
    #: runs the session again once it slept: the supervisor that started the session;
    #: None: nowhere but the session itself (it then never sleeps).
    host: SessionHost | None = attrs.field(init=False, default=None)

    def __attrs_post_init__(self) -> None:
        dispatcher, config = self.dispatcher, self.config
        describe = dispatcher.describe_server if is_server(dispatcher) else None
        # The engine makes each request's actor object: an InboundRequest of this session
        # (a bound method: unlike functools.partial, no argument tuple is built per call).
        open_request = types.MethodType(InboundRequest, self)
        self._engine = Engine(
            self.state,
            open_request,
            describe,
            max_in_flight=config.max_in_flight,
            modern_only=self.transport.modern_only,
            first_request_id=self.transport.first_request_id,
        )
        queue_size = config.outbound_queue_size
        encode_progress = functools.partial(
            self._engine.encode_notification, "notifications/progress"
        )
        self._writer = Writer(self.transport, encode_progress, self.close, queue_size)
        self._notifications = Notifications(config.notification_queue_size)
        self._rest = Rest(self._resume)
        engine = self._engine
        self._eof = EofGrace(config.eof_grace, lambda: engine.inbound_count)
        self._serving = Serving(engine, self._writer, dispatcher, self._eof)

    @property
    def _outbound(self) -> Outbound:
        outbound = self._outbound_part
        if outbound is None:
            outbound = Outbound(self._engine, self._writer, self.config, self._rest)
            self._outbound_part = outbound
        return outbound

    @property
    def closed(self) -> trio.Event:
        """Set once the session has ended. Made when first asked for: most sessions
        (one per stateless HTTP request) are never waited on."""
        event = self._closed_event
        if event is None:
            event = self._closed_event = trio.Event()
            if self._ended:
                event.set()
        return event

    def when_closed(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` once when the session ends (e.g. to drop it from a registry)."""
        if self._closed_callbacks is None:
            self._closed_callbacks = []
        self._closed_callbacks.append(callback)

    # -- running -------------------------------------------------------------------

    async def run(
        self, *, task_status: trio.TaskStatus[Session] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Serve the session until the peer goes away or :meth:`close` is called.

        Or until it falls asleep (see :mod:`.rest`): then it returns with the session
        kept, and its host calls ``run`` again when something wakes it.
        """
        rest = self._rest
        rest.running = True
        task_status.started(self)
        ended = True
        try:
            pending: Pending | None = None
            if self.transport.one_exchange:
                pending = await self._serve_without_nursery()
                if pending is None and self._quiet():
                    await self._drain()
                    return
                host = None if self._closing else self.host
                if type(pending) is RequestReceived and self.transport.defers_reading and host:
                    await self._serve_alone(pending.request, host)
                    return
            while not self._closing:
                if not await self._serve_awake(pending):
                    break
                pending = None
                if rest.asleep:  # not woken while the tasks wound down
                    ended = False
                    return
        finally:
            rest.running = False
            if ended:
                rest.asleep = False
                self._shut_down()
                await self._close_transport()

    async def _close_transport(self) -> None:
        """Close the transport, even if the session ends by cancellation: not shielded up
        front (a shielded scope costs as much as a small request, and every stateless or
        2026-07-28 HTTP request's session ends here); a close a cancellation interrupts is
        done again, shielded (``aclose`` is idempotent; a cancelled one closed abruptly)."""
        try:
            await self.transport.aclose()
        except trio.Cancelled:
            with trio.CancelScope(shield=True):
                await self.transport.aclose()
            raise

    async def _serve_awake(self, pending: Pending | None = None) -> bool:
        """One stretch awake, with a nursery and tasks: True if the session fell asleep.
        ``pending``: what :meth:`_serve_without_nursery` left, served first."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                self._start_task = nursery.start_soon
                self._writer.attach(nursery.start_soon)
                self._notifications.attach(nursery.start_soon)
                while True:
                    await self._read_loop(pending)
                    pending = None
                    if not self.transport.rest_offered:
                        await self._drain()  # the peer has gone
                        return False
                    if self._idle():
                        parts = (self._writer, self._notifications)
                        self._rest.fall_asleep(nursery, parts, self.transport, self.wake)
                        return True
                    # Something is in flight: the offer lapses, the reader reads on.
        finally:
            self._nursery = self._start_task = None
            self._writer.detach()
            self._notifications.detach()
        return False  # closed

    async def _serve_alone(self, request: InboundRequest, host: SessionHost) -> None:
        """Serve the request of a stream that :attr:`~.MessageStream.defers_reading` in
        this task, with no nursery, and no reader beside it unless the stream asks for
        one (:meth:`~.MessageStream.defer_reading`): what needs a task meanwhile runs in
        the host, as a companion (see :mod:`.companions`)."""
        request.scope = trio.CancelScope()
        companions = self._companions = Companions(host.start_actor, request.scope)
        start = self._start_task = companions.start
        self._writer.attach(start)
        self._notifications.attach(start)
        reading = False

        def start_reader() -> None:
            nonlocal reading
            reading = True
            start(self._read_then_drain)  # it reads to the end and drains

        transport = self.transport
        transport.defer_reading(start_reader)
        try:
            try:
                await self._serving.serve(request)
            finally:
                transport.defer_reading(None)
            if not reading:
                await self._drain()
            await companions.join()
        except BaseException:
            await companions.cancel_and_join()
            raise
        finally:
            self._companions = self._start_task = None
            self._writer.detach()
            self._notifications.detach()

    async def _read_then_drain(self) -> None:
        await self._read_loop()
        await self._drain()

    def _quiet(self) -> bool:
        """Nothing queued or running that would need a task: the writer's, the
        notifications', or an actor."""
        return self._writer.idle and self._notifications.idle and self._actors.idle

    def _idle(self) -> bool:
        """Whether the session may sleep (see :mod:`.rest`): it has a host, is not
        closing, and nothing is in flight."""
        nursery, engine = self._nursery, self._engine
        return (
            self.host is not None
            and not self._closing
            and nursery is not None
            and self._actors.idle
            and engine.inbound_count == 0
            and engine.outbound_count == 0
            and self._rest.idle(nursery, (self._writer, self._notifications))
        )

    def _resume(self) -> None:
        assert self.host is not None  # a session without a host never sleeps
        self.host.resume_session(self)

    def wake(self) -> None:
        """Something concerns this session: if it sleeps, run it again (in its host).

        Called by the transport when input arrives or it closes, and by everything that
        sends to the session; does nothing to a session awake.
        """
        self._rest.wake()

    @property
    def asleep(self) -> bool:
        """Whether the session sleeps: no task, kept until something wakes it."""
        return self._rest.asleep

    @property
    def peer_gone(self) -> bool:
        """Whether the peer stopped sending (the session is ending): a request sent now
        fails at once with :class:`ConnectionClosed`."""
        return self._engine.peer_gone

    def close(self) -> None:
        """End the session now: in-flight requests are cancelled, the transport closed."""
        self._closing = True
        if self._rest.asleep:
            self.wake()  # it runs again, only to end
        elif self._nursery is not None:
            self._nursery.cancel_scope.cancel()
        elif self._companions is not None:
            self._companions.cancel()

    def start_actor(self, actor: Callable[[], Awaitable[None]]) -> None:
        """Run ``actor()`` as a long-lived task of this session (see :mod:`.actors`).

        It ends with the session: it is cancelled once the peer has stopped sending,
        or when the session is closed. An exception it raises ends the session, so an
        actor contains its own failures. Raises RuntimeError if the session is not
        running (or already draining).
        """
        start = self._start_task
        if start is None or self._actors.draining:
            raise RuntimeError("the session is not running")
        start(functools.partial(self._actors.run, actor))

    async def _drain(self) -> None:
        """The peer stopped sending: cancel what it asked for (after the grace of
        :mod:`.eof`, where the peer still reads), flush what is queued, stop."""
        engine = self._engine
        engine.peer_closed()
        self._fail_outbound()
        if self.transport.answers_after_input_ends:
            await self._eof.wait()
        for request in engine.inbound if engine.inbound_count else ():
            request.cancel("the peer closed the connection")
        self._actors.cancel_all()
        self._notifications.close()
        self._writer.close()

    def _shut_down(self) -> None:
        """The session has ended: tell whoever waits, and have its parts let go of it.

        The engine, the writer, the rest and the dispatcher each hold a callback into
        the session (or the session itself): left alone, every session would end as a
        reference cycle for the garbage collector — one per request over stateless or
        2026-07-28 HTTP, each waiting for a full collection, which the serving GC
        policy (:mod:`.gc_policy`) makes rare. Once they let go, reference counting
        frees the session as soon as nothing else holds it."""
        self._engine.close()
        self._fail_outbound()
        self._ended = True
        if self._closed_event is not None:
            self._closed_event.set()
        callbacks, self._closed_callbacks = self._closed_callbacks, None
        for callback in callbacks or ():
            callback()
        self._writer.session_ended()
        self._rest.end()
        self.dispatcher.session_ended()

    def _fail_outbound(self) -> None:
        for call in self._engine.outbound if self._engine.outbound_count else ():
            call.fail(ConnectionClosed(call.method))

    def statistics(self) -> SessionStatistics:
        return SessionStatistics(
            inbound_requests=self._engine.inbound_count,
            outbound_calls=self._engine.outbound_count,
            queued_messages=self._writer.queued,
            queued_notifications=self._notifications.queued,
            dropped_notifications=self._notifications.dropped,
            messages_received=self._received,
            messages_sent=self._writer.sent,
        )

    # -- the reader ------------------------------------------------------------------

    async def _serve_without_nursery(self) -> Pending | None:
        """The session of one exchange (``transport.one_exchange``) before it opens a
        nursery (as costly as a small request): serve what needs no task — an inline
        request answered at once, an answer the engine wrote, a notification or response
        handed over — and return the first thing that needs one (None: input ended)."""
        serving, writer, input_ended = self._serving, self._writer, self.transport.input_ended
        serves_inline = self.dispatcher.serves_inline
        while not input_ended():
            try:
                event = await self._next_event()
            except TransportClosed:
                return None
            if event is None:
                continue
            if type(event) is RequestReceived and serves_inline(event.request):
                started = serving.start_inline(event.request)
                if type(started.step) is not Outgoing or not writer.unqueued:
                    return started
                await serving.finish_inline(started)
            elif type(event) is Reply and writer.unqueued:
                await self._reply(event)
            elif type(event) in _DELIVERED_AT_ONCE:
                self._deliver(event)
            else:
                return event
        return None

    async def _next_event(self) -> Event[InboundRequest, OutboundCall] | None:
        """The next message, through the engine: the event to act on (None: nothing).
        Raises TransportClosed when the input ends."""
        transport = self.transport
        try:
            if transport.relates_messages:
                data, related = await transport.receive_related()
            else:
                data, related = await transport.receive(), None
        except MessageTooLarge as too_large:
            engine = self._engine
            await self._reply(engine.receive_oversized(str(too_large), too_large.limit))
            return None
        self._received += 1
        if isinstance(data, bytes):
            return self._engine.receive(data, related)
        return self._engine.receive_message(data, related)

    async def _read_loop(self, pending: Pending | None = None) -> None:
        """Read and act on every message until the input ends; ``pending``: the first
        thing to act on, read already."""
        transport = self.transport
        receive = transport.receive
        receive_related = transport.receive_related if transport.relates_messages else None
        related: RequestId | None = None
        engine = self._engine
        serves_inline = self.dispatcher.serves_inline
        serving = self._serving
        event: Pending | None = pending
        while True:
            if event is None:  # (_next_event, inlined: this is every message's path)
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
                if isinstance(data, bytes):
                    event = engine.receive(data, related)
                else:  # decoded by the transport to route it (see transports.abc.Inbound)
                    event = engine.receive_message(data, related)
                if event is None:
                    continue
            if type(event) is RequestReceived:
                request = event.request
                if serves_inline(request):
                    await serving.serve_inline(request)
                else:
                    request.scope = trio.CancelScope()
                    assert self._nursery is not None
                    self._nursery.start_soon(serving.serve, request)
            elif type(event) is Reply:
                await self._reply(event)
            elif type(event) is BatchReceived:
                assert self._nursery is not None
                self._nursery.start_soon(serving.serve_batch, event, self._deliver)
            elif isinstance(event, InlineStarted):
                await serving.finish_inline(event)
            else:
                self._deliver(event)
                if type(event) is CancelRequested:
                    await let_cancelled_run()
            event = None

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
        await self._writer.send_from_reader(answer_of(reply))

    # -- outbound --------------------------------------------------------------------

    def request(
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
    ) -> Coroutine[Any, Any, Any]:
        """Send a request; await its result (see :meth:`.outbound.Outbound.request`)."""
        return self._outbound.request(
            method,
            params,
            timeout=timeout,
            on_progress=on_progress,
            on_log=on_log,
            related_request=related_request,
            result_type=result_type,
            on_id=on_id,
        )

    def notify(
        self,
        method: str,
        params: Any = None,
        *,
        related_request: RequestId | None = None,
        state: SessionState | None = None,
    ) -> Coroutine[Any, Any, None]:
        """Send a notification (see :meth:`.outbound.Outbound.notify`)."""
        return self._outbound.notify(method, params, related_request=related_request, state=state)

    def notify_soon(self, method: str, params: Any = None) -> None:
        """Send a notification without waiting: queued now, or by a task if the queue is full."""
        self._outbound.notify_soon(method, params)

    def submit(self, work: Callable[[], Awaitable[None]]) -> None:
        """Queue slow notification work for the session's notification task; dropped if
        the queue (``notification_queue_size``) is full (see :mod:`.notifications`)."""
        if self._rest.asleep:
            self.wake()
        self._notifications.submit(work)


def session_of(request: InboundRequest) -> Session:
    """The session that received ``request`` (its back-pointer, typed only as what a
    request needs of it: see :mod:`.request`)."""
    session = request.session
    assert isinstance(session, Session)
    return session
