"""The Streamable HTTP endpoint (2025-03-26 on): one path answering POST, GET and DELETE.

Two eras share the path; each request says which it speaks. A request whose
``MCP-Protocol-Version`` header is 2026-07-28 — or any value that is not a
handshake revision's, so that an unknown one is told which versions we serve —
belongs to the per-request era and is handed to
:class:`~.modern.ModernPostHandler` (GET and DELETE with such a
header are ``405`` with ``Allow: POST``); so is a POST without the header whose
body's ``_meta`` carries the per-request fields (other than ``initialize``), which
that era refuses for the missing header. Everything else is the legacy era,
described below, whose behaviour is unchanged.

- **POST** carries one JSON-RPC message or batch. Only notifications or
  responses: ``202 Accepted``, no body. Any request: a ``text/event-stream``
  carrying the messages related to it and then its response (or, when the server
  is configured for it or the client accepts nothing else, one
  ``application/json`` body). Errors: no acceptable ``Accept`` → 406, not
  ``Content-Type: application/json`` → 415, not JSON → 400 with a JSON-RPC parse
  error, too large → 413.
- **Sessions.** ``initialize`` without ``Mcp-Session-Id`` creates a session (or
  503 with ``Retry-After`` when the session table is full of busy sessions, see
  :mod:`.sessions`) and the response carries its new id; every later request
  must send it (400 without, 404 for an unknown or ended one). A known
  ``MCP-Protocol-Version`` header is accepted even if it is not the negotiated
  one; an unknown one is 400.
- **GET** opens the session's standalone stream, or with ``Last-Event-ID``
  resumes the stream that id belongs to, replaying what followed it.
- **DELETE** ends the session, cancelling its in-flight requests.
- **A client that closes a POST's connection** before its reply cancels the requests
  still unanswered on it, unless it can resume the stream (see :meth:`_abandoned`);
  it is noticed within :data:`~.asgi.QUICK_REPLY` seconds (a reply that comes sooner
  is awaited without watching the connection).
- **An access token's expiry** ends every event stream (a POST's, a GET's) opened with
  it, and cancels the requests still unanswered on a POST's (see :meth:`_carry`); the
  session stays, for the client's next requests with a fresh token.
- **An event stream** (a POST's) starts once it has something to carry (the first
  message related to the POST, or its end), or after ``QUICK_REPLY`` seconds: its
  priming event and a quick answer go out in one write.
- **Stateless** (``HttpConfig.stateless``): no ids; each POST is served by a
  fresh session that starts operating without ``initialize`` and ends with the
  response; GET and DELETE answer 405. A POST of one request (the usual case) is
  served in its own task, its session writing the reply (see :mod:`.exchange`).

Sessions are actors started through ``start_session`` in the server's
supervisor, never inside the HTTP request's task: a request task only queues a
body and then reads the response stream (see :mod:`.session_stream`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import suppress
from functools import partial

import attrs
import trio

from ...protocol.jsonrpc import InvalidMessage
from ...protocol.received import Post, read_post
from ...protocol.versions import HTTP_DEFAULT, REVISIONS
from ..abc import TransportClosed
from .asgi import (
    EVENT_STREAM,
    JSON,
    QUICK_REPLY,
    BodyTimeout,
    BodyTooLarge,
    ClientGone,
    Receive,
    Request,
    Send,
    accepts,
    end_body,
    media_types,
    read_body,
    respond,
    respond_answer,
    respond_body_timeout,
    respond_error,
    respond_too_many_sessions,
    send_chunk,
    send_last,
    start_event_stream,
    watch_disconnect,
)
from .auth import HttpAuthHook, same_caller, token_deadline, until_token_expires
from .config import HttpConfig
from .event_store import EventMemory, EventStore, InMemoryEventStore
from .exchange import HttpExchange
from .modern import InputSchemaOf, ModernPostHandler
from .routing import is_handshake_version
from .session_stream import HttpSessionStream, ResponseStream
from .sessions import ServeExchange, SessionRegistry, StartSession, mint_session_id
from .sse import encode_event

log = logging.getLogger("mcp_actors.http")

SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"


@attrs.define(eq=False)
class StreamableHttpEndpoint:
    """Serves the MCP endpoint for every session of one server."""

    config: HttpConfig
    registry: SessionRegistry
    start_session: StartSession
    #: Serves the session of one stateless exchange in the request's own task.
    serve_exchange: ServeExchange
    #: The input schema of a tool by name, for the ``Mcp-Param-*`` check of the
    #: 2026-07-28 era (None: the headers are not checked).
    input_schema_of: InputSchemaOf | None = None
    #: Admits each POST body by what it asks (scopes), see :mod:`.auth`.
    auth: HttpAuthHook | None = None
    #: The memory the sessions' in-memory event stores share (None: a custom factory).
    event_memory: EventMemory | None = attrs.field(init=False)
    _new_store: Callable[[str], EventStore] = attrs.field(init=False)
    _modern: ModernPostHandler = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        config = self.config
        self._modern = ModernPostHandler(config, self.serve_exchange, self.input_schema_of)
        if config.event_store_factory is not None:
            self.event_memory, self._new_store = None, config.event_store_factory
        else:
            memory = EventMemory(config.event_store_max_bytes, config.event_stream_max_bytes)
            self.event_memory, self._new_store = memory, memory.new_store

    async def __call__(self, request: Request, receive: Receive, send: Send) -> None:
        if request.method == "POST":
            await self._post(request, receive, send)
        elif _modern_header(request):
            # 2026-07-28: POST only; no standalone stream, no session to delete.
            await respond_error(
                send,
                405,
                f"Method Not Allowed: {request.method} (protocol revision"
                f" {request.header(VERSION_HEADER)} speaks POST only)",
                headers=[("allow", "POST")],
                version=request.header(VERSION_HEADER),
            )
        elif request.method == "GET":
            await self._get(request, receive, send)
        elif request.method == "DELETE":
            await self._delete(request, send)
        else:
            allow = "POST" if self.config.stateless else "GET, POST, DELETE"
            await respond_error(
                send,
                405,
                f"Method Not Allowed: {request.method}",
                headers=[("allow", allow)],
                version=request.header(VERSION_HEADER),
            )

    # -- POST --------------------------------------------------------------------------

    async def _post(self, request: Request, receive: Receive, send: Send) -> None:
        config = self.config
        accept = request.header("accept")
        sse_ok, json_ok = accepts(accept, EVENT_STREAM), accepts(accept, JSON)
        if not (sse_ok or json_ok):
            await respond_error(
                send,
                406,
                "Not Acceptable: Accept must list application/json and text/event-stream",
                version=request.header(VERSION_HEADER),
            )
            return
        if JSON not in media_types(request.header("content-type")):
            await respond_error(
                send,
                415,
                "Unsupported Media Type: send application/json",
                version=request.header(VERSION_HEADER),
            )
            return
        try:
            body = await read_body(receive, config.max_body_size, config.body_timeout)
        except BodyTooLarge:
            await respond_error(
                send,
                413,
                f"Payload Too Large: the limit is {config.max_body_size} bytes",
                version=request.header(VERSION_HEADER),
            )
            return
        except BodyTimeout:
            await respond_body_timeout(send, request.header(VERSION_HEADER))
            return
        except ClientGone:
            return
        if self.auth is not None and request.principal is not None:
            refused = self.auth.check_body(request.principal, body)
            if refused is not None:
                await respond_answer(send, refused)
                return
        json_mode = not sse_ok or (config.json_response and json_ok)
        post = None
        if not _modern_header(request):
            try:
                post = read_post(body)
            except InvalidMessage as invalid:
                await respond_error(
                    send,
                    400,
                    invalid.message,
                    code=invalid.code,
                    request_id=invalid.request_id,
                    version=request.header(VERSION_HEADER),
                )
                return
        if post is None or _modern_without_header(post, request):
            await self._modern.post(
                request,
                body if post is None else post.take_message(),
                json_only=json_mode,
                stream_only=not json_ok,
                receive=receive,
                send=send,
            )
            return
        del body  # decoded: post holds the message until delivered (see Post.take_message)
        if config.stateless:
            await self._post_stateless(request, post, json_mode, receive, send)
            return

        session_id = request.header(SESSION_HEADER)
        if session_id is None:
            if not post.initialize:
                await respond_error(
                    send,
                    400,
                    "Bad Request: Mcp-Session-Id header is required",
                    version=request.header(VERSION_HEADER),
                )
                return
            created = await self._create_session(request.client)
            if created is None:
                await respond_too_many_sessions(send, request.header(VERSION_HEADER))
                return
            session_id, transport = created
            transport.principal = request.principal
        else:
            found = await self._session(request, send, session_id)
            if found is None:
                return
            transport = found
        if not await self._admissible(transport, request, post, send):
            return
        headers = [(SESSION_HEADER, session_id)]
        if not post.request_ids:
            if await self._deliver(transport, post, send):
                await respond(send, 202, headers=headers)
            return

        stream = await transport.open_stream(post.request_ids, json=json_mode)
        if post.initialize:
            transport.initialize_id = post.request_ids[0]
        if not await self._deliver(transport, post, send):
            return
        failed = None
        if post.initialize:
            # Answer only once we know whether the session exists: a failed
            # initialize gets its error without a session id, and the session goes.
            await self._wait_finished(transport, stream, receive)
            if transport.version is None:
                failed = self.registry.discard(session_id)
                headers = []
        deadline = token_deadline(request.principal)
        await self._reply(transport, stream, post, json_mode, receive, send, headers, deadline)
        if failed is not None:
            failed.end()

    async def _post_stateless(
        self, request: Request, post: Post, json_mode: bool, receive: Receive, send: Send
    ) -> None:
        version = None
        if not post.initialize:
            version = request.header(VERSION_HEADER) or HTTP_DEFAULT
            if version not in self.config.supported_versions:
                await respond_error(
                    send,
                    400,
                    f"Bad Request: unsupported protocol version {version}",
                    version=request.header(VERSION_HEADER),
                )
                return
        if len(post.request_ids) == 1 and not post.batch:
            await self._exchange(request, post, version, json_mode, receive, send)
            return
        transport = HttpSessionStream(
            None,
            self.config,
            InMemoryEventStore(self.event_memory),
            stateless=True,
            version=version,
        )
        transport.principal = request.principal
        if not await self._admissible(transport, request, post, send):
            return
        close = await self.start_session(transport, version)
        finished = False
        try:
            if not post.request_ids:
                finished = await self._deliver(transport, post, send)
                if finished:
                    await respond(send, 202)
                return
            stream = await transport.open_stream(post.request_ids, json=json_mode)
            if await self._deliver(transport, post, send):
                deadline = token_deadline(request.principal)
                await self._reply(transport, stream, post, json_mode, receive, send, [], deadline)
                finished = stream.finished
        finally:
            if finished:
                transport.end_input()  # the session answers what it has, then ends
            else:
                close()

    async def _exchange(
        self,
        request: Request,
        post: Post,
        version: str | None,
        json_mode: bool,
        receive: Receive,
        send: Send,
    ) -> None:
        """A stateless POST of one request: its session runs in this task and writes the
        reply itself (see :mod:`.exchange`), an event stream unless ``json_mode``."""
        exchange = HttpExchange(
            post.take_message(),
            post.request_ids[0],
            (receive, send),
            streaming=not json_mode,
            stream_only=not json_mode,
            keepalive=self.config.keepalive_interval,
            status_of=_ok,
            refuse_requests=True,
        )
        exchange.principal = request.principal
        with until_token_expires(request.principal):
            await self.serve_exchange(exchange, version)
        await exchange.finish()

    async def _create_session(self, client: str | None) -> tuple[str, HttpSessionStream] | None:
        """A new session for ``client``, or None if the session table has no room for it."""
        session_id = mint_session_id(self.config.session_id_prefix)
        config = self.config
        transport = HttpSessionStream(session_id, config, self._new_store(session_id))
        registry = self.registry
        if not registry.admit(session_id, transport, client):
            return None
        try:
            registry.started(session_id, await self.start_session(transport, None))
        except BaseException:
            registry.discard(session_id)
            raise

        def forget() -> None:
            registry.discard(session_id)

        transport.on_close = forget
        return session_id, transport

    async def _admissible(
        self, transport: HttpSessionStream, request: Request, post: Post, send: Send
    ) -> bool:
        """Refuse (400) what the session must not see: a batch its revision forbids, an id
        already in flight."""
        if post.batch:
            version = transport.version or request.header(VERSION_HEADER) or HTTP_DEFAULT
            revision = REVISIONS.get(version)
            if revision is None or not revision.batches:
                await respond_error(
                    send,
                    400,
                    f"Invalid request: JSON-RPC batches are not allowed in {version}",
                    version=request.header(VERSION_HEADER),
                )
                return False
        duplicate = transport.in_flight(post.request_ids)
        if duplicate is not None:
            await respond_error(
                send,
                400,
                f"Invalid request: request id {duplicate!r} is already in use",
                request_id=duplicate,
                version=request.header(VERSION_HEADER),
            )
            return False
        return True

    async def _deliver(self, transport: HttpSessionStream, post: Post, send: Send) -> bool:
        try:
            await transport.deliver(post.take_message())
        except TransportClosed:
            await respond_error(
                send, 404, "Not Found: the session has ended", version=transport.version
            )
            return False
        for request_id in post.cancelled:
            transport.cancelled(request_id)
        return True

    async def _reply(
        self,
        transport: HttpSessionStream,
        stream: ResponseStream,
        post: Post,
        json_mode: bool,
        receive: Receive,
        send: Send,
        headers: list[tuple[str, str]],
        deadline: float,
    ) -> None:
        if not json_mode:
            await _first_change(transport, stream)
            await start_event_stream(send, headers)
            await self._carry(transport, stream, None, receive, send, deadline)
            return
        if not await self._wait_finished(transport, stream, receive):
            if transport.closed.is_set():
                await respond_error(
                    send, 404, "Not Found: the session has ended", version=transport.version
                )
            else:  # the client left: a JSON body cannot be resumed
                await transport.abandon(stream)
            return
        if not stream.responses:  # every request was cancelled
            await respond(send, 202, headers=headers)
            return
        await respond(
            send, 200, _json_body(stream.responses, post.batch), content_type=JSON, headers=headers
        )

    async def _wait_finished(
        self, transport: HttpSessionStream, stream: ResponseStream, receive: Receive
    ) -> bool:
        """Wait until every request of the POST is answered; False if the client or session left.

        Stateless, the first :data:`QUICK_REPLY` seconds are awaited without watching the
        client (see there): no other stream of the session (there is none) carries
        messages that must reach the client before this reply. With a session, the
        standalone stream may: the watcher's task is kept there (the order it happens
        to give is what keeps a request's progress on GET ahead of its JSON reply).
        """
        if transport.stateless:
            if not (stream.finished or transport.closed.is_set()):
                await trio.lowlevel.checkpoint()  # as in _first_change
            if not (stream.finished or transport.closed.is_set()):
                with trio.move_on_after(QUICK_REPLY):
                    await _settled(transport, stream)
            if stream.finished or transport.closed.is_set():
                return stream.finished
        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch_disconnect, receive, nursery.cancel_scope)
            await _settled(transport, stream)
            nursery.cancel_scope.cancel()
        return stream.finished

    async def _carry(
        self,
        transport: HttpSessionStream,
        stream: ResponseStream,
        after: str | None,
        receive: Receive,
        send: Send,
        deadline: float,
    ) -> None:
        """Write ``stream`` on this response until it is done, the client goes away, or
        ``deadline`` (the trio time the request's access token expires, see
        :func:`~.auth.token_deadline`) passes: then the response ends and the
        requests still unanswered on a request's stream are cancelled at once. (Not
        after a ``resume_window`` as for a client that left: its connection is still
        open, and its next request on it must not wait behind this one.)

        A stream already finished is written out in one go, without a disconnect
        watcher: nothing is left to wait for but the writes, which fail by themselves
        once the client has gone.
        """
        if stream.finished:
            ended = await transport.pump(
                stream, partial(send_chunk, send), after, partial(send_last, send)
            )
            if not ended:
                with suppress(Exception):  # the connection may be gone
                    await end_body(send)
            return
        ended = pumped = False
        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch_disconnect, receive, nursery.cancel_scope)
            with trio.move_on_at(deadline) as expiry:
                ended = await transport.pump(
                    stream, partial(send_chunk, send), after, partial(_send_last_shielded, send)
                )
                pumped = True
            nursery.cancel_scope.cancel()
        if ended:
            return
        expired = expiry.cancelled_caught
        if pumped or expired or stream is transport.standalone:
            with suppress(Exception):  # the connection may be gone; nothing to tell anyone
                await end_body(send)
        if pumped or stream is transport.standalone:
            return
        if expired:
            await transport.abandon(stream)
        else:
            await self._abandoned(transport, stream)

    async def _abandoned(self, transport: HttpSessionStream, stream: ResponseStream) -> None:
        """The client closed the connection of a request's reply stream before it finished.

        Is that a cancellation? The 2026-07-28 transport page says so outright (closing
        the response stream *is* the cancellation). The 2024-11-05 … 2025-11-25 pages say
        a disconnection SHOULD NOT be taken as one, because the client may resume the
        stream with ``Last-Event-ID`` and get the response. We follow both where each
        can hold: a stream the client can resume (it has one of its event ids, and
        there is a session to come back to) waits ``resume_window`` seconds for a new
        connection; if none takes it over, or the client could not resume it at all,
        the requests still unanswered on it are cancelled — a vanished client does not
        keep handlers running.
        """
        window = self.config.resume_window
        if transport.can_resume(stream):
            if window is None:
                return
            with trio.move_on_after(window):
                await transport.wait_taken_over(stream)
        if stream.connection is None and not stream.finished:
            await transport.abandon(stream)

    # -- GET and DELETE ----------------------------------------------------------------

    async def _get(self, request: Request, receive: Receive, send: Send) -> None:
        if self.config.stateless:
            await respond_error(
                send,
                405,
                "Method Not Allowed: stateless server",
                headers=[("allow", "POST")],
                version=request.header(VERSION_HEADER),
            )
            return
        if not accepts(request.header("accept"), EVENT_STREAM):
            await respond_error(
                send,
                406,
                "Not Acceptable: Accept must list text/event-stream",
                version=request.header(VERSION_HEADER),
            )
            return
        session_id = request.header(SESSION_HEADER)
        if session_id is None:
            await respond_error(
                send,
                400,
                "Bad Request: Mcp-Session-Id header is required",
                version=request.header(VERSION_HEADER),
            )
            return
        last_event_id = request.header("last-event-id")
        if (
            last_event_id
            and self.config.replay_unknown_sessions
            and request.principal is None  # see _replay_stored
            and self.registry.get(session_id) is None
            and _event_id_shape(last_event_id)
        ):
            await self._replay_stored(request, send, session_id, last_event_id)
            return
        transport = await self._session(request, send, session_id)
        if transport is None:
            return
        if last_event_id:
            stream = (
                transport.find_stream(last_event_id) if _event_id_shape(last_event_id) else None
            )
            if stream is None:
                await respond_error(
                    send,
                    400,
                    f"Bad Request: unknown Last-Event-ID {last_event_id!r}",
                    version=request.header(VERSION_HEADER),
                )
                return
            after: str | None = last_event_id
            await transport.store.acknowledge(stream.key, last_event_id)
        else:
            stream = transport.standalone
            if stream.connection is not None:
                await respond_error(
                    send,
                    409,
                    "Conflict: the session's GET stream is already open",
                    version=request.header(VERSION_HEADER),
                )
                return
            after = stream.delivered
            await transport.prime(stream)
        await start_event_stream(send, [(SESSION_HEADER, session_id)])
        deadline = token_deadline(request.principal)
        await self._carry(transport, stream, after, receive, send, deadline)

    async def _replay_stored(
        self, request: Request, send: Send, session_id: str, last_event_id: str
    ) -> None:
        """A resumption for a session this server does not host (``replay_unknown_sessions``):
        the session lives, or lived, on another worker sharing the event store. Replay
        what the store holds after ``last_event_id`` on that stream, then end the
        response; the session's next POST here gets 404 and the client starts anew.
        An id the store does not know gets the same 404 as an unknown session.

        Not on an authenticating server: the store does not record whose session a
        stream was, so a caller could not be checked against it; there the request
        gets the 404 of an unknown session, and the client starts anew."""
        store = self._new_store(session_id)
        stream = store.stream_of(last_event_id)
        if stream is None:
            await self._session(request, send, session_id)  # answers 404
            return
        events = await store.read(stream, last_event_id)
        await start_event_stream(send, [(SESSION_HEADER, session_id)])
        for event in events:
            await send_chunk(send, encode_event(event.payload, id=event.id))
        await _send_last_shielded(send, b"")

    async def _delete(self, request: Request, send: Send) -> None:
        if self.config.stateless:
            await respond_error(
                send,
                405,
                "Method Not Allowed: stateless server",
                headers=[("allow", "POST")],
                version=request.header(VERSION_HEADER),
            )
            return
        session_id = request.header(SESSION_HEADER)
        if session_id is None:
            await respond_error(
                send,
                400,
                "Bad Request: Mcp-Session-Id header is required",
                version=request.header(VERSION_HEADER),
            )
            return
        if await self._session(request, send, session_id) is None:
            return
        self.registry.close(session_id)
        await respond(send, 200)

    async def _session(
        self, request: Request, send: Send, session_id: str
    ) -> HttpSessionStream | None:
        """The session a request names, or None once the error has been answered."""
        entry = self.registry.get(session_id)
        transport = None if entry is None else entry.transport
        if not isinstance(transport, HttpSessionStream) or not same_caller(
            transport.principal, request.principal
        ):
            transport = None  # another caller's session is not theirs to know of
        if transport is None or transport.closed.is_set():
            await respond_error(
                send,
                404,
                "Not Found: unknown or expired session",
                version=request.header(VERSION_HEADER),
            )
            return None
        version = request.header(VERSION_HEADER)
        if version is not None and version not in self.config.supported_versions:
            await respond_error(
                send,
                400,
                f"Bad Request: unsupported protocol version {version}",
                version=request.header(VERSION_HEADER),
            )
            return None
        if request.principal is not None:
            transport.principal = request.principal  # a new token may carry new scopes
        return transport


async def _settled(transport: HttpSessionStream, stream: ResponseStream) -> None:
    """Return once every request of ``stream`` is answered, or the session has ended."""
    while not stream.finished and not transport.closed.is_set():
        await stream.changed.wait()


async def _first_change(transport: HttpSessionStream, stream: ResponseStream) -> None:
    """Wait (at most :data:`QUICK_REPLY` seconds) until a new response stream has
    something to write beyond its priming event, or is finished."""
    if not _changed(transport, stream):
        # The session was woken by the POST's body; if it runs later in this pass of the
        # scheduler, it answers there and then: a yield is cheaper than a timed wait.
        await trio.lowlevel.checkpoint()
        if not _changed(transport, stream):
            with trio.move_on_after(QUICK_REPLY):
                await stream.changed.wait()


def _changed(transport: HttpSessionStream, stream: ResponseStream) -> bool:
    return bool(stream.changes) or stream.finished or transport.closed.is_set()


#: The longest ``Last-Event-ID`` we look up; ours are a few characters.
MAX_EVENT_ID_LENGTH = 128


def _modern_header(request: Request) -> bool:
    """Whether a request's ``MCP-Protocol-Version`` routes it to the 2026-07-28 era: any
    value but a handshake revision's (an unknown one gets that era's -32022)."""
    version = request.header(VERSION_HEADER)
    return version is not None and not is_handshake_version(version)


def _modern_without_header(post: Post, request: Request) -> bool:
    """A 2026-07-28 request (other than ``initialize``) that lacks its required
    ``MCP-Protocol-Version`` header: that era's ladder says so (-32020)."""
    return post.modern and not post.initialize and VERSION_HEADER not in request.headers


