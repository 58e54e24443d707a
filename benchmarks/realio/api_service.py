"""The product API the benchmark's tools call, on Trio: upstream's behaviour, and cheap.

Routes (as upstream's ``api-service/main.go``; bodies from :mod:`.catalog`, byte for
byte, each ending in a newline as Go's ``json.Encoder`` writes it):

- ``GET /products/search?category=&min_price=&max_price=&limit=`` (defaults:
  Electronics, 0, no maximum, 10; a limit outside 1..1000 is 10);
- ``GET /products/{id}`` (1..100000, else 404);
- ``POST /cart/calculate`` with ``{"user_id": str, "items": [{"product_id": int,
  "quantity": int}]}`` (400 on a body that is not that);
- ``GET /health``.

Why it is cheap: every product's JSON is encoded once, on first use, and kept (the
catalog is bounded: 100,000 entries, ~25 MB at most); searches are answered from a
bounded cache of whole responses (:data:`SEARCH_CACHE` entries, oldest dropped first);
requests are parsed by httptools (:class:`~mcp_actors.transports.http.wire.RequestParser`)
and answered on keep-alive connections, read and written on the socket's descriptor
(no stream object, no deadline per read: idle connections are swept once a second).

Limits: at most ``max_connections`` connections at once (more wait in the listen
backlog until one closes); a request head of at most 8 KiB and a body of at most
:data:`MAX_BODY` bytes (else 431/413 and the connection closes); a connection idle
for ``idle_timeout`` seconds is closed (to within a second).

Run: ``python -m benchmarks.realio.api_service --port 8100`` (127.0.0.1).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
from collections import OrderedDict
from typing import Final
from urllib.parse import parse_qs, urlsplit

import attrs
import msgspec
import trio

from mcp_actors.transports.http.wire import RequestParser

from . import catalog

MAX_HEAD: Final = 8192
MAX_BODY: Final = 64 * 1024
SEARCH_CACHE: Final = 1024
JSON_HEAD: Final = b"HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n"
REASONS: Final = {200: b"OK", 400: b"Bad Request", 404: b"Not Found", 405: b"Method Not Allowed",
                  413: b"Payload Too Large", 431: b"Request Header Fields Too Large"}  # fmt: skip


class _CartItem(msgspec.Struct):
    product_id: int = 0
    quantity: int = 0


class _CartRequest(msgspec.Struct):
    user_id: str = ""
    items: list[_CartItem] | None = None


_decode_cart = msgspec.json.Decoder(_CartRequest).decode


def _response(status: int, body: bytes, content_type: bytes = b"application/json") -> bytes:
    return JSON_HEAD % (status, REASONS[status], content_type, len(body)) + body


def _text(status: int, text: bytes) -> bytes:
    return _response(status, text, b"text/plain; charset=utf-8")


NOT_FOUND: Final = _text(404, b"404 page not found\n")
HEALTH: Final = _response(200, b'{"server_type":"api-service","status":"ok"}\n')


def _go_float(text: str) -> float:
    """``strconv.ParseFloat`` with its error ignored, as upstream does: 0 when invalid."""
    try:
        return float(text)
    except ValueError:
        return 0.0


def _go_int(text: str) -> int:
    try:
        return int(text, 10)
    except ValueError:
        return 0


class Catalog:
    """The answers, encoded on first use and kept (products) or cached (searches)."""

    def __init__(self) -> None:
        self._products: dict[int, bytes] = {}
        self._searches: OrderedDict[str, bytes] = OrderedDict()

    def product(self, product_id: int) -> bytes:
        """``GET /products/{id}``'s whole response."""
        cached = self._products.get(product_id)
        if cached is None:
            body = catalog.product_json(product_id - 1) + b"\n"
            cached = self._products[product_id] = _response(200, body)
        return cached

    def search(self, query: str) -> bytes:
        """``GET /products/search?query``'s whole response."""
        cached = self._searches.get(query)
        if cached is not None:
            return cached
        fields = {name: values[0] for name, values in parse_qs(query).items()}
        category = fields.get("category") or "Electronics"
        min_price = _go_float(fields.get("min_price", ""))
        max_price = _go_float(fields.get("max_price", "")) or math.inf
        limit = _go_int(fields.get("limit", ""))
        if not 0 < limit <= 1000:
            limit = 10
        total, indexes = catalog.search(category, min_price, max_price, limit)
        known = category in catalog.CATEGORIES
        body = catalog.search_json(category, total, indexes, known) + b"\n"
        response = self._searches[query] = _response(200, body)
        while len(self._searches) > SEARCH_CACHE:
            self._searches.popitem(last=False)
        return response

    @staticmethod
    def cart(body: bytes) -> bytes:
        """``POST /cart/calculate``'s whole response."""
        try:
            request = _decode_cart(body)
        except msgspec.DecodeError:
            return _text(400, b"bad request\n")
        items = [(item.product_id, item.quantity) for item in request.items or ()]
        return _response(200, catalog.cart_json(request.user_id, items) + b"\n")

    def answer(self, method: bytes, target: bytes, body: bytes) -> bytes:
        """The response to one request."""
        url = urlsplit(target.decode("latin-1"))
        path = url.path
        if path == "/cart/calculate":
            return self.cart(body) if method == b"POST" else _text(405, b"Method Not Allowed\n")
        if method != b"GET":
            return NOT_FOUND if not path.startswith("/products/") else _text(405, b"")
        if path == "/products/search":
            return self.search(url.query)
        if path.startswith("/products/"):
            product_id = _go_int(path.removeprefix("/products/"))
            return self.product(product_id) if 1 <= product_id <= catalog.PRODUCTS else NOT_FOUND
        return HEALTH if path == "/health" else NOT_FOUND


