"""Tools declared inline over one-exchange HTTP (2026-07-28 and stateless legacy POSTs).

Such an exchange is served before its session opens a nursery (see
``Session._serve_without_nursery``): these tests hold that every path out of that
shortcut still answers — a handler that finishes at once, one that waits although
declared inline, one that reports progress (its report must go out before the answer)
— in both eras, on both front ends.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

import pytest
import trio

from mcp_actors import Client, Context, Server, UrlTarget, open_client
from mcp_actors.server.serve_http import serve_http

ERAS = ("modern", "legacy")


def make_server() -> Server:
    server = Server("inline-http")

    @server.tool(inline=True)
    async def add(a: int, b: int) -> int:
        return a + b

    @server.tool(inline=True)  # a wrong declaration: it waits
    async def nap() -> str:
        await trio.lowlevel.checkpoint()
        return "slept"

    @server.tool(inline=True)
    async def count(ctx: Context, steps: int) -> str:
        for step in range(steps):
            await ctx.report_progress(step + 1, steps)
        return f"counted {steps}"

    return server


@asynccontextmanager
async def served_client(era: str) -> AsyncIterator[Client]:
    async with trio.open_nursery() as nursery:
        serve = partial(serve_http, make_server(), port=0, stateless=era == "legacy")
        handle = await nursery.start(serve)
        async with open_client(UrlTarget(handle.url), era=era) as client:  # type: ignore[arg-type]
            yield client
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("era", ERAS)
async def test_an_inline_tool_answers_over_one_exchange(era: str) -> None:
    async with served_client(era) as client:
        results = [await client.call_tool("add", {"a": i, "b": 1}) for i in range(3)]
    assert [result.structured_content for result in results] == [
        {"result": 1},
        {"result": 2},
        {"result": 3},
    ]


@pytest.mark.parametrize("era", ERAS)
async def test_an_inline_tool_that_waits_still_answers(
    era: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="mcp_actors.session"):
        async with served_client(era) as client:
            result = await client.call_tool("nap")
            after = await client.call_tool("add", {"a": 1, "b": 1})
    assert result.content[0].text == "slept"  # type: ignore[union-attr]
    assert after.structured_content == {"result": 2}
    assert "waited although it was declared inline" in caplog.text


@pytest.mark.parametrize("era", ERAS)
async def test_an_inline_tool_s_progress_goes_out_before_its_answer(era: str) -> None:
    heard: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        heard.append(progress)

    async with served_client(era) as client:
        result = await client.call_tool("count", {"steps": 3}, on_progress=on_progress)
    assert result.content[0].text == "counted 3"  # type: ignore[union-attr]
    assert heard and heard[-1] == 3  # newer reports may replace older ones, never the last
