"""A server to put behind gateways: it waits, reports progress, asks the user, dies.

Cancellations and starts are recorded in the events file (``MCP_TEST_EVENTS``), so a
test sees them across processes and hops.
"""

from __future__ import annotations

import os

import trio

from mcp_actors import Context, Server

from .sample import record

server = Server("upstream", "1.0")


@server.tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
async def wait_forever(tag: str = "wait") -> str:
    """Sleep until cancelled, and record the cancellation."""
    record(f"started {tag}")
    try:
        await trio.sleep_forever()
    except trio.Cancelled:
        record(f"cancelled {tag}")
        raise
    return "unreachable"


@server.tool
async def count(ctx: Context, steps: int = 3) -> str:
    """Report progress ``steps`` times."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
        await trio.sleep(0.01)
    return f"counted {steps}"


@server.tool
async def ask_name(ctx: Context) -> str:
    """Ask the user's name (an elicitation)."""
    answer = await ctx.elicit(
        "Your name?",
        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    )
    return f"hello {answer.content['name']}" if answer.accepted else f"no name ({answer.action})"


@server.tool
async def die() -> str:
    """Exit the process mid-call (in-process: raise instead)."""
    record("dying")
    os._exit(3)


@server.prompt
async def greet(name: str) -> str:
    """A greeting."""
    return f"Greet {name}"


@server.resource("notes://{topic}")
async def note(topic: str) -> str:
    return f"note on {topic}"


@server.tool
async def chatty(ctx: Context, text: str = "hello", pause: float = 0.0) -> str:
    """Log ``text`` at debug and (after ``pause`` seconds) at info, then answer."""
    await ctx.debug(f"debug {text}", logger="upstream")
    await trio.sleep(pause)
    await ctx.info(f"info {text}", logger="upstream")
    return f"said {text}"
