"""A server behind middleware: a tool allow-list, and a middleware with a bug.

``crash`` is not a tool: the buggy middleware raises on its way in, before any
handler could answer "unknown tool". ``secret`` is a tool the allow-list hides.
"""

from __future__ import annotations

from typing import Any

from mcp_actors import Server
from mcp_actors.middleware import Call, CallNext, Middleware, NotifyNext, Timing, ToolAllowList


class Buggy(Middleware):
    """Raises on a call of ``crash``, and on every ``notifications/roots/list_changed``."""

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        if call.method == "tools/call" and call.params.name == "crash":
            raise RuntimeError("a bug in the middleware")
        return await call_next(call)

    def on_notification(self, call: Call, call_next: NotifyNext) -> None:
        if call.method == "notifications/roots/list_changed":
            raise RuntimeError("a bug in the middleware")
        call_next(call)


server = Server("gated", "1.0", middleware=[Timing(), Buggy(), ToolAllowList({"add", "crash"})])


@server.tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
async def secret() -> str:
    """Hidden by the allow-list."""
    return "you should not see this"
