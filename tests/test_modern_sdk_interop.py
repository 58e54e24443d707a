"""The official Python SDK 2.3 client against our server over stdio, in both eras.

In its default ``auto`` mode the SDK probes ``server/discover`` first and adopts the
modern era (2026-07-28) when the answer is a ``DiscoverResult`` listing a modern
version; pinned to the legacy era (``mode="legacy"``, the SDK's way to pin
2025-11-25) it sends ``initialize``. One ``everything`` process serves both.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest
import trio
from mcp import Client as SdkClient
from mcp import StdioServerParameters
from mcp.shared.exceptions import MCPError as SdkError

from mcp_actors_everything.server import JSON_SCHEMA_2020_12_INPUT

from conftest import TESTS

EVERYTHING = StdioServerParameters(
    command=sys.executable, args=["-m", "mcp_actors.cli", "run", "everything"], cwd=str(TESTS)
)


async def test_sdk_auto_mode_reaches_the_modern_era() -> None:
    logs: list[Any] = []

    async def on_log(params: Any) -> None:
        logs.append(params)

    async with SdkClient(EVERYTHING, logging_callback=on_log, log_level="info") as client:
        assert client.protocol_version == "2026-07-28"
        discover = client.session.discover_result
        assert discover is not None  # the probe was answered, not fallen back from
        assert discover.supported_versions == ["2026-07-28"]
        assert client.server_info is not None  # read from the result's _meta
        assert client.server_info.name == "mcp-actors-everything"
        tools = (await client.list_tools()).tools
        assert tools[0].name == "test_simple_text"
        schema = next(t for t in tools if t.name == "json_schema_2020_12_tool").input_schema
        assert schema == JSON_SCHEMA_2020_12_INPUT  # $ref, $defs, $anchor... untouched
        result = await client.call_tool("test_simple_text", {})
        assert result.content[0].text == "This is a simple text response for testing."  # type: ignore[union-attr]
        read = await client.read_resource("test://static-text")
        assert read.contents[0].uri == "test://static-text"
        logged = await client.call_tool("test_logging_tool", {})
        assert logged.content[0].text == "Logging tool executed"  # type: ignore[union-attr]
        with trio.fail_after(5):  # the SDK may hand notifications over as separate tasks
            while len(logs) < 2:
                await trio.sleep(0.01)
        with pytest.raises(SdkError) as refused:
            await client.call_tool("test_missing_capability", {})
        assert refused.value.error.code == -32021
        assert refused.value.error.data == {"requiredCapabilities": {"sampling": {}}}


async def test_sdk_auto_mode_without_log_level_gets_no_log_messages() -> None:
    logs: list[Any] = []

    async def on_log(params: Any) -> None:
        logs.append(params)

    async with SdkClient(EVERYTHING, logging_callback=on_log) as client:
        assert client.protocol_version == "2026-07-28"
        result = await client.call_tool("test_logging_tool", {})
        assert result.content[0].text == "Logging tool executed"  # type: ignore[union-attr]
        await client.call_tool("test_simple_text", {})  # after the logging tool's answer
    assert logs == []


async def test_sdk_pinned_to_the_legacy_era_initializes() -> None:
    async with SdkClient(EVERYTHING, mode="legacy") as client:
        assert client.protocol_version == "2025-11-25"
        assert client.session.discover_result is None
        assert client.server_info is not None
        assert client.server_info.name == "mcp-actors-everything"
        result = await client.call_tool("test_simple_text", {})
        assert result.content[0].text == "This is a simple text response for testing."  # type: ignore[union-attr]
