"""The official Python SDK (``mcp`` 2.x) as a peer over HTTP, in both directions.

- its client against our server (``serve_http``): Streamable HTTP in both of its
  connection modes, and legacy SSE;
- our client against its server (``MCPServer.streamable_http_app()`` and
  ``sse_app()``, served by hypercorn's trio worker): Streamable HTTP, legacy SSE,
  and the fallback from one to the other.

Each run covers initialize, tools, progress, cancellation and a request from the
server to the client (ping).
"""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import hypercorn.config
import hypercorn.trio
import pytest
import trio
from mcp import Client as SdkClient
from mcp.client.sse import sse_client
from mcp.server.mcpserver import Context as SdkContext
from mcp.server.mcpserver import MCPServer

from mcp_actors import LATEST, RequestTimeout, open_client, types
from mcp_actors.client.targets import UrlTarget, load_server
from mcp_actors.server.serve_http import HttpServerHandle, serve_http

from conftest import SAMPLE, wait_for_event

#: The SDK abandons async generators of httpx2/httpcore2 when its client closes, and
#: anyio memory streams in its SSE server's disconnect path; trio reports each when it
#: is garbage collected. Those are the SDK's, and only those are let through (the tests
#: collect garbage before they end, so the reports land here and not in a later test).
SDK_CLIENT_LEAKS = pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <async_generator object"
    " (EventSource.__aiter__|PoolByteStream.__aiter__|Response.aiter_(text|bytes|raw))"
    ":pytest.PytestUnraisableExceptionWarning"
)
SDK_SERVER_LEAKS = pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <function MemoryObject(Send|Receive)Stream.__del__"
    ":pytest.PytestUnraisableExceptionWarning"
)

# -- the SDK's client against our server ---------------------------------------------


@asynccontextmanager
async def our_server() -> AsyncIterator[HttpServerHandle]:
    async with trio.open_nursery() as nursery:
        yield await nursery.start(partial(serve_http, load_server(SAMPLE), port=0))
        nursery.cancel_scope.cancel()


def sdk_targets(server: HttpServerHandle) -> dict[str, tuple[Any, str]]:
    return {
        "streamable-legacy-mode": (server.url, "legacy"),
        "sse": (sse_client(server.sse_url or ""), "legacy"),
    }


@SDK_CLIENT_LEAKS
# (in auto mode the SDK reaches the 2026-07-28 era: see test_modern_http_sdk.py)
@pytest.mark.parametrize("target", ["streamable-legacy-mode", "sse"])
async def test_sdk_client_against_our_http_server(target: str, events_file: Path) -> None:
    async with our_server() as server:
        connect, mode = sdk_targets(server)[target]
        with trio.fail_after(30):
            async with SdkClient(connect, mode=mode) as client:  # type: ignore[arg-type]
                assert client.protocol_version == LATEST
                assert client.server_info is not None and client.server_info.name == "sample"
                assert "add" in {tool.name for tool in (await client.list_tools()).tools}
                added = await client.call_tool("add", {"a": 2, "b": 40})
                assert added.structured_content == {"result": 42}

                seen: list[float] = []

                async def on_progress(
                    progress: float, total: float | None, message: str | None
                ) -> None:
                    seen.append(progress)

                slow = await client.call_tool(
                    "slow", {"steps": 3, "delay": 0.02}, progress_callback=on_progress
                )
                assert slow.content[0].text == "done after 3 steps"  # type: ignore[union-attr]
                with trio.fail_after(5):  # the SDK runs progress callbacks as tasks
                    while len(seen) < 3:
                        await trio.sleep(0.01)
                assert sorted(seen) == [1, 2, 3]

                pinged = await client.call_tool("ping_client")  # our server pings the SDK client
                assert pinged.content[0].text == "client answered"  # type: ignore[union-attr]

                async with trio.open_nursery() as nursery:
                    nursery.start_soon(client.call_tool, "wait_forever", {"tag": target})
                    await wait_for_event(events_file, f"started {target}")
                    nursery.cancel_scope.cancel()
                await wait_for_event(events_file, f"cancelled {target}")
                again = await client.call_tool("add", {"a": 1, "b": 1})
                assert again.structured_content == {"result": 2}
        with trio.fail_after(5):
            while server.sessions or server.supervisor.statistics().sessions_active:
                await trio.sleep(0.01)
    gc.collect()


