"""A shared session's events are held back until read (see mcp_actors.shared.event_store),
but not from a client whose connection broke: whatever worker it resumes on must find
them in Redis, even if the worker that wrote them is gone by then."""

from __future__ import annotations

import json
from contextlib import AsyncExitStack
from functools import partial

import httpx
import trio

from mcp_actors import Server
from mcp_actors.server.serve_http import serve_http
from mcp_actors.shared.redis_client import open_redis
from mcp_actors.shared.settings import SharedSettings
from mcp_actors.transports.http.client_base import ResponseChunks
from mcp_actors.transports.http.sse import SSEDecoder

from deployment import HEADERS, open_legacy_session, redis_server, request


async def test_the_answer_to_a_broken_stream_is_in_redis_without_a_reader() -> None:
    release = trio.Event()
    server = Server("held", "1.0")

    @server.tool
    async def held() -> str:
        """Answer once the test says so."""
        await release.wait()
        return "done"

    async with (
        redis_server() as redis_url,
        trio.open_nursery() as nursery,
        AsyncExitStack() as stack,
    ):
        shared = SharedSettings(redis_url=redis_url, share_sessions=True)
        handle = await nursery.start(partial(serve_http, server, port=0, shared=shared))
        http = await stack.enter_async_context(httpx.AsyncClient(timeout=30))
        redis = await stack.enter_async_context(open_redis(redis_url))
        session = await open_legacy_session(http, handle.url, HEADERS)
        call = request(2, "tools/call", {"name": "held", "arguments": {}})
        headers = {**HEADERS, **session}
        async with http.stream("POST", handle.url, content=call, headers=headers) as response:
            chunks, primed = ResponseChunks(response), []
            try:
                while not primed:
                    chunk = await chunks.next()
                    assert chunk is not None
                    primed = [event for event in SSEDecoder().feed(chunk) if event.id]
            finally:
                await chunks.aclose()  # the connection drops with the priming event's id
        release.set()
        stream, _, entry = primed[0].id.rpartition("/")
        key = f"mcp-actors:events:{{{session['mcp-session-id']}}}:{stream}"
        with trio.fail_after(15):  # a hang guard: held back, it would never come
            while not (written := await redis.client.xrange(key, f"({entry}", "+")):
                await trio.sleep(0.05)
        answer = json.loads(written[0].field_values[b"d"])
        assert (answer["id"], answer["result"]["content"][0]["text"]) == (2, "done")
        nursery.cancel_scope.cancel()
