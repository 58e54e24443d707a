"""What one request of a shared legacy session costs in Redis: counted, not timed.

Two workers in this process share their sessions through a real ``redis-server``
(``share_sessions``); one session's ``tools/call`` requests alternate between them. Redis's
own ``MONITOR`` feed records every command it runs, with the connection that sent it (a
command a Lua script runs is marked ``lua``): the commands the workers send that name the
session (its record, its event streams, a letter about it) are counted per call. Each
is one round trip: the workers send none of them in a pipeline, so this count is the
number of times a request waits for Redis.
"""

from __future__ import annotations

import json
from collections import Counter
from contextlib import AsyncExitStack
from functools import partial

import httpx
import trio

from mcp_actors import Server
from mcp_actors.server.serve_http import serve_http
from mcp_actors.shared.redis_client import open_redis
from mcp_actors.shared.settings import SharedSettings

from deployment import HEADERS, open_legacy_session, redis_server, request

#: Calls counted (after each worker served the session once).
CALLS = 6
#: Redis commands (each one round trip) a plain ``tools/call`` costs at most: the
#: session's record read, and one write of its reply stream's events.
MOST_PER_CALL = 2


def worker() -> Server:
    server = Server("counted", "1.0")

    @server.tool
    async def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return server


class Monitor:
    """Redis's ``MONITOR`` feed, read into lines until a marker comes by."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.buffer = b""

    async def start(self) -> None:
        await self.stream.send_all(b"MONITOR\r\n")
        await self.until(b"+OK\r\n")

    async def until(self, marker: bytes) -> list[str]:
        """The lines received until one holding ``marker`` (that one excluded)."""
        with trio.fail_after(30):  # a hang guard
            while marker not in self.buffer:
                self.buffer += await self.stream.receive_some(65536)
        before, _, self.buffer = self.buffer.partition(marker)
        return before.decode(errors="replace").splitlines()


def sent_by_workers(lines: list[str], session_id: str) -> Counter[str]:
    """The commands naming ``session_id`` a worker sent (not those a script ran), by name."""
    counted: Counter[str] = Counter()
    for line in lines:
        if session_id in line and " lua]" not in line:
            counted[line.split("] ", 1)[1].split(" ", 1)[0].strip('"').upper()] += 1
    return counted


async def test_a_plain_tools_call_costs_at_most_two_redis_round_trips() -> None:
    async with (
        redis_server() as redis_url,
        trio.open_nursery() as nursery,
        AsyncExitStack() as stack,
    ):
        shared = SharedSettings(redis_url=redis_url, share_sessions=True)
        urls = []
        for _ in range(2):
            started = partial(serve_http, worker(), port=0, shared=shared)
            urls.append((await nursery.start(started)).url)
        http = await stack.enter_async_context(httpx.AsyncClient(timeout=30))
        redis = await stack.enter_async_context(open_redis(redis_url))
        port = int(redis_url.rsplit(":", 1)[1].split("/")[0])
        monitor = Monitor(await trio.open_tcp_stream("127.0.0.1", port))
        await monitor.start()
        session = await open_legacy_session(http, urls[0], HEADERS)
        headers = {**HEADERS, **session}

        async def call(number: int) -> None:
            body = request(number, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
            answered = await http.post(urls[number % 2], content=body, headers=headers)
            assert answered.status_code == 200, answered.text
            data = [line for line in answered.text.splitlines() if line.startswith("data: {")]
            assert json.loads(data[-1][6:])["result"]["content"][0]["text"] == "3"

        for number in (2, 3):  # each worker serves the session once (the second restores it)
            await call(number)
        await redis.client.echo(b"counting-starts")
        await monitor.until(b"counting-starts")
        for number in range(4, 4 + CALLS):
            await call(number)
        await redis.client.echo(b"counting-ends")
        counted = sent_by_workers(await monitor.until(b"counting-ends"), session["mcp-session-id"])
        per_call = sum(counted.values()) / CALLS
        print(f"Redis commands per tools/call: {per_call:.2f} ({dict(counted)} over {CALLS})")
        assert per_call <= MOST_PER_CALL, counted
        await monitor.stream.aclose()
        nursery.cancel_scope.cancel()
