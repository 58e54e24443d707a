"""A lean HTTP/1.1 server on trio + h11 that runs an ASGI application.

Why a second HTTP server beside hypercorn: for small MCP requests hypercorn's own
per-request machinery (a task per request, an event queue between the protocol
and the application, a timer per state change) costs more than the MCP call it
carries. This server keeps the HTTP parsing in h11 (no hand-written parser) and
does the rest in one task per connection:

- **One task per connection.** It reads with ``receive_some``, feeds h11, and runs
  the application *in the same task* for each request; a reply written in one go
  (``http.response.start`` then one last body chunk) is one ``send``, framed with
  ``Content-Length`` (an event stream too) rather than chunked.
- **Disconnects.** Once the request body is read, the application's ``receive()``
  reads the socket for EOF (what a streaming response watches for); the end of the
  response wakes it with ``http.disconnect``, as ASGI servers do.
- **Pipelining.** Requests that arrive before the previous reply is written wait in
  h11's buffer (at most :attr:`LeanLimits.max_pipelined_bytes`; beyond it the
  socket is not read until the reply is done) and are answered in order.
- **Limits.** The request line and headers together are at most
  :attr:`LeanLimits.max_header_size` bytes (431) and must arrive within
  :attr:`LeanLimits.header_timeout` seconds of the request's first byte (else the
  connection closes: there is no request to answer yet). An idle keep-alive connection closes after
  :attr:`LeanLimits.keep_alive_timeout`. Body size and body timeout are the
  application's to enforce (it reads the body), as under hypercorn.
- **Expect: 100-continue.** ``100 Continue`` goes out when the application first
  asks for the body, so a request refused on its headers never uploads it.
- **Connection: close** (either side's, or an HTTP/1.0 peer's) ends the connection
  after the response, as h11's state machine says.
- **Graceful shutdown.** :meth:`LeanHttpServer.shutdown` stops accepting, closes
  idle connections, lets requests in progress finish (their responses say
  ``Connection: close``) for :attr:`LeanLimits.graceful_timeout` seconds, then
  cancels them.

Only ``http`` scopes are served (no WebSocket, no lifespan: use hypercorn for
those, and for HTTP/2 and TLS).
"""

from __future__ import annotations

import logging
import math
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from contextlib import suppress
from typing import Any, Final
from urllib.parse import unquote

