"""The HTTP and WebSocket servers under pressure: connections, bodies, sessions and stored events
stay bounded, and whatever a client leaves behind is reclaimed.

Servers run in-process on 127.0.0.1; raw connections use ``h11`` (so a test can hold a
connection open, send half a body, or ask for ``Connection: close``). Limits are configured
small so that each mechanism is reached quickly; nothing here asserts a duration.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import h11
import httpx
import pytest
import trio

from mcp_actors import LATEST
from mcp_actors.client.targets import load_server
from mcp_actors.server.serve_http import HttpServerHandle, serve_http
from mcp_actors.server.serve_websocket import serve_websocket
from mcp_actors.transports.http.config import HttpConfig
from mcp_actors.transports.http.security import AllowedHostsRequired
from mcp_actors.transports.websocket import WebSocketRefused, open_websocket_client

from conftest import SAMPLE, TESTS, served_by_cli

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


@asynccontextmanager
async def raw_connections() -> AsyncIterator[list[RawConnection]]:
    """A list to put connections in; every one is closed at the end, whatever happens."""
    connections: list[RawConnection] = []
    try:
        yield connections
    finally:
        for connection in connections:
            await connection.aclose()


async def posted(
    server: HttpServerHandle, body: bytes, headers: list[tuple[str, str]] = HEADERS
) -> RawConnection:
    """A new connection that has sent a POST (at once: an idle connection may be reaped)."""
    connection = await RawConnection.open(server)
    await connection.post(server.config.path, body, headers)
    return connection


# -- connections are closed and reaped (item 11) -----------------------------------------


async def test_connection_close_after_an_sse_reply_closes_the_connection() -> None:
    async with serving() as server:
        baseline = open_fds()
        async with raw_connections() as connections:
            for _ in range(20):
                closing = [*HEADERS, ("connection", "close")]
                connections.append(await posted(server, initialize_body(), closing))
            with trio.fail_after(10):
                for connection in connections:
                    head, body = await connection.response()
                    assert head.status_code == 200 and b'"protocolVersion"' in body
                    assert await connection.closed_by_server()
        assert open_fds() <= baseline


async def test_idle_keep_alive_connections_are_reaped_after_an_sse_reply() -> None:
    async with serving(config=HttpConfig(keep_alive_timeout=1.0)) as server:
        baseline = open_fds()
        async with raw_connections() as connections:
            for _ in range(20):
                connections.append(await posted(server, initialize_body()))
            with trio.fail_after(20):
                for connection in connections:
                    head, _ = await connection.response()
                    assert head.status_code == 200
                    assert (b"content-type", b"text/event-stream") in head.headers
                for connection in connections:  # kept alive, then reaped once idle
                    assert await connection.closed_by_server()
        assert open_fds() <= baseline


# -- unfinished request bodies (item 13) -------------------------------------------------


async def test_an_unfinished_chunked_body_is_abandoned_with_408() -> None:
    async with serving(config=HttpConfig(body_timeout=0.2)) as server:
        baseline = open_fds()
        async with raw_connections() as connections:
            for _ in range(5):
                connection = await RawConnection.open(server)
                connections.append(connection)
                head = h11.Request(
                    method="POST",
                    target=server.config.path,
                    headers=[
                        ("host", connection.host),
                        ("transfer-encoding", "chunked"),
                        *HEADERS,
                    ],
                )
                await connection.send(head, h11.Data(data=initialize_body()[:20]))  # no more
            with trio.fail_after(10):
                for connection in connections:
                    response, body = await connection.response()
                    assert response.status_code == 408
                    assert b"did not arrive in time" in body
                    assert await connection.closed_by_server()
        assert open_fds() <= baseline
        assert server.sessions == 0


# -- the session table: caps, eviction, Retry-After (item 9) ------------------------------


@asynccontextmanager
async def http_from(address: str) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client whose connections come from ``address`` (another loopback IP: another
    client, as far as the server can tell)."""
    transport = httpx.AsyncHTTPTransport(local_address=address)
    headers = dict(HEADERS)
    async with httpx.AsyncClient(transport=transport, timeout=10, headers=headers) as http:
        yield http


async def initialize(http: httpx.AsyncClient, url: str) -> httpx.Response:
    return await http.post(url, content=initialize_body())


async def new_session(http: httpx.AsyncClient, url: str) -> dict[str, str]:
    """The headers of a new, initialized session."""
    response = await initialize(http, url)
    assert response.status_code == 200, response.text
    session = {"mcp-session-id": response.headers["mcp-session-id"]}
    session["mcp-protocol-version"] = LATEST
    note = b'{"jsonrpc": "2.0", "method": "notifications/initialized"}'
    assert (await http.post(url, content=note, headers=session)).status_code == 202
    return session


