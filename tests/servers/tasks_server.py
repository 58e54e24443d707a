"""A server whose tools run as tasks (the tasks extension), for tests/test_tasks.py.

``server`` keeps tasks an hour; ``short_lived`` forgets them 300 ms after creation.
Run in-process or as a child process (``python -m mcp_actors.cli run
servers.tasks_server:server`` from ``tests/``).
"""

from __future__ import annotations

from typing import Annotated

import msgspec
import trio

from mcp_actors import Context, McpError, Server
from mcp_actors.protocol import types as t
from mcp_actors.server.tasks import TaskSettings, start_task


def build(settings: TaskSettings) -> Server:
    server = Server("tasks", "1.0", tasks=settings)
    cancelled: set[str] = set()

    @server.tool(task="optional")
    async def sleeper(token: str, seconds: Annotated[float, msgspec.Meta(ge=0, le=60)]) -> str:
        """Sleep ``seconds``; remember ``token`` if cancelled meanwhile."""
        try:
            await trio.sleep(seconds)
        except trio.Cancelled:
            cancelled.add(token)
            raise
        return f"slept {seconds:g} s"

    gates: dict[str, trio.Event] = {}

    @server.tool(task="optional")
    async def gated(token: str) -> str:
        """Wait until ``release(token)`` is called: a task whose end the test decides."""
        await gates.setdefault(token, trio.Event()).wait()
        return f"released {token}"

    @server.tool
    async def release(token: str) -> None:
        """Let ``gated(token)`` finish."""
        gates.setdefault(token, trio.Event()).set()

    @server.tool
    async def stepper(ctx: Context) -> str:
        """A plain (never a task) call that reports progress twice."""
        await ctx.report_progress(1, 2, "one")
        await ctx.report_progress(2, 2, "two")
        return "stepped"

    @server.tool
    async def cancellation_seen(token: str) -> bool:
        """Whether ``sleeper(token)`` saw its cancellation."""
        return token in cancelled

    @server.tool(task="always")
    async def crash() -> str:
        """A task whose tool raises: completed, with an isError result."""
        raise RuntimeError("boom")

    @server.tool(task="always")
    async def refuse() -> str:
        """A task that fails with a JSON-RPC error."""
        raise McpError(-32602, "refused on purpose")

    @server.tool(task="always")
    async def confirm(ctx: Context, path: str) -> str:
        """Ask before deleting ``path`` (input_required until tasks/update answers)."""
        form = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
        answer = await ctx.elicit(f"Delete {path}?", form)
        confirmed = answer.action == "accept" and bool(answer.content and answer.content["ok"])
        return f"deleted {path}" if confirmed else f"kept {path}"

    @server.tool(task="always")
    async def two_askers(ctx: Context) -> str:
        """Two concurrent parts of the handler ask at once: both outstanding together."""
        form = {"type": "object", "properties": {"v": {"type": "string"}}}
        got: dict[str, str] = {}

        async def part(key: str) -> None:
            answer = await ctx.elicit(f"{key}?", form, key=key)
            got[key] = answer.content["v"] if answer.accepted and answer.content else "-"

        async with trio.open_nursery() as nursery:
            nursery.start_soon(part, "a")
            nursery.start_soon(part, "b")
        return f"{got['a']}{got['b']}"

    @server.tool(task="deferred")
    async def deploy(ctx: Context) -> t.CreatedTask:
        """Ask for a region (an input_required round of the call), then deploy as a task."""
        form = {"type": "object", "properties": {"region": {"type": "string"}}}
        answer = await ctx.elicit("Which region?", form, key="region")
        region = answer.content["region"] if answer.accepted and answer.content else "none"

        async def roll_out() -> str:
            await trio.sleep(0.05)
            return f"deployed to {region}"

        return await start_task(ctx, roll_out)

    return server


server = build(TaskSettings(poll_interval_ms=20))
short_lived = build(TaskSettings(ttl_ms=300, poll_interval_ms=20))
