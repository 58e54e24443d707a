"""What the HTTP client transports share: the inbox, reading event streams, error answers.

A client transport over HTTP has many concurrent readers (one per request's
response stream, one for the GET stream) feeding one session. They all put
messages into one bounded :class:`Inbox`: when it is full the readers wait, so a
session that falls behind slows the HTTP reads instead of growing memory.

The transports look inside messages only to route them, and decode nothing
themselves: what an outgoing message is comes with it (``Outgoing``, read with
:func:`~mcp_actors.protocol.routing_headers.sent`), and which requests a received
one answers is read by :func:`~mcp_actors.protocol.received.read_answer`. The
session is handed the bytes as the server wrote them (its engine decodes them):
a client stream's reader, a raw peer's included, gets what was on the wire.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from contextlib import suppress

import httpx
import trio

from ...protocol.errors import McpError
from ...protocol.jsonrpc import RequestId, encode_error
from ...protocol.received import error_in_body
from ...protocol.routing_headers import Sent, sent, sent_as_written
from ...protocol.versions import LATEST, REVISIONS
from ..abc import Outgoing, TransportClosed
from .asgi import EVENT_STREAM, JSON, media_types
from .sse import ServerSentEvent, SSEDecoder

log = logging.getLogger("mcp_actors.http.client")

#: JSON-RPC error code for transport failures we report to our own session.
CONNECTION_ERROR = -32000


class Inbox:
    """The bounded queue of received messages a client session reads, each with the
    request of ours on whose response stream it came (None: another stream)."""

    def __init__(self, capacity: int = 256) -> None:
        self._send, self._receive = trio.open_memory_channel[tuple[bytes, RequestId | None]](
            capacity
        )

    async def put(self, data: bytes, related: RequestId | None = None) -> None:
        """Queue one message (waits while full); dropped once the inbox is closed."""
        try:
            await self._send.send((data, related))
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            log.debug("client transport closed: dropped a received message")

    async def get(self) -> bytes:
        return (await self.get_related())[0]

    async def get_related(self) -> tuple[bytes, RequestId | None]:
        """The next message and the request it came for."""
        try:
            return await self._receive.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            raise TransportClosed("the HTTP connection to the server has ended") from None

    def ready(self) -> bool:
        """Whether a message is queued (``get`` would not wait)."""
        return self._receive.statistics().current_buffer_used > 0

    def close(self) -> None:
        """No more messages: the session's reader sees the end after what is queued."""
        self._send.close()


def error_response(request_id: RequestId, error: McpError | str) -> bytes:
    """A JSON-RPC error we hand our own session when a request cannot get its answer:
    the server's own error (``data`` kept), or a transport failure described in words."""
    if isinstance(error, str):
        error = McpError(CONNECTION_ERROR, error)
    return encode_error(request_id, error, REVISIONS[LATEST])


def http_refusal(status: int, headers: httpx.Headers) -> McpError:
    """A refusal with no JSON-RPC error in its body, as the error its request gets:
    ``HTTP 401``, its ``WWW-Authenticate`` challenges kept in ``data`` (what the token
    lacked: words for them in :func:`mcp_actors.auth.challenge.describe_refusal`)."""
    challenges = headers.get_list("www-authenticate")
    data = {"status": status, "wwwAuthenticate": challenges} if challenges else None
    return McpError(CONNECTION_ERROR, f"HTTP {status}", data)


class ResponseChunks:
    """The body of a streaming ``httpx`` response, chunk by chunk, safe to abandon.

    httpx reads through a chain of async generators. Stopping early (a request
    answered, a cancellation) would leave them suspended, and trio warns about
    every such generator when it is garbage collected. :meth:`aclose` closes the
    connection and then steps the chain to its end (at most a second), so the
    resulting read error runs through every generator and finishes it.
    """

    def __init__(self, response: httpx.Response) -> None:
        self._response = response
        self._chunks = response.aiter_bytes()
        self._started = False
        self._done = False

    async def next(self) -> bytes | None:
        """The next chunk, or None at the end of the body."""
        self._started = True
        try:
            return await self._chunks.__anext__()
        except StopAsyncIteration:
            self._done = True
            return None

    async def aclose(self) -> None:
        with trio.CancelScope(shield=True):
            await self._response.aclose()  # at the end of the body: the connection is reused
            if self._started and not self._done:
                self._done = True
                with trio.move_on_after(1), suppress(StopAsyncIteration, httpx.HTTPError):
                    while True:  # a step may still yield what was buffered: to the end
                        await self._chunks.__anext__()


