"""``server.mount(other, prefix=)``: namespacing, routing, list changes, in both eras."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio
from msgspec import UNSET

from mcp_actors import ClientHandlers, Context, McpError, Server, StdioTarget, open_client, types
from mcp_actors.gateway import Upstream


def _weather() -> Server:
    weather = Server("weather")

    @weather.tool
    async def forecast(ctx: Context, city: str) -> str:
        """Tomorrow's weather."""
        await ctx.report_progress(1, 1)
        return f"sunny in {city}"

    @weather.resource("data://today")
    async def today() -> str:
        return "warm"

    @weather.resource("data://{day}/rain")
    async def rain(day: str) -> str:
        return f"no rain on {day}"

    @weather.prompt
    async def brief(city: str) -> str:
        """Brief me."""
        return f"Weather for {city}"

    return weather


def _gateway(prefix: str | None = "weather") -> tuple[Server, Server]:
    gateway, weather = Server("gateway"), _weather()

    @gateway.tool
    async def local() -> str:
        return "mine"

    gateway.mount(weather, prefix=prefix)
    return gateway, weather


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_mounted_items_are_listed_and_served_under_the_prefix(era: str) -> None:
    gateway, _ = _gateway()
    progress: list[float] = []
    async with open_client(gateway, era=era) as client:  # type: ignore[arg-type]
        assert {tool.name for tool in await client.list_tools()} == {"local", "weather_forecast"}
        assert [r.uri for r in await client.list_resources()] == ["data://weather/today"]
        templates = await client.list_resource_templates()
        assert [r.uri_template for r in templates] == ["data://weather/{day}/rain"]
        assert [p.name for p in await client.list_prompts()] == ["weather_brief"]
        result = await client.call_tool(
            "weather_forecast", {"city": "Oslo"}, on_progress=lambda p, *_: progress.append(p)
        )
        assert result.content == [types.TextContent(text="sunny in Oslo")]
        assert progress == [1.0]
        read = await client.read_resource("data://weather/mon/rain")
        assert [(c.uri, c.text) for c in read.contents] == [  # type: ignore[union-attr]
            ("data://weather/mon/rain", "no rain on mon")
        ]
        prompt = await client.get_prompt("weather_brief", {"city": "Oslo"})
        assert prompt.messages[0].content == types.TextContent(text="Weather for Oslo")
        with pytest.raises(McpError):
            await client.call_tool("forecast", {"city": "Oslo"})  # only under its prefix
        with pytest.raises(McpError):
            await client.read_resource("data://today")


async def test_without_a_prefix_names_pass_unchanged() -> None:
    gateway, _ = _gateway(prefix=None)
    async with open_client(gateway) as client:
        assert {tool.name for tool in await client.list_tools()} == {"local", "forecast"}
        result = await client.call_tool("forecast", {"city": "Rome"})
        assert result.content == [types.TextContent(text="sunny in Rome")]


def test_bad_mounts_are_refused() -> None:
    gateway, _ = _gateway()
    with pytest.raises(ValueError, match="already mounted"):
        gateway.mount(_weather(), prefix="weather")
    with pytest.raises(ValueError, match="prefix"):
        gateway.mount(_weather(), prefix="a/b")
    with pytest.raises(ValueError, match="itself"):
        gateway.mount(gateway)


@pytest.mark.parametrize("how", ["in-process", "upstream"])
async def test_a_mounted_servers_list_change_reaches_the_gateways_clients(how: str) -> None:
    gateway, weather = Server("gateway"), _weather()
    gateway.mount(weather if how == "in-process" else Upstream(weather), prefix="w")
    changes: list[str] = []
    handlers = ClientHandlers(on_list_changed=changes.append)
    async with open_client(gateway, era="legacy", handlers=handlers) as client:
        before = {tool.name for tool in await client.list_tools()}  # connects the upstream

        @weather.tool
        async def alerts() -> str:
            return "none"

        with trio.fail_after(5):
            while "notifications/tools/list_changed" not in changes:
                await trio.sleep(0.01)
        after = {tool.name for tool in await client.list_tools()}
    assert after - before == {"w_alerts"}


LATE_UPSTREAM = """
from mcp_actors import Server

server = Server("late")


@server.tool
async def add(a: int, b: int) -> int:
    return a + b


@server.prompt
async def greet(name: str) -> str:
    return f"Hello {name}"


server.run()
"""


def _late_gateway(script: Path) -> Server:
    """A gateway mounting an in-process server (tools) as ``local`` and the server that
    ``script`` runs (tools and prompts) as ``up``."""
    local = Server("local")

    @local.tool
    async def echo(text: str) -> str:
        return text

    gateway = Server("gateway")
    gateway.mount(local, prefix="local")
    gateway.mount(Upstream(StdioTarget(sys.executable, (str(script),)), retry_delay=0), prefix="up")
    return gateway


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_gateway_declares_what_its_mounts_offer(tmp_path: Path, era: str) -> None:
    """The upstream is connected before the client's first request: no resources are
    declared (none of the mounts has any), and every list the client may ask works."""
    script = tmp_path / "upstream.py"
    script.write_text(LATE_UPSTREAM)
    async with open_client(_late_gateway(script), era=era) as client:
        declared = client.server_capabilities
        assert declared.tools is not UNSET and declared.prompts is not UNSET
        assert declared.resources is UNSET
        assert {tool.name for tool in await client.list_tools()} == {"local_echo", "up_add"}
        assert [prompt.name for prompt in await client.list_prompts()] == ["up_greet"]


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_an_upstream_that_appears_later_joins_the_lists(tmp_path: Path, era: str) -> None:
    """Not reachable when the gateway starts serving: it may offer anything (every kind
    is declared) and is left out of the lists, which the others answer. Once it is
    there, the next list reaches it and clients are told the lists changed."""
    script = tmp_path / "late_upstream.py"  # not there yet: the upstream cannot start
    changed = trio.Event()

    async def on_change(method: str) -> None:
        if method == "notifications/tools/list_changed":
            changed.set()

    handlers = ClientHandlers(on_list_changed=on_change)
    async with open_client(_late_gateway(script), era=era, handlers=handlers) as client:
        declared = client.server_capabilities
        assert UNSET not in (declared.tools, declared.prompts, declared.resources)
        assert [tool.name for tool in await client.list_tools()] == ["local_echo"]
        assert await client.list_prompts() == []
        script.write_text(LATE_UPSTREAM)
        assert {tool.name for tool in await client.list_tools()} == {"local_echo", "up_add"}
        assert [prompt.name for prompt in await client.list_prompts()] == ["up_greet"]
        assert await client.list_resources() == []  # declared, offered by none: empty
        if era == "legacy":  # a session's notification (the modern era listens instead)
            with trio.fail_after(10):  # hang guard
                await changed.wait()
