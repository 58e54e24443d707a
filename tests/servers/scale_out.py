"""A server for the scale-out tests: it says which worker process answered.

``whoami`` returns the worker's pid; ``touch(uri)`` publishes a resource update and
``grow`` a tool-list change (on the change bus: other workers' listeners hear them
when the bus is shared); ``slow(seconds)`` runs as a task when the client declares
the extension; ``book(room)`` asks a question (an MRTR round in the modern era).
"""

from __future__ import annotations

import os
from typing import Annotated, Any

import msgspec
import trio

from mcp_actors import Context, Server

server = Server("scale-out", "1.0.0")

CONFIRM: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
}


@server.tool
async def whoami() -> int:
    """The pid of the worker process that answered."""
    return os.getpid()


@server.tool
async def touch(uri: str) -> int:
    """Publish an update of ``uri``; returns the pid that published it."""
    server.notify_resource_updated(uri)
    return os.getpid()


@server.tool
async def grow() -> int:
    """Announce that the tool list changed; returns the pid that announced it."""
    server.notify_tools_changed()
    return os.getpid()


@server.tool(task="optional")
async def slow(seconds: Annotated[float, msgspec.Meta(ge=0, le=60)]) -> str:
    """Sleeps ``seconds``, then says which pid ran it."""
    await trio.sleep(seconds)
    return f"slept {seconds:g}s in {os.getpid()}"


@server.tool
async def book(ctx: Context, room: str) -> str:
    """Asks the user to confirm a booking; says which pid asked is not possible (replay)."""
    answer = await ctx.elicit(f"Book {room}?", CONFIRM, key="confirm")
    confirmed = answer.accepted and answer.content is not None and answer.content["ok"]
    return f"{room}: confirmed={confirmed} by {os.getpid()}"


@server.resource("note://{name}")
async def note(name: str) -> str:
    """A note (something to subscribe to)."""
    return f"note {name}"
