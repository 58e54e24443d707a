"""Streamable HTTP in the 2026-07-28 era: one POST, one request, one reply; no session.

A modern POST carries one request with everything the server needs in its
``_meta`` (version, client capabilities) and its routing headers. The endpoint
(:class:`ModernPostHandler`):

1. reads the body (:func:`~..protocol.inspect.read_modern_post`): not JSON,
   a batch, a posted response are ``400`` with -32700/-32600; a notification is
   acknowledged ``202`` and dropped (the era defines no client notification over
   HTTP: closing the response stream is the cancellation);
2. runs the HTTP validation ladder
   (:func:`~..protocol.routing_headers.admit_http_request`): ``_meta`` (-32602),
   headers against body (-32020), version (-32022), ``Mcp-Param-*`` (-32020), each
   ``400`` with the request's id;
3. serves the request with a session actor of its own over a
   :class:`ModernExchange`, in the server's supervisor, and writes the reply with
   a *deferred commit*: if the request's answer comes before anything else, it is
   one ``application/json`` body whose status the error code decides (``404`` for
   -32601, ``400`` for the ladder's codes, else ``200``, see
   :func:`~..protocol.http_status.status_for_error`); from the first notification
   of the request (progress, a log message) on, it is a ``text/event-stream``
   carrying them and then the answer. Such a stream has no event ids, no priming
   event and no ``retry:`` (nothing is resumable in this era), carries
   ``X-Accel-Buffering: no``, and a ``: keep-alive`` comment every
   ``keepalive_interval`` seconds of silence; a request silent for that long
   commits to a stream too, so that the comments keep proxies from timing it out.

A ``subscriptions/listen`` request is always answered with an event stream (``406``
if the client's ``Accept`` lacks ``text/event-stream``), kept open with the
keep-alive comments until the server ends it or the client closes it.

A client that closes the connection before the answer cancels the request: its
session actor is closed, which cancels the handler (a JSON reply too). The closing
is noticed within :data:`~.asgi.QUICK_REPLY` seconds: an answer that comes sooner is
awaited without watching the connection. Nothing
is remembered after the answer: an ``Mcp-Session-Id`` is ignored and never sent.
At most ``HttpConfig.max_modern_requests`` requests are served at once; one more
is refused with ``503`` and ``Retry-After``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import Any, Final

import attrs
import trio

from ..protocol.errors import INTERNAL_ERROR, INVALID_REQUEST, McpError
from ..protocol.http_status import status_for_error
from ..protocol.inspect import error_code, outgoing_request, read_modern_post
from ..protocol.jsonrpc import InvalidMessage, RequestId, encode_error
from ..protocol.routing_headers import admit_http_request
from ..protocol.versions import REVISIONS
from .abc import MessageStream, Outgoing, TransportClosed
from .asgi import (
    EVENT_STREAM,
    JSON,
    QUICK_REPLY,
    Receive,
    Request,
    Send,
    accepts,
    respond,
    send_chunk,
    send_last,
    start_event_stream,
    watch_disconnect,
)
from .http_config import HttpConfig
from .http_sessions import RETRY_AFTER, StartSession
from .inbox import Inbox, InboxClosed
from .sse import encode_comment, encode_event

log = logging.getLogger("mcp_actors.http")

#: The revision modern replies are written as (ids omitted when unknown).
_MODERN: Final = REVISIONS["2026-07-28"]

#: The method whose answer is always an event stream: a long-lived notification stream.
_LISTEN: Final = "subscriptions/listen"
#: The ``inputSchema`` of the server's tool of that name (None: no such tool).
InputSchemaOf = Callable[[str], Any]


@attrs.frozen
class _Message:
    payload: bytes
    #: The request's answer (the last message of the exchange).
    answer: bool


class ModernExchange(MessageStream):
    """The session actor's end of one modern POST: the request in; its notifications
    and its answer out, through a bounded queue (``queue_size``; when full, the
    session's writer waits for the HTTP side to write).

    Once the answer is out, :meth:`receive` reports the end of input, so the session
    finishes (it has nothing else in flight) and ends on its own. A message unrelated
    to the request has nowhere to go and is dropped; so is a request to the client,
    which this era never sends (a modern request's state has no back channel).
    """

    stateless = True
    #: The reader may send the answer itself: waiting while the queue is full holds up
    #: nothing else (the exchange carries one request).
    direct_writes = True

    def __init__(self, body: bytes, request_id: RequestId, queue_size: int) -> None:
        self._body: bytes | None = body
        self.request_id = request_id
        self._queue: Inbox[_Message] = Inbox(max(1, queue_size))  # 0: one at a time
        #: Whether notifications are wanted (False: the reply is one JSON body).
        self.streaming = True
        self.answered = trio.Event()

    async def receive(self) -> bytes:
        body, self._body = self._body, None
        if body is not None:
            return body
        await self.answered.wait()
        raise TransportClosed("the modern exchange is over")

    async def send_all(self, messages: Sequence[Outgoing]) -> None:
        for message in messages:
            if message.related_request != self.request_id or self.answered.is_set():
                log.debug("modern HTTP: dropped a message unrelated to the request")
                continue
            if message.closes_request:
                await self._put(_Message(message.payload, True))
                self.answered.set()
            elif outgoing_request(message.payload) is not None:
                log.warning("modern HTTP: dropped a server-to-client request")
            elif self.streaming:
                await self._put(_Message(message.payload, False))

    async def _put(self, message: _Message) -> None:
        try:
            await self._queue.put(message)
        except InboxClosed:
            raise TransportClosed("the client has gone") from None

    async def next(self) -> _Message | None:
        """The next message for the HTTP reply; None if the session ended without answering."""
        try:
            return await self._queue.get()
        except InboxClosed:
            return None

    async def aclose(self) -> None:
        self.answered.set()
        self._queue.end()  # what is queued is still read, then next() says None
        await trio.lowlevel.checkpoint()


@attrs.define(eq=False)
class ModernPostHandler:
    """Answers the POSTs the endpoint routes to the 2026-07-28 era (module docstring)."""

    config: HttpConfig
    start_session: StartSession
    input_schema_of: InputSchemaOf | None = None
    #: Requests being served now (capped by ``config.max_modern_requests``).
    in_progress: int = attrs.field(init=False, default=0)

    async def post(
        self,
        request: Request,
        body: bytes,
        *,
        json_only: bool,
        stream_only: bool,
        receive: Receive,
        send: Send,
    ) -> None:
        try:
            post = read_modern_post(body)
        except InvalidMessage as invalid:
            await _respond_error(send, invalid.request_id, invalid)
            return
        request_id = post.request_id
        if request_id is None:
            await respond(send, 202)  # nothing to act on, see the module docstring
            return
        try:
            admit_http_request(
                post,
                request.headers,
                request.repeated,
                self.config.supported_versions,
                self.input_schema_of,
            )
        except McpError as error:
            await _respond_error(send, request_id, error)
            return
        limit = self.config.max_modern_requests
        if limit is not None and self.in_progress >= limit:
            busy = McpError(
                INTERNAL_ERROR,
                f"Service Unavailable: {limit} requests in progress, try again later",
            )
            body = encode_error(request_id, busy, _MODERN)
            retry = [("retry-after", str(RETRY_AFTER))]
            await respond(send, 503, body, content_type=JSON, headers=retry)
            return
        listen = post.method == _LISTEN
        if listen and not accepts(request.header("accept"), EVENT_STREAM):
            refusal = McpError(
                INVALID_REQUEST,
                "Not Acceptable: subscriptions/listen is answered with text/event-stream,"
                " which the Accept header must list",
            )
            await _respond_error(send, request_id, refusal, status=406)
            return
        exchange = ModernExchange(body, request_id, self.config.outbound_queue_size)
        exchange.principal = request.principal
        exchange.streaming = listen or not json_only
        stream_only = stream_only or listen
        del body, post
        self.in_progress += 1
        try:
            close = await self.start_session(exchange, None)
            try:
                await self._reply(exchange, stream_only, receive, send)
            finally:
                if not exchange.answered.is_set():
                    close()  # the client left (or we failed): cancel the request
        finally:
            self.in_progress -= 1

    async def _reply(
        self, exchange: ModernExchange, stream_only: bool, receive: Receive, send: Send
    ) -> None:
        keepalive = self.config.keepalive_interval
        wait = math.inf if keepalive is None else keepalive
        first: _Message | None = None
        came = False
        # A JSON reply is awaited for ever; one that may turn into a stream, until the
        # first keep-alive comment is due.
        patience = wait if exchange.streaming else math.inf
        deadline = trio.current_time() + patience
        if not stream_only:
            # The first QUICK_REPLY seconds without a disconnect watcher (see there).
            with trio.move_on_after(min(QUICK_REPLY, patience)):
                first = await exchange.next()
                came = True
            if came and (first is None or first.answer):
                await _respond_json(send, exchange.request_id, first, watched=False)
                return
        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch_disconnect, receive, nursery.cancel_scope)
            silent = False
            if not stream_only and not came:
                with trio.move_on_at(deadline) as timer:
                    first = await exchange.next()
                silent = timer.cancelled_caught
                if not silent and (first is None or first.answer):
                    await _respond_json(send, exchange.request_id, first)
                    nursery.cancel_scope.cancel()
                    return
            await start_event_stream(send)
            if silent:
                await send_chunk(send, encode_comment("keep-alive"))
            await _stream(exchange, first, send, wait)
            nursery.cancel_scope.cancel()


async def _stream(
    exchange: ModernExchange, first: _Message | None, send: Send, keepalive: float
) -> None:
    """Write the exchange's messages as events until its answer ends the stream."""
    message = first
    while True:
        if message is None:
            with trio.move_on_after(keepalive) as idle:
                message = await exchange.next()
            if idle.cancelled_caught:
                await send_chunk(send, encode_comment("keep-alive"))
                continue
            if message is None:  # the session ended without an answer
                with trio.CancelScope(shield=True), suppress(Exception):
                    await send_last(send, b"")
                return
        event = encode_event(message.payload)
        if message.answer:
            # Shielded: ending the body inside hypercorn's send must not be cut short
            # by the disconnect watcher (see streamable_http._send_last_shielded).
            with trio.CancelScope(shield=True):
                await send_last(send, event)
            return
        await send_chunk(send, event)
        message = None


async def _respond_json(
    send: Send, request_id: RequestId, message: _Message | None, *, watched: bool = True
) -> None:
    """The answer as one JSON body; ``watched``: shielded from the disconnect watcher
    beside it (see :func:`_stream`)."""
    if message is None:
        failure = McpError(INTERNAL_ERROR, "Internal error: the request ended without an answer")
        await _respond_error(send, request_id, failure)
        return
    status = status_for_error(error_code(message.payload))
    if not watched:
        await respond(send, status, message.payload, content_type=JSON)
        return
    with trio.CancelScope(shield=True):
        await respond(send, status, message.payload, content_type=JSON)


async def _respond_error(
    send: Send, request_id: RequestId | None, error: McpError, *, status: int | None = None
) -> None:
    body = encode_error(request_id, error, _MODERN)
    status = status_for_error(error.code) if status is None else status
    await respond(send, status, body, content_type=JSON)
