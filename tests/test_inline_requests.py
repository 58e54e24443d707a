"""Requests served in the session's reader: calls of tools declared never to wait.

A tool registered with ``inline=True`` is an ``async def`` that finishes in one
step, so the session runs it in its reader instead of spawning a request actor
(see ``mcp_actors.runtime.inline``). These tests hold what must not change with it:
only declared tools are served so, isolation of context variables, a correct (if
slower) answer when a tool declared inline waits after all, and cancellation of
every tool that can wait.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.lowlevel

from mcp_actors import Client, Server, open_client
from mcp_actors.middleware import Call, CallNext, Middleware
from mcp_actors.runtime.serving import Serving

current: contextvars.ContextVar[str] = contextvars.ContextVar("current", default="unset")
cancelled: list[float] = []


def test_only_an_async_def_may_be_declared_inline() -> None:
    server = Server("inline")
    with pytest.raises(TypeError, match="inline=True needs an async def"):

        @server.tool(inline=True)
        def sync_tool(a: int) -> int:  # runs in a worker thread: never inline
            return a

    assert "sync_tool" not in server.tools


def make_server() -> Server:
    server = Server("inline")

    @server.tool(inline=True)
    async def remember(value: str) -> str:
        previous = current.get()
        current.set(value)
        return previous

    @server.tool(inline=True)
    async def add(a: int, b: int) -> int:
        return a + b

    @server.tool
    async def add_undeclared(a: int, b: int) -> int:
        return a + b

    @server.tool
    async def sleepy(seconds: float) -> str:
        try:
            await trio.sleep(seconds)
        except trio.Cancelled:
            cancelled.append(seconds)
            raise
        return "slept"

    return server


class Passing(Middleware):
    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        return await call_next(call)


@asynccontextmanager
async def client_of(server: Server) -> AsyncIterator[Client]:
    async with open_client(server, era="legacy") as client:
        yield client


@pytest.fixture
def served_by_actor(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The methods of the requests served by an actor (``Serving.serve``), in order."""
    served: list[str] = []
    original = Serving.serve

    async def counting_serve(self: Serving, request: object) -> None:
        served.append(getattr(request, "method", "?"))
        await original(self, request)  # type: ignore[arg-type]

    monkeypatch.setattr(Serving, "serve", counting_serve)
    return served


async def test_tools_declared_inline_spawn_no_request_actor(
    served_by_actor: list[str],
) -> None:
    async with client_of(make_server()) as client:
        async with trio.open_nursery() as nursery:
            for i in range(50):
                nursery.start_soon(client.call_tool, "add", {"a": i, "b": 1})
        result = await client.call_tool("add", {"a": 2, "b": 3})
        assert result.structured_content == {"result": 5}
        await client.call_tool("sleepy", {"seconds": 0})
        await client.call_tool("add_undeclared", {"a": 1, "b": 1})
        await client.list_tools()
        # only the tools not declared inline: a list is answered from the registry
        assert served_by_actor == ["tools/call", "tools/call"]


@pytest.mark.parametrize("between", ["mount", "middleware"])
async def test_a_list_that_may_wait_is_served_by_an_actor(
    between: str, served_by_actor: list[str]
) -> None:
    server = make_server()
    if between == "mount":  # the mounted server's list is awaited
        server.mount(make_server(), prefix="inner")
    else:  # middleware may wait
        server.add_middleware(Passing())
    async with client_of(server) as client:
        listed = await client.list_tools()
    assert served_by_actor == ["tools/list"]
    if between == "mount":
        assert "inner_add" in {tool.name for tool in listed}


async def test_context_variables_set_inline_do_not_leak_between_requests() -> None:
    async with client_of(make_server()) as client:
        first = await client.call_tool("remember", {"value": "one"})
        second = await client.call_tool("remember", {"value": "two"})
    assert first.content[0].text == "unset"  # type: ignore[union-attr]
    assert second.content[0].text == "unset"  # type: ignore[union-attr]


async def test_a_tool_declared_inline_wrongly_still_answers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = make_server()

    @server.tool(inline=True)  # a wrong declaration: it waits
    async def nap(seconds: float) -> str:
        await trio.sleep(seconds)
        return "slept"

    with caplog.at_level(logging.WARNING, logger="mcp_actors.session"):
        async with client_of(server) as client:
            result = await client.call_tool("nap", {"seconds": 0.01})
            after = await client.call_tool("add", {"a": 1, "b": 1})
    assert result.content[0].text == "slept"  # type: ignore[union-attr]
    assert after.structured_content == {"result": 2}
    assert "waited although it was declared inline" in caplog.text


async def test_tools_that_wait_can_still_be_cancelled() -> None:
    cancelled.clear()
    async with client_of(make_server()) as client:
        with trio.move_on_after(0.05):
            await client.call_tool("sleepy", {"seconds": 30})
        assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {"result": 3}
        with trio.fail_after(5):
            while not cancelled:
                await trio.sleep(0.01)
    assert cancelled == [30]
