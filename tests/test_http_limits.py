"""The HTTP and WebSocket servers under pressure: connections, bodies, sessions and stored events
stay bounded, and whatever a client leaves behind is reclaimed.

Servers run in-process on 127.0.0.1; raw connections use ``h11`` (so a test can hold a
connection open, send half a body, or ask for ``Connection: close``). Limits are configured
small so that each mechanism is reached quickly; nothing here asserts a duration.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import h11
import trio

from mcp_actors.client.targets import load_server
from mcp_actors.protocol.versions import LATEST
from mcp_actors.server.serve_http import HttpServerHandle, serve_http
from mcp_actors.transports.http_config import HttpConfig

from conftest import SAMPLE

HEADERS = [
    ("accept", "application/json, text/event-stream"),
    ("content-type", "application/json"),
]


def initialize_body(request_id: int = 1) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "initialize",
            "params": {
                "protocolVersion": LATEST,
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        }
    ).encode()


@asynccontextmanager
async def serving(**options: Any) -> AsyncIterator[HttpServerHandle]:
    server = load_server(SAMPLE)
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(partial(serve_http, server, port=0, **options))
        yield handle
        nursery.cancel_scope.cancel()


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


class RawConnection:
    """One HTTP/1.1 connection driven by hand (h11 does the framing)."""

    def __init__(self, stream: trio.SocketStream, host: str) -> None:
        self.stream = stream
        self.host = host
        self.h11 = h11.Connection(h11.CLIENT)

    @classmethod
    async def open(cls, server: HttpServerHandle) -> RawConnection:
        stream = await trio.open_tcp_stream(server.host, server.port)
        return cls(stream, f"{server.host}:{server.port}")

    async def send(self, *events: h11.Event) -> None:
        await self.stream.send_all(b"".join(self.h11.send(event) or b"" for event in events))

    async def post(self, path: str, body: bytes, headers: list[tuple[str, str]] = HEADERS) -> None:
        request = h11.Request(
            method="POST",
            target=path,
            headers=[("host", self.host), ("content-length", str(len(body))), *headers],
        )
        await self.send(request, h11.Data(data=body), h11.EndOfMessage())

    async def next_event(self) -> Any:
        while True:
            event = self.h11.next_event()
            if event is not h11.NEED_DATA:
                return event
            self.h11.receive_data(await self.stream.receive_some(65536))

    async def response(self) -> tuple[h11.Response, bytes]:
        """The next complete response: its head and its body."""
        head = await self.next_event()
        assert isinstance(head, h11.Response), head
        body = b""
        while not isinstance(event := await self.next_event(), h11.EndOfMessage):
            body += bytes(event.data)
        return head, body

    async def closed_by_server(self) -> bool:
        """Whether the server closes the connection (reads until EOF; True once it comes)."""
        return await self.stream.receive_some(65536) == b""

    async def aclose(self) -> None:
        await self.stream.aclose()


# -- connections are closed and reaped (item 11) -----------------------------------------


async def test_connection_close_after_an_sse_reply_closes_the_connection() -> None:
    async with serving() as server:
        path = server.config.path
        baseline = open_fds()
        connections = [await RawConnection.open(server) for _ in range(20)]
        for connection in connections:
            await connection.post(path, initialize_body(), [*HEADERS, ("connection", "close")])
        with trio.fail_after(10):
            for connection in connections:
                head, body = await connection.response()
                assert head.status_code == 200 and b'"protocolVersion"' in body
                assert await connection.closed_by_server()
        for connection in connections:
            await connection.aclose()
        assert open_fds() <= baseline


async def test_idle_keep_alive_connections_are_reaped_after_an_sse_reply() -> None:
    async with serving(config=HttpConfig(keep_alive_timeout=0.2)) as server:
        path = server.config.path
        baseline = open_fds()
        connections = [await RawConnection.open(server) for _ in range(20)]
        for connection in connections:
            await connection.post(path, initialize_body())
        with trio.fail_after(10):
            for connection in connections:
                head, _ = await connection.response()
                assert head.status_code == 200
                assert (b"content-type", b"text/event-stream") in head.headers
            for connection in connections:  # kept alive, then reaped once idle
                assert await connection.closed_by_server()
        for connection in connections:
            await connection.aclose()
        assert open_fds() <= baseline


# -- unfinished request bodies (item 13) -------------------------------------------------


async def test_an_unfinished_chunked_body_is_abandoned_with_408() -> None:
    async with serving(config=HttpConfig(body_timeout=0.2)) as server:
        baseline = open_fds()
        connections = [await RawConnection.open(server) for _ in range(5)]
        for connection in connections:
            head = h11.Request(
                method="POST",
                target=server.config.path,
                headers=[("host", connection.host), ("transfer-encoding", "chunked"), *HEADERS],
            )
            await connection.send(head, h11.Data(data=initialize_body()[:20]))  # ...and no more
        with trio.fail_after(10):
            for connection in connections:
                response, body = await connection.response()
                assert response.status_code == 408
                assert b"did not arrive in time" in body
                assert await connection.closed_by_server()
        for connection in connections:
            await connection.aclose()
        assert open_fds() <= baseline
        assert server.sessions == 0
