"""Middleware around requests and notifications: order, short-circuit, containment, shipped ones."""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing

from mcp_actors import ClientHandlers, Context, McpError, Server, open_client, types
from mcp_actors.middleware import Call, CallNext, Middleware, RateLimit, Timing

from conftest import connect

GATED = "servers.gated:server"


async def test_a_middleware_that_raises_does_not_take_down_the_session(transport: str) -> None:
    async with connect(transport, GATED) as client:
        with pytest.raises(McpError) as raised:
            await client.call_tool("crash")
        assert raised.value.code == -32603
        assert "a bug" not in str(raised.value)  # an internal error tells the peer nothing
        result = await client.call_tool("add", {"a": 2, "b": 3})
        assert result.structured_content == {"result": 5}


@pytest.mark.needs("sessions")
async def test_a_notification_middleware_that_raises_drops_only_that_notification(
    transport: str,
) -> None:
    async with connect(transport, GATED, handlers=ClientHandlers(roots=["file:///a"])) as client:
        await client.set_roots(["file:///b"])  # the buggy middleware raises on it
        result = await client.call_tool("add", {"a": 1, "b": 1})
        assert result.structured_content == {"result": 2}


async def test_the_allow_list_hides_the_other_tools(transport: str) -> None:
    async with connect(transport, GATED) as client:
        names = {tool.name for tool in await client.list_tools()}
        assert names == {"add"}
        with pytest.raises(McpError) as raised:
            await client.call_tool("secret")
        assert raised.value.code == -32602


class Recording(Middleware):
    def __init__(self, name: str, seen: list[str]) -> None:
        self.name, self.seen = name, seen

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        self.seen.append(f"{self.name} in {call.method}")
        result = await call_next(call)
        self.seen.append(f"{self.name} out {call.method}")
        return result


class Answering(Middleware):
    """Short-circuits ``tools/call`` of ``cached``: the handler never runs."""

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        if call.method == "tools/call" and call.params.name == "cached":
            return types.CallToolResult(content=[types.TextContent(text="from the middleware")])
        return await call_next(call)


def _server(*middleware: Middleware) -> tuple[Server, list[str]]:
    seen: list[str] = []
    server = Server("ordered", middleware=middleware)

    @server.tool
    async def work() -> str:
        seen.append("handler")
        return "worked"

    return server, seen


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_the_first_middleware_is_the_outermost(era: str) -> None:
    seen: list[str] = []
    server, handled = _server(Recording("a", seen), Recording("b", seen))
    async with open_client(server, era=era) as client:  # type: ignore[arg-type]
        seen.clear()
        await client.call_tool("work")
    assert seen == ["a in tools/call", "b in tools/call", "b out tools/call", "a out tools/call"]
    assert handled == ["handler"]


async def test_a_middleware_may_answer_in_the_handlers_place() -> None:
    server, handled = _server(Answering())
    async with open_client(server) as client:
        result = await client.call_tool("cached")
    assert result.content == [types.TextContent(text="from the middleware")]
    assert handled == []


async def test_the_rate_limit_refuses_past_the_burst_and_refills(
    autojump_clock: trio.testing.MockClock,
) -> None:
    limit = RateLimit(rate=1.0, burst=2)
    server, _ = _server(limit)
    async with open_client(server, era="legacy") as client:
        await client.call_tool("work")
        await client.call_tool("work")
        with pytest.raises(McpError) as raised:
            await client.call_tool("work")
        assert raised.value.code == -32000
        assert 0 < raised.value.data["retryAfterSeconds"] <= 1.0
        await trio.sleep(1.0)  # the mock clock jumps
        await client.call_tool("work")
    assert limit.refused == 1


def test_the_rate_limit_keeps_a_bounded_number_of_buckets() -> None:
    limit = RateLimit(rate=1.0, burst=1, max_callers=2, key=lambda call: call.caller or "")

    async def main() -> None:
        async def handler(call: Call) -> str:
            return "ok"

        for caller in ("a", "b", "c"):
            call = Call("tools/call", None, "server", "inbound", caller=caller)
            await limit.on_request(call, handler)

    trio.run(main)
    assert limit.callers == 2


async def test_timing_counts_each_method_and_its_errors() -> None:
    timing = Timing()
    server, _ = _server(timing)
    async with open_client(server, era="legacy") as client:
        await client.call_tool("work")
        with pytest.raises(McpError):
            await client.call_tool("missing")
    stats = timing.statistics()
    assert (stats["tools/call"].calls, stats["tools/call"].errors) == (2, 1)
    assert "initialize" not in stats  # the protocol engine answers it itself


async def test_a_clients_middleware_sees_its_calls_and_the_servers_requests() -> None:
    seen: list[str] = []

    class Seeing(Middleware):
        async def on_request(self, call: Call, call_next: CallNext) -> Any:
            seen.append(f"{call.role} {call.direction} {call.method}")
            return await call_next(call)

    server = Server("asks")

    @server.tool
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {}})
        return answer.action

    async def accept(params: types.ElicitParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={})

    handlers = ClientHandlers(elicitation=accept)
    async with open_client(
        server, era="legacy", handlers=handlers, middleware=[Seeing()]
    ) as client:
        result = await client.call_tool("ask")
    assert result.content == [types.TextContent(text="accept")]
    assert seen == ["client outbound tools/call", "client inbound elicitation/create"]


async def test_a_servers_middleware_sees_the_requests_it_sends_its_client() -> None:
    seen: list[str] = []

    class Seeing(Middleware):
        async def on_request(self, call: Call, call_next: CallNext) -> Any:
            seen.append(f"{call.role} {call.direction} {call.method}")
            return await call_next(call)

    server = Server("asks", middleware=[Seeing()])

    @server.tool
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {}})
        return answer.action

    async def decline(params: types.ElicitParams) -> types.ElicitResult:
        return types.ElicitResult(action="decline")

    handlers = ClientHandlers(elicitation=decline)
    async with open_client(server, era="legacy", handlers=handlers) as client:
        result = await client.call_tool("ask")
    assert result.content == [types.TextContent(text="decline")]
    assert seen == ["server inbound tools/call", "server outbound elicitation/create"]
