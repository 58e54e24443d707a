"""A gateway of upstreams behind a tool search: 500 realistic tools and a live upstream.

The 25 services of ``tests/data/tool_corpus.json`` are each an in-process Server
mounted through an :class:`~mcp_actors.gateway.Upstream` under the service's name (500
tools: ``github_create_issue``...); ``servers.upstream`` runs in a process of its own,
mounted under ``up`` (``up_add``, ``up_count``, ``up_wait_forever``...). The gateway's
outermost middleware is a :class:`~mcp_actors.server.tool_search.ToolSearch`, so
``tools/list`` shows only ``search_tools`` and ``call_tool``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp_actors import Context, Server
from mcp_actors.gateway import Upstream
from mcp_actors.server.schema_tools import schema_tool
from mcp_actors.server.tool_search import ToolSearch

from .processes import upstream_process

TESTS = Path(__file__).parent.parent
CORPUS = json.loads((TESTS / "data" / "tool_corpus.json").read_text())


def service(name: str, tools: list[dict[str, Any]]) -> Server:
    """One service of the corpus: its tools answer with their name and arguments."""
    server = Server(name)
    for tool in tools:

        async def answer(
            arguments: dict[str, Any], ctx: Context, tool_name: str = tool["name"]
        ) -> str:
            return f"{name}.{tool_name}({json.dumps(arguments, sort_keys=True)})"

        server.add_tool(
            schema_tool(tool["name"], tool["inputSchema"], answer, description=tool["description"])
        )
    return server


def corpus_gateway(*middleware: Any) -> Server:
    """The 500 corpus tools, one in-process upstream per service, behind ``middleware``."""
    gateway = Server("search-gateway", middleware=list(middleware))
    services: dict[str, list[dict[str, Any]]] = {}
    for tool in CORPUS["tools"]:
        services.setdefault(tool["service"], []).append(tool)
    for name, tools in services.items():
        gateway.mount(Upstream(service(name, tools), name=name), prefix=name)
    return gateway


#: One service alone, to mount in a gateway file (tests/test_tool_search.py).
github = service("github", [tool for tool in CORPUS["tools"] if tool["service"] == "github"])


server = corpus_gateway(ToolSearch())
server.mount(upstream_process(), prefix="up")
