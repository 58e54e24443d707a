"""A server for the durable-task tests: tasks that outlive the worker running them.

Every task tool answers with its task id, attempt and the pid that finished it.
``durable`` (re-run safe) waits on its first attempt until ``release`` is called in
that worker (the test kills or pauses the worker meanwhile), and returns at once on a
later attempt; ``fragile`` (not re-run safe) waits until released; ``asks`` (re-run
safe) asks the client on every attempt, naming the pid that asks.
"""

from __future__ import annotations

import os
from typing import Any

import trio

from mcp_actors import Context, Server

server = Server("durable-tasks", "1.0.0")
_released = trio.Event()

GO: dict[str, Any] = {
    "type": "object",
    "properties": {"go": {"type": "boolean"}},
    "required": ["go"],
}


def _finished(ctx: Context, what: str) -> str:
    return f"{what} task={ctx.task_id} attempt={ctx.attempt} pid={os.getpid()}"


@server.tool
async def whoami() -> int:
    """The pid of the worker process that answered."""
    return os.getpid()


@server.tool
async def release() -> int:
    """Let this worker's waiting first attempts go on; returns the pid."""
    _released.set()
    return os.getpid()


@server.tool
async def tasks_running() -> int:
    """How many task actors this worker runs now."""
    return server.task_statistics().running


@server.tool(task="optional", rerun_safe=True)
async def identify(ctx: Context) -> str:
    """Which task and attempt this call runs as ("None 1" when it is not a task)."""
    return f"{ctx.task_id} {ctx.attempt}"


@server.tool(task="optional", rerun_safe=True)
async def durable(ctx: Context, order: str) -> str:
    """Re-run safe: the first attempt waits for ``release``; a re-run finishes at once."""
    if ctx.attempt == 1:
        await _released.wait()
    return _finished(ctx, order)


@server.tool(task="optional")
async def fragile(ctx: Context, order: str) -> str:
    """Not re-run safe: waits for ``release``."""
    await _released.wait()
    return _finished(ctx, order)


@server.tool(task="optional", rerun_safe=True)
async def asks(ctx: Context) -> str:
    """Re-run safe: asks the client (key ``go``) on every attempt."""
    answer = await ctx.elicit(f"attempt {ctx.attempt} in {os.getpid()}: go?", GO, key="go")
    return _finished(ctx, f"go={answer.content}")
