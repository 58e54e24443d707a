"""A small but real demo server: arithmetic, text, a slow job with progress, typed output.

Serve it over stdio with ``mcp-actors run mcp_actors.examples.demo:server``.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
import trio

from mcp_actors import Context, Server

server = Server("mcp-actors-demo", instructions="Tools to try mcp_actors with.")


@server.tool(inline=True)  # never waits: served without a task of its own
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
def word_count(text: Annotated[str, msgspec.Meta(description="Any text")]) -> str:
    """Count the words in a text (a sync tool: it runs in a worker thread)."""
    return f"{len(text.split())} words"


@server.tool
async def countdown(ctx: Context, seconds: float = 3.0, steps: int = 5) -> str:
    """Wait ``seconds``, reporting progress ``steps`` times; cancel it at any time."""
    for step in range(1, steps + 1):
        await trio.sleep(seconds / steps)
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
    return "lift-off"


class Forecast(msgspec.Struct):
    city: str
    temperature_c: float
    conditions: str


@server.tool(inline=True)
async def forecast(city: str) -> Forecast:
    """A made-up weather forecast, returned as structured content."""
    return Forecast(city=city, temperature_c=21.5, conditions="sunny")


if __name__ == "__main__":
    server.run()  # python -m mcp_actors.examples.demo: stdio