@SDK_CLIENT_LEAKS
@pytest.mark.parametrize("json_response", [False, True], ids=["sse-replies", "json-replies"])
async def test_sdk_client_against_our_stateless_http_server(json_response: bool) -> None:
    """Stateless: each POST is served alone (``initialize`` by the engine, with no session)."""
    serve = partial(
        serve_http, load_server(SAMPLE), port=0, stateless=True, json_response=json_response
    )
    async with trio.open_nursery() as nursery:
        server: HttpServerHandle = await nursery.start(serve)
        with trio.fail_after(30):
            async with SdkClient(server.url, mode="legacy") as client:
                assert client.protocol_version == LATEST
                assert client.server_info is not None and client.server_info.name == "sample"
                assert "add" in {tool.name for tool in (await client.list_tools()).tools}
                added = await client.call_tool("add", {"a": 2, "b": 40})
                assert added.structured_content == {"result": 42}
                slow = await client.call_tool("slow", {"steps": 2, "delay": 0.01})
                assert slow.content[0].text == "done after 2 steps"  # type: ignore[union-attr]
        assert server.sessions == 0  # stateless: no session table
        nursery.cancel_scope.cancel()
    gc.collect()


# -- our client against the SDK's server ----------------------------------------------

sdk_server = MCPServer("sdk-http-peer", version="1.0.0", log_level="WARNING")
sdk_events: list[str] = []


@sdk_server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@sdk_server.tool()
async def slow(steps: int, delay: float, ctx: SdkContext) -> str:
    """Sleep ``steps`` times, reporting progress after each."""
    try:
        for step in range(steps):
            await anyio.sleep(delay)
            await ctx.report_progress(step + 1, steps, f"step {step + 1}/{steps}")
    except anyio.get_cancelled_exc_class():
        sdk_events.append("cancelled")
        raise
    return f"done after {steps} steps"


@sdk_server.tool()
async def ping_client(ctx: SdkContext) -> str:
    """Ping the client (a server-to-client request)."""
    await ctx.session.send_ping()
    return "client answered"


async def _serve_sdk(app: Any, *, task_status: trio.TaskStatus[str]) -> None:
    config = hypercorn.config.Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    config.errorlog = logging.getLogger("sdk-peer.hypercorn")
    await hypercorn.trio.serve(app, config, task_status=_Base(task_status))


class _Base:
    """Hands on the first bound URL instead of the list hypercorn reports."""

    def __init__(self, status: trio.TaskStatus[str]) -> None:
        self._status = status

    def started(self, binds: list[str]) -> None:
        self._status.started(binds[0])


SdkApps = dict[str, Callable[[str], Any]]
TARGETS: SdkApps = {
    "streamable": lambda base: base + "/mcp",
    "sse": lambda base: base + "/sse",
    "fallback": lambda base: UrlTarget(base + "/sse", "auto"),
}


@asynccontextmanager
async def sdk_http(kind: str) -> AsyncIterator[str]:
    app = sdk_server.sse_app() if kind != "streamable" else sdk_server.streamable_http_app()
    async with trio.open_nursery() as nursery:
        yield await nursery.start(_serve_sdk, app)
        nursery.cancel_scope.cancel()


@SDK_SERVER_LEAKS
@pytest.mark.parametrize("kind", sorted(TARGETS))
async def test_our_client_against_the_sdk_http_server(kind: str) -> None:
    sdk_events.clear()
    base: AbstractAsyncContextManager[str] = sdk_http(kind)
    async with base as url:
        with trio.fail_after(30):
            async with open_client(TARGETS[kind](url), era="legacy") as client:
                assert client.protocol_version == LATEST
                assert client.server_info.name == "sdk-http-peer"
                assert {"add", "slow", "ping_client"} <= {t.name for t in await client.list_tools()}
                added = await client.call_tool("add", {"a": 2, "b": 3})
                assert added.content == [types.TextContent(text="5")]

                seen: list[float] = []
                done = await client.call_tool(
                    "slow",
                    {"steps": 3, "delay": 0.02},
                    on_progress=lambda progress, total, message: seen.append(progress),
                )
                assert done.content == [types.TextContent(text="done after 3 steps")]
                assert seen == [1, 2, 3]

                pinged = await client.call_tool("ping_client")  # the SDK server pings us
                assert pinged.content == [types.TextContent(text="client answered")]

                with pytest.raises(RequestTimeout):
                    await client.call_tool("slow", {"steps": 100, "delay": 0.05}, timeout=0.3)
                with trio.fail_after(5):
                    while "cancelled" not in sdk_events:
                        await trio.sleep(0.01)
                again = await client.call_tool("add", {"a": 40, "b": 2})
                assert again.content == [types.TextContent(text="42")]
        await trio.sleep(0.1)  # let the SDK server see the disconnect
    gc.collect()
