"""Durable tasks: a task whose worker dies is taken over by another worker.

Real ``redis-server`` and separate ``mcp-actors run`` processes (as on several
machines); a worker is killed with SIGKILL (or paused with SIGSTOP) mid-task. A
re-run-safe task completes on another worker, with the same task id and the next
attempt; an unsafe one ends ``failed`` with the reason; either way a client polling
or listening on a surviving worker sees the end (no task is left ``working``).
The lease is short here (1.5 s, heartbeat 0.5 s) so that the takeover comes soon;
the waits are generous bounds against a hang, never a measure of speed.
"""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import pytest
import trio

from mcp_actors import open_client
from mcp_actors.protocol import types as t

from conftest import FRONT_ENDS
from deployment import SERVERS, STATE_KEYS, Running, mcp_actors_run, redis_server

#: Each test on each HTTP front end (the workers read MCP_ACTORS_HTTP_FRONT_END).
pytestmark = pytest.mark.parametrize("http_front_end", FRONT_ENDS, indirect=True)

SERVER = str(SERVERS / "durable_tasks.py")
WITH_TASKS = t.ClientCapabilities(elicitation={}, extensions={t.TASKS_EXTENSION: {}})
FAST_LEASE = {
    "MCP_ACTORS_SHARED_STATE_KEYS": STATE_KEYS,
    "MCP_ACTORS_SHARED_HEARTBEAT_SECONDS": "0.5",
    "MCP_ACTORS_SHARED_TASK_LEASE_SECONDS": "1.5",
}
#: Seconds before a test gives up waiting (a hang guard: takeover takes ~2 s).
HANG_GUARD = 60


@asynccontextmanager
async def workers(count: int, **env: str) -> AsyncIterator[list[Running]]:
    """Redis, and ``count`` workers of one deployment, each its own process."""
    async with redis_server() as redis_url, AsyncExitStack() as stack:
        started = []
        for _ in range(count):
            arguments = ("--transport", "http", "--port", "0", "--redis-url", redis_url)
            running = mcp_actors_run(SERVER, *arguments, env={**FAST_LEASE, **env})
            started.append(await stack.enter_async_context(running))
        yield started


def connect(worker: Running) -> Any:
    return open_client(worker.url, era="modern", capabilities=WITH_TASKS)


def text(result: t.CallToolResult | dict[str, Any] | None) -> str:
    if isinstance(result, dict):
        block = result["content"][0]
        return str(block["text"])
    assert result is not None
    first = result.content[0]
    assert isinstance(first, t.TextContent)
    return first.text


async def until_ended(client: Any, task_id: str) -> t.DetailedTask:
    """Poll ``tasks/get`` until the task is terminal; its last state."""
    with trio.fail_after(HANG_GUARD):
        while (status := await client.tool_task(task_id).status()).status not in (
            "completed",
            "failed",
            "cancelled",
        ):
            await trio.sleep(0.1)
    return status


async def until_asked(client: Any, task_id: str, attempt: int) -> str:
    """Poll until the task's ``go`` question of ``attempt`` is outstanding; its message."""
    with trio.fail_after(HANG_GUARD):
        while True:
            status = await client.tool_task(task_id).status()
            requests = status.input_requests
            if status.status == "input_required" and isinstance(requests, dict):
                message = str(requests["go"]["params"]["message"])
                if message.startswith(f"attempt {attempt} "):
                    return message
            await trio.sleep(0.1)


async def test_a_rerun_safe_task_of_a_killed_worker_completes_on_the_other() -> None:
    async with workers(2) as (a, b), connect(b) as on_b:
        async with connect(a) as on_a:
            started = await on_a.start_tool_task("durable", {"order": "o-1"})
        task_id = started.task_id
        assert task_id is not None
        assert (await on_b.tool_task(task_id).status()).status == "working"
        async with on_b.listen(extra={"taskIds": [task_id]}) as events:
            await events.wait_acknowledged()
            os.kill(a.process.pid, signal.SIGKILL)
            ended = await until_ended(on_b, task_id)
            with trio.fail_after(HANG_GUARD):  # the listener on B hears the end too
                async for event in events:
                    if event.params.status == "completed":
                        break
        assert ended.status == "completed", ended
        assert text(ended.result) == f"o-1 task={task_id} attempt=2 pid={b.process.pid}"


