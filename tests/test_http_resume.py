"""A Streamable HTTP response stream that keeps breaking loses nothing.

The client's HTTP connections are cut 100 times at random points in the middle
of event streams (by an ``httpx`` transport that aborts the read); each time the
client resumes with ``Last-Event-ID`` after the server's ``retry`` delay, and the
server replays what the broken connection missed. Every one of the tool's log
messages must arrive exactly once, in order, followed by the result.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from contextlib import suppress
from functools import partial

import attrs
import httpx
import trio

from mcp_actors import ClientHandlers, Context, Server, open_client, types
from mcp_actors.server.serve_http import serve_http
from mcp_actors.transports.http.client import open_streamable_http
from mcp_actors.transports.http.config import HttpConfig
from mcp_actors.transports.http.sse_client import open_sse_client

MESSAGES = 600
KILLS = 100

chatty = Server("chatty", "1.0")


@chatty.tool
async def chatter(ctx: Context, count: int) -> str:
    """Send ``count`` log messages, pausing now and then so connections break mid-stream."""
    for n in range(count):
        await ctx.log("info", n, logger="chatter")
        if n % 20 == 19:
            await trio.sleep(0.005)
    return f"sent {count}"


@attrs.define
class Breaker:
    """Cuts response streams after a random number of bytes, ``budget`` times in all."""

    budget: int
    rng: random.Random = attrs.field(factory=lambda: random.Random(1234))
    cuts: int = 0

    def take(self) -> int | None:
        if self.cuts >= self.budget:
            return None
        return self.rng.randint(200, 3000)


class _FlakyBody(httpx.AsyncByteStream):
    """A response body that raises ``ReadError`` after ``limit`` bytes (and really closes)."""

    def __init__(self, inner: httpx.AsyncByteStream, limit: int, breaker: Breaker) -> None:
        self._inner = inner
        self._chunks: AsyncIterator[bytes] | None = None
        self._left = limit
        self._breaker = breaker

    def __aiter__(self) -> _FlakyBody:
        return self

    async def __anext__(self) -> bytes:
        if self._chunks is None:
            self._chunks = self._inner.__aiter__()
        if self._left <= 0:
            await self._cut()
        chunk = await self._chunks.__anext__()
        if len(chunk) > self._left:
            keep = chunk[: self._left]
            self._left = 0
            return keep
        self._left -= len(chunk)
        return chunk

    async def _cut(self) -> None:
        self._breaker.cuts += 1
        await self._inner.aclose()
        assert self._chunks is not None
        with suppress(StopAsyncIteration, httpx.HTTPError, OSError):
            # Finish the inner generators: what the connection had buffered, then its end
            # (a server that writes a reply in few sends leaves more than one chunk).
            for _ in range(10_000):
                await self._chunks.__anext__()
        raise httpx.ReadError("connection cut by the test")

    async def aclose(self) -> None:
        await self._inner.aclose()


class _FlakyTransport(httpx.AsyncBaseTransport):
    def __init__(self, breaker: Breaker) -> None:
        self._inner = httpx.AsyncHTTPTransport()
        self._breaker = breaker

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        limit = self._breaker.take()
        if limit is None or response.headers.get("content-type") != "text/event-stream":
            return response
        assert isinstance(response.stream, httpx.AsyncByteStream)
        response.stream = _FlakyBody(response.stream, limit, self._breaker)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


async def test_a_hundred_broken_connections_lose_no_message() -> None:
    breaker = Breaker(budget=KILLS)
    received: list[types.LoggingMessageParams] = []
    config = HttpConfig(retry_interval=5)
    async with trio.open_nursery() as nursery:
        server = await nursery.start(partial(serve_http, chatty, port=0, config=config))
        http = httpx.AsyncClient(
            transport=_FlakyTransport(breaker), timeout=httpx.Timeout(10, read=None)
        )
        async with (
            http,
            open_streamable_http(server.url, http_client=http, max_reconnects=1000) as stream,
        ):
            handlers = ClientHandlers(on_log=received.append)
            async with open_client(stream, handlers=handlers, era="legacy") as client:
                breaker.cuts = 0  # count only cuts during the tool call
                with trio.fail_after(60):
                    while breaker.cuts < KILLS:
                        result = await client.call_tool("chatter", {"count": MESSAGES})
                        assert result.content == [types.TextContent(text=f"sent {MESSAGES}")]
                        with trio.fail_after(10):
                            while len(received) % MESSAGES:
                                await trio.sleep(0.01)
                        calls = len(received) // MESSAGES
                        assert [m.data for m in received] == list(range(MESSAGES)) * calls
        nursery.cancel_scope.cancel()
    assert breaker.cuts == KILLS
    assert stream.reconnects >= KILLS - 5  # a few cuts may hit the standalone GET stream


async def test_legacy_sse_counts_every_message_too() -> None:
    received: list[types.LoggingMessageParams] = []
    async with trio.open_nursery() as nursery:
        server = await nursery.start(partial(serve_http, chatty, port=0))
        async with (
            open_sse_client(server.sse_url or "") as stream,
            open_client(
                stream, handlers=ClientHandlers(on_log=received.append), era="legacy"
            ) as client,
        ):
            await client.call_tool("chatter", {"count": MESSAGES})
            with trio.fail_after(10):
                while len(received) < MESSAGES:
                    await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
    assert [m.data for m in received] == list(range(MESSAGES))
