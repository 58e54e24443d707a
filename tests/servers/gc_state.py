"""A server whose one tool reports its process's cycle-collector settings.

``tests/test_gc_policy.py`` serves it with ``mcp-actors run`` over each transport to
see the serving GC policy (:mod:`mcp_actors.runtime.gc_policy`) applied.
"""

from __future__ import annotations

import gc

from mcp_actors import Server

server = Server("gc-state")


@server.tool(inline=True)
async def gc_state() -> dict[str, int]:
    """The full-collection threshold and how many objects are frozen."""
    return {"full_collection_every": gc.get_threshold()[2], "frozen": gc.get_freeze_count()}
