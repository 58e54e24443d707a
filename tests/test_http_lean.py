"""The HTTP/1.1 behaviour a production server needs, on both front ends of ``serve_http``.

Raw bytes on loopback sockets: pipelined requests, ``Connection: close``,
``Expect: 100-continue``, graceful shutdown and an unread body run against
``serve_http`` (this module imports it, so conftest runs each test on the lean and
the hypercorn front end); the lean server's own limits (header size and time,
keep-alive, a failing application) are in ``test_http_lean_limits.py``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import pytest
import trio

from mcp_actors.client.targets import load_server
from mcp_actors.server.serve_http import HttpServerHandle, serve_http
from mcp_actors.transports.http.config import HttpConfig

from conftest import read_to_eof, read_until

SAMPLE = "servers.sample:server"


def _post(body: dict[str, Any], *extra: str) -> bytes:
    data = json.dumps(body).encode()
    head = [
        "POST /mcp HTTP/1.1",
        "Host: 127.0.0.1",
        "Content-Type: application/json",
        "Accept: application/json",
        "MCP-Protocol-Version: 2025-11-25",
        f"Content-Length: {len(data)}",
        *extra,
    ]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + data


def _call(request_id: int, a: int, b: int, *extra: str) -> bytes:
    params = {"name": "add", "arguments": {"a": a, "b": b}}
    return _post(
        {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}, *extra
    )


@asynccontextmanager
async def _stateless_server(**config: Any) -> AsyncIterator[HttpServerHandle]:
    async with trio.open_nursery() as nursery:
        handle: HttpServerHandle = await nursery.start(
            partial(
                serve_http,
                load_server(SAMPLE),
                port=0,
                config=HttpConfig(stateless=True, json_response=True, **config),
            )
        )
        yield handle
        nursery.cancel_scope.cancel()


async def test_pipelined_requests_are_answered_in_order() -> None:
    async with (
        _stateless_server() as handle,
        await trio.open_tcp_stream("127.0.0.1", handle.port) as stream,
    ):
        await stream.send_all(_call(1, 1, 2) + _call(2, 20, 3) + _call(3, 300, 4))
        data = await read_until(stream, 3, b'"structuredContent"')
    assert data.count(b"HTTP/1.1 200") == 3
    positions = [data.index(f'"id":{n}'.encode()) for n in (1, 2, 3)]
    assert positions == sorted(positions)
    assert [b'{"result":3}' in data, b'{"result":23}' in data, b'{"result":304}' in data] == [
        True
    ] * 3


async def test_connection_close_ends_the_connection_after_the_response() -> None:
    async with (
        _stateless_server() as handle,
        await trio.open_tcp_stream("127.0.0.1", handle.port) as stream,
    ):
        await stream.send_all(_call(1, 1, 2, "Connection: close"))
        data = await read_to_eof(stream)
    assert data.startswith(b"HTTP/1.1 200")
    assert b'{"result":3}' in data


async def test_expect_100_continue_gets_continue_before_the_body() -> None:
    async with (
        _stateless_server() as handle,
        await trio.open_tcp_stream("127.0.0.1", handle.port) as stream,
    ):
        request = _call(1, 1, 2, "Expect: 100-continue")
        head, _, body = request.partition(b"\r\n\r\n")
        await stream.send_all(head + b"\r\n\r\n")
        interim = await read_until(stream, 1, b"\r\n\r\n")
        assert interim.startswith(b"HTTP/1.1 100")
        await stream.send_all(body)
        data = await read_until(stream, 1, b'"structuredContent"')
    assert b"HTTP/1.1 200" in data
    assert b'{"result":3}' in data


async def test_a_body_over_the_limit_is_refused_and_the_connection_closed() -> None:
    async with (
        _stateless_server(max_body_size=100) as handle,
        await trio.open_tcp_stream("127.0.0.1", handle.port) as stream,
    ):
        request = _post({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x" * 500}})
        await stream.send_all(request + _call(2, 1, 2))
        data = await read_to_eof(stream)
    assert data.startswith(b"HTTP/1.1 413")
    assert b'"result"' not in data  # the request behind it was not read as one


async def test_graceful_shutdown_finishes_the_request_in_progress() -> None:
    async with trio.open_nursery() as nursery:
        handle: HttpServerHandle = await nursery.start(
            partial(
                serve_http,
                load_server(SAMPLE),
                port=0,
                config=HttpConfig(stateless=True, json_response=True, graceful_timeout=5.0),
            )
        )
        idle = await trio.open_tcp_stream("127.0.0.1", handle.port)
        busy = await trio.open_tcp_stream("127.0.0.1", handle.port)
        async with idle, busy:
            slow = {"name": "slow", "arguments": {"steps": 5, "delay": 0.1}}
            await busy.send_all(
                _post({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": slow})
            )
            await trio.sleep(0.2)
            handle.shutdown()
            reply = await read_to_eof(busy)
            assert await read_to_eof(idle) == b""  # an idle connection is closed at once
        with pytest.raises(OSError):
            await trio.open_tcp_stream("127.0.0.1", handle.port)
    assert reply.startswith(b"HTTP/1.1 200")
    assert b'"result"' in reply
