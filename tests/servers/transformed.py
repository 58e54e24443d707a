"""Transforms on a server's own tool, a mounted server's and a gateway upstream's.

- ``add`` (own) is shown as ``plus``, its ``b`` hidden and fixed to 10;
- ``m_shout`` (an in-process server mounted under ``m``) as ``yell``, re-described;
- ``up_count`` and ``up_wait_forever`` (``servers.upstream`` in a process of its own,
  mounted under ``up``) as ``count_to`` (``steps`` defaulting to 3) and ``hang``.
"""

from __future__ import annotations

from mcp_actors import Server
from mcp_actors.server.transforms import transform

from .processes import upstream_process

server = Server("transformed")


@server.tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


mounted = Server("mounted")


@mounted.tool
async def shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper()


server.mount(mounted, prefix="m")
server.mount(upstream_process(), prefix="up")
server.add_middleware(transform(server.tools["add"], name="plus", hide=["b"], defaults={"b": 10}))
server.add_middleware(transform("m_shout", name="yell", description="Say it louder."))
server.add_middleware(transform("up_count", name="count_to", defaults={"steps": 3}))
server.add_middleware(transform("up_wait_forever", name="hang"))