async def read_events(chunks: ResponseChunks, decoder: SSEDecoder) -> list[ServerSentEvent] | None:
    """The events completed by the next chunk (maybe none), or None at the end."""
    chunk = await chunks.next()
    return None if chunk is None else decoder.feed(chunk)


def sent_of(message: Outgoing) -> Sent:
    """What a message we send is: from the facts the runtime sent it with, or, for bytes
    handed over alone (a raw caller's), from the bytes."""
    if message.method is None and message.related_request is None:
        return sent_as_written(message.payload)
    return sent(message.method, message.request_id, message.params)


async def resume_stream(
    client: httpx.AsyncClient, url: str, headers: dict[str, str], last_event_id: str
) -> httpx.Response | int | None:
    """GET with ``Last-Event-ID``: the open stream, an HTTP status it failed with, or None."""
    headers = merge_headers(headers, {"last-event-id": last_event_id})
    try:
        response = await client.send(client.build_request("GET", url, headers=headers), stream=True)
    except httpx.HTTPError as error:
        log.debug("resuming failed: %s", error)
        return None
    content_type = media_types(response.headers.get("content-type"))
    if response.status_code != 200 or EVENT_STREAM not in content_type:
        await response.aclose()
        return response.status_code
    return response


async def open_session(
    client: httpx.AsyncClient, url: str, headers: dict[str, str], initialize: bytes
) -> str | None:
    """POST ``initialize`` to open a new session: its id, or None (logged) if none came."""
    headers = merge_headers(headers, {"content-type": JSON, "content-length": str(len(initialize))})
    try:
        response = await client.post(url, content=RequestBody(initialize), headers=headers)
        body = await response.aread()
    except httpx.HTTPError as error:
        log.warning("renewing the expired session failed: %s", error)
        return None
    new_id: str | None = response.headers.get("mcp-session-id")
    if response.status_code != 200 or not new_id or error_in_body(body) is not None:
        log.warning("renewing the expired session failed: HTTP %s", response.status_code)
        return None
    return new_id


def fresh_decoder(decoder: SSEDecoder) -> SSEDecoder:
    """A decoder for a new connection of the same stream: cursor and delay carry over,
    a half-received event does not."""
    return SSEDecoder(
        decoder.max_event_size, last_event_id=decoder.last_event_id, retry=decoder.retry
    )


def _nothing() -> None:
    pass


class RequestBody:
    """A request body that says when httpx has written it (``on_written``).

    Every POST of ours sends its payload through one (with its ``content-length``
    header): httpx's own body for ``content=bytes`` is an async generator, and a
    request cancelled while it is written leaves that generator to the garbage
    collector, which draws trio's ResourceWarning. Each pass here is an iterator, not
    a generator. A body can be sent more than once: an ``httpx.Auth`` flow (OAuth)
    resends the request after a ``401``, and each pass yields the payload again.
    """

    def __init__(self, payload: bytes, on_written: Callable[[], None] = _nothing) -> None:
        self._payload = payload
        self._on_written = on_written

    def __aiter__(self) -> _BodyPass:
        return _BodyPass(self._payload, self._on_written)


class _BodyPass:
    """One pass over a :class:`RequestBody`: the payload, then ``on_written``."""

    def __init__(self, payload: bytes, on_written: Callable[[], None]) -> None:
        self._payload: bytes | None = payload
        self._on_written = on_written

    def __aiter__(self) -> _BodyPass:
        return self

    async def __anext__(self) -> bytes:
        payload, self._payload = self._payload, None
        if payload is None:
            self._on_written()
            raise StopAsyncIteration
        return payload


def merge_headers(*parts: Mapping[str, str] | None) -> dict[str, str]:
    merged: dict[str, str] = {}
    for part in parts:
        if part:
            merged.update(part)
    return merged


def new_http_client(timeout: float = 30.0, auth: httpx.Auth | None = None) -> httpx.AsyncClient:
    """An ``httpx`` client fit for MCP: no read timeout (event streams are long and quiet;
    the session times requests out itself) and no cap on connections (each open response
    stream holds one; the session bounds how many requests are in flight).

    ``auth`` runs on every request the client sends — e.g. an OAuth client
    (:class:`mcp_actors.auth.client.OAuthClient`) that adds the access token and, on a
    ``401``/``403``, obtains one and sends the request again."""
    return httpx.AsyncClient(
        auth=auth,
        timeout=httpx.Timeout(timeout, read=None),
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=32),
        follow_redirects=False,
    )
