"""A server with a bug a client can trigger at will: its resource handler raises.

Used to check what an internal error shows the peer (nothing of the exception) and
how much it writes to the log (a bounded amount, however often it is triggered).
"""

from __future__ import annotations

from mcp_actors import Server

server = Server("faulty", "0.1.0")

SECRET = "password=hunter2 in /srv/secret/config.toml"


@server.resource("bug://always", mime_type="text/plain")
async def always_fails() -> str:
    """A handler bug: every read raises an exception whose text must not leave the server."""
    raise RuntimeError(SECRET)


@server.tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b
