"""The official Python SDK 2.3's client against our dual-era server over Streamable HTTP.

In its default ``auto`` mode the SDK probes with ``server/discover`` (a POST with
``MCP-Protocol-Version: 2026-07-28``, no session) and adopts the modern era if
the answer is a ``DiscoverResult`` listing 2026-07-28; anything else makes it fall
back to ``initialize``. Pinned to ``legacy`` it goes straight to ``initialize``
(2025-11-25). Both must work against one server on one endpoint, each end to end.
"""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import pytest
import trio
from mcp import Client as SdkClient
from test_http_sdk_interop import SDK_CLIENT_LEAKS

from mcp_actors.protocol.versions import ALL, LATEST, SUPPORTED
from mcp_actors.server.app import Server
from mcp_actors.server.context import Context
from mcp_actors.server.serve_http import HttpServerHandle, serve_http

MODERN = "2026-07-28"


def dual_era_server(seen: dict[str, trio.Event], versions: tuple[str, ...] = ALL) -> Server:
    server = Server("dual-era", version="1.0.0", supported_versions=versions)

    @server.tool
    async def wait_forever() -> str:
        """Wait until cancelled."""
        seen["started"].set()
        try:
            await trio.sleep_forever()
        finally:
            seen["cancelled"].set()
        return "never"

    @server.tool
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool
    async def count(ctx: Context, steps: int) -> str:
        """Report progress ``steps`` times."""
        for step in range(steps):
            await ctx.report_progress(step + 1, steps)
            await trio.sleep(0.01)
        return f"counted {steps}"

    return server


@asynccontextmanager
async def serving(
    seen: dict[str, trio.Event], versions: tuple[str, ...] = ALL
) -> AsyncIterator[HttpServerHandle]:
    async with trio.open_nursery() as nursery:
        yield await nursery.start(partial(serve_http, dual_era_server(seen, versions), port=0))
        nursery.cancel_scope.cancel()


async def exercise(client: Any, events: dict[str, trio.Event]) -> None:
    assert "add" in {tool.name for tool in (await client.list_tools()).tools}
    added = await client.call_tool("add", {"a": 2, "b": 40})
    assert added.structured_content == {"result": 42}
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    counted = await client.call_tool("count", {"steps": 3}, progress_callback=on_progress)
    assert counted.content[0].text == "counted 3"
    with trio.fail_after(5):  # the SDK runs progress callbacks as tasks
        while len(seen) < 3:
            await trio.sleep(0.01)
    assert sorted(seen) == [1, 2, 3]
    # the caller gives up: the SDK closes the request (its POST, or notifications/cancelled)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(client.call_tool, "wait_forever", {})
        with trio.fail_after(5):
            await events["started"].wait()
        nursery.cancel_scope.cancel()
    with trio.fail_after(5):
        await events["cancelled"].wait()


@SDK_CLIENT_LEAKS
@pytest.mark.parametrize(("mode", "era"), [("auto", MODERN), ("legacy", LATEST)])
async def test_the_sdk_client_reaches_the_era_it_asks_for(mode: str, era: str) -> None:
    events = {"started": trio.Event(), "cancelled": trio.Event()}
    async with serving(events) as server:
        with trio.fail_after(30):
            async with SdkClient(server.url, mode=mode) as client:  # type: ignore[arg-type]
                assert client.protocol_version == era
                discovered = client.session.discover_result
                assert (discovered is not None) == (era == MODERN)
                if discovered is not None:
                    assert MODERN in discovered.supported_versions
                await exercise(client, events)
        # a modern client leaves no session behind; a legacy one ends its own
        with trio.fail_after(5):
            while server.sessions or server.supervisor.statistics().sessions_active:
                await trio.sleep(0.01)
    gc.collect()


@SDK_CLIENT_LEAKS
async def test_the_sdk_client_falls_back_to_a_legacy_only_server() -> None:
    """Its probe gets -32022 naming only handshake versions, so it sends initialize."""
    events = {"started": trio.Event(), "cancelled": trio.Event()}
    async with serving(events, SUPPORTED) as server:
        with trio.fail_after(30):
            async with SdkClient(server.url) as client:
                assert client.protocol_version == LATEST
                assert client.session.discover_result is None
                await exercise(client, events)
    gc.collect()
