"""Gateways: cancellation, progress and questions across proxy hops; upstream failure; one
long-lived upstream client; a caller's disconnect reaching the upstream.

``servers.two_level`` mounts (prefix ``p``) a proxy process fronting the upstream
process: client → gateway → proxy → upstream.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
from msgspec import UNSET

from mcp_actors import ClientHandlers, Context, McpError, Server, open_client, types
from mcp_actors.gateway import Upstream, proxy

from conftest import connect, wait_for_event

TWO_LEVEL = "servers.two_level:server"
PROXIED = "servers.proxied:server"
UPSTREAM = "servers.upstream:server"
#: How soon a cancelled handler must see its cancellation, directly or through hops.
CANCEL_BOUND = 5.0


async def _cancel_and_observe(transport: str, spec: str, tool: str, events: Path) -> None:
    async with connect(transport, spec) as client:
        async with trio.open_nursery() as nursery:

            async def call() -> None:
                await client.call_tool(tool, {"tag": transport})

            nursery.start_soon(call)
            await wait_for_event(events, f"started {transport}", timeout=30)
            nursery.cancel_scope.cancel()
        await wait_for_event(events, f"cancelled {transport}", timeout=CANCEL_BOUND)
        result = await client.call_tool(tool.replace("wait_forever", "add"), {"a": 1, "b": 2})
        assert result.structured_content == {"result": 3}


async def test_a_cancel_crosses_a_two_level_gateway(transport: str, events_file: Path) -> None:
    await _cancel_and_observe(transport, TWO_LEVEL, "p_wait_forever", events_file)


async def test_a_direct_cancel_within_the_same_bound(transport: str, events_file: Path) -> None:
    await _cancel_and_observe(transport, UPSTREAM, "wait_forever", events_file)


async def test_progress_crosses_a_two_level_gateway(transport: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []
    async with connect(transport, TWO_LEVEL) as client:
        result = await client.call_tool(
            "p_count", {"steps": 3}, on_progress=lambda *report: seen.append(report)
        )
    assert result.content == [types.TextContent(text="counted 3")]
    assert seen and seen[-1] == (3.0, 3.0, "step 3")
    assert [report[0] for report in seen] == sorted({report[0] for report in seen})


async def _name(params: types.ElicitParams) -> types.ElicitResult:
    assert params.message == "Your name?"
    return types.ElicitResult(action="accept", content={"name": "Ann"})


@pytest.mark.needs("server_requests")
async def test_an_elicitation_crosses_a_two_level_gateway(transport: str) -> None:
    async with connect(transport, TWO_LEVEL, handlers=ClientHandlers(elicitation=_name)) as client:
        result = await client.call_tool("p_ask_name")
    assert result.content == [types.TextContent(text="hello Ann")]


@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_an_elicitation_crosses_the_gateway_in_the_modern_era(transport: str) -> None:
    """Every call, not only the first: once the upstreams are connected, each hop passes
    its upstream's ``input_required`` on as it is."""
    handlers = ClientHandlers(elicitation=_name)
    async with connect(transport, TWO_LEVEL, era="modern", handlers=handlers) as client:
        assert client.era == "modern"
        for _ in range(2):
            result = await client.call_tool("p_ask_name")
            assert result.content == [types.TextContent(text="hello Ann")]


@pytest.mark.parametrize("transport", ["memory", "stdio", "http"])
async def test_an_upstream_that_dies_mid_call_gives_an_error_result(
    transport: str, events_file: Path
) -> None:
    async with connect(transport, PROXIED) as client:
        result = await client.call_tool("die")
        assert result.is_error
        assert isinstance(result.content[0], types.TextContent)
        assert "upstream" in result.content[0].text
        assert "dying" in events_file.read_text()
        # the proxy keeps serving: the next call connects to a new upstream
        result = await client.call_tool("add", {"a": 2, "b": 2})
        assert result.structured_content == {"result": 4}


async def test_an_unreachable_upstream_is_an_error_result_not_a_crash() -> None:
    server = proxy("stdio:/nonexistent/command", name="broken")
    async with open_client(server) as client:
        with pytest.raises(McpError) as raised:
            await client.list_tools()
        assert raised.value.code == -32603
        assert "No such file" in raised.value.message
        result = await client.call_tool("anything")
        assert result.is_error  # and the session goes on


async def test_one_upstream_client_serves_every_call() -> None:
    upstream_server = Server("up")

    @upstream_server.tool
    async def echo(text: str) -> str:
        return text

    upstream = Upstream(upstream_server)
    gateway = proxy(upstream)
    async with open_client(gateway) as first, open_client(gateway) as second:
        for client in (first, second):
            for index in range(5):
                result = await client.call_tool("echo", {"text": str(index)})
                assert result.content == [types.TextContent(text=str(index))]
    assert upstream.connections == 1


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_a_caller_that_disconnects_cancels_the_upstream_call(
    transport: str, events_file: Path
) -> None:
    async with connect(transport, PROXIED) as client, trio.open_nursery() as nursery:
        nursery.start_soon(client.call_tool, "wait_forever", {"tag": transport})
        await wait_for_event(events_file, f"started {transport}", timeout=30)
        client.session.close()  # the caller goes away without cancelling anything
        nursery.cancel_scope.cancel()
    await wait_for_event(events_file, f"cancelled {transport}", timeout=CANCEL_BOUND)


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_sampling_crosses_the_gateway(era: str) -> None:
    upstream_server = Server("up")

    @upstream_server.tool
    async def summarize(ctx: Context, text: str) -> str:
        reply = await ctx.sample(f"Summarize: {text}", max_tokens=20)
        assert isinstance(reply.content, types.TextContent)
        return reply.content.text

    async def model(params: types.CreateMessageParams) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(text="short"), model="test"
        )

    gateway = proxy(Upstream(upstream_server, era=era))  # type: ignore[arg-type]
    handlers = ClientHandlers(sampling=model)
    async with open_client(gateway, era=era, handlers=handlers) as client:  # type: ignore[arg-type]
        result = await client.call_tool("summarize", {"text": "a long story"})
    assert result.content == [types.TextContent(text="short")]


async def test_a_proxy_declares_only_what_its_upstream_offers(transport: str) -> None:
    """Served over any transport, the proxy has connected its upstream (tools only)
    before the client's first request, and declares no resources and no prompts."""
    async with connect(transport, "servers.proxied:tools_only") as client:
        declared = client.server_capabilities
        assert declared.tools is not UNSET
        assert declared.resources is UNSET and declared.prompts is UNSET
        assert "add" in {tool.name for tool in await client.list_tools()}
