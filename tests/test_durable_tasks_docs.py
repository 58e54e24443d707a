"""The third-party task store of ``docs/task-stores.md``, run as written.

Two servers ("workers" a and b) in one process share the documented store's backend;
a client of each speaks over an in-memory transport. Worker a goes while it runs
a task — killed (cut from the backend first: nothing it writes any more is shared, as
after a SIGKILL) or stopped in order — its supervisor, sessions, task actors and lease
renewal cancelled; b takes the task over through the store's
``take_over``: a re-run-safe task completes on b as attempt 2, an unsafe one fails
with the reason (or, stopped in order, is cancelled as before), and b's client polls
each to its end. Time is trio's MockClock
(autojump): the lease lapses without waiting for it.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from mcp_actors import Client, Context, Server, open_client
from mcp_actors.protocol import types as t
from mcp_actors.runtime.supervisor import open_supervisor
from mcp_actors.transports.memory import memory_pair

DOC = Path(__file__).parent.parent / "docs" / "task-stores.md"
WITH_TASKS = t.ClientCapabilities(extensions={t.TASKS_EXTENSION: {}})


def documented_store() -> dict[str, Any]:
    """The names the document's store example defines (its code block, executed)."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.DOTALL)
    (source,) = [block for block in blocks if "class LeasedTaskStore" in block]
    namespace: dict[str, Any] = {"__name__": "documented_store"}
    exec(compile(source, str(DOC), "exec"), namespace)
    return namespace


def worker_server(name: str) -> Server:
    """The same tools on every worker: ``durable`` (re-run safe) waits forever on its
    first attempt; ``fragile`` (not re-run safe) always does."""
    server = Server(f"worker-{name}")

    @server.tool(task="optional", rerun_safe=True)
    async def durable(ctx: Context, order: str) -> str:
        if ctx.attempt == 1:
            await trio.sleep_forever()
        return f"{order} task={ctx.task_id} attempt={ctx.attempt} on {name}"

    @server.tool(task="optional")
    async def fragile(order: str) -> str:
        await trio.sleep_forever()
        return order

    return server


@asynccontextmanager
async def serving(server: Server, store: Any) -> AsyncIterator[tuple[Client, trio.CancelScope]]:
    """``server`` serving as a worker does — lease kept, takeover loop running, sessions
    supervised — with a client connected; cancel the scope to kill the worker."""
    server.share_state(task_store=store)
    async with trio.open_nursery() as outer:
        killed = trio.CancelScope()
        ready: trio.Event = trio.Event()
        client_end, server_end = memory_pair()

        async def worker() -> None:
            with killed:
                async with open_supervisor() as supervisor, trio.open_nursery() as nursery:
                    nursery.start_soon(store.keep_lease)
                    await nursery.start(server.take_over_tasks, supervisor)
                    await supervisor.start_session(server.create_session(server_end))
                    ready.set()
                    await trio.sleep_forever()

        outer.start_soon(worker)
        await ready.wait()
        async with open_client(client_end, era="modern", capabilities=WITH_TASKS) as client:
            yield client, killed
        outer.cancel_scope.cancel()


DONE_ON_B = "o-1 task={task_id} attempt=2 on b"


@pytest.mark.parametrize(
    ("tool", "killed", "status", "outcome"),
    [
        ("durable", True, "completed", DONE_ON_B),
        ("durable", False, "completed", DONE_ON_B),  # a stops in order: leaves it to b
        ("fragile", True, "failed", "tool 'fragile' is not declared rerun_safe"),
        ("fragile", False, "cancelled", "the server stopped"),
    ],
)
async def test_the_documented_store_takes_over_the_task_of_a_worker_gone(
    mock_clock: trio.testing.MockClock, tool: str, killed: bool, status: str, outcome: str
) -> None:
    mock_clock.autojump_threshold = 0
    names = documented_store()
    backend = names["Backend"]()
    store_a = names["LeasedTaskStore"](backend, "a", lease=3.0)
    store_b = names["LeasedTaskStore"](backend, "b", lease=3.0)
    async with (
        serving(worker_server("b"), store_b) as (on_b, _),
        serving(worker_server("a"), store_a) as (on_a, kill_a),
    ):
        started = await on_a.start_tool_task(tool, {"order": "o-1"})
        task_id = started.task_id
        assert task_id is not None
        assert (await on_b.tool_task(task_id).status()).status == "working"
        if killed:  # as SIGKILL: a's last words reach no one
            store_a.backend = names["Backend"]()
        kill_a.cancel()
        with trio.fail_after(60):  # mock time: the lease lapses, b's next look claims it
            while (ended := await on_b.tool_task(task_id).status()).status == "working":
                await trio.sleep(0.5)
        assert ended.status == status
        if status == "completed":
            assert ended.result is not None
            assert ended.result["content"][0]["text"] == outcome.format(task_id=task_id)
        elif status == "failed":
            assert isinstance(ended.error, dict) and outcome in ended.error["message"]
        else:
            assert ended.status_message == outcome
        assert store_a.running() == 0  # the record moved to b, or ended
