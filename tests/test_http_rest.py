"""Idle Streamable HTTP sessions rest: no task until something concerns them, every behaviour kept.

A session idle for ``session_rest_after`` seconds gives up its tasks (see
``mcp_actors.runtime.session``); its next request, a message the server sends it, a
DELETE, idle expiry and the server's shutdown each still reach it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import httpx
import trio

from mcp_actors import Server
from mcp_actors.server.serve_http import HttpServerHandle, serve_http
from mcp_actors.transports.http.client_base import ResponseChunks, read_events
from mcp_actors.transports.http.config import HttpConfig
from mcp_actors.transports.http.sse import SSEDecoder

from deployment import HEADERS, open_legacy_session

REST = 0.05  # session_rest_after in these tests: sessions fall asleep within ~0.1 s


def make_server() -> Server:
    server = Server("resting")

    @server.tool
    async def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool
    async def wait(seconds: float) -> str:
        """Sleep, then answer."""
        await trio.sleep(seconds)
        return "done"

    return server


@asynccontextmanager
async def serving(
    server: Server | None = None, **config: Any
) -> AsyncIterator[tuple[HttpServerHandle, httpx.AsyncClient]]:
    options = HttpConfig(session_rest_after=REST, finished_stream_retention=REST, **config)
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(
            partial(serve_http, server or make_server(), port=0, config=options)
        )
        async with httpx.AsyncClient(timeout=httpx.Timeout(10, read=None)) as http:
            yield handle, http
        nursery.cancel_scope.cancel()


async def open_session(http: httpx.AsyncClient, url: str) -> dict[str, str]:
    """An initialized 2025-11-25 session: the headers every later request of it sends."""
    return {**HEADERS, **await open_legacy_session(http, url, HEADERS)}


async def asleep(handle: HttpServerHandle, count: int) -> None:
    """Wait until ``count`` sessions sleep, their tasks ended (one task per session awake)."""
    with trio.fail_after(5):
        while True:
            statistics = handle.supervisor.statistics()
            awake = statistics.sessions_active - statistics.sessions_asleep
            if statistics.sessions_asleep == count and statistics.tasks == awake:
                return
            await trio.sleep(0.01)


def results(body: bytes) -> list[Any]:
    return [json.loads(event.data) for event in SSEDecoder().feed(body) if event.data]


async def call_add(http: httpx.AsyncClient, url: str, session: dict[str, str], id: int) -> Any:
    body = {
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": id, "b": 1}},
    }
    response = await http.post(url, json=body, headers=session)
    assert response.status_code == 200
    return results(response.content)[-1]["result"]["structuredContent"]


async def test_idle_sessions_sleep_without_a_task_and_a_request_wakes_them() -> None:
    async with serving() as (handle, http):
        sessions = [await open_session(http, handle.url) for _ in range(3)]
        await asleep(handle, 3)
        statistics = handle.supervisor.statistics()
        assert statistics.sessions_active == 3 and statistics.tasks == 0  # no task at all
        assert await call_add(http, handle.url, sessions[1], 41) == {"result": 42}
        assert handle.supervisor.statistics().sessions_asleep == 2
        await asleep(handle, 3)  # and back to sleep
        for number, session in enumerate(sessions):
            assert await call_add(http, handle.url, session, number) == {"result": number + 1}
        assert handle.sessions == 3


async def test_a_session_with_a_request_in_flight_stays_awake() -> None:
    async with serving() as (handle, http):
        session = await open_session(http, handle.url)
        await asleep(handle, 1)
        body = {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": {"name": "wait", "arguments": {"seconds": 10 * REST}},
        }
        async with trio.open_nursery() as nursery:
            replies: list[httpx.Response] = []

            async def post() -> None:
                replies.append(await http.post(handle.url, json=body, headers=session))

            nursery.start_soon(post)
            with trio.fail_after(5):
                while handle.supervisor.statistics().sessions_asleep:
                    await trio.sleep(0.01)
            await trio.sleep(5 * REST)  # idle for the sweep, but a request is in flight
            assert handle.supervisor.statistics().sessions_asleep == 0
        assert results(replies[0].content)[-1]["result"]["content"][0]["text"] == "done"
        await asleep(handle, 1)


async def test_a_sleeping_session_gets_a_server_notification_on_a_get_stream_opened_later() -> None:
    server = make_server()
    async with serving(server) as (handle, http):
        session = await open_session(http, handle.url)
        await asleep(handle, 1)

        @server.tool
        async def extra() -> str:
            """A tool added while the session sleeps."""
            return "extra"

        await asleep(handle, 1)  # it woke to write the notification, then slept again
        get = {**session, "accept": "text/event-stream"}
        with trio.fail_after(5):
            async with http.stream("GET", handle.url, headers=get) as response:
                assert response.status_code == 200
                chunks, decoder = ResponseChunks(response), SSEDecoder()
                try:
                    events: list[Any] = []
                    while not events:
                        read = await read_events(chunks, decoder)
                        assert read is not None, "the stream ended"
                        events = [json.loads(e.data) for e in read if e.data]
                finally:
                    await chunks.aclose()
        assert events[0]["method"] == "notifications/tools/list_changed"


async def test_a_sleeping_session_still_expires() -> None:
    async with serving(session_idle_timeout=0.5) as (handle, http):
        session = await open_session(http, handle.url)
        await asleep(handle, 1)
        with trio.fail_after(5):
            while handle.sessions:
                await trio.sleep(0.02)
        assert handle.app.registry.expired == 1
        ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
        assert (await http.post(handle.url, json=ping, headers=session)).status_code == 404
        with trio.fail_after(5):
            while handle.supervisor.statistics().sessions_active:
                await trio.sleep(0.02)


async def test_delete_ends_a_sleeping_session() -> None:
    async with serving() as (handle, http):
        session = await open_session(http, handle.url)
        await asleep(handle, 1)
        (sleeper,) = handle.supervisor.sessions
        assert (await http.delete(handle.url, headers=session)).status_code == 200
        with trio.fail_after(5):
            await sleeper.closed.wait()
        assert handle.supervisor.statistics().sessions_active == 0
        assert handle.sessions == 0


async def test_a_full_table_evicts_a_sleeping_session() -> None:
    async with serving(max_sessions=2) as (handle, http):
        first = await open_session(http, handle.url)
        second = await open_session(http, handle.url)
        await asleep(handle, 2)
        await open_session(http, handle.url)
        assert handle.app.registry.evicted == 1 and handle.sessions == 2
        ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
        assert (await http.post(handle.url, json=ping, headers=first)).status_code == 404
        assert (await http.post(handle.url, json=ping, headers=second)).status_code == 200


async def test_shutting_down_ends_sleeping_sessions() -> None:
    async with serving() as (handle, http):
        await open_session(http, handle.url)
        await asleep(handle, 1)
        (sleeper,) = handle.supervisor.sessions
    assert sleeper.closed.is_set()
