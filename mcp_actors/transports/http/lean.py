"""A lean HTTP/1.1 server on trio + httptools that runs an ASGI application.

Why a second HTTP server beside hypercorn: for small MCP requests hypercorn's own
per-request machinery (a task per request, an event queue between the protocol
and the application, a timer per state change) costs more than the MCP call it
carries. This server parses requests with httptools (llhttp, the C parser of
Node.js and uvicorn: no hand-written parser) and does the rest in one task per
connection:

- **One task per connection.** It reads with ``receive_some``, feeds the parser,
  and runs the application *in the same task* for each request; a reply written in
  one go (``http.response.start`` then one last body chunk) is one ``send``, framed
  with ``Content-Length`` (an event stream too) rather than chunked.
- **Requests as the parser reports them** (:mod:`.wire`): one
  :class:`~.wire.Request` per message, queued in arrival order, so a request
  pipelined behind another in the same read waits its turn whole.
- **Responses written here**, their heads by :mod:`.wire` (the application's
  headers checked: a name must be a token, a value must hold no control character
  such as CR, LF or NUL; a bad one raises, it is never written) and the body framed
  — ``Content-Length`` when the whole body comes in one message, chunked otherwise,
  none for 204, 304 and ``HEAD``.
- **Disconnects.** Once the request body is read, the application's ``receive()``
  reads the socket for EOF (what a streaming response watches for); the end of the
  response wakes it with ``http.disconnect``, as ASGI servers do.
- **Pipelining.** Requests that arrive before the previous reply is written are
  read ahead (at most :attr:`LeanLimits.max_pipelined_bytes` bytes after the request
  being answered; beyond it the socket is not read until the reply is done), kept as
  received and parsed only when their turn comes (:mod:`.wire`), and answered
  in order. A connection thus holds at most its read-ahead, one request's parsed
  objects and the reply being written, whatever it pipelines.
- **Connections** are admitted by a :class:`~.connection_gate.ConnectionGate`: a
  global and a per-client-IP cap with a reserve for health checks and new clients
  (past a cap, a request for ``health_path`` is served, anything else is answered 503
  with ``Retry-After``; past the reserve too, the connection is closed at once), and a
  send timeout (a peer that accepts no bytes of a reply for
  :attr:`LeanLimits.send_timeout` seconds is dropped). A peer that resets the
  connection, or stops reading that long, is gone: the request being served is
  cancelled and those it pipelined behind it are never run.
- **Limits.** The request line and headers together are at most
  :attr:`LeanLimits.max_header_size` bytes (431) and must arrive within
  :attr:`LeanLimits.header_timeout` seconds of the request's first byte (else the
  connection closes: there is no request to answer yet). An idle keep-alive
  connection closes after :attr:`LeanLimits.keep_alive_timeout` (to within the second
  of the connection gate's sweep: a request costs no timer). Body size and body
  timeout are the application's to enforce (it reads the body), as under hypercorn.
  A request the parser rejects is answered 400 (also when it is found in its body:
  a bad chunk size; a chunked body's trailer fields count against
  ``max_header_size``, 431 beyond); a transfer coding other than ``chunked`` is
  answered 501, and so is an upgrade (``Upgrade`` header, ``CONNECT``): the lean
  server serves none (hypercorn does). Either way the connection then closes.
- **Expect: 100-continue.** ``100 Continue`` goes out when the application first
  asks for the body, so a request refused on its headers never uploads it.
- **Connection: close** (either side's, or an HTTP/1.0 peer's) ends the connection
  after the response; so does a response written before its request's body came
  whole (the rest of that body cannot be told from a next request).
- **Graceful shutdown.** :meth:`LeanHttpServer.shutdown` stops accepting, closes
  idle connections, lets requests in progress finish (their responses say
  ``Connection: close``) for :attr:`LeanLimits.graceful_timeout` seconds, then
  cancels them.

Only ``http`` scopes are served (no WebSocket, no lifespan: use hypercorn for
those, and for HTTP/2 and TLS).
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from contextlib import suppress
from typing import Any, Final
from urllib.parse import unquote

import attrs
import trio

from .asgi import BODY_EXTENSION
from .connection_gate import ConnectionGate, GuardedStream
from .lean_limits import LeanLimits
from .wire import Refusal, Request, RequestParser, header_lines, status_line

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
ASGIApp = Callable[
    [Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
    Awaitable[None],
]

log = logging.getLogger("mcp_actors.http")

_READ_SIZE: Final = 64 * 1024
_ASGI: Final = {"version": "3.0", "spec_version": "2.3"}
#: Seconds a client refused for capacity is told to wait (``Retry-After``).
_RETRY_AFTER: Final = 5
#: Statuses whose responses have no body, hence no framing header.
_NO_BODY: Final = frozenset({204, 304})
_CONTINUE: Final = b"HTTP/1.1 100 Continue\r\n\r\n"


class _Closed(Exception):
    """The peer closed the connection, or broke it."""


@attrs.define(eq=False)
class LeanHttpServer:
    """Serves ``app`` on HTTP/1.1 connections. Run :meth:`serve` in a nursery.

    ``health_path``: the one path a connection admitted past the connection caps may
    ask for (a load balancer's health check); None: such connections are refused."""

    app: ASGIApp
    limits: LeanLimits = attrs.field(factory=LeanLimits)
    health_path: str | None = None
    _connections: set[_Connection] = attrs.field(init=False, factory=set)
    _listeners: list[trio.SocketListener] = attrs.field(init=False, factory=list)
    _closing: bool = attrs.field(init=False, default=False)
    _shutdown: trio.Event = attrs.field(init=False, factory=trio.Event)
    _drained: trio.Event = attrs.field(init=False, factory=trio.Event)
    _accepting: trio.CancelScope = attrs.field(init=False, factory=trio.CancelScope)
    _gate: ConnectionGate = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._gate = self.limits.gate()

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
            await self._gate.serve(
                self._listeners, self._serve_connection, self.serve_restricted, connections
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

    @property
    def buffered_bytes(self) -> int:
        """Request bytes the connections hold now (read ahead, or a body not yet read)."""
        return sum(connection.parser.buffered for connection in self._connections)

    async def _serve_connection(self, stream: GuardedStream, restricted: bool = False) -> None:
        connection = _Connection(self, stream, restricted)
        self._connections.add(connection)
        try:
            await connection.run()
        finally:
            connection.parser.close()
            self._connections.discard(connection)
            if self._closing and not self._connections:
                self._drained.set()
            with trio.CancelScope(shield=True):
                await trio.aclose_forcefully(stream)

    async def serve_restricted(self, stream: GuardedStream) -> None:
        """Serve a connection admitted past the connection caps: one request for
        ``health_path`` is answered (then the connection closes), anything else is
        answered 503 with ``Retry-After``. Also for hypercorn's connections."""
        await self._serve_connection(stream, restricted=True)

    @property
    def closing(self) -> bool:
        return self._closing


def _peer(stream: GuardedStream, side: str) -> tuple[str, int] | None:
    try:
        address = stream.socket.getpeername() if side == "peer" else stream.socket.getsockname()
    except OSError:
        return None
    return str(address[0]), int(address[1])


@attrs.define(eq=False)
class _Connection:
    """One client connection: its parser, and the requests it has queued."""

    server: LeanHttpServer
    stream: GuardedStream
    #: Admitted past a connection cap: one health check, else 503.
    restricted: bool = False
    parser: RequestParser = attrs.field(init=False)
    _idle: bool = attrs.field(init=False, default=True)
    _eof: bool = attrs.field(init=False, default=False)

    def __attrs_post_init__(self) -> None:
        self.parser = RequestParser(self.server.limits.max_header_size)

    def close_if_idle(self) -> None:
        if self._idle:
            self.stream.close_idle()

    async def run(self) -> None:
        client, local = _peer(self.stream, "peer"), _peer(self.stream, "local")
        while not self.server.closing and not self.stream.gone.is_set():
            try:
                request = await self._next_request(self.server.limits)
            except _Closed:
                return
            if request is None:
                return
            if self.restricted and not self._health_check(request):
                await self.refuse(503, "too many connections, retry later", _RETRY_AFTER)
                return
            self._idle = False
            exchange = _Exchange(self, request, client, local)
            try:
                await exchange.run()
            except _Closed:
                return
            if not exchange.keep_alive or exchange.disconnected:
                # Connection: close, an unread body, a response cut short, or a client
                # gone: what it pipelined is not run.
                return
            self.parser.answered()
            self._idle = True

    def _health_check(self, request: Request) -> bool:
        path = unquote(request.target.partition(b"?")[0].decode("latin-1"))
        return request.method in (b"GET", b"HEAD") and path == self.server.health_path

    async def _next_request(self, limits: LeanLimits) -> Request | None:
        """The next request whose head is complete, or None when the connection should
        close (after answering input that cannot be served)."""
        parser = self.parser
        # When the request's first bytes came (None: not yet, or not yet looked at).
        started: float | None = None
        arrived = False  # bytes came while idle: the header timeout runs from then on
        while True:
            request = parser.next_request
            if request is not None:
                return request
            if parser.refusal is not None:
                await self.refuse(parser.refusal.status, parser.refusal.reason)
                return None
            if self._eof:
                return None
            if parser.head_pending or arrived:
                arrived = True
                started = trio.current_time() if started is None else started
                with trio.move_on_at(started + limits.header_timeout):
                    await self.feed()
                    continue
                return None  # too slow: nothing to answer yet (there is no request)
            # Idle: the gate's sweep closes the connection if no request begins in time
            # (then the read raises _Closed), as does shutdown (close_if_idle).
            stream = self.stream
            stream.idle_until = trio.current_time() + limits.keep_alive_timeout
            try:
                await self.feed()
            finally:
                stream.idle_until = None
            arrived = True  # the clock is read only if no request is whole yet

    async def feed(self, max_bytes: int | None = None) -> None:
        """Read what the peer sent (at most ``max_bytes``, and never more than may be
        read ahead) into the parser; :class:`_Closed` if the connection broke."""
        size = min(_READ_SIZE, self.server.limits.max_pipelined_bytes, max_bytes or _READ_SIZE)
        try:
            data = await self.stream.receive_some(size)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            raise _Closed from None
        if data:
            self.parser.feed(data)
        else:
            self._eof = True

    async def write(self, data: bytes) -> None:
        try:
            await self.stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            raise _Closed from None

    async def refuse(self, status: int, reason: str, retry_after: int | None = None) -> None:
        """Answer with ``status`` and a plain-text ``reason``, then (the caller) close."""
        body = f"{status} {reason}\n".encode()
        retry = b"" if retry_after is None else b"retry-after: %d\r\n" % retry_after
        head = status_line(status) + b"".join(
            (
                b"content-type: text/plain; charset=utf-8\r\n",
                b"content-length: %d\r\n" % len(body),
                retry,
                b"connection: close\r\n\r\n",
            )
        )
        with trio.move_on_after(1.0), suppress(_Closed):
            await self.write(head + body)

    @property
    def eof(self) -> bool:
        return self._eof


@attrs.define(eq=False)
class _Exchange:
    """One request and its response: the ASGI ``receive`` and ``send`` of one call (the
    exchange itself is the ``send`` the application is given, so that
    :func:`~.asgi.respond` finds :meth:`respond_whole` on it)."""

    connection: _Connection
    request: Request
    client: tuple[str, int] | None
    local: tuple[str, int] | None
    #: Whether the connection may carry the next request once this one is answered.
    keep_alive: bool = attrs.field(init=False, default=False)
    _body_done: bool = attrs.field(init=False, default=False)
    _continued: bool = attrs.field(init=False, default=False)
    _response_done: bool = attrs.field(init=False, default=False)
    _disconnected: bool = attrs.field(init=False, default=False)
    #: The status line and the application's headers, once ``http.response.start`` came.
    _head: bytes | None = attrs.field(init=False, default=None)
    _started: bool = attrs.field(init=False, default=False)
    #: How the body is framed: not at all (204, 304, HEAD), chunked, or by a length.
    _bodyless: bool = attrs.field(init=False, default=False)
    _chunked: bool = attrs.field(init=False, default=False)
    #: The application's response says ``Connection: close``.
    _closes: bool = attrs.field(init=False, default=False)
    #: Body bytes still due under the response's Content-Length; None: not framed by one.
    _remaining: int | None = attrs.field(init=False, default=None)
    _waiting: trio.CancelScope | None = attrs.field(init=False, default=None)

    def scope(self) -> Scope:
        """The request's ASGI scope; a body already received whole goes with it
        (the ``mcp_actors.body`` extension: a ``bytearray`` the application empties when
        it takes it; ``receive()`` then has no more body to give)."""
        request = self.request
        path, _, query = request.target.partition(b"?")
        extensions = {BODY_EXTENSION: request.body} if request.complete else {}
        return {
            "type": "http",
            "asgi": _ASGI,
            "http_version": request.http_version,
            "method": request.method.decode("ascii"),
            "scheme": "http",
            "path": unquote(path.decode("latin-1")),
            "raw_path": path,
            "query_string": query,
            "root_path": "",
            "headers": request.headers,
            "client": self.client,
            "server": self.local,
            "extensions": extensions,
        }

    async def run(self) -> None:
        try:
            await self.connection.server.app(self.scope(), self.receive, self)
        except _Closed:
            raise
        except Exception:
            log.exception("the ASGI application failed on %s", self.request.target)
            if not self._started:
                await self.connection.refuse(500, "Internal Server Error")
            raise _Closed from None
        if not self._response_done and not self._disconnected:
            if not self._started:
                await self.connection.refuse(500, "the application sent no response")
            raise _Closed  # a response cut short cannot be completed

    async def receive(self) -> Message:
        request, connection = self.request, self.connection
        while not self._body_done and not self._disconnected:
            if request.body or request.complete:
                body = bytes(request.body)
                request.body.clear()
                self._body_done = request.complete
                return {"type": "http.request", "body": body, "more_body": not request.complete}
            if connection.parser.refusal is not None:
                await self._refuse_body(connection.parser.refusal)
                break
            if connection.eof:
                self._disconnected = True  # the body was cut short
                break
            try:
                if request.expects_continue and not request.body_started and not self._continued:
                    self._continued = True
                    await connection.write(_CONTINUE)
                await connection.feed()
            except _Closed:
                self._disconnected = True
        await self._wait_disconnect()
        return {"type": "http.disconnect"}

    async def _refuse_body(self, refusal: Refusal) -> None:
        """The body is malformed (a bad chunk, trailer fields past the limit): answer
        the refusal at once, unless a response has begun; the application is told the
        client left, and what it sends is dropped."""
        self._disconnected = True
        if not self._started:
            self._started = True
            await self.connection.refuse(refusal.status, refusal.reason)

    @property
    def disconnected(self) -> bool:
        """Whether the client left (or was refused) before its response was written."""
        return self._disconnected

    async def _wait_disconnect(self) -> None:
        """Return once the response is done or the client went away, reading (and
        parsing, up to a bound) what the client sends meanwhile."""
        connection, limit = self.connection, self.connection.server.limits.max_pipelined_bytes
        parser = connection.parser
        with trio.CancelScope() as self._waiting:
            while not self._response_done and not self._disconnected:
                if connection.eof:
                    self._disconnected = True
                    break
                budget = limit - (parser.fed - self.request.end)
                if budget <= 0 or parser.refusal is not None:
                    # Not reading: woken by the end of the response, or the peer gone.
                    await connection.stream.gone.wait()
                    self._disconnected = True
                    break
                try:
                    await connection.feed(budget)
                except _Closed:
                    self._disconnected = True
        self._waiting = None

    async def send(self, message: Message) -> None:
        """Write a response message; once the client is gone, what is sent is dropped
        and ``receive()`` returns ``http.disconnect``. A response that cannot be written
        as given (a bad status or header, a body unlike its ``Content-Length``) raises
        :class:`ValueError` (if nothing was written yet, the client is answered 500)."""
        kind = message["type"]
        if kind == "http.response.start":
            if self._head is not None:
                raise RuntimeError("http.response.start sent twice")
            self._head = self._response_head(message["status"], message.get("headers", ()))
            return
        if kind != "http.response.body" or self._head is None or self._response_done:
            raise RuntimeError(f"unexpected ASGI message {kind!r}")
        await self._write_body(message.get("body", b""), message.get("more_body", False))

    __call__ = send

    async def respond_whole(
        self, status: int, headers: list[tuple[bytes, bytes]], body: bytes
    ) -> None:
        """``http.response.start`` then the one body message, in one call: what
        :meth:`send` does with both, with no message built or read."""
        if self._head is not None:
            raise RuntimeError("http.response.start sent twice")
        self._head = self._response_head(status, headers)
        await self._write_body(body, False)

    async def _write_body(self, body: bytes, more: bool) -> None:
        """Write a body message (``more``: not the last one), the head with the first."""
        data = b"" if self._started else self._framed_head(body, more)
        data += self._framed_body(body, more)
        self._started = True
        if not more:
            if self._remaining:
                raise ValueError(f"the response body is {self._remaining} bytes short")
            self._response_done = True
        if self._disconnected:
            return  # as under other ASGI servers: dropped; receive() says the client left
        try:
            await self.connection.write(data)
        except _Closed:
            self._disconnected = True
        if (self._response_done or self._disconnected) and self._waiting is not None:
            self._waiting.cancel()

    def _response_head(self, status: Any, headers: Any) -> bytes:
        """The status line and the application's headers, checked; notes the framing
        they ask for (``Content-Length``, ``Transfer-Encoding``, ``Connection``)."""
        if not isinstance(status, int) or not 200 <= status <= 999:
            raise ValueError(f"invalid HTTP response status: {status!r}")
        lines, framing = header_lines(headers)
        self._bodyless = status in _NO_BODY or self.request.method == b"HEAD"
        connection = framing.get(b"connection")
        self._closes = connection is not None and b"close" in (
            token.strip() for token in connection.split(b",")
        )
        if self._bodyless:
            pass  # no body is written, whatever the application sends
        elif b"transfer-encoding" in framing:
            if framing[b"transfer-encoding"] != b"chunked" or b"content-length" in framing:
                raise ValueError(f"unsupported response framing: {framing!r}")
            self._chunked = True
        elif b"content-length" in framing:
            declared = framing[b"content-length"]
            if not declared.isdigit():
                raise ValueError(f"invalid Content-Length: {declared!r}")
            self._remaining = int(declared)
        return status_line(status) + lines

    def _framed_head(self, body: bytes, more: bool) -> bytes:
        """The response head for a first body message ``body`` (``more``: not the last
        one), with the framing the application left to the server; decides whether
        the connection carries another request after this one."""
        request, head = self.request, [self._head or b""]
        if self._bodyless or self._chunked or self._remaining is not None:
            pass  # framed by the application's headers
        elif not more:
            # The whole body in one message: its length is known, no chunked framing.
            self._remaining = len(body)
            head.append(b"content-length: %d\r\n" % len(body))
        elif request.http_version == "1.1":
            self._chunked = True
            head.append(b"transfer-encoding: chunked\r\n")
        # else an HTTP/1.0 peer, which never keeps the connection: the body ends with it.
        request.body.clear()  # what of the body the application did not read is discarded
        self.keep_alive = (
            request.keep_alive
            and request.complete  # else the rest of the body cannot be told from a request
            and not self._closes
            and not self.connection.server.closing
            and not self.connection.restricted
        )
        if not self.keep_alive and not self._closes:
            head.append(b"connection: close\r\n")
        head.append(b"\r\n")
        return b"".join(head)

    def _framed_body(self, body: bytes, more: bool) -> bytes:
        """``body`` as it goes on the wire under the response's framing."""
        if self._bodyless:
            return b""
        if self._chunked:
            chunk = b"%x\r\n%s\r\n" % (len(body), body) if body else b""
            return chunk if more else chunk + b"0\r\n\r\n"
        if self._remaining is not None:
            if len(body) > self._remaining:
                raise ValueError("the response body is longer than its Content-Length")
            self._remaining -= len(body)
        return bytes(body)
