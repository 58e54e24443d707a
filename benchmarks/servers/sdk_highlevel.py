"""The benchmark server on the official SDK's high-level ``MCPServer`` API (stdio).

Same tools as ``ours.py`` (see there): ``add``, ``echo``, ``cancellation_probe``,
``last_cancellation``. Run: ``python benchmarks/servers/sdk_highlevel.py`` (stdio) or
``... sdk_highlevel.py --http PORT`` (Streamable HTTP on 127.0.0.1, uvicorn; add
``--stateless`` for stateless JSON replies).
"""

from __future__ import annotations

import sys
import time
from collections import OrderedDict
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("sdk-highlevel-bench", version="1.0.0", log_level="WARNING")
_observed: OrderedDict[str, float] = OrderedDict()


@server.tool()
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
async def cancellation_probe(token: str, ctx: Context, seconds: float = 30.0) -> str:
    """Report progress 0, wait ``seconds``; if cancelled, record when under ``token``."""
    try:  # the report too: a cancellation may land while it is sent
        await ctx.report_progress(0, None, "started")
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        _observed[token] = time.monotonic()
        while len(_observed) > 1000:
            _observed.popitem(last=False)
        raise
    return "not cancelled"


@server.tool()
async def last_cancellation(token: str) -> dict[str, Any]:
    """When cancellation_probe saw its cancellation (time.monotonic()), or null."""
    return {"token": token, "observed": _observed.get(token)}


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        stateless = "--stateless" in sys.argv
        server.run(
            "streamable-http",
            host="127.0.0.1",
            port=int(sys.argv[2]),
            stateless_http=stateless,
            json_response=stateless,
        )
    else:
        server.run("stdio")
