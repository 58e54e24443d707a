"""Our benchmark server (the everything-equivalent set of tools), served over stdio.

Tools, identical in every reference server of ``benchmarks/servers/``:

* ``add(a, b)`` -> the sum (structured ``{"result": a + b}`` plus text);
* ``echo(text)`` -> ``text`` (the large-payload workload);
* ``cancellation_probe(token, seconds=30)`` and ``last_cancellation(token)``: the
  cancellation contract of ``mcp_actors.bench.runner`` — the probe reports
  progress 0 as soon as it runs, waits, and records ``time.monotonic()`` under
  ``token`` the moment it sees its cancellation; ``last_cancellation`` returns
  ``{"token": token, "observed": seconds or null}``.

Run: ``python benchmarks/servers/ours.py`` (stdio) or ``... ours.py --http PORT``
(Streamable HTTP on 127.0.0.1; add ``--stateless`` for stateless JSON replies; the HTTP
server is ``MCP_ACTORS_HTTP_FRONT_END``'s, lean by default; ``--max-sessions N`` raises
the session cap, 1000 by default).
"""

from __future__ import annotations

import sys
import time
from collections import OrderedDict
from typing import Any

import trio

from mcp_actors import Context, Server, run_stdio

server = Server("mcp-actors-bench", instructions="Benchmark tools.")

_observed: OrderedDict[str, float] = OrderedDict()  # token -> monotonic seconds; bounded


@server.tool(inline=True)
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool(inline=True)
async def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool
async def cancellation_probe(ctx: Context, token: str, seconds: float = 30.0) -> str:
    """Report progress 0, wait ``seconds``; if cancelled, record when under ``token``."""
    try:  # the report too: a cancellation may land at its checkpoint
        await ctx.report_progress(0, None, "started")
        await trio.sleep(seconds)
    except trio.Cancelled:
        _observed[token] = time.monotonic()
        while len(_observed) > 1000:
            _observed.popitem(last=False)
        raise
    return "not cancelled"


def observed_cancellations() -> list[float]:
    """When the probe saw each of its cancellations (the last 1,000), oldest first."""
    return list(_observed.values())


@server.tool(inline=True)
async def last_cancellation(token: str) -> dict[str, Any]:
    """When ``cancellation_probe`` saw its cancellation (``time.monotonic()``), or null."""
    return {"token": token, "observed": _observed.get(token)}


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        from mcp_actors.server.serve_http import run_http
        from mcp_actors.transports.http.config import HttpConfig

        stateless = "--stateless" in sys.argv
        cap = (
            int(sys.argv[sys.argv.index("--max-sessions") + 1])
            if "--max-sessions" in sys.argv
            else 1000
        )
        run_http(
            server,
            host="127.0.0.1",
            port=int(sys.argv[2]),
            config=HttpConfig(max_sessions=cap, max_sessions_per_client=None),
            stateless=stateless,
            json_response=stateless,
        )
    else:
        run_stdio(server)
