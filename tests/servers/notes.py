"""A server whose one tool needs the ``notes:read`` scope (served with ``--dev-auth``)."""

from __future__ import annotations

from mcp_actors import Context, Server

server = Server("notes")


@server.tool(scopes=["notes:read"])
async def read_note(ctx: Context, id: int) -> str:
    """Read a note, as the caller the token stands for."""
    principal = ctx.principal
    return f"note {id} for {principal.subject if principal else 'nobody'}"
