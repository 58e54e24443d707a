"""Hostile peers against both HTTP front ends (lean and hypercorn): connection caps with a
reserve for health checks, a send timeout for peers that never read, a reset cancelling what a
connection queued, and malformed framing or endless trailer fields refused at once.

``serve_http`` is imported here, so conftest runs each test on both front ends. Limits are
configured small (a cap of 2 connections, a send timeout of a fraction of a second); nothing
asserts a duration: the tests wait on events, with generous timeouts as hang guards.
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from functools import partial
from typing import Any

import attrs
import trio

from mcp_actors import Context, Server
from mcp_actors.server.serve_http import HttpServerHandle, serve_http
from mcp_actors.transports.http.config import HttpConfig

from conftest import read_to_eof, read_until

HANG_GUARD = 10.0


@attrs.define
class Probe:
    """What a tool saw: that it started, that it was cancelled, how often it ran."""

    started: trio.Event = attrs.field(factory=trio.Event)
    cancelled: trio.Event = attrs.field(factory=trio.Event)
    runs: int = 0


PROBES: dict[str, Probe] = {}
server = Server("hostile", "1.0")


@server.tool
async def hold(tag: str) -> str:
    """Wait until cancelled."""
    probe = PROBES[tag]
    probe.started.set()
    try:
        await trio.sleep_forever()
    finally:
        probe.cancelled.set()
    return "never"


@server.tool
async def count(tag: str) -> str:
    """Count a run."""
    PROBES[tag].runs += 1
    return "counted"


@server.tool
async def flood(tag: str, ctx: Context) -> str:
    """Report progress, 8 KiB at a time, until cancelled."""
    probe = PROBES[tag]
    probe.started.set()
    try:
        for step in range(1_000_000):
            await ctx.report_progress(step, message="x" * 8192)
    finally:
        probe.cancelled.set()
    return "never"


@asynccontextmanager
async def serving(**options: Any) -> AsyncIterator[HttpServerHandle]:
    config = HttpConfig(**{"stateless": True, "json_response": True, **options})
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(partial(serve_http, server, port=0, config=config))
        yield handle
        nursery.cancel_scope.cancel()


def post(body: dict[str, Any], *, accept: str = "application/json, text/event-stream") -> bytes:
    data = json.dumps(body).encode()
    return (
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Accept: %s\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: %d\r\n\r\n%s"
        % (accept.encode(), len(data), data)
    )


def call(request_id: int, tool: str, tag: str, meta: dict[str, Any] | None = None) -> bytes:
    params: dict[str, Any] = {"name": tool, "arguments": {"tag": tag}}
    if meta is not None:
        params["_meta"] = meta
    return post({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})


HEALTH = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


async def connect(handle: HttpServerHandle, source: str = "127.0.0.1") -> trio.SocketStream:
    return await trio.open_tcp_stream(handle.host, handle.port, local_address=source)


async def held_open(handle: HttpServerHandle, source: str = "127.0.0.1") -> trio.SocketStream:
    """A keep-alive connection the server has served one request on (so it counts)."""
    stream = await connect(handle, source)
    await stream.send_all(HEALTH)
    assert (await read_until(stream, 1, b"}")).startswith(b"HTTP/1.1 200")
    return stream


def status_of(reply: bytes) -> int:
    return int(reply.split(b" ", 2)[1])


async def test_past_the_cap_a_request_gets_503_with_retry_after_and_healthz_is_served() -> None:
    async with serving(
        max_connections=2, max_connections_per_client=None, connection_reserve=1
    ) as handle:
        first, second = await held_open(handle), await held_open(handle)
        async with await connect(handle) as third:  # past the cap, on the reserve
            await third.send_all(call(1, "count", "cap"))
            refused = await read_to_eof(third)
        assert status_of(refused) == 503
        assert b"\r\nretry-after: " in refused.lower()
        async with await connect(handle) as probe:  # the reserve serves a health check
            await probe.send_all(HEALTH)
            answered = await read_to_eof(probe)  # then closes
        assert status_of(answered) == 200
        async with await connect(handle) as waiting, await connect(handle) as over:
            # ``waiting`` holds the reserve: past it, a connection is closed unanswered.
            assert await read_to_eof(over) == b""
            await waiting.send_all(HEALTH)
            assert status_of(await read_to_eof(waiting)) == 200
        newcomer = await held_open(handle, "127.0.0.3")  # a new client: served on the reserve
        await newcomer.aclose()
        await first.aclose()
        await second.aclose()


async def test_past_the_per_client_cap_only_that_client_is_refused() -> None:
    async with serving(max_connections_per_client=1) as handle:
        held = await held_open(handle, "127.0.0.1")
        async with await connect(handle, "127.0.0.1") as again:
            await again.send_all(call(1, "count", "per-client"))
            assert status_of(await read_to_eof(again)) == 503
        other = await held_open(handle, "127.0.0.2")  # another client is served
        await other.aclose()
        await held.aclose()


def _small_receive_buffer_socket() -> trio.socket.SocketType:
    sock = trio.socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    return sock


async def test_a_peer_that_never_reads_is_dropped_and_its_request_cancelled() -> None:
    probe = PROBES["never-reads"] = Probe()
    async with serving(send_timeout=0.2, json_response=False) as handle:
        sock = _small_receive_buffer_socket()
        await sock.connect((handle.host, handle.port))
        stream = trio.SocketStream(sock)
        await stream.send_all(call(1, "flood", "never-reads", {"progressToken": "p"}))
        with trio.fail_after(HANG_GUARD):
            await probe.started.wait()
            await probe.cancelled.wait()  # never read: dropped, its request cancelled
            data = b""
            with suppress(trio.BrokenResourceError):
                while chunk := await stream.receive_some(65536):
                    data += chunk  # what the server wrote before it gave up; then EOF
        assert data.startswith(b"HTTP/1.1 200")
        await stream.aclose()


async def test_a_reset_cancels_the_request_in_progress_and_those_pipelined_behind() -> None:
    held = PROBES["reset-held"] = Probe()
    behind = PROBES["reset-behind"] = Probe()
    PROBES["reset-other"] = Probe()
    async with serving() as handle:
        stream = await connect(handle)
        # More than the lean server reads ahead (64 KiB): it stops reading, and hypercorn
        # does not read on while a request is in progress; a reset must be noticed anyway.
        pipelined = call(1, "hold", "reset-held") + b"".join(
            call(n, "count", "reset-behind") for n in range(2, 402)
        )
        await stream.send_all(pipelined)
        with trio.fail_after(HANG_GUARD):
            await held.started.wait()
            stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
            stream.socket.close()  # SO_LINGER 0: a reset
            await held.cancelled.wait()
            async with await connect(handle) as other:  # the server goes on serving others
                await other.send_all(call(9, "count", "reset-other"))
                assert status_of(await read_until(other, 1, b"counted")) == 200
        assert behind.runs == 0


async def test_endless_trailer_fields_are_refused_at_once() -> None:
    async with serving(max_header_size=1024) as handle:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
        head = (
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"%x\r\n%s\r\n0\r\n" % (len(body), body)
        )
        async with await connect(handle) as stream:
            await stream.send_all(head)
            sent = 0
            with suppress(trio.BrokenResourceError), trio.fail_after(HANG_GUARD):
                while sent < 4 * 1024 * 1024:
                    await stream.send_all(b"X-Trailer: " + b"a" * 500 + b"\r\n")
                    sent += 513
            reply = await read_to_eof(stream)
    assert status_of(reply) in (400, 431)  # hypercorn (h11) says 400, the lean server 431
    assert sent < 4 * 1024 * 1024  # refused while the client was still sending


async def test_an_unknown_transfer_coding_is_refused_not_failed() -> None:
    async with serving() as handle, await connect(handle) as stream:
        await stream.send_all(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: gzip\r\n\r\nabc"
        )
        assert status_of(await read_to_eof(stream)) in (400, 501)


async def test_a_bad_chunk_size_is_answered_400() -> None:
    async with serving() as handle, await connect(handle) as stream:
        await stream.send_all(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\n"
            b"Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n"
        )
        assert status_of(await read_to_eof(stream)) == 400
