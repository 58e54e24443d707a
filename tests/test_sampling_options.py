"""The options of ``sampling/createMessage``: written once (``SamplingOptions``), taken
by every way a server asks (``ctx.sample``, ``ctx.sampling`` in ``ctx.ask``,
``ServerSession.sample``), all reaching the client, a misspelt one refused by name."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import msgspec
import pytest

import mcp_actors
from mcp_actors import ClientHandlers, Context, Server, open_client, types
from mcp_actors.server.client_requests import SamplingOptions

PACKAGE = Path(mcp_actors.__file__).parent

WEATHER = types.Tool(name="weather", input_schema={"type": "object"})
EVERY_OPTION: dict[str, Any] = {
    "system_prompt": "Be brief.",
    "temperature": 0.5,
    "stop_sequences": ["\n\n"],
    "model_preferences": types.ModelPreferences(speed_priority=1.0),
    "include_context": "none",
    "metadata": {"trace": "t1"},
    "tools": [WEATHER],
    "tool_choice": "auto",
}
ON_THE_WIRE = {
    "systemPrompt": "Be brief.",
    "temperature": 0.5,
    "stopSequences": ["\n\n"],
    "modelPreferences": {"speedPriority": 1.0},
    "includeContext": "none",
    "metadata": {"trace": "t1"},
    "tools": [{"name": "weather", "inputSchema": {"type": "object"}}],
    "toolChoice": {"mode": "auto"},
}


def sampling_server() -> Server:
    server = Server("sampling")

    @server.tool
    async def sample(ctx: Context) -> str:
        await ctx.sample("one", max_tokens=5, **EVERY_OPTION)
        await ctx.ask(ctx.sampling("two", max_tokens=5, **EVERY_OPTION))
        await ctx.session.sample("three", max_tokens=5, **EVERY_OPTION)
        return "done"

    @server.tool
    async def misspelt(ctx: Context) -> str:
        options: dict[str, Any] = {"temprature": 0.5}
        await ctx.sample("one", max_tokens=5, **options)
        return "sent"

    return server


async def test_every_option_reaches_the_client_whichever_way_it_is_asked() -> None:
    seen: list[dict[str, Any]] = []

    def answer(params: types.CreateMessageParams) -> types.CreateMessageResult:
        seen.append(msgspec.to_builtins(params))
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(text="ok"), model="m"
        )

    handlers = ClientHandlers(sampling=answer, sampling_tools=True)
    async with open_client(sampling_server(), handlers=handlers, era="legacy") as client:
        result = await client.call_tool("sample")
    assert not result.is_error
    assert len(seen) == 3
    for params in seen:
        assert {key: params[key] for key in ON_THE_WIRE} == ON_THE_WIRE


async def test_a_misspelt_option_is_refused_by_name() -> None:
    handlers = ClientHandlers(sampling=lambda params: pytest.fail("sent"))
    async with open_client(sampling_server(), handlers=handlers, era="legacy") as client:
        result = await client.call_tool("misspelt")
    assert result.is_error
    assert isinstance(text := result.content[0], types.TextContent)
    assert "temprature" in text.text


def test_the_options_are_written_once() -> None:
    """No function of the package spells the options out as its own parameters: each takes
    ``**options: Unpack[SamplingOptions]``; and each option is a field of the request."""
    spelt_out = [
        f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and len(
            {arg.arg for arg in node.args.args + node.args.kwonlyargs}
            & SamplingOptions.__optional_keys__
        )
        > 2  # "metadata" or "tools" alone are other things' parameters
    ]
    assert spelt_out == []
    fields = set(types.CreateMessageParams.__struct_fields__)
    assert SamplingOptions.__optional_keys__ <= fields
    assert SamplingOptions.__required_keys__ == frozenset()
