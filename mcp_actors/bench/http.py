"""A lean Streamable HTTP wire for the load generator: raw HTTP/1.1 over keep-alive sockets.

The project's own Streamable HTTP client (httpx) costs milliseconds of CPU per
call, as much as the server it would measure, and sends one POST at a time. This
wire writes pre-built requests on plain TCP connections and reads the responses
with maintained parsers, not by hand:

- the HTTP/1.1 framing with httptools (llhttp, the C parser the lean front end
  uses for requests): status, headers, ``content-length``, chunked bodies (chunk
  extensions and trailers included), bodies that end when the server closes, and
  interim ``1xx`` responses, which are skipped;
- ``text/event-stream`` bodies with :class:`~mcp_actors.transports.http.sse.SSEDecoder`
  (every ``data`` payload is one message; empty "priming" events are skipped);
- any other body is one message, handed on once it is complete.

One MCP session, many connections: each message is one POST on an idle
connection (a new one is opened while none is idle, up to ``max_connections``, 32 by
default), so N requests in flight are N POSTs at once, as a real client pipelines over
HTTP; past ``max_connections`` they wait for a connection in the client. The cap keeps
a session's connections under servers' per-client limits (100 on ours) with room for
the other sessions a run opens.
Plain ``http://`` only; other URLs go through :class:`~mcp_actors.bench.wire.StreamWire`.

**Limits.** One response body (a JSON message) or one event of an event stream may
hold at most ``max_message_bytes`` (64 MiB by default): past that the wire fails
with :class:`~mcp_actors.bench.wire.BenchError`, as it does for a response that is
not HTTP. The POSTs waiting for a connection and the messages waiting for the peer
are not bounded here: the load loops above bound them (a closed loop has at most
its depth in flight).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Final
from urllib.parse import urlsplit

import msgspec
import trio
from httptools import HttpParserError, HttpParserUpgrade, HttpResponseParser

from ..protocol.errors import INTERNAL_ERROR
from ..protocol.jsonrpc import JSONRPC_VERSION, ErrorMessage, ErrorObject, peek
from ..protocol.routing_headers import client_headers, sent_as_written
from ..transports.http.sse import EventTooLarge, SSEDecoder
from .wire import BenchError, Connector, Wire, WireClosed, cut_short

_READ_SIZE: Final = 1 << 16
#: The default of ``max_connections``: connections one session opens at most.
DEFAULT_MAX_CONNECTIONS: Final = 32
#: Idle connections a connector's sessions hand on at most (:class:`ConnectionPool`).
DEFAULT_POOL_SIZE: Final = 256
#: The default of ``max_message_bytes``: one response body or one event.
DEFAULT_MAX_MESSAGE_BYTES: Final = 64 * 1024 * 1024


class _Response:
    """What llhttp reported of the response being read (the parser's callback object).

    The callbacks only record: headers into a dict, body pieces into a list; the
    connection reads them between two feeds, so nothing is raised inside llhttp.
    """

    def __init__(self) -> None:
        self.parser = HttpResponseParser(self)
        self.status = 0
        self.headers: dict[bytes, bytes] = {}
        self.head_done = False
        self.complete = False
        self.keep_alive = False
        self.pieces: list[bytes] = []

    def on_message_begin(self) -> None:
        self.status = 0
        self.headers = {}
        self.head_done = self.complete = self.keep_alive = False
        self.pieces = []

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers[name.lower()] = value

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        self.head_done = True

    def on_body(self, body: bytes) -> None:
        self.pieces.append(body)

    def on_message_complete(self) -> None:
        self.complete = True
        # asked now: once the message is over, llhttp no longer knows
        self.keep_alive = self.parser.should_keep_alive()

    @property
    def ends_at_close(self) -> bool:
        """Whether the body has no length and no chunks: it ends when the server closes."""
        chunked = b"chunked" in self.headers.get(b"transfer-encoding", b"").lower()
        return not chunked and b"content-length" not in self.headers

    def take_pieces(self) -> list[bytes]:
        pieces = self.pieces
        self.pieces = []
        return pieces


class _Connection:
    """One keep-alive HTTP/1.1 connection: one request written, its response read."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self._response = _Response()

    async def _fill(self) -> bool:
        """Feed the parser what arrived; False when the server closed the connection."""
        try:
            data = await self.stream.receive_some(_READ_SIZE)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            data = b""
        if not data:
            return False
        try:
            self._response.parser.feed_data(data)
        except (HttpParserError, HttpParserUpgrade) as error:
            raise BenchError(f"not an HTTP response ({error}): {data[:100]!r}") from None
        return True

    async def request(self, data: bytes) -> tuple[int, dict[bytes, bytes]]:
        """Write one request; the status and (lower-cased) headers of its final response
        (interim ``1xx`` responses are skipped)."""
        response = self._response
        response.on_message_begin()  # forget the previous exchange's response
        await self.stream.send_all(data)
        while not (response.head_done and response.status >= 200):
            if response.complete:  # an interim 1xx response, over: the real one follows
                response.on_message_begin()
            if not await self._fill():
                raise WireClosed("the server closed an HTTP connection")
        return response.status, response.headers

    async def body(self, on_data: Callable[[bytes], None]) -> None:
        """Read the body, handing its bytes to ``on_data`` as they arrive."""
        response = self._response
        while True:
            for piece in response.take_pieces():
                on_data(piece)
            if response.complete:
                return
            if not await self._fill():
                if response.ends_at_close:
                    response.complete = True
                    continue
                raise WireClosed("the server closed an HTTP connection mid-response")

    @property
    def reusable(self) -> bool:
        """Whether the server keeps the connection open for another request."""
        return self._response.keep_alive


class _Body:
    """A response body that is one message: gathered, then handed on whole."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.pieces: list[bytes] = []
        self.size = 0

    def feed(self, data: bytes) -> None:
        self.size += len(data)
        if self.size > self.limit:
            raise BenchError(f"a response body exceeds the {self.limit}-byte limit")
        self.pieces.append(data)

    def message(self) -> bytes:
        return self.pieces[0] if len(self.pieces) == 1 else b"".join(self.pieces)


class _Events:
    """A ``text/event-stream`` body: each event's ``data`` is one message."""

    def __init__(self, emit: Callable[[bytes], None], limit: int) -> None:
        self.emit = emit
        self.decoder = SSEDecoder(limit)

    def feed(self, data: bytes) -> None:
        try:
            events = self.decoder.feed(data)
        except EventTooLarge as error:
            raise BenchError(str(error)) from None
        for event in events:
            if event.data.strip():
                self.emit(event.data)


class ConnectionPool:
    """Idle keep-alive connections that the sessions of one connector hand on.

    A session that ends gives its connections back; the next session takes them
    instead of connecting again, as a browser or k6's virtual user keeps its
    connection across sessions (a session per iteration would otherwise measure TCP
    set-up as much as MCP). At most ``size`` idle connections are kept: one more is
    closed. A connection is given back only from a session that ended cleanly (not
    one cut mid-request), and only if the server kept it alive. When the last open
    session closes, the idle connections are closed too (:meth:`leave`): the pool
    lives while some session does.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.sessions = 0
        self._idle: list[_Connection] = []

    async def leave(self) -> None:
        """A session closed; the last one closes the idle connections."""
        self.sessions -= 1
        if self.sessions == 0:
            idle, self._idle = self._idle, []
            for connection in idle:
                with contextlib.suppress(trio.BrokenResourceError, OSError):
                    await connection.stream.aclose()

    def take(self) -> _Connection | None:
        return self._idle.pop() if self._idle else None

    def give(self, connection: _Connection) -> bool:
        """Keep ``connection`` for the next session; False if it cannot be (closed)."""
        if len(self._idle) >= self.size or not connection.reusable:
            return False
        self._idle.append(connection)
        return True


class HttpWire(Wire):
    """One MCP session over Streamable HTTP, each message a POST (see the module docstring)."""

    def __init__(
        self,
        url: str,
        nursery: trio.Nursery,
        *,
        pid: int | None = None,
        protocol_version: str = "2025-11-25",
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        headers: Mapping[str, str] | None = None,
        pool: ConnectionPool | None = None,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme != "http" or parts.hostname is None:
            raise BenchError(f"{url}: the lean HTTP wire speaks plain http:// only")
        self.host = parts.hostname
        self.port = parts.port or 80
        self.path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self.pid = pid
        self.protocol_version = protocol_version
        self.session_id: bytes | None = None
        self.max_connections = max_connections
        self.max_message_bytes = max_message_bytes
        self._nursery = nursery
        #: What the connections' workers send: a message to POST (``b""``: the DELETE
        #: ending the session), and the event to set once it is answered (None: not awaited).
        self._posts_send, self._posts = trio.open_memory_channel[tuple[bytes, trio.Event | None]](
            math.inf
        )
        self._awaited: set[trio.Event] = set()
        self._pool = pool if pool is not None else ConnectionPool(0)
        self._workers_done = trio.Event()
        self._inbox_send, self._inbox = trio.open_memory_channel[bytes](math.inf)
        self._workers = 0
        self._idle = 0
        self._failure: BaseException | None = None
        host = f"[{self.host}]" if ":" in self.host else self.host
        self._host_header = f"{host}:{self.port}".encode()
        #: Headers every request carries (an ``Authorization``...).
        self._extra = [f"{name}: {value}".encode() for name, value in (headers or {}).items()]

    def agreed(self, version: str, *, modern: bool) -> None:
        super().agreed(version, modern=modern)
        self.protocol_version = version

    def _request(self, method: bytes, body: bytes = b"") -> bytes:
        lines = [
            method + b" " + self.path.encode() + b" HTTP/1.1",
            b"Host: " + self._host_header,
            b"Accept: application/json, text/event-stream",
            *self._extra,
        ]
        if body:
            lines.append(b"Content-Type: application/json")
        message = sent_as_written(body) if body else None
        if message is not None and message.protocol_version is not None:
            # a modern request: its routing headers mirror the body (no session)
            headers = client_headers(message, message.protocol_version, None)
            lines += [f"{name}: {value}".encode() for name, value in headers.items()]
        elif self.session_id is not None:
            lines.append(b"Mcp-Session-Id: " + self.session_id)
            lines.append(b"Mcp-Protocol-Version: " + self.protocol_version.encode())
        lines.append(b"Content-Length: " + str(len(body)).encode())
        return b"\r\n".join(lines) + b"\r\n\r\n" + body

    async def send(self, data: bytes) -> None:
        """POST each message; a notification's POST is awaited (as a sequential client,
        k6's for one, does: the next message then reuses its connection)."""
        awaited = []
        for line in data.split(b"\n"):
            if line:
                done = trio.Event() if b'"id":' not in line else None
                self._enqueue(line, done)
                if done is not None:
                    awaited.append(done)
        for done in awaited:
            await done.wait()
        if self._failure is not None:
            raise WireClosed(str(self._failure))

    def _enqueue(self, body: bytes, done: trio.Event | None) -> None:
        if self._failure is not None:
            raise WireClosed(str(self._failure))
        if self._idle == 0 and self._workers < self.max_connections:
            self._workers += 1
            self._idle += 1
            self._nursery.start_soon(self._worker)
        self._idle -= 1
        if done is not None:
            self._awaited.add(done)
        self._posts_send.send_nowait((body, done))

    async def receive(self) -> list[bytes]:
        try:
            messages = [await self._inbox.receive()]
        except trio.EndOfChannel:
            raise WireClosed(str(self._failure or "the HTTP wire closed")) from None
        while True:
            try:
                messages.append(self._inbox.receive_nowait())
            except (trio.WouldBlock, trio.EndOfChannel):
                return messages

    async def _worker(self) -> None:
        connection = self._pool.take()
        ended = False  # the session ended (not the wire failed or was cancelled)
        try:
            async for body, done in self._posts:
                try:
                    connection = await self._post(connection, body)
                finally:
                    if done is not None:
                        self._awaited.discard(done)
                        done.set()
                self._idle += 1
            ended = True
        except (BenchError, OSError, trio.BrokenResourceError) as error:
            self._failure = error
            self._inbox_send.close()
            for done in self._awaited:
                done.set()
        finally:
            self._workers -= 1
            if not self._workers:
                self._workers_done.set()
            if connection is not None and not (ended and self._pool.give(connection)):
                with contextlib.suppress(trio.BrokenResourceError, OSError):
                    await connection.stream.aclose()

    async def _post(self, connection: _Connection | None, body: bytes) -> _Connection | None:
        """POST one message (``b""``: DELETE the session) and hand on what comes back;
        the connection to use next."""
        emit = self._inbox_send.send_nowait
        request = self._request(b"POST", body) if body else self._request(b"DELETE")
        for attempt in (1, 2):  # a kept-alive connection the server closed: once more
            if connection is None:
                connection = _Connection(await trio.open_tcp_stream(self.host, self.port))
            try:
                status, headers = await connection.request(request)
                break
            except (WireClosed, trio.BrokenResourceError, OSError):
                await connection.stream.aclose()
                connection = None
                if attempt == 2:
                    raise
        assert connection is not None
        limit = self.max_message_bytes
        if not body:  # the DELETE's answer says nothing we use
            await connection.body(_Body(limit).feed)
        elif status >= 400:
            detail = _Body(limit)
            await connection.body(detail.feed)
            emit(_refusal(status, body, detail.message()))
            return connection if connection.reusable else None
        if b"mcp-session-id" in headers and self.session_id is None:
            self.session_id = headers[b"mcp-session-id"]
        if headers.get(b"content-type", b"").startswith(b"text/event-stream"):
            await connection.body(_Events(emit, limit).feed)
        else:
            whole = _Body(limit)
            await connection.body(whole.feed)
            if (message := whole.message()).strip():
                emit(message)
        if not connection.reusable:
            await connection.stream.aclose()
            return None
        return connection

    async def aclose(self) -> None:
        """End the session (DELETE on a kept-alive connection, as a polite client does;
        2 s at most) and the connections."""
        if self.session_id is not None and self._failure is None:
            done = trio.Event()
            self._enqueue(b"", done)
            with trio.move_on_after(2):
                await done.wait()
        self._posts_send.close()
        if self._workers:  # each hands its connection back to the pool as it ends
            with trio.move_on_after(2):
                await self._workers_done.wait()


def _refusal(status: int, request: bytes, answer: bytes) -> bytes:
    """The message an HTTP error status stands for: the JSON-RPC error its body carries
    (a modern server answers a bad request with ``400`` and one), else an error made up
    for the request (``-32603``, the status and the start of the body); a refused
    notification or response, which no one awaits, is a :class:`BenchError`."""
    if peek(_ERROR_REPLY, answer) is not None:
        return answer
    sent = sent_as_written(request)
    if not sent.request_ids:
        raise BenchError(f"HTTP {status} from the server: {answer[:200]!r}")
    text = f"HTTP {status} from the server: {answer[:200].decode(errors='replace')}"
    error = ErrorMessage(JSONRPC_VERSION, sent.request_ids[0], ErrorObject(INTERNAL_ERROR, text))
    return msgspec.json.encode(error)


class _ErrorReply(msgspec.Struct):
    """A JSON-RPC error response, as much as :func:`_refusal` checks of one."""

    jsonrpc: str
    id: int | str | None
    error: ErrorObject


_ERROR_REPLY: Final = msgspec.json.Decoder(_ErrorReply)


def http_connector(
    url: str,
    *,
    pid: int | None = None,
    protocol_version: str = "2025-11-25",
    headers: Mapping[str, str] | None = None,
    pool_size: int = DEFAULT_POOL_SIZE,
) -> Connector:
    """Each call opens one MCP session over the lean HTTP wire; the sessions share a
    :class:`ConnectionPool` of ``pool_size`` idle connections."""
    pool = ConnectionPool(pool_size)

    @asynccontextmanager
    async def connect() -> AsyncIterator[Wire]:
        pool.sessions += 1
        try:
            async with trio.open_nursery() as nursery:
                wire = HttpWire(
                    url,
                    nursery,
                    pid=pid,
                    protocol_version=protocol_version,
                    headers=headers,
                    pool=pool,
                )
                polite = True
                try:
                    yield wire
                except BaseException as error:
                    polite = not cut_short(error)  # a deadline cut it: no DELETE
                    raise
                finally:
                    if polite:
                        with trio.CancelScope(shield=True):
                            await wire.aclose()
                    nursery.cancel_scope.cancel()
        finally:
            with trio.CancelScope(shield=True):
                await pool.leave()

    return connect
