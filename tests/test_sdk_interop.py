"""The official Python SDK (``mcp`` on PyPI) as a real peer, in both directions over stdio.

- its client against our server (``mcp-actors run``): its legacy handshake and its
  ``auto`` mode (which probes ``server/discover`` and so adopts 2026-07-28), list and
  call tools, progress, and a cancellation our handler observes;
- our client against its server (``tests/peers/sdk_server.py``): the same, plus a
  timeout that makes its handler see the cancellation.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio
from mcp import Client as SdkClient
from mcp import StdioServerParameters

from mcp_actors import LATEST, RequestTimeout, StdioTarget, open_client, types

from conftest import SAMPLE, TESTS, wait_for_event


def our_server(events: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_actors.cli", "run", SAMPLE],
        cwd=str(TESTS),
        env={"MCP_TEST_EVENTS": str(events)},
    )


@pytest.mark.parametrize(("mode", "version"), [("legacy", LATEST), ("auto", "2026-07-28")])
async def test_sdk_client_initializes_lists_and_calls(
    mode: str, version: str, events_file: Path
) -> None:
    # auto: the SDK's server/discover probe is answered, so it adopts the modern era
    async with SdkClient(our_server(events_file), mode=mode) as client:  # type: ignore[arg-type]
        assert client.protocol_version == version
        assert client.server_info is not None and client.server_info.name == "sample"
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert tools["add"].input_schema["required"] == ["a", "b"]
        result = await client.call_tool("add", {"a": 2, "b": 40})
        assert result.structured_content == {"result": 42}
        assert result.content[0].text == "42"  # type: ignore[union-attr]
        failed = await client.call_tool("fail", {"message": "nope"})
        assert failed.is_error is True


async def test_sdk_client_receives_our_progress(events_file: Path) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with SdkClient(our_server(events_file), mode="legacy") as client:
        result = await client.call_tool(
            "slow", {"steps": 3, "delay": 0.05}, progress_callback=on_progress
        )
        assert result.content[0].text == "done after 3 steps"  # type: ignore[union-attr]
        with trio.fail_after(5):  # the SDK runs progress callbacks as separate tasks
            while len(seen) < 3:
                await trio.sleep(0.01)
    assert sorted(seen) == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_sdk_client_cancellation_reaches_our_handler(events_file: Path) -> None:
    async with SdkClient(our_server(events_file), mode="legacy") as client:
        with trio.move_on_after(10) as scope:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(client.call_tool, "wait_forever", {"tag": "sdk"})
                await wait_for_event(events_file, "started sdk")
                nursery.cancel_scope.cancel()
        assert not scope.cancelled_caught
        await wait_for_event(events_file, "cancelled sdk")
        assert (await client.call_tool("add", {"a": 1, "b": 1})).structured_content == {"result": 2}


# -- our client against the SDK's server -------------------------------------------------


def sdk_server(events: Path) -> StdioTarget:
    return StdioTarget(
        sys.executable,
        (str(TESTS / "peers" / "sdk_server.py"),),
        env={"SDK_PEER_EVENTS": str(events)},
    )


async def test_our_client_against_the_sdk_server(tmp_path: Path) -> None:
    async with open_client(sdk_server(tmp_path / "events"), era="legacy") as client:
        assert client.server_info.name == "sdk-peer"
        assert client.protocol_version == LATEST
        names = {tool.name for tool in await client.list_tools()}
        assert {"add", "echo", "slow"} <= names
        result = await client.call_tool("add", {"a": 2, "b": 3})
        assert result.content == [types.TextContent(text="5")]
        assert result.structured_content == {"result": 5}
        assert (await client.call_tool("echo", {"text": "hi"})).content == [
            types.TextContent(text="hi")
        ]
        await client.ping()


async def test_our_client_gets_progress_from_the_sdk_server(tmp_path: Path) -> None:
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    async with open_client(sdk_server(tmp_path / "events"), era="legacy") as client:
        result = await client.call_tool(
            "slow", {"steps": 3, "delay": 0.05}, on_progress=on_progress
        )
    assert result.content == [types.TextContent(text="done after 3 steps")]
    assert seen == [1, 2, 3]


async def test_our_cancellation_reaches_the_sdk_handler(tmp_path: Path) -> None:
    events = tmp_path / "events"
    events.touch()
    async with open_client(sdk_server(events), era="legacy") as client:
        with trio.move_on_after(0.5):
            await client.call_tool("slow", {"steps": 100, "delay": 0.05})
        await wait_for_event(events, "cancelled")
        with pytest.raises(RequestTimeout):
            await client.call_tool("slow", {"steps": 100, "delay": 0.05}, timeout=0.3)
        with trio.fail_after(10):
            while events.read_text().split().count("cancelled") < 2:
                await trio.sleep(0.02)
        assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {"result": 3}
