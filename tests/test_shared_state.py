"""Two workers sharing state through a real ``redis-server``: what a client sees on either.

Each worker is its own ``mcp-actors run --transport http --redis-url ...`` process
(as on two machines), so the test can say which one it talks to.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import trio

from mcp_actors import Client, Outgoing, open_client
from mcp_actors.protocol import types as t
from mcp_actors.transports.http.client import open_streamable_http

from deployment import SCALE_OUT_SERVER, STATE_KEYS, Running, mcp_actors_run, redis_server

WITH_TASKS = t.ClientCapabilities(elicitation={}, extensions={t.TASKS_EXTENSION: {}})
MODERN = "2026-07-28"


@asynccontextmanager
async def two_workers(**env: str) -> AsyncIterator[tuple[Running, Running]]:
    """Redis, and workers A and B of one deployment (same Redis, same requestState keys)."""
    environment = {"MCP_ACTORS_SHARED_STATE_KEYS": STATE_KEYS, **env}
    async with redis_server() as redis_url, AsyncExitStack() as stack:
        workers = []
        for _ in range(2):
            arguments = ("--transport", "http", "--port", "0", "--redis-url", redis_url)
            running = mcp_actors_run(SCALE_OUT_SERVER, *arguments, env=environment)
            workers.append(await stack.enter_async_context(running))
        yield workers[0], workers[1]


def connect(worker: Running) -> Any:
    return open_client(worker.url, era="modern", capabilities=WITH_TASKS)


def text(result: t.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, t.TextContent)
    return block.text


async def pid_of(client: Client) -> int:
    return int(text(await client.call_tool("whoami")))


async def test_an_update_published_on_one_worker_reaches_a_listener_on_the_other() -> None:
    async with two_workers() as (a, b), connect(a) as on_a, connect(b) as on_b:
        assert await pid_of(on_a) != await pid_of(on_b)
        async with on_b.listen(
            resource_subscriptions=["note://x"], tools_list_changed=True
        ) as events:
            await events.wait_acknowledged()
            await on_a.call_tool("touch", {"uri": "note://x"})
            await on_a.call_tool("grow")
            heard = []
            with trio.fail_after(10):
                async for event in events:
                    heard.append((event.method, event.uri))
                    if len(heard) == 2:
                        break
        assert sorted(heard) == [
            ("notifications/resources/updated", "note://x"),
            ("notifications/tools/list_changed", None),
        ]


async def test_a_task_started_on_one_worker_is_polled_to_completion_on_the_other() -> None:
    async with two_workers() as (a, b), connect(a) as on_a, connect(b) as on_b:
        started = await on_a.start_tool_task("slow", {"seconds": 0.5})
        assert started.task_id is not None
        seen = await on_b.tool_task(started.task_id).status()
        assert seen.status == "working"
        result = await on_b.tool_task(started.task_id).result()
        assert text(result) == f"slept 0.5s in {a.process.pid}"


async def test_a_task_cancelled_on_one_worker_stops_on_the_worker_running_it() -> None:
    async with two_workers() as (a, b), connect(a) as on_a, connect(b) as on_b:
        started = await on_a.start_tool_task("slow", {"seconds": 30})
        assert started.task_id is not None
        assert text(await on_a.call_tool("tasks_running")) == "1"
        await on_b.tool_task(started.task_id).cancel()
        assert (await on_a.tool_task(started.task_id).status()).status == "cancelled"
        with trio.fail_after(10):  # A's actor stops too, not merely the record
            while text(await on_a.call_tool("tasks_running")) != "0":
                await trio.sleep(0.1)


async def test_a_task_answered_on_another_worker_resumes_where_it_runs() -> None:
    async with two_workers() as (a, b), connect(a) as on_a, connect(b) as on_b:
        started = await on_a.start_tool_task("approve", {"change": "v2"})
        assert started.task_id is not None
        task = on_b.tool_task(started.task_id)
        with trio.fail_after(10):
            while (status := await task.status()).status != "input_required":
                await trio.sleep(0.1)
        assert isinstance(status.input_requests, dict) and "approve" in status.input_requests
        await task.answer({"approve": {"action": "accept", "content": {"ok": True}}})
        with trio.fail_after(10):
            while (status := await task.status()).status != "completed":
                await trio.sleep(0.1)
        assert status.result is not None
        assert status.result["content"][0]["text"] == f"v2: approved=True in {a.process.pid}"


async def test_the_tasks_of_a_killed_worker_are_reported_failed() -> None:
    async with two_workers() as (a, b), connect(b) as on_b:
        async with connect(a) as on_a:
            started = await on_a.start_tool_task("slow", {"seconds": 60})
        assert started.task_id is not None
        os.kill(a.process.pid, signal.SIGKILL)
        with trio.fail_after(15):
            while (status := await on_b.tool_task(started.task_id).status()).status == "working":
                await trio.sleep(0.2)
        assert status.status == "failed"
        assert isinstance(status.error, dict)
        assert "worker running this task stopped" in status.error["message"]


class RawModernPeer:
    """Modern-era requests by hand over Streamable HTTP (each one self-contained)."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self._ids = itertools.count(1)

    async def call(self, name: str, arguments: dict[str, Any], **extra: Any) -> dict[str, Any]:
        request_id = next(self._ids)
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        }
        params = {"_meta": meta, "name": name, "arguments": arguments, **extra}
        request = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
        await self.stream.send_all([Outgoing(json.dumps(request).encode())])
        with trio.fail_after(10):
            while True:
                message = json.loads(await self.stream.receive())
                if message.get("id") == request_id:
                    return message  # type: ignore[no-any-return]


@asynccontextmanager
async def raw(worker: Running) -> AsyncIterator[RawModernPeer]:
    async with open_streamable_http(worker.url, legacy_fallback=False) as stream:
        yield RawModernPeer(stream)


async def test_an_mrtr_round_started_on_one_worker_completes_on_the_other() -> None:
    async with two_workers() as (a, b), raw(a) as on_a, raw(b) as on_b:
        asked = (await on_a.call("book", {"room": "blue"}))["result"]
        assert asked["resultType"] == "input_required"
        answers = {"confirm": {"action": "accept", "content": {"ok": True}}}
        retry = await on_b.call(
            "book", {"room": "blue"}, inputResponses=answers, requestState=asked["requestState"]
        )
        result = retry["result"]
        assert result.get("resultType", "complete") == "complete", result
        assert result["content"][0]["text"] == f"blue: confirmed=True by {b.process.pid}"
