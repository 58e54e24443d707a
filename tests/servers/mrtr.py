"""A server whose handlers ask the client (MRTR in the modern era, requests in a legacy one).

``book(room)`` does a side effect *before* its question (counted per process), then
asks for a confirmation (key ``confirm``): the count in its answer shows whether the
handler ran once (a continuation resumed) or again (a replay).
"""

from __future__ import annotations

from typing import Any

from mcp_actors import Context, Server

server = Server("mrtr-test", "1.0.0")
#: Side effects done before the question, by room.
reservations: dict[str, int] = {}

CONFIRM: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
}


@server.tool
async def book(ctx: Context, room: str) -> str:
    """Holds ``room``, then asks the user to confirm the booking."""
    reservations[room] = reservations.get(room, 0) + 1
    answer = await ctx.elicit(f"Book {room}?", CONFIRM, key="confirm")
    confirmed = answer.accepted and answer.content is not None and answer.content["ok"]
    return f"{room}: confirmed={confirmed}, held {reservations[room]} time(s)"


@server.tool
async def survey(ctx: Context) -> str:
    """Two rounds with default keys: a name, then what the model thinks of it."""
    name = await ctx.elicit("Name?", {"type": "object", "properties": {"n": {"type": "string"}}})
    who = name.content["n"] if name.accepted and name.content else "?"
    reply = await ctx.sample(f"Say hi to {who}", max_tokens=10)
    roots = await ctx.list_roots()
    text = getattr(reply.content, "text", "")
    return f"{who} / {text} / {len(roots)} root(s)"


@server.tool
async def progress_after_question(ctx: Context) -> str:
    """Asks, then logs and reports progress: both must reach the retry that resumed it."""
    await ctx.elicit("Go?", CONFIRM, key="confirm")
    await ctx.info("resumed")
    await ctx.report_progress(1, 1)
    return "done"
