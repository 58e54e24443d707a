"""A stdio MCP server built with the official SDK's high-level API (``MCPServer``).

Used as a real, independent peer in interop tests. Tools:

* ``add(a, b)``   -> the sum (text content ``"5"`` for 2+3, plus structured output)
* ``echo(text)``  -> ``text``
* ``slow(steps, delay)`` -> reports progress ``i/steps`` after each step of ``delay``
  seconds; if the call is cancelled it appends a line ``cancelled`` to the file named
  by ``$SDK_PEER_EVENTS`` (when set) before re-raising.

Run: ``python tests/peers/sdk_server.py`` (stdio; logs go to stderr).
"""

from __future__ import annotations

import os

import anyio
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("sdk-peer", version="1.0.0", log_level="WARNING")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


def _record(event: str) -> None:
    path = os.environ.get("SDK_PEER_EVENTS")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(event + "\n")


@server.tool()
async def slow(steps: int, delay: float, ctx: Context) -> str:
    """Sleep ``steps`` times ``delay`` seconds, reporting progress after each step."""
    try:
        for i in range(steps):
            await anyio.sleep(delay)
            await ctx.report_progress(i + 1, steps, f"step {i + 1}/{steps}")
    except anyio.get_cancelled_exc_class():
        _record("cancelled")
        raise
    return f"done after {steps} steps"


if __name__ == "__main__":
    server.run("stdio")