@attrs.define(eq=False)
class _Connection:
    """One client connection: its socket, and since when it waits for a request."""

    sock: trio.socket.SocketType
    #: When it began waiting for the next request (None: it is answering one).
    waiting_since: float | None = None

    async def write(self, data: bytes) -> None:
        """Write ``data`` whole (``OSError`` if the peer is gone)."""
        view, descriptor = memoryview(data), self.sock.fileno()
        while view:
            try:
                view = view[os.write(descriptor, view) :]
            except BlockingIOError:
                await trio.lowlevel.wait_writable(self.sock)

    async def read(self) -> bytes:
        """What the peer sent next (``b""``: it closed); waits for it first, as a reply
        is what a client waits for before it sends again."""
        self.waiting_since = trio.current_time()
        try:
            while True:
                await trio.lowlevel.wait_readable(self.sock)
                try:
                    return os.read(self.sock.fileno(), 65536)
                except BlockingIOError:
                    continue
        finally:
            self.waiting_since = None


async def _serve_connection(connection: _Connection, answers: Catalog) -> None:
    parser = RequestParser(max_header_size=MAX_HEAD)
    while True:
        request = parser.next_request
        if request is not None and request.complete:
            response = answers.answer(request.method, request.target, bytes(request.body))
            await connection.write(response)
            keep_alive = request.keep_alive
            parser.answered()
            if not keep_alive:
                return
            continue
        if parser.refusal is not None:
            await connection.write(_text(400, parser.refusal.reason.encode() + b"\n"))
            return
        if request is not None and len(request.body) > MAX_BODY:
            await connection.write(_text(413, b"body too large\n"))
            return
        data = await connection.read()
        if not data:
            return
        parser.feed(data)


async def _close_idle(connections: set[_Connection], idle: float) -> None:
    """Close, once a second, the connections that waited for a request ``idle``
    seconds: their read ends (a deadline per read would cost more than the request)."""
    while True:
        await trio.sleep(1.0)
        now = trio.current_time()
        for connection in list(connections):
            since = connection.waiting_since
            if since is not None and now - since >= idle:
                connection.sock.close()  # wakes its read


async def serve_api(
    port: int,
    *,
    host: str = "127.0.0.1",
    max_connections: int = 1024,
    idle_timeout: float = 60.0,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the API on ``host:port`` until cancelled; reports the bound port."""
    answers = Catalog()
    limiter = trio.CapacityLimiter(max_connections)
    listeners = await trio.open_tcp_listeners(port, host=host, backlog=1024)
    connections: set[_Connection] = set()

    async def handle(stream: trio.SocketStream) -> None:
        async with limiter, stream:
            connection = _Connection(stream.socket)
            connections.add(connection)
            try:
                await _serve_connection(connection, answers)
            except (OSError, trio.ClosedResourceError):
                pass  # the peer left, or the connection idled out
            finally:
                connections.discard(connection)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(_close_idle, connections, idle_timeout)
        bound = await nursery.start(trio.serve_listeners, handle, listeners)
        task_status.started(bound[0].socket.getsockname()[1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8100)
    options = parser.parse_args(argv)

    async def run() -> None:
        async with trio.open_nursery() as nursery:
            port = await nursery.start(serve_api, options.port)
            print(f"api-service listening on 127.0.0.1:{port}", flush=True)

    with contextlib.suppress(KeyboardInterrupt):
        trio.run(run)


if __name__ == "__main__":
    main()
