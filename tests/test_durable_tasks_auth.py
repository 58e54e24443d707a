"""A taken-over task stays its requestor's: the re-run runs as the caller who started it.

Two ``serve_http`` workers with OAuth share a real ``redis-server``. Alice starts a
re-run-safe task on worker a (modern era, or a 2025-11-25 session); a stops in order
while the task runs, leaving it to b. On b the re-run sees Alice as its principal
(``ctx.principal``), Alice — from a new connection — reaches the task and its result,
and Bob is answered exactly as for an id that never existed.
"""

from __future__ import annotations

from functools import partial

import pytest
import trio
from test_tasks_binding import caller, protected, same_as_unknown

from mcp_actors import Client, Context, Server
from mcp_actors.protocol import types as t
from mcp_actors.server.serve_http import HttpServerHandle, serve_http
from mcp_actors.shared.settings import SharedSettings

from deployment import redis_server

#: Seconds before a test gives up waiting (a hang guard: takeover comes within ~1 s).
HANG_GUARD = 60


def worker_server() -> Server:
    """``whose`` (re-run safe) waits forever on its first attempt; a re-run says whose it is."""
    server = Server("durable-auth")

    @server.tool(task="optional", rerun_safe=True)
    async def whose(ctx: Context) -> str:
        if ctx.attempt == 1:
            await trio.sleep_forever()
        principal = ctx.principal
        assert principal is not None
        return f"{principal.subject} via {principal.client_id}, attempt {ctx.attempt}"

    return server


async def start(client: Client, era: str) -> str:
    """Start ``whose`` as a task in ``era``; its id."""
    if era == "modern":
        started = await client.start_tool_task("whose")
        assert started.task_id is not None
        return started.task_id
    created = await client.request(
        "tools/call", {"name": "whose", "task": {}}, result_type=t.CreateTaskResult
    )
    return created.task.task_id


async def result_of(client: Client, era: str, task_id: str) -> str:
    """The task's result text, once it ended (polled in ``era``)."""
    if era == "modern":
        result = await client.tool_task(task_id).result()
    else:
        result = await client.request(
            "tasks/result", {"taskId": task_id}, result_type=t.CallToolResult
        )
    block = result.content[0]
    assert isinstance(block, t.TextContent)
    return block.text


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_a_taken_over_task_runs_as_its_requestor_and_stays_theirs(era: str) -> None:
    async with redis_server() as redis_url, trio.open_nursery() as nursery:
        shared = SharedSettings(redis_url=redis_url, heartbeat_seconds=0.2, task_lease_seconds=1.0)
        serve = partial(serve_http, port=0, auth=protected(), shared=shared)
        stopping_a = trio.CancelScope()

        async def worker_a(*, task_status: trio.TaskStatus[HttpServerHandle]) -> None:
            with stopping_a:
                await serve(worker_server(), task_status=task_status)

        a: HttpServerHandle = await nursery.start(worker_a)
        b: HttpServerHandle = await nursery.start(partial(serve, worker_server()))
        async with caller(a.url, "alice", era) as alice_on_a:
            task_id = await start(alice_on_a, era)
        stopping_a.cancel()  # a stops in order: its re-run-safe task is left to b
        async with (
            caller(b.url, "alice-too", era) as alice_on_b,
            caller(b.url, "bob", era) as bob_on_b,
        ):
            with trio.fail_after(HANG_GUARD):
                assert await result_of(alice_on_b, era, task_id) == "alice via app, attempt 2"
            if era == "modern":
                await same_as_unknown(lambda i: bob_on_b.tool_task(i).status(), task_id)
            else:
                await same_as_unknown(
                    lambda i: bob_on_b.request("tasks/get", {"taskId": i}), task_id
                )
        nursery.cancel_scope.cancel()