async def failure_after_a_kill(a: Running, on_b: Any, tool: str) -> str:
    """Start ``tool`` as a task on ``a``, SIGKILL ``a``: the error message the task
    ends ``failed`` with, polled on ``b``."""
    async with connect(a) as on_a:
        started = await on_a.start_tool_task(tool, {"order": "o-2"})
    assert started.task_id is not None
    os.kill(a.process.pid, signal.SIGKILL)
    ended = await until_ended(on_b, started.task_id)
    assert ended.status == "failed" and isinstance(ended.error, dict), ended
    assert "the worker running this task stopped" in ended.error["message"]
    return str(ended.error["message"])


async def test_an_unsafe_task_of_a_killed_worker_fails_with_the_reason() -> None:
    async with workers(2) as (a, b), connect(b) as on_b:
        assert "tool 'fragile' is not declared rerun_safe" in await failure_after_a_kill(
            a, on_b, "fragile"
        )
        assert text(await on_b.call_tool("tasks_running")) == "0"  # not run again


async def test_a_task_gives_up_after_its_attempts() -> None:
    async with workers(2, MCP_ACTORS_SHARED_TASK_MAX_ATTEMPTS="1") as (a, b), connect(b) as on_b:
        message = await failure_after_a_kill(a, on_b, "durable")
        assert "gave up after 1 attempt (at most 1)" in message
        assert text(await on_b.call_tool("tasks_running")) == "0"


async def test_a_rerun_asks_again_and_is_answered_through_another_worker() -> None:
    async with workers(3) as (a, b, c), connect(c) as on_c:
        async with connect(a) as on_a:
            started = await on_a.start_tool_task("asks", {})
        task_id = started.task_id
        assert task_id is not None
        assert await until_asked(on_c, task_id, 1) == f"attempt 1 in {a.process.pid}: go?"
        os.kill(a.process.pid, signal.SIGKILL)
        asked = await until_asked(on_c, task_id, 2)  # B or C took it over and asks again
        runner = b if str(b.process.pid) in asked else c
        assert asked == f"attempt 2 in {runner.process.pid}: go?"
        async with connect(b if runner is c else c) as elsewhere:  # answered on the other one
            await elsewhere.tool_task(task_id).answer(
                {"go": {"action": "accept", "content": {"go": True}}}
            )
            ended = await until_ended(elsewhere, task_id)
        assert ended.status == "completed", ended
        expected = f"go={{'go': True}} task={task_id} attempt=2 pid={runner.process.pid}"
        assert text(ended.result) == expected


async def test_a_paused_worker_that_lost_its_task_writes_nothing_over_its_successor() -> None:
    async with workers(2) as (a, b), connect(a) as on_a, connect(b) as on_b:
        started = await on_a.start_tool_task("durable", {"order": "o-4"})
        task_id = started.task_id
        assert task_id is not None
        os.kill(a.process.pid, signal.SIGSTOP)  # alive, but silent past its lease
        try:
            ended = await until_ended(on_b, task_id)
        finally:
            os.kill(a.process.pid, signal.SIGCONT)
        assert text(ended.result) == f"o-4 task={task_id} attempt=2 pid={b.process.pid}"
        assert text(await on_a.call_tool("release")) == str(a.process.pid)  # attempt 1 ends
        with trio.fail_after(HANG_GUARD):  # ... and its run stops without writing
            while text(await on_a.call_tool("tasks_running")) != "0":
                await trio.sleep(0.1)
        again = await on_a.tool_task(task_id).status()
        assert again.status == "completed"
        assert text(again.result) == text(ended.result)
