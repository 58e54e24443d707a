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
   :class:`ModernExchange`, supervised by the server but run in the POST's own task
   (the request is the session's whole life: no task, nursery or queue of its own
   is worth starting), and writes the reply with
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
session actor's input ends, which cancels the handler (a JSON reply too). The closing
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
)
from .http_config import HttpConfig
from .http_sessions import RETRY_AFTER, ServeExchange
from .sse import encode_comment, encode_event

log = logging.getLogger("mcp_actors.http")

#: The revision modern replies are written as (ids omitted when unknown).
_MODERN: Final = REVISIONS["2026-07-28"]

#: The method whose answer is always an event stream: a long-lived notification stream.
_LISTEN: Final = "subscriptions/listen"
#: The ``inputSchema`` of the server's tool of that name (None: no such tool).
InputSchemaOf = Callable[[str], Any]


class ModernExchange(MessageStream):
    """One modern POST as the stream of the session serving it, writing the reply itself.

    The session runs in the POST's own task (:meth:`ModernPostHandler.post`): its
    reader gets the request from :meth:`receive`, and waits in the next ``receive``
    until the request is answered. While it waits it watches the client — from
    :data:`~.asgi.QUICK_REPLY` seconds on (see there): a client that leaves ends the
    input, which cancels the request — and, on a reply that may stream, writes the
    keep-alive comments. The session's writes (:meth:`send_all`) go straight into the
    HTTP response, with the deferred commit of the module docstring: the answer
    before anything else is one JSON body; a notification first starts an event
    stream. There is no queue between the session and the connection: a slow client
    holds up the session's writer, and nothing else (the exchange carries one request).

    A message unrelated to the request has nowhere to go and is dropped; so is a
    request to the client, which this era never sends (a modern request's state has
    no back channel).
    """

    stateless = True
    #: The reader may write the answer itself: nothing else is in flight to overtake.
    direct_writes = True

    def __init__(
        self,
        body: bytes,
        request_id: RequestId,
        http: tuple[Receive, Send],
        *,
        streaming: bool,
        stream_only: bool,
        keepalive: float | None,
    ) -> None:
        self._body: bytes | None = body
        self.request_id = request_id
        self._receive, self._send = http
        #: Whether notifications are wanted (False: the reply is one JSON body).
        self.streaming = streaming
        #: Whether the reply must be an event stream, started at once.
        self._stream_only = stream_only
        self._keepalive = keepalive if streaming and keepalive is not None else math.inf
        #: Whether the answer has been handed over (it is the last message).
        self.answered = False
        #: Whether the client closed the connection before the answer.
        self.client_gone = False
        #: Whether the reply began as an event stream (else nothing is written yet).
        self.streaming_started = False
        self._last_write = 0.0
        self._waiting: trio.CancelScope | None = None
        self._writing = False
        self._keeping_alive: trio.Event | None = None

    async def receive(self) -> bytes:
        body, self._body = self._body, None
        if body is not None:
            return body
        if not (self.answered or self.client_gone):
            with trio.CancelScope() as self._waiting:
                await self._watch()
            self._waiting = None
        raise TransportClosed("the modern exchange is over")

    async def _watch(self) -> None:
        """Wait for the answer (cancelled by it); meanwhile watch the client, keep the
        stream alive."""
        if self._stream_only:
            await self._start_stream()
        else:
            with trio.move_on_after(QUICK_REPLY):
                await trio.sleep_forever()
        self._last_write = trio.current_time()
        while True:
            message = None
            with trio.move_on_at(self._last_write + self._keepalive):
                message = await self._receive()
            if message is not None and message["type"] == "http.disconnect":
                self.client_gone = True
                return
            if message is None:  # silence
                if self._writing:  # not silent after all: a message is being written
                    self._last_write = trio.current_time()
                elif not await self._keep_alive():
                    self.client_gone = True
                    return

    async def _keep_alive(self) -> bool:
        """Write a keep-alive comment (starting the stream first if need be); False if
        the connection failed under it. Shielded: the answer waits for it to be written
        whole rather than cut it short."""
        self._keeping_alive = done = trio.Event()
        try:
            with trio.CancelScope(shield=True):
                if not self.streaming_started:
                    await self._start_stream()
                await send_chunk(self._send, encode_comment("keep-alive"))
        except Exception:  # the connection broke (how depends on the HTTP server)
            return False
        finally:
            self._keeping_alive = None
            done.set()
        self._last_write = trio.current_time()
        return True

    async def _start_stream(self) -> None:
        self.streaming_started = True
        await start_event_stream(self._send)

    async def send_all(self, messages: Sequence[Outgoing]) -> None:
        for message in messages:
            if self.answered or message.related_request != self.request_id:
                log.debug("modern HTTP: dropped a message unrelated to the request")
                continue
            if self.client_gone:
                raise TransportClosed("the client has gone")
            if message.closes_request:
                self.answered = True
                if self._waiting is not None:
                    self._waiting.cancel()
                await self._write(message.payload, answer=True)
            elif outgoing_request(message.payload) is not None:
                log.warning("modern HTTP: dropped a server-to-client request")
            elif self.streaming:
                await self._write(message.payload, answer=False)

    async def _write(self, payload: bytes, *, answer: bool) -> None:
        while self._keeping_alive is not None:
            await self._keeping_alive.wait()
        self._writing = True
        try:
            if answer and not self.streaming_started and not self._stream_only:
                status = status_for_error(error_code(payload))
                await respond(self._send, status, payload, content_type=JSON)
                return
            if not self.streaming_started:
                await self._start_stream()
            if answer:
                await send_last(self._send, encode_event(payload))
            else:
                await send_chunk(self._send, encode_event(payload))
                self._last_write = trio.current_time()
        finally:
            self._writing = False

    async def finish(self) -> None:
        """The session has ended: end a reply it left unfinished (it ended without
        answering, or failed), unless the client is gone."""
        if self.answered or self.client_gone:
            return
        self.answered = True
        with suppress(Exception):  # the connection may be gone
            if self.streaming_started:
                await send_last(self._send, b"")
            else:
                failure = McpError(
                    INTERNAL_ERROR, "Internal error: the request ended without an answer"
                )
                await _respond_error(self._send, self.request_id, failure)

    async def aclose(self) -> None:
        if self._waiting is not None:
            self._waiting.cancel()
        await trio.lowlevel.checkpoint()


@attrs.define(eq=False)
class ModernPostHandler:
    """Answers the POSTs the endpoint routes to the 2026-07-28 era (module docstring)."""

    config: HttpConfig
    serve_exchange: ServeExchange
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
        exchange = ModernExchange(
            body,
            request_id,
            (receive, send),
            streaming=listen or not json_only,
            stream_only=stream_only or listen,
            keepalive=self.config.keepalive_interval,
        )
        exchange.principal = request.principal
        del body, post
        self.in_progress += 1
        try:
            await self.serve_exchange(exchange, None)
            await exchange.finish()
        finally:
            self.in_progress -= 1


async def _respond_error(
    send: Send, request_id: RequestId | None, error: McpError, *, status: int | None = None
) -> None:
    body = encode_error(request_id, error, _MODERN)
    status = status_for_error(error.code) if status is None else status
    await respond(send, status, body, content_type=JSON)
