"""The benchmark server on FastMCP (``pip install fastmcp``; run with a Python that has it).

The ``add`` and ``echo`` tools of ``ours.py`` (HTTP workloads only). Run:
``python benchmarks/servers/fastmcp_server.py --http PORT [--stateless]`` (Streamable HTTP on
127.0.0.1, uvicorn; ``--stateless``: stateless JSON replies).
"""

from __future__ import annotations

import sys

from fastmcp import FastMCP  # type: ignore[import-not-found]

server = FastMCP("fastmcp-bench")


@server.tool()
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


if __name__ == "__main__":
    stateless = "--stateless" in sys.argv
    server.run(
        "http",
        show_banner=False,
        host="127.0.0.1",
        port=int(sys.argv[sys.argv.index("--http") + 1]),
        log_level="warning",
        stateless_http=stateless,
        json_response=stateless,
    )