import attrs
import h11
import trio

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
ASGIApp = Callable[
    [Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
    Awaitable[None],
]

log = logging.getLogger("mcp_actors.http")

_READ_SIZE: Final = 64 * 1024
_ASGI: Final = {"version": "3.0", "spec_version": "2.3"}
#: The headers that say how a response body is framed (lower-cased).
_FRAMING: Final = frozenset({b"content-length", b"transfer-encoding"})
#: Statuses whose responses have no body, hence no framing header.
_NO_BODY: Final = frozenset({204, 304})


def _positive(instance: Any, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < math.inf:
        return
    raise ValueError(f"LeanLimits.{attribute.name} must be a positive finite number: {value!r}")


@attrs.frozen
class LeanLimits:
    """What one connection of the lean server may cost, and how long it may take."""

    #: Request line plus headers, in bytes; beyond it the answer is 431 and the
    #: connection closes.
    max_header_size: int = attrs.field(default=16 * 1024, validator=_positive)
    #: Seconds from a request's first byte until its headers are complete; beyond it the
    #: connection closes.
    header_timeout: float = attrs.field(default=10.0, validator=_positive)
    #: Seconds an idle keep-alive connection waits for its next request before closing.
    keep_alive_timeout: float = attrs.field(default=5.0, validator=_positive)
    #: Bytes of pipelined requests buffered while a response is being written; past
    #: it the connection is not read until that response is done.
    max_pipelined_bytes: int = attrs.field(default=64 * 1024, validator=_positive)
    #: Seconds :meth:`LeanHttpServer.shutdown` lets requests in progress finish.
    graceful_timeout: float = attrs.field(default=5.0, validator=_positive)


class _Closed(Exception):
    """The peer closed the connection, or broke it."""


@attrs.define(eq=False)
class LeanHttpServer:
    """Serves ``app`` on HTTP/1.1 connections. Run :meth:`serve` in a nursery."""

    app: ASGIApp
    limits: LeanLimits = LeanLimits()
    _connections: set[_Connection] = attrs.field(init=False, factory=set)
    _listeners: list[trio.SocketListener] = attrs.field(init=False, factory=list)
    _closing: bool = attrs.field(init=False, default=False)
    _shutdown: trio.Event = attrs.field(init=False, factory=trio.Event)
    _drained: trio.Event = attrs.field(init=False, factory=trio.Event)
    _accepting: trio.CancelScope = attrs.field(init=False, factory=trio.CancelScope)

    async def serve(
        self,
        host: str,
        port: int,
        *,
        sock: socket.socket | None = None,
        task_status: trio.TaskStatus[list[tuple[str, int]]] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Listen on ``host:port`` (0: a free port) until cancelled or shut down;
        ``task_status.started`` reports the bound ``(host, port)`` addresses. ``sock``:
        accept on this listening socket instead (a worker's share of a port)."""
        if sock is None:
            self._listeners = await trio.open_tcp_listeners(port, host=host)
        else:
            self._listeners = [trio.SocketListener(trio.socket.from_stdlib_socket(sock))]
        bound = [listener.socket.getsockname()[:2] for listener in self._listeners]
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._accept, nursery)
            task_status.started([(str(host), int(port)) for host, port in bound])
            await self._shutdown.wait()
            with trio.move_on_after(self.limits.graceful_timeout):
                await self._drained.wait()
            nursery.cancel_scope.cancel()

    async def _accept(self, connections: trio.Nursery) -> None:
        """Accept connections until shutdown, each served in ``connections``."""
        with self._accepting:
            await trio.serve_listeners(
                self._serve_connection, self._listeners, handler_nursery=connections
            )

    async def shutdown(self) -> None:
        """Stop accepting, close idle connections, let requests in progress finish
        (for at most ``graceful_timeout`` seconds); :meth:`serve` then returns."""
        if self._closing:
            return
        self._closing = True
        self._accepting.cancel()
        for listener in self._listeners:
            await listener.aclose()
        for connection in list(self._connections):
            connection.close_if_idle()
        if not self._connections:
            self._drained.set()
        self._shutdown.set()

    @property
    def connections(self) -> int:
        """Connections open now."""
        return len(self._connections)

    async def _serve_connection(self, stream: trio.SocketStream) -> None:
        connection = _Connection(self, stream)
        self._connections.add(connection)
        try:
            await connection.run()
        finally:
            self._connections.discard(connection)
            if self._closing and not self._connections:
                self._drained.set()
            with trio.CancelScope(shield=True):
                await trio.aclose_forcefully(stream)

    @property
    def closing(self) -> bool:
        return self._closing


def _head_size(request: h11.Request) -> int:
    """The size of a request's head as sent (h11 bounds only a head still incomplete)."""
    line = len(request.method) + len(request.target) + 12
    return line + sum(len(name) + len(value) + 4 for name, value in request.headers)


def _peer(stream: trio.SocketStream, side: str) -> tuple[str, int] | None:
    try:
        address = stream.socket.getpeername() if side == "peer" else stream.socket.getsockname()
    except OSError:
        return None
    return str(address[0]), int(address[1])


@attrs.define(eq=False)
class _Connection:
    """One client connection: its h11 state machine and the request being served."""

    server: LeanHttpServer
    stream: trio.SocketStream
    parser: h11.Connection = attrs.field(init=False)
    _idle: bool = attrs.field(init=False, default=True)
    _idle_scope: trio.CancelScope | None = attrs.field(init=False, default=None)
    _eof: bool = attrs.field(init=False, default=False)

    def __attrs_post_init__(self) -> None:
        self.parser = h11.Connection(
            h11.SERVER, max_incomplete_event_size=self.server.limits.max_header_size
        )

    def close_if_idle(self) -> None:
        if self._idle and self._idle_scope is not None:
            self._idle_scope.cancel()

    async def run(self) -> None:
        limits = self.server.limits
        client, local = _peer(self.stream, "peer"), _peer(self.stream, "local")
        while not self.server.closing:
            try:
                event = await self._next_request(limits)
            except _Closed:
                return
            except h11.RemoteProtocolError as error:
                await self.refuse(error.error_status_hint, str(error))
                return
            if event is None:
                return
            self._idle = False
            exchange = _Exchange(self, event, client, local)
            try:
                await exchange.run()
            except _Closed:
                return
            if not exchange.body_complete() or self.parser.our_state is not h11.DONE:
                return  # MUST_CLOSE, an unread body, or a response cut short
            self.parser.start_next_cycle()
            self._idle = True

    async def _next_request(self, limits: LeanLimits) -> h11.Request | None:
        """The next request's head, or None when the connection should close quietly."""
        started: float | None = None
        pending, closed = self.parser.trailing_data
        # Bytes h11 has had for this head: only a head that may exceed the limit is measured.
        received = len(pending)
        waiting = not pending and not closed  # nothing to parse yet: wait for bytes first
        while True:
            if not waiting:
                event = self.parser.next_event()
                if isinstance(event, h11.Request):
                    size = limits.max_header_size
                    if received > size and _head_size(event) > size:
                        await self.refuse(431, "request header fields too large")
                        return None
                    return event
                if isinstance(event, h11.ConnectionClosed):
                    return None
                if event is not h11.NEED_DATA:
                    return None  # PAUSED cannot happen between cycles; anything else: close
                if self.parser.trailing_data[0] or started is not None:
                    started = trio.current_time() if started is None else started
                    deadline = started + limits.header_timeout
                    with trio.move_on_at(deadline):
                        received += await self.feed()
                        continue
                    return None  # too slow: nothing to answer yet (h11 has no request)
            waiting = False
            with trio.move_on_after(limits.keep_alive_timeout) as self._idle_scope:
                received += await self.feed()
                started = trio.current_time()
                continue
            return None  # idle too long, or shutting down

    async def feed(self) -> int:
        """Read what the peer sent into h11 (returns how many bytes); :class:`_Closed`
        if the connection broke."""
        try:
            data = await self.stream.receive_some(_READ_SIZE)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            raise _Closed from None
        if not data:
            self._eof = True
        self.parser.receive_data(data)
        return len(data)

    async def write(self, data: bytes) -> None:
        try:
            await self.stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            raise _Closed from None

    async def refuse(self, status: int, reason: str) -> None:
        """Answer a request we could not read, if it can still be answered; then close."""
        if self.parser.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
            return
        body = f"{status} {reason}\n".encode()
        headers = [
            (b"content-type", b"text/plain; charset=utf-8"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        try:
            data = self.parser.send(h11.Response(status_code=status, headers=headers))
            data = (data or b"") + (self.parser.send(h11.Data(data=body)) or b"")
            data += self.parser.send(h11.EndOfMessage()) or b""
        except h11.LocalProtocolError:
            return
        with trio.move_on_after(1.0), suppress(_Closed):
            await self.write(data)

    @property
    def eof(self) -> bool:
        return self._eof


@attrs.define(eq=False)
class _Exchange:
    """One request and its response: the ASGI ``receive`` and ``send`` of one call."""

    connection: _Connection
    request: h11.Request
    client: tuple[str, int] | None
    local: tuple[str, int] | None
    _body_done: bool = attrs.field(init=False, default=False)
    _response_done: bool = attrs.field(init=False, default=False)
    _disconnected: bool = attrs.field(init=False, default=False)
    _start: Message | None = attrs.field(init=False, default=None)
    _started: bool = attrs.field(init=False, default=False)
    _waiting: trio.CancelScope | None = attrs.field(init=False, default=None)

    def scope(self) -> Scope:
        target = self.request.target
        path, _, query = target.partition(b"?")
        return {
            "type": "http",
            "asgi": _ASGI,
            "http_version": self.request.http_version.decode("ascii"),
            "method": self.request.method.decode("ascii"),
            "scheme": "http",
            "path": unquote(path.decode("latin-1")),
            "raw_path": path,
            "query_string": query,
            "root_path": "",
            "headers": list(self.request.headers),
            "client": self.client,
            "server": self.local,
        }

    async def run(self) -> None:
        try:
            await self.connection.server.app(self.scope(), self.receive, self.send)
        except _Closed:
            raise
        except Exception:
            log.exception("the ASGI application failed on %s", self.request.target)
            if not self._started:
                await self.connection.refuse(500, "Internal Server Error")
            raise _Closed from None
        if not self._response_done:
            if not self._started:
                await self.connection.refuse(500, "the application sent no response")
            raise _Closed  # a response cut short cannot be completed

    def body_complete(self) -> bool:
        """Whether the whole request body has been received, discarding what of it the
        application did not read (it has answered; a body still on its way means the
        connection cannot carry another request)."""
        h11_connection = self.connection.parser
        while not self._body_done:
            try:
                event = h11_connection.next_event()
            except h11.RemoteProtocolError:
                return False
            if isinstance(event, h11.EndOfMessage):
                self._body_done = True
            elif not isinstance(event, h11.Data):
                return False
        return True

    async def receive(self) -> Message:
        connection = self.connection
        while not self._body_done and not self._disconnected:
            try:
                event = connection.parser.next_event()
            except h11.RemoteProtocolError:
                self._disconnected = True
                break
            if isinstance(event, h11.Data):
                return self._body_from(event)
            if isinstance(event, h11.EndOfMessage):
                self._body_done = True
                return {"type": "http.request", "body": b"", "more_body": False}
            if event is h11.NEED_DATA:
                if connection.parser.they_are_waiting_for_100_continue:
                    go_on = h11.InformationalResponse(status_code=100, headers=[])
                    await connection.write(connection.parser.send(go_on) or b"")
                try:
                    await connection.feed()
                except _Closed:
                    self._disconnected = True
                if connection.eof:
                    self._disconnected = True
                continue
            self._disconnected = True  # ConnectionClosed, or a protocol error
        await self._wait_disconnect()
        return {"type": "http.disconnect"}

    def _body_from(self, first: h11.Data) -> Message:
        """The body bytes already received from ``first`` on, in one message: a body
        that came whole (the usual case) is one ``http.request`` with ``more_body``
        false, not two."""
        parser = self.connection.parser
        chunks = [first.data]
        while True:
            try:
                event = parser.next_event()
            except h11.RemoteProtocolError:
                event = None  # the next receive() meets the error again and says so
            if isinstance(event, h11.Data):
                chunks.append(event.data)
                continue
            done = isinstance(event, h11.EndOfMessage)
            self._body_done = done
            if event is not None and not done and event is not h11.NEED_DATA:
                self._disconnected = True  # ConnectionClosed: the body was cut short
            body = bytes(chunks[0]) if len(chunks) == 1 else b"".join(chunks)
            return {"type": "http.request", "body": body, "more_body": not done}

    async def _wait_disconnect(self) -> None:
        """Return once the response is done or the client went away, reading (and
        buffering, up to a bound) what the client sends meanwhile."""
        connection, limit = self.connection, self.connection.server.limits.max_pipelined_bytes
        with trio.CancelScope() as self._waiting:
            while not self._response_done and not self._disconnected:
                if connection.eof or len(connection.parser.trailing_data[0]) > limit:
                    if connection.eof:
                        self._disconnected = True
                        break
                    await trio.sleep_forever()  # woken by the end of the response
                try:
                    await connection.feed()
                except _Closed:
                    self._disconnected = True
        self._waiting = None

    async def send(self, message: Message) -> None:
        """Write a response message; once the client is gone, what is sent is dropped
        and ``receive()`` returns ``http.disconnect``."""
        kind = message["type"]
        connection = self.connection
        if kind == "http.response.start":
            if self._start is not None:
                raise RuntimeError("http.response.start sent twice")
            self._start = message
            return
        if kind != "http.response.body" or self._start is None or self._response_done:
            raise RuntimeError(f"unexpected ASGI message {kind!r}")
        data = b""
        body = message.get("body", b"")
        more = message.get("more_body", False)
        if not self._started:
            self._started = True
            start = self._start
            headers = list(start.get("headers", ()))
            if (
                not more
                and start["status"] not in _NO_BODY
                and self.request.method != b"HEAD"
                and not any(name.lower() in _FRAMING for name, _ in headers)
            ):
                # The whole body in one message: its length is known, no chunked framing.
                headers.append((b"content-length", b"%d" % len(body)))
            if connection.server.closing or not self.body_complete():
                headers.append((b"connection", b"close"))
            data = (
                connection.parser.send(h11.Response(status_code=start["status"], headers=headers))
                or b""
            )
        if body:
            data += connection.parser.send(h11.Data(data=body)) or b""
        if not more:
            data += connection.parser.send(h11.EndOfMessage()) or b""
            self._response_done = True
        if self._disconnected:
            return  # as under other ASGI servers: dropped; receive() says the client left
        try:
            await connection.write(data)
        except _Closed:
            self._disconnected = True
        if (self._response_done or self._disconnected) and self._waiting is not None:
            self._waiting.cancel()
