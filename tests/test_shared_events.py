"""Legacy SSE streams on a Redis event store: resumed on another worker, no stored event lost."""

from __future__ import annotations

import json
from contextlib import AsyncExitStack

import httpx

from mcp_actors.shared.event_store import (
    CACHED_EVENTS,
    WRITTEN,
    RedisEventStore,
    redis_event_stores,
)
from mcp_actors.shared.redis_client import open_redis

from deployment import (
    HEADERS,
    SCALE_OUT_SERVER,
    events_of,
    mcp_actors_run,
    open_legacy_session,
    redis_server,
    request,
)


async def test_a_stream_resumed_on_another_worker_gets_every_stored_event() -> None:
    environment = {"MCP_ACTORS_SHARED_SHARE_EVENTS": "true"}
    async with redis_server() as redis_url, AsyncExitStack() as stack:
        a, b = [
            await stack.enter_async_context(
                mcp_actors_run(
                    SCALE_OUT_SERVER,
                    *("--transport", "http", "--port", "0", "--redis-url", redis_url),
                    env=environment,
                )
            )
            for _ in range(2)
        ]
        http = await stack.enter_async_context(httpx.AsyncClient(timeout=10))
        session = await open_legacy_session(http, a.url, HEADERS)

        call = request(2, "tools/call", {"name": "slow", "arguments": {"seconds": 0.2}})
        async with http.stream(
            "POST", a.url, content=call, headers={**HEADERS, **session}
        ) as first:
            assert first.headers["content-type"].startswith("text/event-stream")
            seen_on_a = await events_of(first)
        # Say the client got only the first event (the priming one) before its connection
        # broke, and it reconnects through a balancer that picks worker B.
        primed = seen_on_a[:1]
        assert primed and primed[0].id and not primed[0].data

        resume = {**session, "accept": "text/event-stream", "last-event-id": primed[0].id}
        async with http.stream("GET", b.url, headers=resume) as replay:
            assert replay.status_code == 200
            replayed = await events_of(replay)
        messages = [json.loads(event.data) for event in replayed if event.data]
        assert [m.get("id") for m in messages] == [2]
        assert messages[0]["result"]["content"][0]["text"] == f"slept 0.2s in {a.process.pid}"
        assert [event.id for event in replayed] == [event.id for event in seen_on_a[1:]]
        # B does not host the session: its next POST there is 404 (the client starts anew).
        ping = request(3, "ping", {})
        assert (
            await http.post(b.url, content=ping, headers={**HEADERS, **session})
        ).status_code == 404


async def test_the_redis_event_store_is_bounded_per_stream_and_forgets_acknowledged_events() -> (
    None
):
    async with redis_server() as redis_url, open_redis(redis_url) as client:
        store = RedisEventStore(client, "t:events:s1", max_events=3, ttl=60)
        ids = [await store.append("post-1", f"m{i}".encode()) for i in range(5)]
        assert store.stream_of(ids[0]) == "post-1"
        assert store.stream_of("post-1/not-an-id") is None
        kept = await store.read("post-1", None)
        assert [event.payload for event in kept] == [b"m2", b"m3", b"m4"]  # the 3 newest
        assert [e.payload for e in await store.read("post-1", ids[0])] == [b"m2", b"m3", b"m4"]
        await store.acknowledge("post-1", ids[3])
        assert [event.payload for event in await store.read("post-1", None)] == [b"m4"]
        ttl = await client.client.pttl("t:events:s1:post-1")
        assert 0 < ttl <= 60_000
        await store.aclose()
        assert await store.read("post-1", None) == []


async def test_a_held_back_store_writes_what_is_read_once_and_never_the_priming_event() -> None:
    """``share_sessions``' stores: appends wait in memory for the stream's reader, which
    reads them from there and writes them to Redis in one go (so another worker finds
    them); a discarded stream goes with the next write; past the cache's bound, held
    events are written without a reader."""
    async with redis_server() as redis_url, open_redis(redis_url) as client:
        stores = redis_event_stores(client, "t", max_events=1000, ttl=60, hold_back=True)
        mine, elsewhere = stores("s1"), stores("s1")  # elsewhere: another worker's view
        key = "t:events:{s1}:w1.p1"
        primed = await mine.append("w1.p1", b"")
        answer = await mine.append("w1.p1", b"answer")
        assert await elsewhere.read("w1.p1", primed) == []  # held back: not in Redis yet
        read = await mine.read("w1.p1", None)
        assert [(event.id, event.payload) for event in read] == [(primed, b""), (answer, b"answer")]
        assert [event.id for event in await elsewhere.read("w1.p1", primed)] == [answer]
        assert await client.client.xlen(key) == 1  # the priming event is not written
        assert 0 < await client.client.pttl(key) <= 60_000

        await mine.discard("w1.p1")  # its events may go: with the next write
        assert await client.client.exists([key]) == 1
        await mine.append("w1.p2", b"next")
        await mine.flush()
        assert await client.client.exists([key]) == 0
        assert [event.payload for event in await mine.read("w1.p2", None)] == [b"next"]
        assert await client.client.xlen("t:events:{s1}:w1.p2") == 1

        for number in range(CACHED_EVENTS + 1):  # nobody reads the GET stream meanwhile
            await mine.append("w1.g", b"%d" % number)
        assert await client.client.xlen("t:events:{s1}:w1.g") == CACHED_EVENTS + 1
        read = await mine.read("w1.g", None)  # from Redis now: the cache was dropped
        assert [event.payload for event in read] == [b"%d" % n for n in range(CACHED_EVENTS + 1)]

        # A reader resuming on this worker: after an event still cached, from memory;
        # after one it passed already, from Redis.
        primed = await mine.append("w1.p3", b"")
        first, second = [await mine.append("w1.p3", data) for data in (b"a", b"b")]
        assert [event.id for event in await mine.read("w1.p3", first)] == [second]
        assert await mine.read("w1.p3", second) == []
        assert [event.id for event in await mine.read("w1.p3", primed)] == [first, second]
        await mine.aclose()
        assert await client.client.exists(["t:events:{s1}:w1.p2", "t:events:{s1}:w1.g"]) == 0


async def test_a_store_tracks_a_bounded_number_of_streams() -> None:
    """A session whose clients keep leaving streams unfinished: the store forgets the
    oldest streams it wrote, which Redis then drops by their TTL, not at the end."""
    async with redis_server() as redis_url, open_redis(redis_url) as client:
        store = redis_event_stores(client, "t", max_events=10, ttl=60)("s1")
        for number in range(WRITTEN + 1):
            await store.append(f"w1.p{number}", b"left")
        await store.aclose()
        oldest, newest = "t:events:{s1}:w1.p0", f"t:events:{{s1}}:w1.p{WRITTEN}"
        assert await client.client.exists([newest]) == 0
        assert 0 < await client.client.pttl(oldest) <= 60_000
