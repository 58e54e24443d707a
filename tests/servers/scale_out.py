"""A server for the scale-out tests: it says which worker process answered.

``whoami`` returns the worker's pid; ``touch(uri)`` publishes a resource update and
``grow`` a tool-list change (it adds a tool) (on the change bus: other workers' listeners hear them
when the bus is shared); ``slow(seconds)`` runs as a task when the client declares
the extension; ``book(room)`` asks a question (an MRTR round in the modern era);
``chatter`` logs one message at each of debug, info and warning (with the call);
``shout(text)`` logs one at warning to the session, unrelated to the call (the GET
stream carries it); ``steps`` reports progress; ``haiku`` asks the client's model
(sampling); ``hold(marker)`` waits until cancelled, then writes its pid to the file
``marker`` (``<marker>.started`` once it runs).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Annotated, Any

import msgspec
import trio

from mcp_actors import Context, McpLogHandler, Server
from mcp_actors.protocol import types as t

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
    """Add a tool (the tool list changed: announced); returns the pid that added it."""
    pid = os.getpid()

    async def extra() -> str:
        return f"added by {pid}"

    server.tool(name=f"extra_{pid}")(extra)
    return pid


@server.tool(task="optional")
async def slow(seconds: Annotated[float, msgspec.Meta(ge=0, le=60)]) -> str:
    """Sleeps ``seconds``, then says which pid ran it."""
    await trio.sleep(seconds)
    return f"slept {seconds:g}s in {os.getpid()}"


@server.tool(task="optional")
async def approve(ctx: Context, change: str) -> str:
    """As a task: asks for approval (the task is input_required until answered)."""
    answer = await ctx.elicit(f"Approve {change}?", CONFIRM, key="approve")
    approved = answer.accepted and answer.content is not None and answer.content["ok"]
    return f"{change}: approved={approved} in {os.getpid()}"


@server.tool
async def chatter(ctx: Context) -> int:
    """Logs "<level> from <pid>" at debug, info and warning; returns the pid."""
    pid = os.getpid()
    await ctx.debug(f"debug from {pid}")
    await ctx.info(f"info from {pid}")
    await ctx.warning(f"warning from {pid}")
    return pid


@server.tool
async def shout(ctx: Context, text: str) -> int:
    """Logs "<text> from <pid>" at warning through Python's logging, to this session but
    unrelated to the call; returns the pid."""
    logger = logging.getLogger("scale_out.shout")
    logger.propagate = False
    handler = McpLogHandler(ctx.session)
    logger.addHandler(handler)
    try:
        logger.warning("%s from %d", text, os.getpid())
    finally:
        logger.removeHandler(handler)
    return os.getpid()


@server.tool
async def steps(ctx: Context, count: Annotated[int, msgspec.Meta(ge=1, le=100)]) -> int:
    """Reports progress 1..count of count; returns the pid."""
    for step in range(1, count + 1):
        await ctx.report_progress(step, count, f"step {step}")
    return os.getpid()


@server.tool
async def haiku(ctx: Context, topic: str) -> str:
    """Asks the client's model for a haiku; returns its text and the pid that asked."""
    answer = await ctx.sample(f"A haiku about {topic}", max_tokens=50)
    assert isinstance(answer.content, t.TextContent)
    return f"{answer.content.text} (asked by {os.getpid()})"


@server.tool
async def hold(marker: str) -> str:
    """Writes ``<marker>.started``, waits until cancelled, then writes this pid to the
    file ``marker``."""
    Path(f"{marker}.started").write_text(str(os.getpid()))
    try:
        await trio.sleep_forever()
    finally:
        Path(marker).write_text(str(os.getpid()))


@server.tool
async def tasks_running() -> int:
    """How many task actors this worker runs now."""
    return server.task_statistics().running


@server.tool
async def book(ctx: Context, room: str) -> str:
    """Asks the user to confirm a booking; the answer names the pid that finished it."""
    answer = await ctx.elicit(f"Book {room}?", CONFIRM, key="confirm")
    confirmed = answer.accepted and answer.content is not None and answer.content["ok"]
    return f"{room}: confirmed={confirmed} by {os.getpid()}"


@server.resource("note://{name}")
async def note(name: str) -> str:
    """A note (something to subscribe to)."""
    return f"note {name}"