async def ping(http: httpx.AsyncClient, url: str, session: dict[str, str]) -> int:
    body = b'{"jsonrpc": "2.0", "id": 7, "method": "ping"}'
    return (await http.post(url, content=body, headers=session)).status_code


@asynccontextmanager
async def get_streams_open(
    http: httpx.AsyncClient, url: str, sessions: list[dict[str, str]]
) -> AsyncIterator[None]:
    """Hold each session's GET stream open (the sessions are then busy, not idle)."""
    async with trio.open_nursery() as nursery:
        opened = trio.Semaphore(0)

        async def hold(session: dict[str, str]) -> None:
            async with http.stream("GET", url, headers=session) as response:
                assert response.status_code == 200
                opened.release()
                await trio.sleep_forever()

        for session in sessions:
            nursery.start_soon(hold, session)
        for _ in sessions:
            await opened.acquire()
        yield
        nursery.cancel_scope.cancel()


async def test_a_full_table_evicts_idle_sessions_and_refuses_busy_ones_with_retry_after() -> None:
    async with serving(config=HttpConfig(max_sessions=3)) as server, http_from("127.0.0.1") as http:
        url = server.url
        sessions = [await new_session(http, url) for _ in range(3)]
        # Full of idle sessions: a newcomer takes the least recently used one's slot.
        assert await ping(http, url, sessions[0]) == 200  # sessions[1] is now the oldest
        newcomer = await new_session(http, url)
        assert server.sessions == 3 and server.app.registry.evicted == 1
        assert await ping(http, url, sessions[1]) == 404  # evicted: the client starts anew
        assert await ping(http, url, sessions[0]) == 200
        # Full of busy sessions (each has its GET stream open): refused, told when to retry.
        async with get_streams_open(http, url, [sessions[0], sessions[2], newcomer]):
            refused = await initialize(http, url)
            assert refused.status_code == 503
            assert int(refused.headers["retry-after"]) > 0
            assert refused.json()["error"]["message"].startswith("Service Unavailable")
            legacy = await http.get(server.sse_url or "")
            assert legacy.status_code == 503 and "retry-after" in legacy.headers
        assert await ping(http, url, sessions[2]) == 200  # nobody busy was evicted


async def test_one_client_cannot_take_every_session_slot() -> None:
    config = HttpConfig(max_sessions=10, max_sessions_per_client=2)
    async with (
        serving(config=config) as server,
        http_from("127.0.0.1") as greedy,
        http_from("127.0.0.2") as other,
    ):
        url = server.url
        held = [await new_session(greedy, url) for _ in range(2)]
        async with get_streams_open(greedy, url, held):
            assert (await initialize(greedy, url)).status_code == 503
            assert (await initialize(greedy, url)).headers["retry-after"]
            # Another client still gets in, up to its own cap.
            other_sessions = [await new_session(other, url) for _ in range(2)]
            assert await ping(other, url, other_sessions[0]) == 200
            registry = server.app.registry
            assert registry.sessions_of("127.0.0.1") == 2 == registry.sessions_of("127.0.0.2")
        # Idle again: the greedy client's next session replaces its least recently used one.
        assert await ping(greedy, url, held[1]) == 200
        await new_session(greedy, url)
        assert await ping(greedy, url, held[0]) == 404
        assert await ping(other, url, other_sessions[0]) == 200


async def test_the_websocket_server_caps_sessions_too() -> None:
    server = load_server(SAMPLE)
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(
            partial(serve_websocket, server, port=0, max_sessions=2, max_sessions_per_client=None)
        )
        async with open_websocket_client(handle.url), open_websocket_client(handle.url):
            with pytest.raises(WebSocketRefused) as refused:
                async with open_websocket_client(handle.url):
                    pass
            assert refused.value.status_code == 503
        async with open_websocket_client(handle.url):  # the slots are free again
            pass
        nursery.cancel_scope.cancel()


# -- a Host allow-list beyond loopback (item 10) -----------------------------------------

#: A documentation address (RFC 5737): not loopback, and never bound by these tests.
NOT_LOOPBACK = "192.0.2.1"


async def test_a_non_loopback_bind_without_an_allow_list_refuses_to_start() -> None:
    with pytest.raises(AllowedHostsRequired, match="allowed_hosts"):
        await serve_http(load_server(SAMPLE), host=NOT_LOOPBACK, port=0)


async def test_the_host_allow_list_is_checked_on_every_request() -> None:
    # A DNS-rebinding request: the rebound name in Host, and the matching (same) origin.
    async with serving(allowed_hosts=["mcp.example:*"]) as server:
        port = server.port
        async with httpx.AsyncClient(timeout=10, headers=dict(HEADERS)) as http:
            rebound = {"host": f"evil.example:{port}", "origin": f"http://evil.example:{port}"}
            refused = await http.post(server.url, content=initialize_body(), headers=rebound)
            assert refused.status_code == 403
            assert "Host" in refused.json()["error"]["message"]
            named = {"host": f"mcp.example:{port}", "origin": f"http://mcp.example:{port}"}
            allowed = await http.post(server.url, content=initialize_body(), headers=named)
            assert allowed.status_code == 200


