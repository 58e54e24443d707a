"""Tool search: a server or gateway lists ``search_tools`` and ``call_tool`` instead of its
tools; the search finds the right one among 500, a call through it is the tool's own call
(progress, cancellation, errors), in both eras, over every transport, through a gateway
of upstreams; a caller finds and calls only what its scopes and the allow-list permit.

``servers.searched`` is the gateway: the 500 tools of ``data/tool_corpus.json`` (25
in-process upstreams) and ``servers.upstream`` in a process of its own, under ``up``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from msgspec import UNSET

from mcp_actors import Client, McpError, Server, open_client
from mcp_actors.gateway.config import GatewayConfigError, load_gateway
from mcp_actors.protocol import types as t
from mcp_actors.server.tool_search import ToolSearch

from conftest import connect, wait_for_event
from servers.searched import CORPUS, corpus_gateway

SEARCHED = "servers.searched:server"


async def found(client: Client, query: str, **options: Any) -> list[str]:
    """The names ``search_tools`` answers for ``query``."""
    result = await client.call_tool("search_tools", {"query": query, **options})
    assert not result.is_error, result
    structured = result.structured_content
    assert isinstance(structured, dict)
    return [tool["name"] for tool in structured["tools"]]


async def call(client: Client, name: str, arguments: dict[str, Any], **options: Any) -> Any:
    return await client.call_tool("call_tool", {"name": name, "arguments": arguments}, **options)


async def test_the_right_tool_is_in_the_top_3_for_at_least_90_percent_of_queries() -> None:
    queries = CORPUS["queries"]
    assert len(CORPUS["tools"]) == 500 and len(queries) == 100
    hits = 0
    async with open_client(corpus_gateway(ToolSearch()), era="legacy") as client:
        for query in queries:
            hits += query["expect"] in await found(client, query["query"], limit=3)
    assert hits >= 90, f"top-3 hit rate {hits}/{len(queries)}"


async def test_a_search_and_a_call_through_it_over_every_transport(transport: str) -> None:
    async with connect(transport, SEARCHED) as client:
        assert [tool.name for tool in await client.list_tools()] == ["search_tools", "call_tool"]
        assert (await found(client, "add two integers"))[0] == "up_add"
        result = await call(client, "up_add", {"a": 1, "b": 2})
        assert result.structured_content == {"result": 3}
        wrong = await call(client, "up_add", {"a": "one", "b": 2})
        assert wrong.is_error and "Expected `int`, got `str`" in str(wrong.content)


@pytest.mark.parametrize("transport", ["memory", "http", "http-hypercorn"])
async def test_a_search_and_a_call_through_it_in_the_modern_era(transport: str) -> None:
    async with connect(transport, SEARCHED, era="modern") as client:
        assert client.era == "modern"
        assert [tool.name for tool in await client.list_tools()] == ["search_tools", "call_tool"]
        assert "github_create_issue" in await found(client, "open a new GitHub issue", limit=3)
        result = await call(client, "github_create_issue", {"repo": "a/b", "title": "bug"})
        assert result.content == [
            t.TextContent(text='github.create_issue({"repo": "a/b", "title": "bug"})')
        ]


async def test_progress_crosses_call_tool_and_the_gateway(transport: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []
    async with connect(transport, SEARCHED) as client:
        result = await call(
            client, "up_count", {"steps": 3}, on_progress=lambda *report: seen.append(report)
        )
    assert result.content == [t.TextContent(text="counted 3")]
    assert seen and seen[-1] == (3.0, 3.0, "step 3")


async def test_a_cancel_crosses_call_tool_and_the_gateway(
    transport: str, events_file: Path
) -> None:
    async with connect(transport, SEARCHED) as client:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(call, client, "up_wait_forever", {"tag": transport})
            await wait_for_event(events_file, f"started {transport}", timeout=30)
            nursery.cancel_scope.cancel()
        await wait_for_event(events_file, f"cancelled {transport}", timeout=10)
        result = await call(client, "up_add", {"a": 2, "b": 2})
        assert result.structured_content == {"result": 4}


def _banking() -> Server:
    server = Server("bank", middleware=[ToolSearch()])

    @server.tool(scopes=["payments"])
    async def wire_money(amount: int) -> str:
        """Wire money to another bank account."""
        return f"sent {amount}"

    @server.tool
    async def account_balance() -> int:
        """The money in the bank account."""
        return 100

    return server


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_caller_finds_and_calls_only_the_tools_its_scopes_allow(era: str) -> None:
    from test_tasks_binding import TOKENS, caller, serving

    from mcp_actors.transports.http.auth import Principal

    TOKENS["payer"] = Principal("payer", frozenset({"payments"}), client_id="app")
    try:
        async with serving(_banking()) as [http]:
            async with caller(http.url, "alice", era) as alice:
                assert await found(alice, "money in a bank account") == ["account_balance"]
                with pytest.raises(McpError) as refused:
                    await call(alice, "wire_money", {"amount": 5})
                assert refused.value.data == {"error": "insufficient_scope", "scope": "payments"}
            async with caller(http.url, "payer", era) as payer:
                assert await found(payer, "money in a bank account") == [
                    "account_balance",
                    "wire_money",
                ]
                result = await call(payer, "wire_money", {"amount": 5})
                assert result.content == [t.TextContent(text="sent 5")]
    finally:
        del TOKENS["payer"]


def _gateway_file(tmp_path: Path, extra: str) -> Path:
    path = tmp_path / "gateway.toml"
    path.write_text(
        f'{extra}\n[upstreams.up]\nserver = "servers.upstream:server"\n'
        '[upstreams.github]\nserver = "servers.searched:github"\n'
    )
    return path


async def test_a_gateway_file_turns_tool_search_on_and_its_allow_list_holds(
    tmp_path: Path,
) -> None:
    gateway = load_gateway(
        _gateway_file(
            tmp_path,
            'allowed_tools = ["up_add", "github_list_issue"]\n[tool_search]\nmax_results = 3',
        )
    )
    async with open_client(gateway, era="legacy") as client:
        assert [tool.name for tool in await client.list_tools()] == ["search_tools", "call_tool"]
        assert await found(client, "list GitHub issues") == ["github_list_issue"]
        assert await found(client, "create a GitHub issue") == ["github_list_issue"]
        assert await found(client, "add two integers") == ["up_add"]
        assert (await call(client, "up_add", {"a": 1, "b": 1})).structured_content == {"result": 2}
        with pytest.raises(McpError, match="Unknown tool: github_create_issue"):
            await call(client, "github_create_issue", {"repo": "a/b", "title": "x"})
        too_many = await client.call_tool("search_tools", {"query": "issue", "limit": 4})
        assert too_many.is_error and "between 1 and 3" in str(too_many.content)


def test_a_gateway_file_with_bad_tool_search_settings_is_refused(tmp_path: Path) -> None:
    with pytest.raises(GatewayConfigError) as refused:
        load_gateway(_gateway_file(tmp_path, "[tool_search]\nmax_results = 0"))
    assert refused.value.problems == ["tool_search: 'max_results' must be >= 1: 0"]


async def test_bad_searches_and_calls_are_error_results_naming_the_problem() -> None:
    server = Server("small", middleware=[ToolSearch(max_query_chars=20)])

    @server.tool
    async def echo(text: str) -> str:
        """Echo the text."""
        return text

    async with open_client(server, era="legacy") as client:
        cases = {
            ("search_tools", json.dumps({"query": "x" * 21})): "at most 20 are searched",
            ("search_tools", json.dumps({"query": "echo", "limit": 0})): "between 1 and 5",
            ("search_tools", json.dumps({"text": "echo"})): "unknown field `text`",
            ("call_tool", json.dumps({"name": "search_tools"})): "calls tools, not 'search_tools'",
            (
                "call_tool",
                json.dumps({"name": "echo", "arguments": [1]}),
            ): "got `array` - at `$.arguments`",
        }
        for (name, arguments), expected in cases.items():
            result = await client.call_tool(name, json.loads(arguments))
            assert result.is_error and expected in str(result.content), (name, result)
        assert await found(client, "nothing matches this") == []
        assert (await client.call_tool("echo", {"text": "direct"})).content == [
            t.TextContent(text="direct")
        ]


async def test_a_tool_added_later_is_found_and_every_page_is_searched() -> None:
    server = Server("paged", page_size=2, middleware=[ToolSearch()])
    for word in ("alpha", "beta", "gamma"):

        async def say(word: str = word) -> str:
            return word

        server.tool(name=f"say_{word}", description=f"Say {word}.")(say)
    async with open_client(server, era="legacy") as client:
        assert (await found(client, "say gamma"))[0] == "say_gamma"
        assert len(await found(client, "say")) == 3
        assert await found(client, "delta") == []

        @server.tool(name="say_delta")
        async def delta() -> str:
            """Say delta."""
            return "delta"

        assert await found(client, "delta") == ["say_delta"]


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="max_results"):
        ToolSearch(max_results=0)
    with pytest.raises(ValueError, match="both 'find'"):
        ToolSearch(search_name="find", call_name="find")
    with pytest.raises(TypeError, match="search_name"):
        ToolSearch(search_name=3)  # type: ignore[arg-type]


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
async def test_revisions_without_structured_output_get_the_results_as_text(
    version: str,
) -> None:
    async with connect("memory", SEARCHED, protocol_version=version) as client:
        result = await client.call_tool("search_tools", {"query": "add two integers"})
        assert result.structured_content is UNSET
        [text] = result.content
        assert isinstance(text, t.TextContent)
        assert json.loads(text.text)[0]["name"] == "up_add"
        added = await call(client, "up_add", {"a": 2, "b": 3})
        assert added.content == [t.TextContent(text="5")]


async def test_a_task_started_through_call_tool_is_run_again_by_the_worker_taking_it_over(
    mock_clock: trio.testing.MockClock,
) -> None:
    """The task records the call of the named tool, not of ``call_tool``: the worker that
    takes it over runs that tool again with its own arguments."""
    from test_durable_tasks_docs import documented_store, serving, worker_server

    mock_clock.autojump_threshold = 0
    names = documented_store()
    backend = names["Backend"]()
    store_a = names["LeasedTaskStore"](backend, "a", lease=3.0)
    store_b = names["LeasedTaskStore"](backend, "b", lease=3.0)
    worker_a, worker_b = worker_server("a"), worker_server("b")
    for worker in (worker_a, worker_b):
        worker.middleware = (ToolSearch(),)
    async with (
        serving(worker_b, store_b) as (on_b, _),
        serving(worker_a, store_a) as (on_a, kill_a),
    ):
        started = await on_a.start_tool_task(
            "call_tool", {"name": "durable", "arguments": {"order": "o-1"}}
        )
        task_id = started.task_id
        assert task_id is not None
        store_a.backend = names["Backend"]()  # as SIGKILL: a's last words reach no one
        kill_a.cancel()
        with trio.fail_after(60):  # mock time: the lease lapses, b's next look claims it
            while (ended := await on_b.tool_task(task_id).status()).status == "working":
                await trio.sleep(0.5)
    assert ended.status == "completed", ended
    assert ended.result is not None
    assert ended.result["content"][0]["text"] == f"o-1 task={task_id} attempt=2 on b"
