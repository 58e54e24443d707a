"""A small keep-alive HTTP/1.1 client on Trio, for tools that call one JSON API many times.

A tool that calls an HTTP API on every call pays the client's cost on every call. A
general client (httpx) builds a request object, a URL object, header mappings and a
response object, and runs its connection pool's bookkeeping through anyio: on
loopback that costs several times what the API itself takes to answer (figures in
``docs/realio-benchmark.md``, from :mod:`benchmarks.realio.client_cost`). This one
does the least a JSON API call needs: the request is one ``bytes`` written on a
pooled connection, the response is parsed by httptools (llhttp) straight into its
status and body.

Bounds: those of :class:`~.kept_connections.KeptConnections` (at most
``max_connections`` connections, ``timeout`` seconds per call, a pooled connection the
server closed replaced once), each failure an :class:`ApiError`; and a response body
over ``max_body`` bytes fails the call.

The connection is HTTP/1.1 keep-alive to one ``host:port``; responses must carry a
``Content-Length`` or be chunked (llhttp handles both).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import TypeVar

import attrs
import trio
from httptools import HttpParserError, HttpResponseParser

from .kept_connections import KeptConnections, Unanswered, nothing, opened, receive

T = TypeVar("T")


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


@attrs.define(eq=False)
class ApiClient:
    """Keep-alive HTTP/1.1 calls to one ``host:port`` (see the module docstring)."""

    host: str
    port: int
    max_connections: int = attrs.field(default=64, validator=attrs.validators.ge(1))
    timeout: float = attrs.field(default=10.0, validator=attrs.validators.gt(0))
    max_body: int = attrs.field(default=1 << 20, validator=attrs.validators.ge(1))
    _connections: KeptConnections[tuple[int, bytes]] = attrs.field(init=False)
    _host_header: bytes = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._connections = KeptConnections(
            self.host,
            self.port,
            "the API",
            ApiError,
            self._read,
            max_connections=self.max_connections,
            timeout=self.timeout,
        )
        self._host_header = f"Host: {self.host}:{self.port}\r\n".encode()

    @property
    def idle_connections(self) -> int:
        """Connections open and waiting in the pool."""
        return self._connections.idle

    async def get(self, target: str) -> bytes:
        """``GET target``'s body (``target``: a path and query, already encoded)."""
        body, _ = await self.get_alongside(target, nothing)
        return body

    async def post_json(self, target: str, body: bytes) -> bytes:
        """``POST target`` with a JSON ``body``; the response's body."""
        answer, _ = await self.post_json_alongside(target, body, nothing)
        return answer

    async def get_alongside(
        self, target: str, meanwhile: Callable[[], Awaitable[T]]
    ) -> tuple[bytes, T]:
        """``GET target``'s body, and what ``meanwhile()`` returned: the request is written,
        ``meanwhile`` awaited in this task while the API works on it, then the response
        read (see :meth:`.KeptConnections.call`)."""
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
        (status, body), other = await self._connections.call(request, meanwhile)
        if not 200 <= status < 300:
            raise ApiError(f"the API answered {status}: {body[:200]!r}")
        return body, other

    async def _read(self, stream: trio.SocketStream) -> tuple[tuple[int, bytes], bool]:
        """One response on ``stream``: its status and body, and whether it keeps the
        connection open."""
        response = _Response(max_body=self.max_body)
        parser = response.parser = HttpResponseParser(response)
        try:
            await self._feed(stream, response, parser)
        finally:
            response.parser = None  # no cycle left for the garbage collector
        return (parser.get_status_code(), bytes(response.body)), response.keep_alive

    @staticmethod
    async def _feed(
        stream: trio.SocketStream, response: _Response, parser: HttpResponseParser
    ) -> None:
        try:
            data = await receive(stream)
        except OSError as error:
            raise Unanswered(f"the API connection broke: {error}") from error
        if not data:
            raise Unanswered("the API closed the connection before answering")
        while True:
            try:
                parser.feed_data(data)
            except HttpParserError as error:
                raise ApiError(f"the API's response is not HTTP: {error}") from error
            if response.complete:
                return
            try:
                data = await receive(stream)
            except OSError as error:
                raise ApiError(f"the API connection broke mid-response: {error}") from error
            if not data:
                raise ApiError("the API closed the connection mid-response")

    async def aclose(self) -> None:
        """Close the pooled connections."""
        await self._connections.aclose()


def open_api(
    host: str, port: int, *, max_connections: int = 64, timeout: float = 10.0
) -> AbstractAsyncContextManager[ApiClient]:
    """An :class:`ApiClient` for the duration of the block (its connections closed after)."""
    return opened(ApiClient(host, port, max_connections=max_connections, timeout=timeout))
