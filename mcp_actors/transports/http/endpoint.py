"""The Streamable HTTP endpoint (2025-03-26 on): one path answering POST, GET and DELETE.

Two eras share the path; each request says which it speaks. A request whose
``MCP-Protocol-Version`` header is 2026-07-28 — or any value that is not a handshake
revision's, so that an unknown one is told which versions we serve — belongs to the
per-request era and is handed to :class:`~.modern.ModernPostHandler` (GET and DELETE with
such a header are ``405`` with ``Allow: POST``); so is a POST without the header whose
body's ``_meta`` carries the per-request fields (other than ``initialize``), which that era
refuses for the missing header. Everything else is the legacy era, described below.

- **POST** carries one JSON-RPC message or batch. Only notifications or responses: ``202
  Accepted``, no body. Any request: a ``text/event-stream`` carrying the messages related
  to it and then its response (or, when the server is configured for it or the client
  accepts nothing else, one ``application/json`` body). Errors: no acceptable ``Accept`` →
  406, not ``Content-Type: application/json`` → 415, not JSON → 400 with a JSON-RPC parse
  error, too large → 413.
- **Sessions.** ``initialize`` without ``Mcp-Session-Id`` creates a session (or 503 with
  ``Retry-After`` when the session table is full of busy sessions, see :mod:`.sessions`)
  and the response carries its new id; every later request must send it (400 without,
  404 for an unknown or ended one). A known ``MCP-Protocol-Version`` header is accepted
  even if it is not the negotiated one; an unknown one is 400.
- **GET** opens the session's standalone stream, or with ``Last-Event-ID`` resumes the
  stream that id belongs to, replaying what followed it.
- **DELETE** ends the session, cancelling its in-flight requests.
- **A client that closes a POST's connection** before its reply cancels the requests still
  unanswered on it, unless it can resume the stream (see :func:`.reply._abandoned`); it is
  noticed within :data:`~.asgi.QUICK_REPLY` seconds (a reply that comes sooner is awaited
  without watching the connection).
- **An access token's expiry** ends every event stream (a POST's, a GET's) opened with it,
  and cancels the requests still unanswered on a POST's (see :func:`.reply.carry`); the
  session stays, for the client's next requests with a fresh token.
- **An event stream** (a POST's) starts once it has something to carry (the first message
  related to the POST, or its end), or after ``QUICK_REPLY`` seconds: its priming event and
  a quick answer go out in one write.
- **Stateless** (``HttpConfig.stateless``): no ids; each POST is served by a fresh session
  that starts operating without ``initialize`` and ends with the response; GET and DELETE
  answer 405. A POST of one request (the usual case) is served in its own task, its
  session writing the reply (see :mod:`.exchange`); so is a POST of notifications,
  answered 202 once served — unless the server would act on none of them
  (``heeds_notifications``): then 202 at once, and no session. An ``initialize`` gets no
  session either: the engine answers it itself (``answer_initialize``).

Which status and error each refusal gets is decided by the pure functions of :mod:`.routing`;
the reply is written by :mod:`.reply`; this module does the I/O around them. A POST's body is
decoded once (:func:`~mcp_actors.protocol.received.read_post`) and handed to the session. A
legacy session is an actor started through ``start_session`` in the server's supervisor, not
in a request's task: a POST only queues its message and reads the response stream (see
:mod:`.session_stream`); a stateless exchange's session runs in its POST's task.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from ...protocol.jsonrpc import InvalidMessage
from ...protocol.received import Post, read_post
from ...protocol.session_record import initialize_params, record_changes
from ...protocol.versions import HTTP_DEFAULT
from ..abc import TransportClosed, answer_of
from .any_worker import SharedSessions
from .asgi import (
    EVENT_STREAM,
    BodyTimeout,
    BodyTooLarge,
    ClientGone,
    Receive,
    Request,
    Send,
    accepts,
    read_body,
    respond,
    respond_answer,
    respond_body_timeout,
    respond_too_many_sessions,
    send_chunk,
    start_event_stream,
)
from .auth import HttpAuthHook, same_caller, token_deadline, until_token_expires
from .config import HttpConfig
from .directory import SessionFull
from .event_store import EventMemory, EventStore, InMemoryEventStore
from .exchange import HttpExchange
from .modern import InputSchemaOf, ModernPostHandler
from .replicas import NoLocalRoom
from .reply import carry, refuse, reply, send_last_shielded, wait_finished
from .routing import (
    GET_NOT_ACCEPTABLE,
    GET_STREAM_TAKEN,
    NO_SESSION_ID,
    SESSION_ENDED,
    SESSION_HEADER,
    UNKNOWN_SESSION,
    VERSION_HEADER,
    Refusal,
    event_id_shape,
    id_in_use,
    modern_header,
    modern_without_header,
    refuse_batch,
    refuse_method,
    reply_mode,
    too_large,
    unknown_event_id,
    unsupported_version,
)
from .session_stream import HttpSessionStream, ResponseStream
from .sessions import Activity, ServeExchange, SessionRegistry, StartSession, mint_session_id
from .sse import encode_event

if TYPE_CHECKING:
    from .sessions import AnswerInitialize, HeedsNotifications

log = logging.getLogger("mcp_actors.http")


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
    #: The deployment's shared sessions (None: this worker holds its sessions alone).
    shared: SharedSessions | None = None
    #: Whether a stateless session would act on a POST of these notifications.
    heeds_notifications: HeedsNotifications = attrs.field(kw_only=True)
    #: Answers a stateless ``initialize`` with no session (None: a session does).
    answer_initialize: AnswerInitialize | None = attrs.field(default=None, kw_only=True)
    #: Requests of legacy sessions this endpoint served (POSTs carrying requests).
    session_requests: int = attrs.field(init=False, default=0)
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
        refusal = refuse_method(request.method, request.headers, stateless=self.config.stateless)
        if refusal is not None:
            await refuse(send, refusal, request)
        elif request.method == "POST":
            await self._post(request, receive, send)
        elif request.method == "GET":
            await self._get(request, receive, send)
        else:
            await self._delete(request, send)

    # -- POST --------------------------------------------------------------------------

    async def _post(self, request: Request, receive: Receive, send: Send) -> None:
        mode = reply_mode(request.headers, json_response=self.config.json_response)
        if isinstance(mode, Refusal):
            await refuse(send, mode, request)
            return
        body = await self._read_body(request, receive, send)
        if body is None:
            return
        post = None
        if not modern_header(request.headers):
            try:
                post = read_post(body)
            except InvalidMessage as invalid:
                refusal = Refusal(400, invalid.message, invalid.code, invalid.request_id)
                await refuse(send, refusal, request)
                return
        if post is None or modern_without_header(post, request.headers):
            await self._modern.post(
                request,
                body if post is None else post.take_message(),
                json_only=mode.json,
                stream_only=not mode.json_ok,
                receive=receive,
                send=send,
            )
        elif self.config.stateless:
            await self._post_stateless(request, post, mode.json, receive, send)
        else:
            await self._post_in_session(request, post, mode.json, receive, send)

    async def _read_body(self, request: Request, receive: Receive, send: Send) -> bytes | None:
        """A POST's body, admitted by the auth hook; None once the refusal is answered."""
        config = self.config
        try:
            body = await read_body(request, receive, config.max_body_size, config.body_timeout)
        except BodyTooLarge:
            await refuse(send, too_large(config.max_body_size), request)
            return None
        except BodyTimeout:
            await respond_body_timeout(send, request.header(VERSION_HEADER))
            return None
        except ClientGone:
            return None
        if self.auth is not None and request.principal is not None:
            refused = self.auth.check_body(request.principal, body)
            if refused is not None:
                await respond_answer(send, refused)
                return None
        return body

    async def _post_in_session(
        self, request: Request, post: Post, json_mode: bool, receive: Receive, send: Send
    ) -> None:
        opened = await self._open_session(request, post, send)
        if opened is None:
            return
        session_id, transport = opened
        if not await self._admissible(transport, request, post, send):
            return
        headers = [(SESSION_HEADER, session_id)]
        shared = self.shared
        initialize = None
        if shared is not None:
            initialize = initialize_params(post.message)
            changes = record_changes(post.message)
            if changes:
                await shared.changed(session_id, changes)
        if not post.request_ids:
            if shared is not None and await shared.route(session_id, post):
                await respond(send, 202, headers=headers)  # for an actor on another worker
            elif await self._deliver(transport, post, send):
                await respond(send, 202, headers=headers)
            return
        self.session_requests += 1
        stream = await transport.open_stream(post.request_ids, json=json_mode)
        if post.initialize:
            transport.initialize_id = post.request_ids[0]
        if not await self._deliver(transport, post, send):
            return
        failed = None
        if post.initialize:
            # Answer only once we know whether the session exists: a failed
            # initialize gets its error without a session id, and the session goes.
            await wait_finished(transport, stream, receive)
            shares = transport.version is not None and shared is not None
            if shares and not await self._share(shared, session_id, initialize, request, send):
                return
            if transport.version is None:
                failed = self.registry.discard(session_id)
                headers = []
        deadline = token_deadline(request.principal)
        await reply(
            transport,
            stream,
            post,
            json_mode,
            receive,
            send,
            headers,
            deadline,
            self.config.resume_window,
        )
        if failed is not None:
            failed.end()

    async def _open_session(
        self, request: Request, post: Post, send: Send
    ) -> tuple[str, HttpSessionStream] | None:
        """The session a POST names, or the one its ``initialize`` creates; None once the
        refusal is answered."""
        session_id = request.header(SESSION_HEADER)
        if session_id is not None:
            found = await self._session(request, send, session_id)
            return None if found is None else (session_id, found)
        if not post.initialize:  # only initialize comes without a session
            await refuse(send, NO_SESSION_ID, request)
            return None
        created = await self._create_session(request.client)
        if created is None:
            await respond_too_many_sessions(send, request.header(VERSION_HEADER))
            return None
        created[1].principal = request.principal
        return created

    async def _post_stateless(
        self, request: Request, post: Post, json_mode: bool, receive: Receive, send: Send
    ) -> None:
        version = None
        if not post.initialize:
            version = request.header(VERSION_HEADER) or HTTP_DEFAULT
            supported = self.config.supported_versions
            refusal = unsupported_version(request.headers, supported, default=HTTP_DEFAULT)
            if refusal is not None:
                await refuse(send, refusal, request)
                return
        if not post.request_ids and not self.heeds_notifications(post.notifications):
            await respond(send, 202)  # no session would act on them
            return
        if not post.batch and len(post.request_ids) <= 1:
            await self._exchange(request, post, version, json_mode, receive, send)
            if not post.request_ids:  # notifications, served: accepted
                await respond(send, 202)
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
                await reply(
                    transport,
                    stream,
                    post,
                    json_mode,
                    receive,
                    send,
                    [],
                    deadline,
                    self.config.resume_window,
                )
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
        """A stateless POST of one request, or of notifications (answered 202 after):
        its session runs in this task and writes the reply itself (see :mod:`.exchange`),
        an event stream unless ``json_mode``; an ``initialize`` needs none (see above)."""
        message, keepalive = post.take_message(), self.config.keepalive_interval
        request_id = post.request_ids[0] if post.request_ids else None
        exchange = HttpExchange.stateless_legacy(
            message, request_id, (receive, send), json_mode=json_mode, keepalive=keepalive
        )
        if post.initialize and self.answer_initialize is not None:
            answer = self.answer_initialize(message)  # None: it failed (finish() says so)
            await exchange.send_all(() if answer is None else (answer_of(answer),))
        else:
            exchange.principal = request.principal
            with until_token_expires(request.principal):
                await self.serve_exchange(exchange, version)
        await exchange.finish()

    async def _share(
        self,
        shared: SharedSessions | None,
        session_id: str,
        initialize: bytes | None,
        request: Request,
        send: Send,
    ) -> bool:
        """Record a session just initialized here; False once a full directory's 503 is
        answered (the session ended)."""
        assert shared is not None and initialize is not None
        try:
            await shared.opened(session_id, initialize, request.principal)
        except SessionFull:
            self.registry.close(session_id)
            await respond_too_many_sessions(send, request.header(VERSION_HEADER))
            return False
        return True

    async def _create_session(
        self, client: str | None, session_id: str | None = None
    ) -> tuple[str, HttpSessionStream] | None:
        """A new session for ``client`` (a new id unless ``session_id``: a shared session's
        local actor), or None if the session table has no room for it."""
        if session_id is None:
            session_id = mint_session_id(self.config.session_id_prefix)
        config = self.config
        shared = self.shared
        prefix = "" if shared is None else shared.stream_prefix
        store = self._new_store(session_id)
        transport = HttpSessionStream(session_id, config, store, stream_prefix=prefix)
        if shared is not None:
            shared.adopt(transport)
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
            if shared is not None:
                shared.forget(session_id)

        transport.on_close = forget
        return session_id, transport

    async def _admissible(
        self, transport: HttpSessionStream, request: Request, post: Post, send: Send
    ) -> bool:
        """Refuse (400) what the session must not see: a batch its revision forbids, an id
        already in flight."""
        refusal = refuse_batch(post, transport.version, request.headers)
        duplicate = transport.in_flight(post.request_ids)
        if refusal is None and duplicate is not None:
            refusal = id_in_use(duplicate)
        if refusal is not None:
            await refuse(send, refusal, request)
            return False
        return True

    async def _deliver(self, transport: HttpSessionStream, post: Post, send: Send) -> bool:
        try:
            await transport.deliver(post.take_message())
        except TransportClosed:
            await refuse(send, SESSION_ENDED, version=transport.version)
            return False
        for request_id in post.cancelled:
            transport.cancelled(request_id)
        return True

    # -- GET and DELETE ----------------------------------------------------------------

    async def _get(self, request: Request, receive: Receive, send: Send) -> None:
        session_id = request.header(SESSION_HEADER)
        if not accepts(request.header("accept"), EVENT_STREAM):
            await refuse(send, GET_NOT_ACCEPTABLE, request)
            return
        if session_id is None:
            await refuse(send, NO_SESSION_ID, request)
            return
        last_event_id = request.header("last-event-id")
        if (
            last_event_id
            and self.config.replay_unknown_sessions
            and request.principal is None  # see _replay_stored
            and self.registry.get(session_id) is None
            and event_id_shape(last_event_id)
        ):
            await self._replay_stored(request, send, session_id, last_event_id)
            return
        transport = await self._session(request, send, session_id)
        if transport is None:
            return
        found = await self._stream_to_carry(transport, last_event_id, request, send)
        if found is None:
            return
        stream, after = found
        await start_event_stream(send, [(SESSION_HEADER, session_id)])
        deadline = token_deadline(request.principal)
        window = self.config.resume_window
        if self.shared is None:
            await carry(transport, stream, after, receive, send, deadline, window)
            return
        async with self.shared.carrying(transport, stream):
            await carry(transport, stream, after, receive, send, deadline, window)

    async def _stream_to_carry(
        self,
        transport: HttpSessionStream,
        last_event_id: str | None,
        request: Request,
        send: Send,
    ) -> tuple[ResponseStream, str | None] | None:
        """What a GET carries, and after which event: the stream ``last_event_id`` belongs to,
        or the standalone stream; None once the refusal is answered."""
        if last_event_id:
            stream = None
            if event_id_shape(last_event_id):
                stream = await self._resumed_stream(transport, last_event_id)
            if stream is None:
                await refuse(send, unknown_event_id(last_event_id), request)
                return None
            await transport.store.acknowledge(stream.key, last_event_id)
            return stream, last_event_id
        stream = transport.standalone
        if stream.connection is not None:
            await refuse(send, GET_STREAM_TAKEN, request)
            return None
        after = stream.delivered
        await transport.prime(stream)
        return stream, after

    async def _resumed_stream(
        self, transport: HttpSessionStream, last_event_id: str
    ) -> ResponseStream | None:
        """The stream a ``Last-Event-ID`` belongs to: this session's, or in a shared
        session one another worker's actor writes (see :mod:`.any_worker`)."""
        shared, session_id = self.shared, transport.session_id
        if shared is not None and session_id is not None:
            elsewhere = await shared.resume_elsewhere(session_id, transport, last_event_id)
            if elsewhere is not None:
                return elsewhere
        return transport.find_stream(last_event_id)

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
        await send_last_shielded(send, b"")

    async def _delete(self, request: Request, send: Send) -> None:
        session_id = request.header(SESSION_HEADER)
        if session_id is None:
            await refuse(send, NO_SESSION_ID, request)
            return
        if await self._session(request, send, session_id) is None:
            return
        if self.shared is not None:
            await self.shared.end(session_id)
        self.registry.close(session_id)
        await respond(send, 200)

    async def _session(
        self, request: Request, send: Send, session_id: str
    ) -> HttpSessionStream | None:
        """The session a request names, or None once the error has been answered."""
        transport: Activity | None
        if self.shared is not None:
            try:
                transport = await self._shared_session(self.shared, request, session_id)
            except NoLocalRoom:
                await respond_too_many_sessions(send, request.header(VERSION_HEADER))
                return None
        else:
            entry = self.registry.get(session_id)
            transport = None if entry is None else entry.transport
        if not isinstance(transport, HttpSessionStream) or not same_caller(
            transport.principal, request.principal
        ):
            transport = None  # another caller's session is not theirs to know of
        if transport is None or transport.closed.is_set():
            await refuse(send, UNKNOWN_SESSION, request)
            return None
        refusal = unsupported_version(request.headers, self.config.supported_versions)
        if refusal is not None:
            await refuse(send, refusal, request)
            return None
        if request.principal is not None:
            transport.principal = request.principal  # a new token may carry new scopes
        return transport

    async def _shared_session(
        self, shared: SharedSessions, request: Request, session_id: str
    ) -> HttpSessionStream | None:
        """This worker's actor of a shared session (see :mod:`.any_worker`)."""

        async def create() -> HttpSessionStream | None:
            created = await self._create_session(request.client, session_id)
            if created is not None:
                created[1].principal = request.principal
            return None if created is None else created[1]

        return await shared.local_session(session_id, request.principal, create)
