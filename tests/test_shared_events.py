"""Legacy SSE streams on a Redis event store: resumed on another worker, no stored event lost."""

from __future__ import annotations

import json
from contextlib import AsyncExitStack

import httpx

from mcp_actors.shared.event_store import RedisEventStore
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
