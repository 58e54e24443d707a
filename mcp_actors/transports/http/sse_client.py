"""The legacy HTTP+SSE transport (2024-11-05), client side.

The client GETs the server's SSE URL and waits for the ``endpoint`` event, which
names the URL to POST messages to (resolved against the SSE URL, and refused if
it leaves that origin). Server messages arrive as ``message`` events on the
stream; each client message is one POST (``202 Accepted``). The session ends
with the stream.

:class:`LegacySseConnection` is that exchange on an ``httpx`` client; the
Streamable HTTP client falls back to it, and :func:`open_sse_client` wraps it as
a :class:`~mcp_actors.transports.abc.MessageStream` of its own.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from urllib.parse import urljoin, urlsplit

import httpx
import trio

from ...protocol.errors import McpError
from ...protocol.jsonrpc import RequestId
from ...protocol.received import error_in_body
from ..abc import MessageStream, Outgoing, TransportClosed
from .asgi import EVENT_STREAM, JSON, media_types
from .client_base import (
    Inbox,
    RequestBody,
    ResponseChunks,
    error_response,
    merge_headers,
    new_http_client,
    read_events,
    sent_of,
)
from .sse import DEFAULT_MAX_EVENT_SIZE, EventTooLarge, ServerSentEvent, SSEDecoder

log = logging.getLogger("mcp_actors.http.client")


class LegacySseError(TransportClosed):
    """The server did not open a legacy SSE session (no stream, or no ``endpoint`` event)."""


class LegacySseConnection:
    """One legacy SSE session: the event stream feeds ``inbox``; :meth:`post` sends."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        url: str,
        inbox: Inbox,
        *,
        headers: Mapping[str, str] | None = None,
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
    ) -> None:
        self.client = client
        self.url = url
        self.inbox = inbox
        self.headers = dict(headers or {})
        self.max_event_size = max_event_size
        #: Where messages are POSTed, once the ``endpoint`` event has said.
        self.endpoint: str | None = None

    async def run(self, *, task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
        """Open the stream, report the endpoint, then deliver messages until it ends.

        Raises :class:`LegacySseError` (before reporting) if no session opens. When the
        stream ends the inbox is closed: the session is over.
        """
        headers = merge_headers(self.headers, {"accept": EVENT_STREAM})
        try:
            async with self.client.stream("GET", self.url, headers=headers) as response:
                content_type = media_types(response.headers.get("content-type"))
                if response.status_code != 200 or EVENT_STREAM not in content_type:
                    raise LegacySseError(
                        f"GET {self.url}: {response.status_code}, not an SSE stream"
                    )
                await self._read(response, task_status)
        except (httpx.HTTPError, EventTooLarge) as error:
            if self.endpoint is None:
                raise LegacySseError(f"GET {self.url}: {error}") from error
            log.info("legacy SSE stream ended: %s", error)
        finally:
            if self.endpoint is not None:
                self.inbox.close()
        if self.endpoint is None:
            raise LegacySseError(f"GET {self.url}: the stream ended without an endpoint event")

    async def _read(self, response: httpx.Response, task_status: trio.TaskStatus[str]) -> None:
        decoder = SSEDecoder(self.max_event_size)
        chunks = ResponseChunks(response)
        try:
            while (events := await read_events(chunks, decoder)) is not None:
                await self._handle(events, task_status)
        finally:
            await chunks.aclose()

    async def _handle(
        self, events: list[ServerSentEvent], task_status: trio.TaskStatus[str]
    ) -> None:
        for event in events:
            if event.event == "endpoint" and self.endpoint is None:
                endpoint = urljoin(self.url, event.data.decode().strip())
                if _origin(endpoint) != _origin(self.url):
                    raise LegacySseError(f"endpoint {endpoint} leaves the server's origin")
                self.endpoint = endpoint
                task_status.started(endpoint)
            elif event.event == "message" and event.data.strip():
                await self.inbox.put(event.data)

    async def post(self, payload: bytes, request_ids: Iterable[RequestId] = ()) -> None:
        """POST one message; the requests it carries (``request_ids``) are answered with an
        error if it cannot be delivered."""
        assert self.endpoint is not None, "post() before run() reported the endpoint"
        headers = merge_headers(
            self.headers, {"content-type": JSON, "content-length": str(len(payload))}
        )
        problem: McpError | str | None = None
        try:
            response = await self.client.post(
                self.endpoint, content=RequestBody(payload), headers=headers
            )
            if response.status_code >= 400:
                found = error_in_body(response.content)
                problem = found if found is not None else f"HTTP {response.status_code}"
        except httpx.HTTPError as error:
            problem = f"cannot reach {self.endpoint}: {error}"
        if problem is not None:
            log.warning("legacy SSE POST failed: %s", problem)
            for request_id in request_ids:
                await self.inbox.put(error_response(request_id, problem))


class SseClientStream(MessageStream):
    """A legacy SSE session as a message stream (see :func:`open_sse_client`)."""

    legacy_only = True

    def __init__(self, connection: LegacySseConnection) -> None:
        self._connection = connection
        self._closed = False

    def input_ready(self) -> bool:
        return self._connection.inbox.ready()

    async def receive(self) -> bytes:
        return await self._connection.inbox.get()

    async def send_all(self, messages: Sequence[Outgoing]) -> None:
        if self._closed:
            raise TransportClosed("the SSE client stream is closed")
        for message in messages:
            await self._connection.post(message.payload, sent_of(message).request_ids)

    async def aclose(self) -> None:
        self._closed = True
        self._connection.inbox.close()
        await trio.lowlevel.checkpoint()


@asynccontextmanager
async def open_sse_client(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    http_client: httpx.AsyncClient | None = None,
    timeout: float = 30.0,
    auth: httpx.Auth | None = None,
    max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
) -> AsyncIterator[SseClientStream]:
    """Connect to a legacy (2024-11-05) SSE endpoint such as ``http://host:port/sse``.

    ``auth`` (an ``httpx.Auth``, e.g. an OAuth client) runs on every request.
    Raises :class:`LegacySseError` if the server opens no session. Leaving the
    block closes the event stream, which ends the session on the server.
    """
    refused: LegacySseError | None = None
    async with AsyncExitStack() as stack:
        client = http_client
        if client is None:
            client = await stack.enter_async_context(new_http_client(timeout, auth))
        nursery = await stack.enter_async_context(trio.open_nursery())
        connection = LegacySseConnection(
            client, url, Inbox(), headers=headers, max_event_size=max_event_size
        )
        try:
            await nursery.start(connection.run)
        except LegacySseError as error:
            refused = error  # raised below, outside the nursery: as itself, not in a group
        else:
            stream = SseClientStream(connection)
            try:
                yield stream
            finally:
                with trio.CancelScope(shield=True):  # an error leaving the block must not be
                    await stream.aclose()  # replaced by the Cancelled of a cancelled caller
                nursery.cancel_scope.cancel()
    if refused is not None:
        raise refused


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc
