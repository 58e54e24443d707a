"""What the server keeps of finished response streams, and what that costs the collector.

A 2025-11-25 response stream that was written out to its end keeps its events for
``finished_stream_retention`` seconds, so a client whose connection broke in that very
last write can still resume it with ``Last-Event-ID``; once the session forgets the
stream (past ``max_finished_streams``) it cannot be resumed, and its events go at the
session's next request (what all this costs the cycle collector: test_collector_cost.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

import httpx
import trio

from mcp_actors import Server
from mcp_actors.server.serve_http import HttpServerHandle, serve_http
from mcp_actors.transports.http.config import HttpConfig
from mcp_actors.transports.http.event_store import EventStoreStatistics
from mcp_actors.transports.http.sse import ServerSentEvent

from deployment import HEADERS, events_of, open_legacy_session, request


def make_server() -> Server:
    server = Server("retention")

    @server.tool
    async def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return server


@asynccontextmanager
async def serving(config: HttpConfig) -> AsyncIterator[tuple[HttpServerHandle, httpx.AsyncClient]]:
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(partial(serve_http, make_server(), port=0, config=config))
        async with httpx.AsyncClient(timeout=10) as http:
            yield handle, http
        nursery.cancel_scope.cancel()


async def call_add(
    http: httpx.AsyncClient, url: str, session: dict[str, str], request_id: int
) -> list[ServerSentEvent]:
    """One ``tools/call add``, its response stream read to the end: its events."""
    arguments = {"a": request_id, "b": 1}
    body = request(request_id, "tools/call", {"name": "add", "arguments": arguments})
    async with http.stream("POST", url, content=body, headers={**HEADERS, **session}) as reply:
        assert reply.status_code == 200
        return await events_of(reply)


async def resume(
    http: httpx.AsyncClient, url: str, session: dict[str, str], event_id: str
) -> httpx.Response:
    headers = {**session, "accept": "text/event-stream", "last-event-id": event_id}
    return await http.get(url, headers=headers)


def statistics(handle: HttpServerHandle) -> EventStoreStatistics:
    stored = handle.app.event_store_statistics()
    assert stored is not None
    return stored


async def test_a_finished_stream_is_replayed_within_its_retention() -> None:
    config = HttpConfig(finished_stream_retention=60)
    async with serving(config) as (server, http):
        session = await open_legacy_session(http, server.url, HEADERS)
        primed, answer = await call_add(http, server.url, session, 7)
        assert primed.data == b"" and b'"id":7' in answer.data  # written out to its end
        replayed = await resume(http, server.url, session, primed.id)
        assert replayed.status_code == 200
        assert answer.data in replayed.content and f"id: {answer.id}" in replayed.text


async def test_streams_the_session_forgot_leave_the_store_at_its_next_request() -> None:
    remembered = 2
    config = HttpConfig(finished_stream_retention=60, max_finished_streams=remembered)
    async with serving(config) as (server, http):
        session = await open_legacy_session(http, server.url, HEADERS)
        streams = [await call_add(http, server.url, session, n) for n in range(1, 7)]
        # The remembered streams and the newest one (a priming event and a response
        # each); not the events of the initialize and the four calls forgotten.
        stored = statistics(server)
        assert (stored.streams, stored.events, stored.evicted) == (remembered + 1, 6, 0)
        forgotten, kept = streams[0][0].id, streams[-2][0].id
        assert (await resume(http, server.url, session, forgotten)).status_code == 400
        replayed = await resume(http, server.url, session, kept)
        assert replayed.status_code == 200 and streams[-2][1].data in replayed.content


async def test_after_the_retention_the_store_holds_no_event() -> None:
    config = HttpConfig(finished_stream_retention=0.05, session_rest_after=0.05)
    async with serving(config) as (server, http):
        session = await open_legacy_session(http, server.url, HEADERS)
        for n in range(1, 4):
            await call_add(http, server.url, session, n)
        assert statistics(server).events > 0
        # The idle session's rest sweeps what was written out (its next request would too).
        with trio.fail_after(10):
            while statistics(server).events:
                await trio.sleep(0.02)
        assert statistics(server) == EventStoreStatistics(0, 0, 0, 0, 0)
