"""The message stream behind one Streamable HTTP session: many HTTP exchanges, one session actor.

Over Streamable HTTP a session is not one connection. The client POSTs each
message; the server answers a POST that carries requests with a *response
stream* (SSE, or one JSON body) and may offer a *standalone stream* on GET for
messages unrelated to any request. :class:`HttpSessionStream` is the single
:class:`~mcp_actors.transports.abc.MessageStream` the session actor sees, and it
does the routing the spec asks for:

- inbound, each POST's message is queued whole (a batch stays one message), as
  decoded to route it (:mod:`~mcp_actors.protocol.received`), for the session's reader;
- outbound, a message whose ``related_request`` is X goes on the stream of the
  POST that carried X; the response (``closes_request``) settles X, and once
  every request of that POST is answered its stream is *finished*. A message
  related to nothing goes on the standalone stream. So each message goes to
  exactly one stream, never broadcast. In JSON mode responses are collected for
  the POST's body and the rest goes to the standalone stream;
- every SSE message is first appended to the session's :class:`EventStore`, which
  names it with an id that encodes its stream. A connection carrying a stream is
  just a reader of the store from a cursor (:meth:`HttpSessionStream.pump`): live
  delivery and replay after ``Last-Event-ID`` are the same loop, and a new
  connection for a stream takes it over from the old one.

An idle session sleeps (see :mod:`~mcp_actors.runtime.session`): when the session
table's sweep finds it idle (:meth:`HttpSessionStream.offer_rest`), the reader waiting on
an empty inbox is offered rest; the session that takes it leaves its wake-up call here,
and the next POST body (or the end of the session) wakes it. The stream itself stays:
its streams, its store, a GET stream's connection reading the store.

A client disconnect ends a connection. Whether it also ends the requests of the stream
depends on whether the client can come back for them (see :meth:`HttpSessionStream.abandon`
and the endpoint's ``resume_window``): a stream it can resume keeps going to the store.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from typing import Protocol

import trio

from ...protocol.jsonrpc import RequestId, encode_cancellation
from ...protocol.versions import REVISIONS
from ..abc import Inbound, MessageStream, Outgoing, TransportClosed
from .config import HttpConfig
from .event_store import EventStore, InMemoryEventStore, StoredEvent
from .exchange import refusal_of
from .inbox import Inbox, InboxClosed, InboxInterrupted
from .sse import encode_comment, encode_event, encode_event_parts

log = logging.getLogger("mcp_actors.http")

#: Writes bytes to one HTTP response; raises if the connection is gone.
Write = Callable[[bytes], Awaitable[None]]

STANDALONE = "g"
#: The connection of a stream a connection on another worker carries.
ELSEWHERE = object()


class Relay(Protocol):
    """Where a shared session's messages related to no request may go instead of this
    stream's standalone stream (see :mod:`.any_worker`)."""

    async def unrelated(self, session_id: str, message: Outgoing) -> bool:
        """True: the relay took ``message`` (it is not written here)."""


def _cancellation(request_id: RequestId) -> bytes:
    """What a client that closes a request's response stream means: its cancellation."""
    return encode_cancellation(request_id, "the client closed the connection")


#: The most bytes one write hands the HTTP server. Larger data is written a slice at a
#: time, so that a connection whose client does not read holds one slice in the HTTP
#: server's buffers, not a copy of the whole message (the store keeps the one copy).
WRITE_SIZE = 64 * 1024


