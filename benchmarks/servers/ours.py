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
the session cap, 1000 by default). ``add`` and ``echo`` are declared ``inline=True``
(they never wait: the session's reader serves them, see :mod:`mcp_actors.runtime.inline`);
``--plain-tools`` serves them as plain ``async def`` tools, as the other servers have them.
"""

from __future__ import annotations

import argparse
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


def plain_tools() -> None:
    """Serve ``add`` and ``echo`` as most tools are written: plain ``async def`` tools,
    not declared ``inline``. Each call is then a request actor of its own (a cancel scope,
    and in a legacy session a task), as in the other servers of ``benchmarks/servers/``,
    which have no such declaration."""
    for function in (add, echo):
        server.remove_tool(function.__name__)
        server.tool(function)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="The benchmark server: stdio, or --http PORT.")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve Streamable HTTP")
    parser.add_argument("--stateless", action="store_true", help="stateless, JSON replies")
    parser.add_argument("--max-sessions", type=int, default=1000, metavar="N")
    parser.add_argument("--plain-tools", action="store_true", help=plain_tools.__doc__)
    options = parser.parse_args(argv)
    if options.plain_tools:
        plain_tools()
    if options.http is None:
        run_stdio(server)
        return
    from mcp_actors.server.serve_http import run_http
    from mcp_actors.transports.http.config import HttpConfig

    run_http(
        server,
        host="127.0.0.1",
        port=options.http,
        config=HttpConfig(max_sessions=options.max_sessions, max_sessions_per_client=None),
        stateless=options.stateless,
        json_response=options.stateless,
    )


if __name__ == "__main__":
    main()
