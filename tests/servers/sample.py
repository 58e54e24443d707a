"""The test suite's server: one tool per behaviour the runtime must show.

Run in-process (memory transport) or as a child process
(``python -m mcp_actors.cli run servers.sample:server`` from ``tests/``).
Handlers that must prove they observed something (a cancellation) append a line
to the file named by ``MCP_TEST_EVENTS``, which works across processes.
"""

from __future__ import annotations

import os
import time
from typing import Annotated

import msgspec
import trio

from mcp_actors import Context, McpError, Server, types

server = Server("sample", "1.2.3", instructions="The test suite's server.")


def record(event: str) -> None:
    path = os.environ.get("MCP_TEST_EVENTS")
    if path:
        with open(path, "a") as events:
            events.write(event + "\n")


@server.tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
async def echo(text: Annotated[str, msgspec.Meta(min_length=1)]) -> str:
    """Echo the text back."""
    return text


@server.tool
def blocking_sum(values: list[float]) -> float:
    """A sync tool: it runs in a worker thread and may block."""
    time.sleep(0.01)
    return sum(values)


@server.tool
async def slow(ctx: Context, steps: int = 3, delay: float = 0.01) -> str:
    """Report progress ``steps`` times, ``delay`` seconds apart."""
    for step in range(1, steps + 1):
        await trio.sleep(delay)
        await ctx.report_progress(step, steps, f"step {step}")
    return f"done after {steps} steps"


@server.tool
async def progress_burst(ctx: Context) -> str:
    """Report progress 0, 50 and 100 with no pause between them, then return at once."""
    for value in (0, 50, 100):
        await ctx.report_progress(value, 100)
    return "done"


@server.tool
async def wait_forever(ctx: Context, tag: str = "wait") -> str:
    """Sleep until cancelled, and record the cancellation."""
    record(f"started {tag}")
    try:
        await trio.sleep_forever()
    except trio.Cancelled:
        record(f"cancelled {tag}")
        raise
    return "unreachable"


@server.tool
async def fail(message: str = "boom") -> str:
    """Raise an exception: the caller gets an isError result."""
    raise RuntimeError(message)


@server.tool
async def fail_protocol() -> str:
    """Raise an McpError on purpose: the caller gets a JSON-RPC error."""
    raise McpError(-32001, "deliberate protocol error", {"why": "testing"})


class Point(msgspec.Struct):
    x: float
    y: float


@server.tool
async def midpoint(a: Point, b: Point) -> Point:
    """Structured output: the midpoint of two points."""
    return Point((a.x + b.x) / 2, (a.y + b.y) / 2)


@server.tool
async def ping_client(ctx: Context) -> str:
    """Ping the client from inside a handler (a server-to-client request)."""
    await ctx.request("ping")
    return "client answered"


@server.tool
async def log_levels(ctx: Context) -> str:
    """Send one log message at each of four levels."""
    for level in ("debug", "info", "warning", "error"):
        await ctx.log(level, {"level": level}, logger="sample")
    return "logged"


@server.tool(
    name="annotated",
    title="An annotated tool",
    annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True),
)
async def annotated_tool() -> str:
    return "ok"


@server.tool
async def toggle_extra_tool(present: bool) -> str:
    """Add or remove the tool ``extra`` at run time (clients are told the list changed)."""

    async def extra() -> str:
        return "extra"

    if present and "extra" not in server.tools:
        server.tool(name="extra", description="Added at run time.")(extra)
    elif "extra" in server.tools:
        server.remove_tool("extra")
    return "ok"
