"""A small keep-alive HTTP/1.1 client on Trio, for tools that call one JSON API many times.

A tool that calls an HTTP API on every call pays the client's cost on every call. A
general client (httpx) builds a request object, a URL object, header mappings and a
response object, and runs its connection pool's bookkeeping through anyio: on
loopback that costs several times what the API itself takes to answer (figures in
``docs/realio-benchmark.md``, from :mod:`benchmarks.realio.client_cost`). This one
does the least a JSON API call needs: the request is one ``bytes`` written on a
pooled connection, the response is parsed by httptools (llhttp) straight into its
status and body.

Bounds, and what happens at each:

- at most ``max_connections`` connections are open: a call beyond them waits for one
  to come back to the pool (within its ``timeout``);
- every call (waiting for a connection, connecting, writing, reading) has ``timeout``
  seconds, else :class:`ApiError`; a call cancelled or failed mid-way closes its
  connection instead of pooling it (the next caller would read a stale reply);
- a response body over ``max_body`` bytes fails the call (:class:`ApiError`);
- a pooled connection the server closed is noticed on the next write or read: the
  call retries once on a fresh connection when nothing of the response was read.

The connection is HTTP/1.1 keep-alive to one ``host:port``; responses must carry a
``Content-Length`` or be chunked (llhttp handles both).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Final, TypeVar

import attrs
import trio
from httptools import HttpParserError, HttpResponseParser

_READ: Final = 65536
T = TypeVar("T")


async def _nothing() -> None:
    """What a call made alone does meanwhile."""


class ApiError(Exception):
    """The API could not be reached, timed out, or answered with a status other than 2xx."""


@attrs.define(eq=False)
class _Response:
    """httptools' callbacks for one response."""

    body: bytearray = attrs.field(factory=bytearray)
    complete: bool = False
    #: Read when the message completes: llhttp forgets it once it has reset for the next.
    keep_alive: bool = False
    max_body: int = 0
    parser: HttpResponseParser | None = None

    def on_body(self, data: bytes) -> None:
        self.body += data
        if len(self.body) > self.max_body:
            raise ApiError(f"the API's response is over {self.max_body} bytes")

    def on_message_complete(self) -> None:
        self.complete = True
        if self.parser is not None:
            self.keep_alive = self.parser.should_keep_alive()


class _Unanswered(ApiError):
    """The connection broke before any byte of the response came: on a pooled
    connection, the server had closed it while idle."""