def _pieces(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """``chunks`` cut into writes of at most :data:`WRITE_SIZE` bytes, sliced as written."""
    for chunk in chunks:
        for start in range(0, len(chunk), WRITE_SIZE):
            yield chunk[start : start + WRITE_SIZE]


def _chunks(events: Sequence[StoredEvent], retry: int | None) -> list[bytes]:
    """The encoded events: small parts joined, large payloads as they are (not copied)."""
    chunks: list[bytes] = []
    small: list[bytes] = []
    for event in events:
        if not event.payload:  # a priming event
            small.append(encode_event(b"", id=event.id, retry=retry))
            continue
        for part in encode_event_parts(event.payload, id=event.id):
            if len(part) < WRITE_SIZE:
                small.append(part)
                continue
            if small:
                chunks.append(b"".join(small))
                small = []
            chunks.append(part)
    if small:
        chunks.append(b"".join(small))
    return chunks


#: What a finished stream's waiters wait on: nothing more will change, so it is set.
_UNCHANGING = trio.Event()
_UNCHANGING.set()


class ResponseStream:
    """One logical stream of a session: a POST's response stream, or the standalone stream.

    A session remembers up to ``max_finished_streams`` finished ones (for late
    resumption): a finished stream holds no container of its own, so it costs the
    cycle collector one object.
    """

    __slots__ = (
        "_changed",
        "_responses",
        "changes",
        "connection",
        "delivered",
        "finished",
        "json",
        "key",
        "pending",
    )

    def __init__(self, key: str, *, json: bool = False) -> None:
        self.key = key
        #: How many requests of this POST still wait for their response (which ones:
        #: the session's table of owners).
        self.pending = 0
        self.json = json
        self._responses: list[bytes] | None = None
        self.finished = False
        #: Id of the newest event a connection wrote (the standalone stream resumes here).
        self.delivered: str | None = None
        #: The connection carrying this stream now, if any (a newer one takes it over:
        #: see :meth:`HttpSessionStream.pump`).
        self.connection: object | None = None
        self._changed: trio.Event | None = None
        #: How many times it changed (a message appended, or it finished).
        self.changes = 0

    @property
    def responses(self) -> list[bytes]:
        """JSON mode: the encoded responses, in the order they came (read-only)."""
        return self._responses if self._responses is not None else []

    def add_response(self, payload: bytes) -> None:
        if self._responses is None:
            self._responses = []
        self._responses.append(payload)

    @property
    def changed(self) -> trio.Event:
        """Set at the stream's next change (made when first asked for: most streams of an
        idle session are never waited on; a finished stream does not change)."""
        changed = self._changed
        if changed is None:
            if self.finished:
                return _UNCHANGING
            changed = self._changed = trio.Event()
        return changed

    def notify(self) -> None:
        """Wake whoever waits for this stream to change."""
        self.changes += 1
        changed, self._changed = self._changed, None
        if changed is not None:
            changed.set()


class HttpSessionStream(MessageStream):
    """The session actor's end of one Streamable HTTP session (see the module docstring)."""

    def __init__(
        self,
        session_id: str | None,
        config: HttpConfig,
        store: EventStore,
        *,
        stateless: bool = False,
        version: str | None = None,
        stream_prefix: str = "",
    ) -> None:
        self.session_id = session_id
        self.config = config
        self.store = store
        #: Sending appends to the store and wakes the connections: it never waits when
        #: the store is in memory, so the session's reader may send its answers itself.
        self.direct_writes = isinstance(store, InMemoryEventStore)
        self.stateless = stateless
        #: The negotiated protocol version, read from the initialize response we carried.
        self.version = version
        self.initialize_id: RequestId | None = None
        self.last_activity = trio.current_time()
        self.closed = trio.Event()
        #: Called once when the session ends (the registry forgets it).
        self.on_close: Callable[[], None] | None = None
        self._inbox: Inbox[Inbound] = Inbox(config.inbound_queue_size)
        self._owners: dict[RequestId, ResponseStream] = {}
        self._streams: dict[str, ResponseStream] = {}
        # Lists, not deques: an empty deque costs ~600 bytes, and an idle session keeps
        # these empty (bounded by max_finished_streams, so pop(0) stays cheap).
        self._finished: list[str] = []
        #: Streams written out to their end: (when their events go, stream key).
        self._written: list[tuple[float, str]] = []
        self._next_stream = 0
        #: Before each stream's key: the worker's, for a shared session (see .any_worker).
        self._prefix = stream_prefix
        self._live = 0
        self.standalone = self._add(ResponseStream(stream_prefix + STANDALONE))
        #: A shared session's relay (None: every message stays on this stream).
        self.relay: Relay | None = None
        #: The asleep session's wake-up call (see :meth:`rest`).
        self._wake: Callable[[], None] | None = None
        #: ``last_activity`` when rest was last offered (offered once per idle spell).
        self._offered_at: float | None = None

    # -- what the registry and the endpoint ask ---------------------------------------

    @property
    def busy(self) -> bool:
        """Whether a connection is open on one of the streams (the session is not idle)."""
        return self._live > 0

    @property
    def evictable(self) -> bool:
        """Nothing in flight: no connection open, no request waiting for its response."""
        return self._live == 0 and not self._owners

    @property
    def resumable(self) -> bool:
        """Whether response streams open with a priming event (2025-11-25 clients)."""
        return (
            not self.stateless and self.version is not None and REVISIONS[self.version].sse_polling
        )

    def can_resume(self, stream: ResponseStream) -> bool:
        """Whether the client could pick ``stream`` up again after its connection broke:
        only with a session (GET with ``Last-Event-ID``) and an event id of it in hand."""
        return not self.stateless and stream.delivered is not None

    def in_flight(self, request_ids: Iterable[RequestId]) -> RequestId | None:
        """The first of ``request_ids`` already waiting for a response, if any."""
        for request_id in request_ids:
            if request_id in self._owners:
                return request_id
        return None

    def find_stream(self, event_id: str) -> ResponseStream | None:
        """The stream an event id (a ``Last-Event-ID``) belongs to, if it is one of ours."""
        key = self.store.stream_of(event_id)
        return None if key is None else self._streams.get(key)

    # -- the HTTP side ---------------------------------------------------------------

    async def open_stream(self, request_ids: Sequence[RequestId], *, json: bool) -> ResponseStream:
        """A response stream for a POST carrying ``request_ids`` (call before :meth:`deliver`).

        A resumable stream starts with its priming event: an id, empty data.
        """
        await self._drop_written_streams()
        self._next_stream += 1
        stream = self._add(ResponseStream(f"{self._prefix}p{self._next_stream}", json=json))
        for request_id in request_ids:
            if self._owners.get(request_id) is not stream:  # counted once, if repeated
                self._owners[request_id] = stream
                stream.pending += 1
        if not json:
            await self.prime(stream)
        return stream

    def _written_out(self, stream: ResponseStream) -> None:
        """``stream`` ended normally, response and all: its events go once the client has
        had ``finished_stream_retention`` seconds to resume a connection broken in that
        last write — or as soon as the session forgets the stream (past
        ``max_finished_streams``), since a ``Last-Event-ID`` of it is then refused."""
        retention = self.config.finished_stream_retention
        if retention is not None:
            self._written.append((trio.current_time() + retention, stream.key))

    async def _drop_written_streams(self) -> None:
        now = trio.current_time()
        written, remembered = self._written, self._streams
        # Oldest first: streams are written out, and forgotten, in about the order they
        # finish, so the forgotten ones are at the front (a busy session keeps
        # max_finished_streams streams' events, not retention x its call rate).
        while written and (written[0][0] <= now or written[0][1] not in remembered):
            _, key = written.pop(0)
            await self.store.discard(key)

    async def prime(self, stream: ResponseStream) -> None:
        """Start a connection of a resumable stream with a priming event (an id, no data):
        however early it breaks, the client has a ``Last-Event-ID`` to resume from."""
        if self.resumable:
            await self.store.append(stream.key, b"")

    async def deliver(self, message: Inbound) -> None:
        """Queue a POST's message for the session's reader; waits while the queue is full.

        Raises :class:`TransportClosed` if the session is gone.
        """
        self.last_activity = trio.current_time()
        self._wake_session()
        try:
            await self._inbox.put(message)
        except InboxClosed:
            raise TransportClosed("the session has ended") from None

    def cancelled(self, request_id: RequestId) -> None:
        """The client cancelled ``request_id``: no response will come; settle its stream."""
        stream = self._owners.pop(request_id, None)
        if stream is not None:
            stream.pending -= 1
            if not stream.pending:
                self._finish(stream)

    async def abandon(self, stream: ResponseStream) -> None:
        """The client has gone from ``stream`` for good: cancel its unanswered requests.

        Each is cancelled as a ``notifications/cancelled`` from the client would cancel
        it, queued behind the request itself (so the session's reader meets the request
        first), and its stream is settled: nothing more is written for it.
        """
        self._wake_session()
        unanswered = [request_id for request_id, owner in self._owners.items() if owner is stream]
        for request_id in unanswered:
            self.cancelled(request_id)
            try:
                await self._inbox.put(_cancellation(request_id))
            except InboxClosed:
                return  # the session has ended: its requests with it

    async def wait_taken_over(self, stream: ResponseStream) -> None:
        """Wait until a connection carries ``stream`` again, it is finished, or the session ends."""
        while stream.connection is None and not stream.finished and not self.closed.is_set():
            await stream.changed.wait()

    def offer_rest(self) -> None:
        """The session has been idle: offer it rest, if its reader waits for input.

        Offered once per idle spell: a session that declines (something of its own is
        in flight, a subscription say) is asked again only after it was next active.
        """
        if self._offered_at == self.last_activity or not self._inbox.reader_waiting:
            return
        if self._written and self._written[-1][0] > trio.current_time():
            return  # not before the last written stream's events may go (see receive)
        self._offered_at = self.last_activity
        self._inbox.interrupt()

    def rest(self, wake: Callable[[], None]) -> None:
        self.rest_offered = False
        self._wake = wake
        if self._inbox:  # a body came while the offer was being made
            self._wake_session()

    @property
    def asleep(self) -> bool:
        """Whether the session took rest and nothing woke it yet."""
        return self._wake is not None

    def _wake_session(self) -> None:
        wake, self._wake = self._wake, None
        if wake is not None:
            self._offered_at = None
            wake()

    def end_input(self) -> None:
        """No more requests will come (stateless): the session ends once it has answered."""
        self._inbox.end()

    async def pump(
        self, stream: ResponseStream, write: Write, after: str | None, last: Write | None = None
    ) -> bool:
        """Carry ``stream`` on one connection: write its events after ``after`` as they come.

        Returns when the stream is finished and written out, when the session ends,
        or (``poll_after``) when it is time for the client to reconnect. A newer
        connection for the same stream takes it over: this one returns False at its next
        step (at once if it is waiting for the stream to change; after the write in
        progress otherwise, which the connection's send timeout bounds). No cancel scope:
        one per reply would cost about 50,000 instructions. Given ``last``, the final
        chunk of a finished stream goes through it instead of ``write`` (so it can end
        the response body in the same send) and the result is True.
        """
        carrier = object()  # this connection, as the stream's owner
        stream.connection = carrier
        stream.notify()  # wakes wait_taken_over, and a connection this one takes over
        self._live += 1
        try:
            return await self._pump(stream, carrier, write, after, self.config, last)
        finally:
            self._live -= 1
            self.last_activity = trio.current_time()
            if stream.connection is carrier:
                stream.connection = None

    async def _pump(
        self,
        stream: ResponseStream,
        carrier: object,
        write: Write,
        cursor: str | None,
        config: HttpConfig,
        last: Write | None,
    ) -> bool:
        keepalive = config.keepalive_interval
        retry = config.retry_interval
        poll_at = trio.current_time() + config.poll_after if config.poll_after else None
        read = self.store.read
        while True:
            if stream.connection is not carrier:
                return False  # taken over by a newer connection
            changed = stream.changed
            # Finished before the read: nothing can follow what it returns.
            final = last is not None and stream.finished
            events = await read(stream.key, cursor)
            if events:
                final_chunk = b""
                for chunk in _pieces(_chunks(events, retry)):
                    if final_chunk:
                        await write(final_chunk)
                    final_chunk = chunk
                if final and last is not None:
                    await last(final_chunk)
                    stream.delivered = events[-1].id
                    self._written_out(stream)
                    return True
                await write(final_chunk)
                cursor = stream.delivered = events[-1].id
                continue
            if stream.finished or self.closed.is_set():
                return False
            deadline = trio.current_time() + keepalive if keepalive else math.inf
            if poll_at is not None and self.resumable:
                if trio.current_time() >= poll_at:
                    await write(b"retry: %d\n\n" % (retry or 1000))
                    return False
                deadline = min(deadline, poll_at)
            with trio.move_on_at(deadline) as idle:
                await changed.wait()
            if idle.cancelled_caught and keepalive and trio.current_time() >= deadline:
                await write(encode_comment("keep-alive"))

    # -- the session's side (MessageStream) --------------------------------------------

    def input_ready(self) -> bool:
        return len(self._inbox) > 0

    async def receive(self) -> Inbound:
        self.rest_offered = False
        if self._wake is not None:  # the session woke by itself (to send something)
            self._wake = self._offered_at = None
        try:
            return await self._inbox.get()
        except InboxClosed:
            raise TransportClosed("the HTTP session has ended") from None
        except InboxInterrupted:
            # What an idle session holds, it holds asleep too: let written streams go.
            await self._drop_written_streams()
            self.rest_offered = True
            raise TransportClosed("rest offered: no input for a while") from None

    async def send_all(self, messages: Sequence[Outgoing]) -> None:
        for message in messages:
            await self._route(message)

    async def _route(self, message: Outgoing) -> None:
        payload = message.payload
        request_id = message.related_request
        if request_id is None:
            owner = self._batch_owner(message.answers) if message.answers else None
            if owner is not None:
                await self._answer(owner, payload)
            else:
                await self._unrelated(message)
            return
        owner = self._owners.get(request_id)
        if owner is None:
            log.debug("dropped a message for settled request %r", request_id)
            return
        if message.closes_request:
            del self._owners[request_id]
            owner.pending -= 1
            if request_id == self.initialize_id and message.version in REVISIONS:
                self.version = message.version
            await self._answer(owner, payload)
        elif self.stateless and self._refuse_request(message):
            return
        elif owner.json:
            await self._unrelated(message)
        else:
            await self._append(owner, payload)

    async def _answer(self, stream: ResponseStream, payload: bytes) -> None:
        if stream.json:
            stream.add_response(payload)
        else:
            await self._append(stream, payload)
        if not stream.pending:
            self._finish(stream)

    # -- a shared session's streams and the other workers (see .any_worker) ------------

    def stream(self, key: str, *, foreign: bool = False) -> ResponseStream | None:
        """The stream with key ``key``; ``foreign``: one another worker's actor of this
        session writes (events in the shared store), made here to be carried here."""
        stream = self._streams.get(key)
        if stream is None and foreign:
            stream = self._add(ResponseStream(key))
        return stream

    def foreign_changed(self, key: str, *, finished: bool) -> None:
        """The worker writing the foreign stream ``key`` appended to it, or finished it."""
        stream = self._streams.get(key)
        if stream is not None and not stream.finished:
            self._finish(stream) if finished else stream.notify()

    def carried_elsewhere(self, stream: ResponseStream, carried: bool) -> None:
        """A connection on another worker carries ``stream`` (or stopped): it is not
        abandoned meanwhile, and a GET here for it is refused as taken."""
        if carried or stream.connection is ELSEWHERE:
            stream.connection = ELSEWHERE if carried else None
        stream.notify()

    async def send_standalone(self, payload: bytes) -> None:
        """Write what another worker's actor of this session sent on the GET stream."""
        await self._append(self.standalone, payload)

    async def _unrelated(self, message: Outgoing) -> None:
        relay, session_id = self.relay, self.session_id
        if relay is not None and session_id is not None:  # a shared session (see .any_worker)
            taken = await relay.unrelated(session_id, message)
            if taken:
                return
        if self.stateless:
            # Nowhere to go: a stateless session has no standalone stream.
            self._refuse_request(message)
            log.debug("stateless HTTP: dropped a message unrelated to the request")
            return
        await self._append(self.standalone, message.payload)

    async def _append(self, stream: ResponseStream, payload: bytes) -> None:
        await self.store.append(stream.key, payload)
        if stream.connection is None and stream.delivered is not None:
            await self.store.flush()  # no connection reads it; a resume may come anywhere
        stream.notify()

    def _batch_owner(self, answers: Iterable[RequestId]) -> ResponseStream | None:
        """A batch's answer settles requests of one POST: settle them, return its stream."""
        owner = None
        for request_id in answers:
            if (stream := self._owners.pop(request_id, None)) is not None:
                stream.pending -= 1
                owner = stream
        return owner

    def _refuse_request(self, message: Outgoing) -> bool:
        """Stateless: answer a server-to-client request ourselves (no reply could reach us)."""
        refusal = refusal_of(message)
        if refusal is None:
            return False
        try:
            self._inbox.put_nowait(refusal)
        except (trio.WouldBlock, InboxClosed):
            log.debug("stateless HTTP: could not refuse a server-to-client request in time")
        return True

    def _add(self, stream: ResponseStream) -> ResponseStream:
        self._streams[stream.key] = stream
        return stream

    def _finish(self, stream: ResponseStream) -> None:
        stream.finished = True
        stream.notify()
        self._finished.append(stream.key)
        while len(self._finished) > self.config.max_finished_streams:
            self._streams.pop(self._finished.pop(0), None)

    async def aclose(self) -> None:
        if self.closed.is_set():
            return
        self.closed.set()
        self._inbox.close()
        self._wake_session()
        for stream in self._streams.values():
            stream.notify()
        if self.on_close is not None:
            self.on_close()
        await self.store.aclose()
