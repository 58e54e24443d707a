"""Gateways: an upstream's log messages about a call reach that call's caller, at the
caller's log level, whatever the transports of both hops and the era.

The upstream tool ``chatty`` logs ``debug <text>`` and ``info <text>``; every caller
asks for ``info`` and up, so the debug message must be filtered on the way.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import pytest
import trio

from mcp_actors import Client, ClientHandlers, open_client, types
from mcp_actors.client.targets import load_server
from mcp_actors.gateway import Upstream, proxy
from mcp_actors.server.serve_http import serve_http

from conftest import connect

#: ``(level, data, logger)`` as a client's log handler saw each message.
Seen = list[tuple[str, Any, str | None]]


def _recording(seen: Seen, arrived: trio.Event) -> ClientHandlers:
    def on_log(params: types.LoggingMessageParams) -> None:
        logger = None if params.logger is types.UNSET else params.logger
        seen.append((params.level, params.data, logger))
        arrived.set()

    return ClientHandlers(on_log=on_log)


async def _call_chatty(client: Client, seen: Seen, arrived: trio.Event, text: str) -> None:
    await client.set_logging_level("info")
    result = await client.call_tool("chatty", {"text": text})
    assert result.content == [types.TextContent(text=f"said {text}")]
    with trio.fail_after(10):  # the handler runs off the session's reader
        await arrived.wait()
    assert seen == [("info", f"info {text}", "upstream")]


@pytest.mark.parametrize("transport", ["memory", "stdio", "http"])
@pytest.mark.parametrize(
    ("era", "spec"),
    [("legacy", "servers.proxied:legacy_server"), ("modern", "servers.proxied:server")],
)
async def test_a_stdio_upstreams_log_reaches_the_caller(
    transport: str, era: str, spec: str
) -> None:
    seen: Seen = []
    arrived = trio.Event()
    handlers = _recording(seen, arrived)
    async with connect(transport, spec, era=era, handlers=handlers) as client:
        await _call_chatty(client, seen, arrived, "over stdio")


@asynccontextmanager
async def _http_upstream_gateway(era: str, downstream: str) -> AsyncIterator[Any]:
    """A proxy of ``servers.upstream`` served over Streamable HTTP: the gateway itself
    (in-process downstream) or its URL (served over Streamable HTTP too)."""
    async with trio.open_nursery() as nursery:
        upstream = await nursery.start(
            partial(serve_http, load_server("servers.upstream:server"), port=0)
        )
        gateway = proxy(Upstream(upstream.url, era=era))  # type: ignore[arg-type]
        if downstream == "http":
            served = await nursery.start(partial(serve_http, gateway, port=0))
            yield served.url
        else:
            yield gateway
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("downstream", ["memory", "http"])
@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_an_http_upstreams_log_reaches_the_caller(era: str, downstream: str) -> None:
    seen: Seen = []
    arrived = trio.Event()
    async with (
        _http_upstream_gateway(era, downstream) as target,
        open_client(target, era=era, handlers=_recording(seen, arrived)) as client,  # type: ignore[arg-type]
    ):
        await _call_chatty(client, seen, arrived, "over http")


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_concurrent_callers_each_get_their_own_calls_logs(era: str) -> None:
    """Over Streamable HTTP each log message comes on its call's response stream: two
    callers in flight at once through one upstream connection are not mixed up."""
    seen: dict[str, Seen] = {"first": [], "second": []}
    arrived = {"first": trio.Event(), "second": trio.Event()}
    handlers = {text: _recording(seen[text], arrived[text]) for text in seen}
    async with (
        _http_upstream_gateway(era, "memory") as gateway,
        open_client(gateway, era=era, handlers=handlers["first"]) as first,  # type: ignore[arg-type]
        open_client(gateway, era=era, handlers=handlers["second"]) as second,  # type: ignore[arg-type]
    ):

        async def call(client: Client, text: str) -> None:
            await client.set_logging_level("debug")
            result = await client.call_tool("chatty", {"text": text, "pause": 0.3})
            assert result.content == [types.TextContent(text=f"said {text}")]
            with trio.fail_after(10):
                while len(seen[text]) < 2:
                    await trio.sleep(0.01)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(call, first, "first")
            nursery.start_soon(call, second, "second")
    for text in ("first", "second"):
        assert seen[text] == [
            ("debug", f"debug {text}", "upstream"),
            ("info", f"info {text}", "upstream"),
        ]
