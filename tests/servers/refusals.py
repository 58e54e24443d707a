"""A server whose prompt and resource refuse requests for the caller's fault
(:class:`~mcp_actors.ToolError`), for tests/test_refusals.py."""

from __future__ import annotations

from mcp_actors import Server, ToolError

server = Server("refusals", "1.0")


@server.prompt
async def greeting(name: str) -> str:
    """Greet ``name``, who must not be empty."""
    if not name.strip():
        raise ToolError("name must not be blank")
    return f"Hello, {name}!"


@server.resource("notes://{title}")
async def note(title: str) -> str:
    """The note called ``title``: there is only one."""
    if title != "todo":
        raise ToolError(f"no note called {title!r}")
    return "buy milk"
