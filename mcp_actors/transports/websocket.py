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
from contextlib import AsyncExitStack, asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import trio
import trio_websocket
from trio_websocket import ConnectionClosed, WebSocketConnection, WebSocketRequest

from ..protocol.framing import DEFAULT_MAX_MESSAGE_SIZE
from .abc import MessageStream, Outgoing, TransportClosed
from .http.auth import HttpAnswer, HttpAuthHook
from .http.security import HostPolicy

if TYPE_CHECKING:
    import httpx

log = logging.getLogger("mcp_actors.websocket")

SUBPROTOCOL = "mcp"
#: Close codes (RFC 6455 section 7.4.1).
NORMAL_CLOSURE = 1000
PROTOCOL_ERROR = 1002
UNSUPPORTED_DATA = 1003
MESSAGE_TOO_BIG = 1009
#: Seconds a closing end waits for the peer's close frame before it drops the TCP
#: connection anyway (a peer that vanished never answers).
CLOSE_TIMEOUT = 5.0


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
            # Shielded: the session's writer, failing on the closing connection, cancels
            # the session, and a close cut short drops the TCP stream before the peer has
            # read our close frame (it would see 1006 instead of 1003).
            await _close(self.connection, UNSUPPORTED_DATA, "MCP messages are text frames")
            raise TransportClosed("the peer sent a binary frame")
        return message.encode()

    async def send_all(self, messages: Sequence[Outgoing]) -> None:
        try:
            for message in messages:
                await self.connection.send_message(message.payload.decode())
        except ConnectionClosed as closed:
            raise TransportClosed(f"the WebSocket closed ({closed.reason})") from None

    async def aclose(self) -> None:
        await _close(self.connection, NORMAL_CLOSURE)


async def _close(connection: WebSocketConnection, code: int, reason: str | None = None) -> None:
    """The closing handshake, however cancelled the caller is, bounded by CLOSE_TIMEOUT.

    Idempotent: a connection already closed returns at once.
    """
    with trio.CancelScope(shield=True), trio.move_on_after(CLOSE_TIMEOUT):
        await connection.aclose(code, reason)


async def accept_mcp_websocket(
    request: WebSocketRequest, policy: HostPolicy, auth: HttpAuthHook | None = None
) -> WebSocketStream | None:
    """Accept a WebSocket handshake as an MCP connection, or refuse it (returns None).

    With an ``auth`` hook the upgrade request is admitted like any HTTP request (the
    token in its ``Authorization`` header); the stream's principal is its caller.
    """
    headers: dict[str, str] = {}
    for raw_name, raw_value in request.headers:
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    # trio_websocket does not show the Host header; browsers, the only DNS-rebinding
    # vector, always send Origin on a WebSocket handshake, so Origin is what we check
    # (``policy`` is an Origin-only one: see HostPolicy.origins_for_bind).
    refused = policy.check(None, headers.get("origin"))
    if refused is not None:
        await request.reject(403, body=f"Forbidden: {refused}".encode())
        return None
    principal = None
    if auth is not None:
        path, _, query = request.path.partition("?")
        admitted = await auth.check_request("GET", path, headers, query)
        if isinstance(admitted, HttpAnswer):
            extra = [
                (name.encode("latin-1"), value.encode("latin-1"))
                for name, value in admitted.headers
            ]
            await request.reject(admitted.status, extra_headers=extra, body=admitted.body)
            return None
        principal = admitted
    if SUBPROTOCOL not in request.proposed_subprotocols:
        await request.reject(400, body=b"Bad Request: the 'mcp' subprotocol is required")
        return None
    stream = WebSocketStream(await request.accept(subprotocol=SUBPROTOCOL))
    stream.principal = principal
    return stream


class WebSocketRefused(TransportClosed):
    """The server refused the WebSocket handshake (``status_code`` and ``headers``: its
    HTTP answer)."""

    def __init__(
        self,
        url: str,
        status_code: int | None,
        detail: str,
        headers: Sequence[tuple[str, str]] = (),
    ) -> None:
        super().__init__(f"{url}: WebSocket handshake refused: {detail}")
        self.status_code = status_code
        self.headers = list(headers)


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
    closes first or refuses the handshake.) Leaving the block closes the connection
    with the closing handshake, once: the connection's reader task is shielded from
    the block's own cancellation, so that it is still there to read the server's
    close frame (without it the close would wait out :data:`CLOSE_TIMEOUT`).
    Raises :class:`WebSocketRefused`.
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
            connection, reader_scope = await nursery.start(
                partial(
                    _run_client_connection,
                    stream,
                    host_header,
                    resource,
                    subprotocols=list(subprotocols),
                    extra_headers=extra,
                    max_message_size=max_message_size,
                    connect_timeout=connect_timeout,
                )
            )
            try:
                yield connection
            finally:
                await _close(connection, NORMAL_CLOSURE)
                reader_scope.cancel()
    except* trio_websocket.HandshakeError as group:
        # Raised by the connection's reader task, so it arrives in a group.
        error = group.exceptions[0]
        while isinstance(error, BaseExceptionGroup):
            error = error.exceptions[0]
        raw_headers = getattr(error, "headers", None) or ()
        refused = WebSocketRefused(
            url,
            getattr(error, "status_code", None),
            repr(error),
            [(name.decode("latin-1"), value.decode("latin-1")) for name, value in raw_headers],
        )
    finally:
        with trio.CancelScope(shield=True):
            await stream.aclose()
    if refused is not None:
        raise refused


