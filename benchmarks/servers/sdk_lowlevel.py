"""The benchmark server on the official SDK's LOW-LEVEL ``Server`` API (stdio).

Same tools as ``ours.py`` (see there): ``add``, ``echo``, ``cancellation_probe``,
``last_cancellation``. Run: ``python benchmarks/servers/sdk_lowlevel.py`` (stdio) or
``... sdk_lowlevel.py --http PORT`` (Streamable HTTP on 127.0.0.1, uvicorn; add
``--stateless`` for stateless JSON replies).
"""

from __future__ import annotations

import json
import sys
import time
from collections import OrderedDict
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server


def _schema(**properties: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": kind} for name, kind in properties.items()},
        "required": [name for name in properties if name != "seconds"],
    }


TOOLS = [
    types.Tool(
        name="add", description="Add two integers.", input_schema=_schema(a="integer", b="integer")
    ),
    types.Tool(
        name="echo", description="Return the text unchanged.", input_schema=_schema(text="string")
    ),
    types.Tool(
        name="cancellation_probe",
        description="Report progress 0, wait; if cancelled, record when under token.",
        input_schema=_schema(token="string", seconds="number"),
    ),
    types.Tool(
        name="last_cancellation",
        description="When cancellation_probe saw its cancellation, or null.",
        input_schema=_schema(token="string"),
    ),
]
_observed: OrderedDict[str, float] = OrderedDict()


def _text(text: str, structured: dict[str, Any] | None = None) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=structured
    )


async def list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    args = params.arguments or {}
    if params.name == "add":
        total = int(args["a"]) + int(args["b"])
        return _text(str(total), {"result": total})
    if params.name == "echo":
        return _text(str(args["text"]))
    if params.name == "cancellation_probe":
        try:  # the report too: a cancellation may land while it is sent
            await ctx.session.report_progress(0, None, "started")
            await anyio.sleep(float(args.get("seconds", 30.0)))
        except anyio.get_cancelled_exc_class():
            _observed[str(args["token"])] = time.monotonic()
            while len(_observed) > 1000:
                _observed.popitem(last=False)
            raise
        return _text("not cancelled")
    if params.name == "last_cancellation":
        found = {"token": args["token"], "observed": _observed.get(str(args["token"]))}
        return _text(json.dumps(found), found)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"unknown tool {params.name!r}")],
        is_error=True,
    )


server = Server(
    "sdk-lowlevel-bench", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool
)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        import uvicorn

        uvicorn.run(
            server.streamable_http_app(
                stateless_http="--stateless" in sys.argv, json_response="--stateless" in sys.argv
            ),
            host="127.0.0.1",
            port=int(sys.argv[2]),
            log_level="warning",
        )
    else:
        anyio.run(main)