def _event_id_shape(event_id: str) -> bool:
    """Whether a ``Last-Event-ID`` may be an event id at all (short, visible ASCII), so
    that the event store only ever parses ids of a sane shape; anything else is unknown."""
    return len(event_id) <= MAX_EVENT_ID_LENGTH and event_id.isascii() and event_id.isprintable()


async def _send_last_shielded(send: Send, data: bytes) -> None:
    """End a streamed body with its last chunk, safe from the disconnect watcher beside it.

    Ending the body makes hypercorn finish the request there and then, inside this
    ``send``: it tells the application the exchange is over (``http.disconnect``,
    which wakes :func:`watch_disconnect`) and then closes the connection
    (``Connection: close``) or arms its keep-alive timer. Cancelled midway by the
    watcher, it would do neither, leaving the connection open forever.
    """
    with trio.CancelScope(shield=True):
        await send_last(send, data)


def _ok(error_code: int | None) -> int:
    """The HTTP status of a legacy-era JSON reply: 200, whatever it says."""
    return 200


def _json_body(responses: list[bytes], batch: bool) -> bytes:
    if not batch and len(responses) == 1:
        return responses[0]
    parts = [r.strip()[1:-1] if r.lstrip()[:1] == b"[" else r for r in responses]
    return b"[" + b",".join(parts) + b"]"
