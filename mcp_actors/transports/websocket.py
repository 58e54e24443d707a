"""The WebSocket transport: one JSON-RPC message per text frame, subprotocol ``mcp``.

Both ends are :class:`WebSocketStream` over a ``trio_websocket`` connection.
The client proposes the ``mcp`` subprotocol and refuses a server that does not
pick it; the server refuses (HTTP 400) a client that does not propose it, and
checks ``Origin`` like the HTTP transports (403).

Frames that are not MCP messages close the connection with the WebSocket code
that says why: a binary frame 1003 (unsupported data); a message larger than
``max_message_size`` 1009 (too big, enforced by ``trio_websocket`` before the
message is buffered whole). Malformed JSON in a text frame is not a framing
error: the session answers it with a JSON-RPC parse error and goes on.

Importing this module imports ``trio_websocket``; ``import mcp_actors`` does not.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

import attrs
import trio
import trio_websocket
from trio_websocket import ConnectionClosed, WebSocketConnection, WebSocketRequest

from ..protocol.framing import DEFAULT_MAX_MESSAGE_SIZE
from .abc import MessageStream, Outgoing, TransportClosed
from .http_security import HostPolicy

log = logging.getLogger("mcp_actors.websocket")

SUBPROTOCOL = "mcp"
#: Close codes (RFC 6455 section 7.4.1).
NORMAL_CLOSURE = 1000
PROTOCOL_ERROR = 1002
UNSUPPORTED_DATA = 1003
MESSAGE_TOO_BIG = 1009


class WebSocketStream(MessageStream):
    """A message stream over one WebSocket connection (either end)."""

    def __init__(self, connection: WebSocketConnection) -> None:
        self.connection = connection

    async def receive(self) -> bytes:
        try:
            message = await self.connection.get_message()
        except ConnectionClosed as closed:
            raise TransportClosed(f"the WebSocket closed ({closed.reason})") from None
        if isinstance(message, bytes):
            await self.connection.aclose(UNSUPPORTED_DATA, "MCP messages are text frames")
            raise TransportClosed("the peer sent a binary frame")
        return message.encode()

    async def send_all(self, messages: Sequence[Outgoing]) -> None:
        try:
            for message in messages:
                await self.connection.send_message(message.payload.decode())
        except ConnectionClosed as closed:
            raise TransportClosed(f"the WebSocket closed ({closed.reason})") from None

    async def aclose(self) -> None:
        with trio.CancelScope(shield=True):
            await self.connection.aclose(NORMAL_CLOSURE)


async def accept_mcp_websocket(
    request: WebSocketRequest, policy: HostPolicy
) -> WebSocketStream | None:
    """Accept a WebSocket handshake as an MCP connection, or refuse it (returns None)."""
    headers = {name.decode().lower(): value.decode() for name, value in request.headers}
    # trio_websocket does not show the Host header; browsers, the only DNS-rebinding
    # vector, always send Origin on a WebSocket handshake, so Origin is what we check.
    refused = attrs.evolve(policy, allowed_hosts=None).check(None, headers.get("origin"))
    if refused is not None:
        await request.reject(403, body=f"Forbidden: {refused}".encode())
        return None
    if SUBPROTOCOL not in request.proposed_subprotocols:
        await request.reject(400, body=b"Bad Request: the 'mcp' subprotocol is required")
        return None
    return WebSocketStream(await request.accept(subprotocol=SUBPROTOCOL))


class WebSocketRefused(TransportClosed):
    """The server refused the WebSocket handshake (``status_code``: its HTTP answer)."""

    def __init__(self, url: str, status_code: int | None, detail: str) -> None:
        super().__init__(f"{url}: WebSocket handshake refused: {detail}")
        self.status_code = status_code


@asynccontextmanager
async def open_websocket(
    url: str,
    *,
    subprotocols: Sequence[str] = (),
    headers: Mapping[str, str] | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    connect_timeout: float = 30.0,
) -> AsyncIterator[WebSocketConnection]:
    """A client WebSocket connection that owns its TCP stream and always closes it.

    (``trio_websocket.open_websocket_url`` leaves the socket open when the server
    closes first or refuses the handshake.) Raises :class:`WebSocketRefused`.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("ws", "wss") or not parts.hostname:
        raise ValueError(f"not a WebSocket URL: {url}")
    secure = parts.scheme == "wss"
    host, port = parts.hostname, parts.port or (443 if secure else 80)
    host_header = parts.netloc.rpartition("@")[2]
    resource = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    extra = [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    with trio.fail_after(connect_timeout):
        stream: trio.SocketStream | trio.SSLStream[trio.SocketStream]
        if secure:
            context = ssl.create_default_context()
            stream = await trio.open_ssl_over_tcp_stream(host, port, ssl_context=context)
        else:
            stream = await trio.open_tcp_stream(host, port)
    refused: WebSocketRefused | None = None
    try:
        async with trio.open_nursery() as nursery:
            with trio.fail_after(connect_timeout):
                connection = await trio_websocket.wrap_client_stream(
                    nursery,
                    stream,
                    host_header,
                    resource,
                    subprotocols=list(subprotocols),
                    extra_headers=extra,
                    max_message_size=max_message_size,
                )
            try:
                yield connection
            finally:
                with trio.CancelScope(shield=True), trio.move_on_after(5):
                    await connection.aclose()
                nursery.cancel_scope.cancel()
    except* trio_websocket.HandshakeError as group:
        # Raised by the connection's reader task, so it arrives in a group.
        error = group.exceptions[0]
        refused = WebSocketRefused(url, getattr(error, "status_code", None), repr(error))
    finally:
        with trio.CancelScope(shield=True):
            await stream.aclose()
    if refused is not None:
        raise refused


@asynccontextmanager
async def open_websocket_client(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    connect_timeout: float = 30.0,
) -> AsyncIterator[WebSocketStream]:
    """Connect to an MCP WebSocket endpoint such as ``ws://127.0.0.1:8000/mcp``."""
    async with open_websocket(
        url,
        subprotocols=[SUBPROTOCOL],
        headers=headers,
        max_message_size=max_message_size,
        connect_timeout=connect_timeout,
    ) as connection:
        if connection.subprotocol != SUBPROTOCOL:
            await connection.aclose(PROTOCOL_ERROR, "the server did not pick subprotocol mcp")
            raise TransportClosed(f"{url} does not speak the 'mcp' WebSocket subprotocol")
        yield WebSocketStream(connection)
