"""A stdio MCP server on the official SDK's LOW-LEVEL ``Server`` API: one ``add`` tool.

The benchmark baseline (no MCPServer decorators / pydantic argument models in the way).
Run: ``python tests/peers/sdk_lowlevel_server.py``.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

ADD_TOOL = types.Tool(
    name="add",
    description="Add two integers.",
    input_schema={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)


async def list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[ADD_TOOL])


async def call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    if params.name != "add":
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=f"unknown tool {params.name!r}")],
            is_error=True,
        )
    args = params.arguments or {}
    total = int(args["a"]) + int(args["b"])
    return types.CallToolResult(content=[types.TextContent(type="text", text=str(total))])


server = Server(
    "sdk-lowlevel-peer", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool
)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
