"""Tool transforms: a server's own tool, a mounted server's and a gateway upstream's, shown
and called under another name, description and arguments, over every transport and in
both eras; a transformed upstream tool keeps its progress and cancellation; a tool search
in front finds the transformed tool.

``servers.transformed`` holds the transforms (see its docstring).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from mcp_actors import McpError, Server, open_client
from mcp_actors.protocol import types as t
from mcp_actors.server.tool_search import ToolSearch
from mcp_actors.server.transforms import transform

from conftest import connect, wait_for_event

TRANSFORMED = "servers.transformed:server"


async def test_own_mounted_and_upstream_tools_are_shown_and_called_transformed(
    transport: str,
) -> None:
    async with connect(transport, TRANSFORMED) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert {"plus", "yell", "count_to", "hang"} <= tools.keys()
        assert not {"add", "m_shout", "up_count", "up_wait_forever"} & tools.keys()
        plus = tools["plus"].input_schema
        assert plus["properties"].keys() == {"a"} and plus["required"] == ["a"]
        assert tools["yell"].description == "Say it louder."
        steps = tools["count_to"].input_schema["properties"]["steps"]
        assert steps["default"] == 3
        assert (await client.call_tool("plus", {"a": 1})).structured_content == {"result": 11}
        assert (await client.call_tool("yell", {"text": "hi"})).content == [
            t.TextContent(text="HI")
        ]
        hidden = await client.call_tool("plus", {"a": 1, "b": 2})
        assert hidden.is_error and "has no argument 'b'" in str(hidden.content)
        with pytest.raises(McpError, match="Unknown tool: add"):
            await client.call_tool("add", {"a": 1, "b": 2})


@pytest.mark.parametrize("transport", ["memory", "http", "http-hypercorn"])
async def test_transformed_tools_in_the_modern_era(transport: str) -> None:
    async with connect(transport, TRANSFORMED, era="modern") as client:
        assert client.era == "modern"
        assert "count_to" in {tool.name for tool in await client.list_tools()}
        assert (await client.call_tool("plus", {"a": 5})).structured_content == {"result": 15}
        assert (await client.call_tool("count_to", {"steps": 2})).content == [
            t.TextContent(text="counted 2")
        ]


async def test_a_transformed_upstream_tool_keeps_progress(transport: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []
    async with connect(transport, TRANSFORMED) as client:
        result = await client.call_tool(
            "count_to", {}, on_progress=lambda *report: seen.append(report)
        )
    assert result.content == [t.TextContent(text="counted 3")]  # the default
    assert seen and seen[-1] == (3.0, 3.0, "step 3")


async def test_a_transformed_upstream_tool_keeps_cancellation(
    transport: str, events_file: Path
) -> None:
    async with connect(transport, TRANSFORMED) as client:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(client.call_tool, "hang", {"tag": transport})
            await wait_for_event(events_file, f"started {transport}", timeout=30)
            nursery.cancel_scope.cancel()
        await wait_for_event(events_file, f"cancelled {transport}", timeout=10)
        assert (await client.call_tool("plus", {"a": 0})).structured_content == {"result": 10}


async def test_a_tool_search_in_front_finds_and_calls_the_transformed_tool() -> None:
    server = Server("searched", middleware=[ToolSearch()])

    @server.tool
    async def fetch_weather(city: str, units: str) -> str:
        """Weather for a city."""
        return f"{city} in {units}"

    server.add_middleware(
        transform(
            "fetch_weather",
            name="forecast",
            description="Tomorrow's forecast for a city.",
            hide=["units"],
            defaults={"units": "metric"},
        )
    )
    async with open_client(server, era="legacy") as client:
        result = await client.call_tool("search_tools", {"query": "forecast for a city"})
        assert isinstance(result.structured_content, dict)
        [found] = result.structured_content["tools"]
        assert found["name"] == "forecast"
        assert found["inputSchema"]["properties"].keys() == {"city"}
        called = await client.call_tool(
            "call_tool", {"name": "forecast", "arguments": {"city": "Oslo"}}
        )
        assert called.content == [t.TextContent(text="Oslo in metric")]


def test_bad_transforms_are_refused_when_made() -> None:
    with pytest.raises(ValueError, match="hidden argument 'key' needs a value in defaults"):
        transform("tool", hide=["key"])
    with pytest.raises(TypeError, match="defaults: 'when' is not a JSON value"):
        transform("tool", defaults={"when": object()})
    with pytest.raises(ValueError, match="name must be 1 to 128 characters"):
        transform("tool", name="")