async def _run_client_connection(
    stream: trio.SocketStream | trio.SSLStream[trio.SocketStream],
    host_header: str,
    resource: str,
    *,
    connect_timeout: float,
    task_status: trio.TaskStatus[tuple[WebSocketConnection, trio.CancelScope]],
    **options: Any,
) -> None:
    """Open the WebSocket over ``stream`` and keep its reader task running until the
    returned scope is cancelled. Once the handshake is done the scope is shielded: a
    cancelled caller must still be able to read the server's close frame."""
    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:
            with trio.fail_after(connect_timeout):
                connection = await trio_websocket.wrap_client_stream(
                    nursery, stream, host_header, resource, **options
                )
            scope.shield = True
            task_status.started((connection, scope))
            await trio.sleep_forever()


@asynccontextmanager
async def open_websocket_client(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    connect_timeout: float = 30.0,
    auth: httpx.Auth | None = None,
) -> AsyncIterator[WebSocketStream]:
    """Connect to an MCP WebSocket endpoint such as ``ws://127.0.0.1:8000/mcp``.

    ``auth`` (an ``httpx.Auth``, e.g. an OAuth client) authorizes the upgrade: its
    flow sees the handshake as an HTTP ``GET`` of the same URL (``http(s)://``), puts
    its headers on it and, when the server refuses it (``401``/``403``), gets the
    refusal as the response — and the handshake is tried again with what the flow
    sends next, until the flow is done.
    """
    async with AsyncExitStack() as stack:
        if auth is None:
            connection = await stack.enter_async_context(
                open_websocket(
                    url,
                    subprotocols=[SUBPROTOCOL],
                    headers=headers,
                    max_message_size=max_message_size,
                    connect_timeout=connect_timeout,
                )
            )
        else:
            connection = await _open_authorized(
                stack, url, auth, headers, max_message_size, connect_timeout
            )
        if connection.subprotocol != SUBPROTOCOL:
            await connection.aclose(PROTOCOL_ERROR, "the server did not pick subprotocol mcp")
            raise TransportClosed(f"{url} does not speak the 'mcp' WebSocket subprotocol")
        yield WebSocketStream(connection)


async def _open_authorized(
    stack: AsyncExitStack,
    url: str,
    auth: httpx.Auth,
    headers: Mapping[str, str] | None,
    max_message_size: int,
    connect_timeout: float,
) -> WebSocketConnection:
    """The handshake, authorized by ``auth`` (see :func:`open_websocket_client`)."""
    import httpx

    http_url = "http" + url.removeprefix("ws")  # ws:// -> http://, wss:// -> https://
    flow = auth.async_auth_flow(httpx.Request("GET", http_url, headers=headers))
    try:
        request = await flow.__anext__()
        while True:
            sent = {k: v for k, v in request.headers.items() if k.lower() not in _OWN_HEADERS}
            try:
                return await stack.enter_async_context(
                    open_websocket(
                        url,
                        subprotocols=[SUBPROTOCOL],
                        headers=sent,
                        max_message_size=max_message_size,
                        connect_timeout=connect_timeout,
                    )
                )
            except WebSocketRefused as refused:
                if refused.status_code is None:
                    raise
                answer = httpx.Response(
                    refused.status_code, headers=refused.headers, request=request
                )
                try:
                    request = await flow.asend(answer)
                except StopAsyncIteration:
                    raise refused from None
    finally:
        await flow.aclose()


#: Headers the WebSocket handshake sets itself (never copied from the auth flow's request).
_OWN_HEADERS = {
    "host",
    "connection",
    "upgrade",
    "content-length",
    "accept",
    "accept-encoding",
    "user-agent",
    "sec-websocket-key",
    "sec-websocket-version",
    "sec-websocket-protocol",
}