@attrs.define(eq=False)
class ApiClient:
    """Keep-alive HTTP/1.1 calls to one ``host:port`` (see the module docstring)."""

    host: str
    port: int
    max_connections: int = attrs.field(default=64, validator=attrs.validators.ge(1))
    timeout: float = attrs.field(default=10.0, validator=attrs.validators.gt(0))
    max_body: int = attrs.field(default=1 << 20, validator=attrs.validators.ge(1))
    _idle: list[trio.SocketStream] = attrs.field(init=False, factory=list)
    _slots: trio.Semaphore = attrs.field(init=False)
    _host_header: bytes = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._slots = trio.Semaphore(self.max_connections)
        self._host_header = f"Host: {self.host}:{self.port}\r\n".encode()

    @property
    def idle_connections(self) -> int:
        """Connections open and waiting in the pool."""
        return len(self._idle)

    async def get(self, target: str) -> bytes:
        """``GET target``'s body (``target``: a path and query, already encoded)."""
        body, _ = await self.get_alongside(target, _nothing)
        return body

    async def post_json(self, target: str, body: bytes) -> bytes:
        """``POST target`` with a JSON ``body``; the response's body."""
        answer, _ = await self.post_json_alongside(target, body, _nothing)
        return answer

    async def get_alongside(
        self, target: str, meanwhile: Callable[[], Awaitable[T]]
    ) -> tuple[bytes, T]:
        """``GET target``'s body, and what ``meanwhile()`` returned: the request is written,
        ``meanwhile`` awaited in this task while the API works on it, then the response
        read. Two backends at once, without a second task (see :meth:`_call`)."""
        request = b"GET %s HTTP/1.1\r\n%s\r\n" % (target.encode(), self._host_header)
        return await self._call(request, meanwhile)

    async def post_json_alongside(
        self, target: str, body: bytes, meanwhile: Callable[[], Awaitable[T]]
    ) -> tuple[bytes, T]:
        """``POST target`` with a JSON ``body``, alongside ``meanwhile()`` (as
        :meth:`get_alongside`)."""
        head = b"POST %s HTTP/1.1\r\n%sContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
        request = head % (target.encode(), self._host_header, len(body)) + body
        return await self._call(request, meanwhile)

    async def _call(self, request: bytes, meanwhile: Callable[[], Awaitable[T]]) -> tuple[bytes, T]:
        """Write ``request``, await ``meanwhile()``, read the response. If ``meanwhile``
        fails or is cancelled, the connection is closed (its response is never read) and
        the error raised. A pooled connection the server had closed is replaced once."""
        with trio.move_on_after(self.timeout):
            async with self._slots:
                pooled = bool(self._idle)
                stream = self._idle.pop() if pooled else await self._connect()
                sent = await self._send(stream, request)
                try:
                    other = await meanwhile()
                except BaseException:
                    await trio.aclose_forcefully(stream)
                    raise
                if sent:
                    try:
                        return await self._receive(stream), other
                    except _Unanswered:
                        if not pooled:
                            raise
                elif not pooled:
                    raise ApiError("the API connection broke before the request was sent")
                stream = await self._connect()  # the pooled one had been closed: once more
                if not await self._send(stream, request):
                    raise ApiError("the API connection broke before the request was sent")
                return await self._receive(stream), other
        raise ApiError(f"the API call did not finish within {self.timeout}s")

    async def _connect(self) -> trio.SocketStream:
        try:
            return await trio.open_tcp_stream(self.host, self.port)
        except OSError as error:
            raise ApiError(
                f"cannot connect to the API at {self.host}:{self.port}: {error}"
            ) from error

    @staticmethod
    async def _send(stream: trio.SocketStream, request: bytes) -> bool:
        """Write ``request``; False (``stream`` closed) if the connection is broken."""
        try:
            await stream.send_all(request)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            await trio.aclose_forcefully(stream)
            return False
        return True

    async def _receive(self, stream: trio.SocketStream) -> bytes:
        """Read the response on ``stream``; pool ``stream`` after, or close it."""
        response = _Response(max_body=self.max_body)
        parser = response.parser = HttpResponseParser(response)
        try:
            await self._read(stream, response, parser)
        except BaseException:
            await trio.aclose_forcefully(stream)  # half-read: never reused
            raise
        finally:
            response.parser = None  # no cycle left for the garbage collector
        if response.keep_alive:
            self._idle.append(stream)
        else:
            await stream.aclose()
        status = parser.get_status_code()
        if not 200 <= status < 300:
            raise ApiError(f"the API answered {status}: {bytes(response.body[:200])!r}")
        return bytes(response.body)

    @staticmethod
    async def _read(
        stream: trio.SocketStream, response: _Response, parser: HttpResponseParser
    ) -> None:
        try:
            data = await stream.receive_some(_READ)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as error:
            raise _Unanswered(f"the API connection broke: {error}") from error
        if not data:
            raise _Unanswered("the API closed the connection before answering")
        while True:
            try:
                parser.feed_data(data)
            except HttpParserError as error:
                raise ApiError(f"the API's response is not HTTP: {error}") from error
            if response.complete:
                return
            try:
                data = await stream.receive_some(_READ)
            except trio.BrokenResourceError as error:
                raise ApiError(f"the API connection broke mid-response: {error}") from error
            if not data:
                raise ApiError("the API closed the connection mid-response")

    async def aclose(self) -> None:
        """Close the pooled connections."""
        idle, self._idle = self._idle, []
        for stream in idle:
            await stream.aclose()


@asynccontextmanager
async def open_api(
    host: str, port: int, *, max_connections: int = 64, timeout: float = 10.0
) -> AsyncIterator[ApiClient]:
    """An :class:`ApiClient` for the duration of the block (its connections closed after)."""
    client = ApiClient(host, port, max_connections=max_connections, timeout=timeout)
    try:
        yield client
    finally:
        with trio.CancelScope(shield=True):
            await client.aclose()
