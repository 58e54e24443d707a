"""A lean Streamable HTTP wire for the load generator: raw HTTP/1.1 over keep-alive sockets.

The project's own Streamable HTTP client (httpx) costs milliseconds of CPU per
call, as much as the server it would measure, and sends one POST at a time. This
wire writes pre-built requests on plain TCP connections and parses just what it
must: the status line, ``mcp-session-id``, ``content-length`` or chunked bodies,
and ``data:`` lines of event streams (``text/event-stream``) or a JSON body.

One MCP session, many connections: each message is one POST on an idle
connection (a new one is opened while none is idle, up to ``max_connections``), so
N requests in flight are N POSTs at once, as a real client pipelines over HTTP.
Plain ``http://`` only; other URLs go through :class:`~mcp_actors.bench.wire.StreamWire`.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

import trio

from .wire import BenchError, Connector, Wire, WireClosed

_READ_SIZE = 1 << 16


class _Connection:
    """One keep-alive HTTP/1.1 connection, read incrementally."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.buffer = bytearray()

    async def _fill(self) -> None:
        try:
            data = await self.stream.receive_some(_READ_SIZE)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            data = b""
        if not data:
            raise WireClosed("the server closed an HTTP connection")
        self.buffer += data

    async def head(self) -> tuple[int, dict[bytes, bytes]]:
        while (end := self.buffer.find(b"\r\n\r\n")) < 0:
            await self._fill()
        lines = bytes(self.buffer[:end]).split(b"\r\n")
        del self.buffer[: end + 4]
        try:
            status = int(lines[0].split()[1])
        except (IndexError, ValueError):
            raise BenchError(f"not an HTTP response: {lines[0][:100]!r}") from None
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            headers[name.strip().lower()] = value.strip()
        return status, headers

    async def body(self, headers: dict[bytes, bytes], on_data: Callable[[bytes], None]) -> None:
        """Read the body, handing its bytes to ``on_data`` as they arrive."""
        if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
            while True:
                while (end := self.buffer.find(b"\r\n")) < 0:
                    await self._fill()
                size = int(bytes(self.buffer[:end]).split(b";")[0], 16)
                del self.buffer[: end + 2]
                while len(self.buffer) < size + 2:
                    await self._fill()
                if size == 0:
                    # the last chunk (no trailers expected): consume its CRLF
                    del self.buffer[:2]
                    return
                on_data(bytes(self.buffer[:size]))
                del self.buffer[: size + 2]
        length = int(headers.get(b"content-length", b"0"))
        while len(self.buffer) < length:
            await self._fill()
        if length:
            on_data(bytes(self.buffer[:length]))
            del self.buffer[:length]


class _EventStream:
    """``data:`` payloads of a ``text/event-stream`` body, fed in pieces."""

    def __init__(self, emit: Callable[[bytes], None]) -> None:
        self.emit = emit
        self.pending = b""

    def feed(self, data: bytes) -> None:
        text = (self.pending + data).replace(b"\r\n", b"\n")
        *events, self.pending = text.split(b"\n\n")
        for event in events:
            payload = b"\n".join(
                line[5:].lstrip(b" ") for line in event.split(b"\n") if line.startswith(b"data:")
            )
            if payload.strip():
                self.emit(payload)


class HttpWire(Wire):
    """One MCP session over Streamable HTTP, each message a POST (see the module docstring)."""

    def __init__(
        self,
        url: str,
        nursery: trio.Nursery,
        *,
        pid: int | None = None,
        protocol_version: str = "2025-11-25",
        max_connections: int = 512,
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
        self._nursery = nursery
        self._posts_send, self._posts = trio.open_memory_channel[bytes](math.inf)
        self._inbox_send, self._inbox = trio.open_memory_channel[bytes](math.inf)
        self._workers = 0
        self._idle = 0
        self._failure: BaseException | None = None
        host = f"[{self.host}]" if ":" in self.host else self.host
        self._host_header = f"{host}:{self.port}".encode()

    def _request(self, method: bytes, body: bytes = b"") -> bytes:
        lines = [
            method + b" " + self.path.encode() + b" HTTP/1.1",
            b"Host: " + self._host_header,
            b"Accept: application/json, text/event-stream",
        ]
        if body:
            lines.append(b"Content-Type: application/json")
        if self.session_id is not None:
            lines.append(b"Mcp-Session-Id: " + self.session_id)
            lines.append(b"Mcp-Protocol-Version: " + self.protocol_version.encode())
        lines.append(b"Content-Length: " + str(len(body)).encode())
        return b"\r\n".join(lines) + b"\r\n\r\n" + body

    async def send(self, data: bytes) -> None:
        if self._failure is not None:
            raise WireClosed(str(self._failure))
        for line in data.split(b"\n"):
            if line:
                if self._idle == 0 and self._workers < self.max_connections:
                    self._workers += 1
                    self._idle += 1
                    self._nursery.start_soon(self._worker)
                self._idle -= 1
                self._posts_send.send_nowait(line)

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
        connection: _Connection | None = None
        try:
            async for body in self._posts:
                connection = await self._post(connection, body)
                self._idle += 1
        except (BenchError, OSError, trio.BrokenResourceError) as error:
            self._failure = error
            self._inbox_send.close()
        finally:
            if connection is not None:
                with contextlib.suppress(trio.BrokenResourceError, OSError):
                    await connection.stream.aclose()

    async def _post(self, connection: _Connection | None, body: bytes) -> _Connection | None:
        """POST one message and hand on what comes back; the connection to use next."""
        emit = self._inbox_send.send_nowait
        for attempt in (1, 2):  # a kept-alive connection the server closed: once more
            if connection is None:
                connection = _Connection(await trio.open_tcp_stream(self.host, self.port))
            try:
                await connection.stream.send_all(self._request(b"POST", body))
                status, headers = await connection.head()
                break
            except (WireClosed, trio.BrokenResourceError, OSError):
                await connection.stream.aclose()
                connection = None
                if attempt == 2:
                    raise
        assert connection is not None
        if status >= 400:
            detail = bytearray()
            await connection.body(headers, detail.extend)
            raise BenchError(f"HTTP {status} from the server: {bytes(detail)[:200]!r}")
        if b"mcp-session-id" in headers and self.session_id is None:
            self.session_id = headers[b"mcp-session-id"]
        if headers.get(b"content-type", b"").startswith(b"text/event-stream"):
            await connection.body(headers, _EventStream(emit).feed)
        else:
            await connection.body(headers, lambda data: emit(data) if data.strip() else None)
        if headers.get(b"connection", b"").lower() == b"close":
            await connection.stream.aclose()
            return None
        return connection

    async def aclose(self) -> None:
        """End the session (DELETE, as a polite client does) and the connections."""
        self._posts_send.close()
        if self.session_id is None:
            return
        with trio.move_on_after(2), contextlib.suppress(OSError, trio.BrokenResourceError):
            connection = _Connection(await trio.open_tcp_stream(self.host, self.port))
            try:
                await connection.stream.send_all(self._request(b"DELETE"))
                await connection.head()
            finally:
                await connection.stream.aclose()


def http_connector(
    url: str, *, pid: int | None = None, protocol_version: str = "2025-11-25"
) -> Connector:
    """Each call opens one MCP session over the lean HTTP wire."""

    @asynccontextmanager
    async def connect() -> AsyncIterator[Wire]:
        async with trio.open_nursery() as nursery:
            wire = HttpWire(url, nursery, pid=pid, protocol_version=protocol_version)
            try:
                yield wire
            finally:
                with trio.CancelScope(shield=True):
                    await wire.aclose()
                nursery.cancel_scope.cancel()

    return connect