# -- the command line (items 9 and 10) ---------------------------------------------------


def run_cli(*arguments: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "mcp_actors.cli", "run", SAMPLE, *arguments]
    return subprocess.run(command, capture_output=True, text=True, cwd=TESTS, timeout=60)


@pytest.mark.parametrize(
    "arguments",
    [
        ["--max-sessions", "0"],
        ["--max-sessions", "1.5"],
        ["--max-sessions", "many"],
        ["--max-sessions-per-client", "-3"],
        ["--session-idle-timeout", "-1"],
        ["--session-idle-timeout", "nan"],
        ["--session-idle-timeout", "soon"],
        ["--max-connections", "0"],
        ["--max-connections-per-client", "1.5"],
        ["--send-timeout", "-1"],
        ["--send-timeout", "inf"],
    ],
)
def test_run_parses_the_limits_strictly(arguments: list[str]) -> None:
    done = run_cli("--transport", "http", "--port", "0", *arguments)
    assert done.returncode == 2
    assert arguments[0] in done.stderr and repr(arguments[1]) in done.stderr


def test_run_refuses_a_public_bind_without_allowed_hosts() -> None:
    done = run_cli("--transport", "http", "--host", NOT_LOOPBACK, "--port", "0")
    assert done.returncode == 2
    assert "--allowed-host" in done.stderr and "Traceback" not in done.stderr
    ws_only = run_cli("--transport", "ws", "--session-idle-timeout", "5")
    assert ws_only.returncode == 2 and "does not apply" in ws_only.stderr


async def test_run_applies_the_session_flags() -> None:
    flags = ["--port", "0", "--max-sessions", "1", "--session-idle-timeout", "none"]
    async with (
        served_by_cli("--transport", "http", *flags, "--allowed-host", "127.0.0.1:*") as url,
        http_from("127.0.0.1") as http,
    ):
        session = await new_session(http, url)
        async with get_streams_open(http, url, [session]):
            assert (await initialize(http, url)).status_code == 503


async def test_run_applies_the_connection_flags() -> None:
    flags = ["--port", "0", "--max-connections", "1", "--max-connections-per-client", "none"]
    flags += ["--send-timeout", "5"]
    async with served_by_cli("--transport", "http", *flags) as url:
        async with httpx.AsyncClient(timeout=10, headers=dict(HEADERS)) as held:
            assert (await held.post(url, content=initialize_body())).status_code == 200
            async with httpx.AsyncClient(timeout=10, headers=dict(HEADERS)) as second:
                refused = await second.post(url, content=initialize_body())
        assert refused.status_code == 503 and "retry-after" in refused.headers


# -- the event store: bounded, and emptied of what was delivered (item 12) ----------------

BIG = 100_000


def echo_body(request_id: int, size: int = BIG) -> bytes:
    arguments = {"text": "x" * size}
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": arguments},
        }
    ).encode()


async def test_delivered_replies_leave_the_event_store() -> None:
    config = HttpConfig(finished_stream_retention=0.05, event_store_max_bytes=10 * BIG)
    async with serving(config=config) as server, http_from("127.0.0.1") as http:
        url = server.url
        sessions = [await new_session(http, url) for _ in range(3)]
        for request_id, session in enumerate(sessions * 2, start=10):
            reply = await http.post(url, content=echo_body(request_id), headers=session)
            assert reply.status_code == 200 and len(reply.content) > BIG
        stored = server.app.event_store_statistics()
        assert stored is not None and stored.bytes > BIG  # kept a moment, for resumption
        # Each session's next request sweeps what was written out before it.
        with trio.fail_after(10):
            while stored.bytes > BIG:
                for session in sessions:
                    assert await ping(http, url, session) == 200
                stored = server.app.event_store_statistics()
                assert stored is not None
                await trio.sleep(0.02)
        assert stored.evicted == 0  # nothing lost: dropped because delivered


async def test_unread_replies_are_bounded_in_bytes() -> None:
    limit = 3 * BIG
    config = HttpConfig(event_store_max_bytes=limit, event_stream_max_bytes=2 * BIG)
    async with serving(config=config) as server, http_from("127.0.0.1") as http:
        session = await new_session(http, server.url)
        headers = [*HEADERS, *session.items()]
        async with raw_connections() as readers:
            for request_id in range(10):  # the replies are never read
                readers.append(await posted(server, echo_body(request_id), headers))
            with trio.fail_after(10):
                while (stored := server.app.event_store_statistics()) and stored.evicted < 5:
                    assert stored.bytes <= limit
                    await trio.sleep(0.02)
            assert stored is not None and stored.bytes <= limit
