"""Registering tools and prompts with options, and the errors a mistaken option gets.

``@server.tool`` and ``@server.prompt`` are usable bare or with options; an option
reaches the definition a client lists, and a misspelt one, or a completer for an
argument the function lacks, is a TypeError naming it when the function is registered.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import pytest

from mcp_actors import Server, open_client, types


def options_server() -> Server:
    server = Server("options")

    @server.tool(name="sum", title="Sum", description="Adds.", meta={"k": 1})
    async def add(a: int, b: int) -> int:
        return a + b

    @server.tool
    async def bare() -> str:
        """Bare tool."""
        return "ok"

    @server.prompt(name="greet", title="Greeting", complete={"who": ["ann", "bob"]})
    def hello(who: str, mood: Literal["calm", "loud"] = "calm") -> str:
        return f"hello {who} ({mood})"

    @server.prompt
    def plain() -> str:
        """Plain prompt."""
        return "plain"

    return server


async def test_options_reach_the_listed_definitions() -> None:
    async with open_client(options_server()) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert (tools["sum"].title, tools["sum"].description) == ("Sum", "Adds.")
        assert tools["sum"].meta == {"k": 1}
        assert tools["bare"].description == "Bare tool."
        prompts = {prompt.name: prompt for prompt in await client.list_prompts()}
        assert prompts["greet"].title == "Greeting"
        assert prompts["plain"].description == "Plain prompt."
        ref = types.PromptReference(name="greet")
        assert (await client.complete(ref, "who", "b")).values == ["bob"]
        assert (await client.complete(ref, "mood", "")).values == ["calm", "loud"]


@pytest.mark.parametrize("decorator", ["tool", "prompt"])
def test_a_misspelt_option_is_named(decorator: str) -> None:
    register: Any = getattr(Server("s"), decorator)
    with pytest.raises(TypeError, match="nmae"):
        register(nmae="x")


def test_a_completer_for_a_missing_argument_is_named() -> None:
    server = Server("s")
    with pytest.raises(TypeError, match="prompt 'p' has no argument 'whom'"):

        @server.prompt(complete={"whom": ["x"]})
        def p(who: str) -> str:
            return who

    with pytest.raises(TypeError, match=re.escape("'res://{id}' has no variable 'key'")):

        @server.resource("res://{id}", complete={"key": ["x"]})
        def r(id: str) -> str:
            return id
