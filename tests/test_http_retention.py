"""What the server keeps of finished response streams, and what that costs the collector.

A 2025-11-25 response stream that was written out to its end keeps its events for
``finished_stream_retention`` seconds, so a client whose connection broke in that very
last write can still resume it with ``Last-Event-ID``; once the session forgets the
stream (past ``max_finished_streams``) it cannot be resumed, and its events go at the
session's next request. Under load the store holds tens of thousands of events: they
must cost CPython's cycle collector next to nothing (its full collections are latency
spikes), and the blocking entry points freeze the objects of the server's start.
"""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

import httpx
import trio

from mcp_actors import Server
from mcp_actors.server.serve_http import HttpServerHandle, serve_http
from mcp_actors.transports.event_store import (
    EVENT_OVERHEAD,
    EventMemory,
    EventStoreStatistics,
    InMemoryEventStore,
)
from mcp_actors.transports.http_config import HttpConfig
from mcp_actors.transports.sse import ServerSentEvent

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


def tracked_objects() -> int:
    gc.collect()
    return len(gc.get_objects())


async def test_retained_events_cost_the_cycle_collector_two_objects_a_stream() -> None:
    store = InMemoryEventStore()
    streams = 1000
    before = tracked_objects()
    for n in range(streams):
        await store.append(f"p{n}", b"")
        await store.append(f"p{n}", b'{"jsonrpc":"2.0","id":%d,"result":{}}' % n)
    events = await store.read("p0", None)
    assert len(events) == 2 and not any(gc.is_tracked(event) for event in events)
    assert tracked_objects() - before <= 2 * streams + 10  # a log and its deque each
    for n in range(streams):
        await store.discard(f"p{n}")
    # The logs went at once, not at the store's next sweep.
    assert tracked_objects() - before <= 10
    assert store.statistics() == EventStoreStatistics(0, 0, 0, 0, 0)


async def test_the_bound_drops_the_oldest_event_still_held_whatever_left_before() -> None:
    memory = EventMemory(max_bytes=3 * (1 + EVENT_OVERHEAD))
    store = memory.new_store()
    for stream in "abc":
        await store.append(stream, b"x")
    await store.discard("b")  # out of order: the middle stream leaves first
    await store.append("d", b"x")
    assert memory.statistics().evicted == 0
    await store.append("e", b"x")  # one too many: "a" is the oldest still held
    assert await store.read("a", None) == []
    assert [len(await store.read(stream, None)) for stream in "cde"] == [1, 1, 1]
    assert memory.statistics().evicted == 1
    await store.acknowledge("c", (await store.read("c", None))[0].id)
    await store.append("f", b"x")
    await store.append("g", b"x")  # "d" is now the oldest held
    assert [len(await store.read(stream, None)) for stream in "defg"] == [0, 1, 1, 1]
    assert memory.statistics().evicted == 2


def test_run_stdio_freezes_the_objects_of_its_start() -> None:
    program = (
        "import gc, sys; from mcp_actors import Server, run_stdio; "
        "run_stdio(Server('frozen')); print(gc.get_freeze_count(), file=sys.stderr)"
    )
    ran = subprocess.run(
        [sys.executable, "-c", program], input=b"", capture_output=True, timeout=60, check=True
    )
    assert int(ran.stderr) > 1000  # the modules, classes and functions of its start
