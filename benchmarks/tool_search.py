"""What a tool search costs on a gateway of 500 tools: per search, and per index build.

The gateway is ``tests/servers/searched.py``'s: the 500 tools of
``tests/data/tool_corpus.json``, one in-process upstream per service (25), behind a
:class:`~mcp_actors.server.tool_search.ToolSearch`. An in-process client (the modern
era, or ``--era legacy``) sends ``--searches`` ``search_tools`` calls, cycling through
the corpus's 100 queries; each lists the catalog through the gateway (the upstreams'
lists are cached), compares it with the indexed one and ranks. Then the index alone is
built ``--builds`` times. Printed: milliseconds per search (median of ``--rounds``
rounds) and per build, and the top-3 hit rate over the queries.

Timings are only meaningful on a quiet machine; ``--searches 20 --rounds 1`` is a quick
sanity run.

Usage::

    python benchmarks/tool_search.py --searches 200 --rounds 5 --builds 20
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import trio

from mcp_actors import open_client
from mcp_actors.client.era import Era
from mcp_actors.protocol import types as t
from mcp_actors.server.tool_index import ToolIndex
from mcp_actors.server.tool_search import ToolSearch

sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
from servers.searched import CORPUS, corpus_gateway


async def searches(count: int, rounds: int, era: Era) -> tuple[float, int]:
    """Median ms per search over ``rounds`` rounds of ``count``; and the top-3 hits."""
    queries = CORPUS["queries"]
    per_round = []
    hits = 0
    async with open_client(corpus_gateway(ToolSearch()), era=era) as client:
        for query in queries:  # warms the upstream lists and the index; counts the hits
            result = await client.call_tool("search_tools", {"query": query["query"]})
            assert isinstance(result.structured_content, dict)
            names = [tool["name"] for tool in result.structured_content["tools"]][:3]
            hits += query["expect"] in names
        for _ in range(rounds):
            start = time.perf_counter()
            for i in range(count):
                query = queries[i % len(queries)]["query"]
                await client.call_tool("search_tools", {"query": query})
            per_round.append((time.perf_counter() - start) * 1000 / count)
    return statistics.median(per_round), hits


def builds(count: int) -> float:
    """ms per index build of the 500 tools."""
    tools = [
        t.Tool(
            name=f"{tool['service']}_{tool['name']}",
            description=tool["description"],
            input_schema=tool["inputSchema"],
        )
        for tool in CORPUS["tools"]
    ]
    start = time.perf_counter()
    for _ in range(count):
        ToolIndex(tools)
    return (time.perf_counter() - start) * 1000 / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--builds", type=int, default=20)
    parser.add_argument("--era", choices=["modern", "legacy"], default="modern")
    arguments = parser.parse_args()
    for name in ("searches", "rounds", "builds"):
        if getattr(arguments, name) < 1:
            parser.error(f"--{name} must be at least 1")
    per_search, hits = trio.run(searches, arguments.searches, arguments.rounds, arguments.era)
    per_build = builds(arguments.builds)
    total = len(CORPUS["queries"])
    print(f"tools: {len(CORPUS['tools'])}  era: {arguments.era}")
    print(f"search through the gateway: {per_search:.2f} ms (median of {arguments.rounds})")
    print(f"index build: {per_build:.2f} ms")
    print(f"top-3 hits: {hits}/{total}")


if __name__ == "__main__":
    main()
