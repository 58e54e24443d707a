"""The benchmark's product API (``benchmarks/realio/api_service.py``) keeps its limits.

It serves every server under test alike, so it must neither fail nor hold connections
forever: keep-alive requests are answered in order, a request it cannot parse is
answered 400 and the connection closes, and a connection idle past its timeout is
closed.
"""

from __future__ import annotations

import re
from functools import partial

import trio

from benchmarks.realio.api_service import serve_api


async def _read_until_closed(stream: trio.SocketStream) -> bytes:
    """What the server sent until it closed the connection (then closed here too)."""
    received = b""
    async with stream:
        with trio.fail_after(10):
            while chunk := await stream.receive_some(65536):
                received += chunk
    return received


async def test_keep_alive_requests_are_answered_in_order_until_one_says_close(
    nursery: trio.Nursery,
) -> None:
    port = await nursery.start(serve_api, 0)
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    await stream.send_all(
        b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
        b"GET /products/100001 HTTP/1.1\r\nHost: x\r\n\r\n"
        b"GET /products/2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    received = await _read_until_closed(stream)
    statuses = re.findall(rb"HTTP/1\.1 \d{3} [A-Za-z ]+", received)
    assert statuses == [b"HTTP/1.1 200 OK", b"HTTP/1.1 404 Not Found", b"HTTP/1.1 200 OK"]
    assert b'"sku":"SKU-000002"' in received


async def test_a_request_it_cannot_parse_is_answered_400_and_the_connection_closes(
    nursery: trio.Nursery,
) -> None:
    port = await nursery.start(serve_api, 0)
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    await stream.send_all(b"NOT AN HTTP REQUEST\r\n\r\n")
    assert (await _read_until_closed(stream)).startswith(b"HTTP/1.1 400 Bad Request")


async def test_a_connection_idle_past_its_timeout_is_closed(nursery: trio.Nursery) -> None:
    port = await nursery.start(partial(serve_api, 0, idle_timeout=0.2))
    idle = await trio.open_tcp_stream("127.0.0.1", port)
    busy = await trio.open_tcp_stream("127.0.0.1", port)
    await busy.send_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    async with busy:
        assert (await busy.receive_some(65536)).startswith(b"HTTP/1.1 200 OK")
    assert await _read_until_closed(idle) == b""  # closed by the sweep, with no answer
    # The server goes on: a new connection is answered.
    fresh = await trio.open_tcp_stream("127.0.0.1", port)
    await fresh.send_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert (await _read_until_closed(fresh)).startswith(b"HTTP/1.1 200 OK")
