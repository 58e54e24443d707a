"""Streamable HTTP in the 2026-07-28 era: one POST, one request, one reply; no session.

A modern POST carries one request with everything the server needs in its
``_meta`` (version, client capabilities) and its routing headers. The endpoint
(:class:`ModernPostHandler`):

1. decodes the body, once (:func:`~mcp_actors.protocol.received.read_modern_post`,
   whose decoded message the session then takes as it is): not JSON,
   a batch, a posted response are ``400`` with -32700/-32600; a notification is
   acknowledged ``202`` and dropped (the era defines no client notification over
   HTTP: closing the response stream is the cancellation);
2. runs the HTTP validation ladder
   (:func:`~..protocol.routing_headers.admit_http_request`): ``_meta`` (-32602),
   headers against body (-32020), version (-32022), ``Mcp-Param-*`` (-32020), each
   ``400`` with the request's id;
3. serves the request with a session actor of its own over a
   :class:`~.exchange.HttpExchange`, supervised by the server but run in the POST's own task
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
is refused with ``503`` and ``Retry-After``. Listen streams are not requests in
progress: they are bounded by the server's own pool, in all and per client (see
:mod:`~mcp_actors.server.listen`; one more is answered -32000 with ``data.limit``), so
that a client holding many streams open takes no request's slot.

A request authenticated by an access token is served no longer than the token lives
(see :func:`~.auth.token_deadline`): at its expiry a reply still in progress is
ended — an event stream (a listen stream, a long reply) just closes, a reply not yet
begun is a -32603 — and the request cancelled; the client comes back with a fresh token.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import attrs

from ...protocol.errors import INTERNAL_ERROR, INVALID_REQUEST, McpError
from ...protocol.http_status import status_for_error
from ...protocol.jsonrpc import InvalidMessage, Message, RequestId, encode_error
from ...protocol.modern import AdmittedRequest
from ...protocol.received import modern_post, read_modern_post
from ...protocol.routing_headers import admit_http_request
from ...protocol.versions import REVISIONS
from .asgi import EVENT_STREAM, JSON, Receive, Request, Send, accepts, respond
from .auth import until_token_expires
from .config import HttpConfig
from .exchange import HttpExchange
from .sessions import RETRY_AFTER, ServeExchange

#: The revision modern replies are written as (ids omitted when unknown).
_MODERN: Final = REVISIONS["2026-07-28"]

#: The method whose answer is always an event stream: a long-lived notification stream.
_LISTEN: Final = "subscriptions/listen"
#: The ``inputSchema`` of the server's tool of that name (None: no such tool).
InputSchemaOf = Callable[[str], Any]


@attrs.define(eq=False)
class ModernPostHandler:
    """Answers the POSTs the endpoint routes to the 2026-07-28 era (module docstring)."""

    config: HttpConfig
    serve_exchange: ServeExchange
    input_schema_of: InputSchemaOf | None = None
    #: Requests being served now, listen streams aside (capped by
    #: ``config.max_modern_requests``).
    in_progress: int = attrs.field(init=False, default=0)

    async def post(
        self,
        request: Request,
        body: bytes | Message,
        *,
        json_only: bool,
        stream_only: bool,
        receive: Receive,
        send: Send,
    ) -> None:
        """Serve one POST: its ``body``, or the message the endpoint decoded from it already."""
        try:
            post = read_modern_post(body) if isinstance(body, bytes) else modern_post(body)
        except InvalidMessage as invalid:
            await _respond_error(send, invalid.request_id, invalid)
            return
        request_id = post.request_id
        if request_id is None:
            await respond(send, 202)  # nothing to act on, see the module docstring
            return
        try:
            meta = admit_http_request(
                post,
                request.headers,
                request.repeated,
                self.config.supported_versions,
                self.input_schema_of,
            )
        except McpError as error:
            await _respond_error(send, request_id, error)
            return
        listen = post.method == _LISTEN
        limit = self.config.max_modern_requests
        if not listen and limit is not None and self.in_progress >= limit:
            busy = McpError(
                INTERNAL_ERROR,
                f"Service Unavailable: {limit} requests in progress, try again later",
            )
            refusal = encode_error(request_id, busy, _MODERN)
            retry = [("retry-after", str(RETRY_AFTER))]
            await respond(send, 503, refusal, content_type=JSON, headers=retry)
            return
        if listen and not accepts(request.header("accept"), EVENT_STREAM):
            not_acceptable = McpError(
                INVALID_REQUEST,
                "Not Acceptable: subscriptions/listen is answered with text/event-stream,"
                " which the Accept header must list",
            )
            await _respond_error(send, request_id, not_acceptable, status=406)
            return
        exchange = HttpExchange(
            AdmittedRequest(post.envelope, request_id, post.method, meta),
            request_id,
            (receive, send),
            streaming=listen or not json_only,
            stream_only=stream_only or listen,
            keepalive=self.config.keepalive_interval,
            status_of=status_for_error,
            modern=True,
        )
        exchange.principal = request.principal
        exchange.client_address = request.client
        del body, post
        counted = not listen  # a listen stream is bounded by the server's listen pool
        self.in_progress += counted
        try:
            with until_token_expires(request.principal):
                await self.serve_exchange(exchange, None)
            await exchange.finish()
        finally:
            self.in_progress -= counted


async def _respond_error(
    send: Send, request_id: RequestId | None, error: McpError, *, status: int | None = None
) -> None:
    body = encode_error(request_id, error, _MODERN)
    status = status_for_error(error.code) if status is None else status
    await respond(send, status, body, content_type=JSON)
