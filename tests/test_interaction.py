"""Client and server talking through the public API, over every transport.

Every test here runs once per transport in ``conftest.CONNECTORS``; ``connect``
validates every message either side wrote against the official schema of the
negotiated revision.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio
from msgspec import UNSET

from mcp_actors import SUPPORTED, ClientHandlers, McpError, RequestTimeout, types
from mcp_actors.protocol import errors

from conftest import connect, wait_for_event


async def test_initialize_reports_server_and_capabilities(transport: str) -> None:
    async with connect(transport) as client:
        assert client.server_info.name == "sample"
        assert client.server_info.version == "1.2.3"
        assert client.protocol_version == SUPPORTED[0]
        assert client.instructions == "The test suite's server."
        # Stateless HTTP has no channel for list changes, so it does not promise them.
        list_changed = UNSET if transport.startswith("http-stateless") else True
        assert client.server_capabilities.tools == types.ToolsCapability(list_changed=list_changed)


@pytest.mark.parametrize("version", SUPPORTED)
async def test_each_supported_version_is_negotiated(transport: str, version: str) -> None:
    async with connect(transport, protocol_version=version) as client:
        assert client.protocol_version == version
        result = await client.call_tool("add", {"a": 2, "b": 3})
        assert result.content[0] == types.TextContent(text="5")


async def test_list_tools_gives_schemas_from_type_hints(transport: str) -> None:
    async with connect(transport) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
    assert {"add", "echo", "slow", "wait_forever", "midpoint", "annotated"} <= tools.keys()
    add = tools["add"]
    assert add.description == "Add two integers."
    assert add.input_schema == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    }
    assert add.output_schema == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }
    annotated = tools["annotated"]
    assert annotated.title == "An annotated tool"
    assert annotated.annotations == types.ToolAnnotations(read_only_hint=True, idempotent_hint=True)


async def test_older_revisions_get_no_output_schema(transport: str) -> None:
    async with connect(transport, protocol_version="2025-03-26") as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        result = await client.call_tool("add", {"a": 1, "b": 1})
    assert tools["add"].output_schema is types.UNSET
    assert result.structured_content is types.UNSET
    assert result.content == [types.TextContent(text="2")]


async def test_call_tool_returns_structured_content(transport: str) -> None:
    async with connect(transport) as client:
        result = await client.call_tool("midpoint", {"a": {"x": 0, "y": 0}, "b": {"x": 2, "y": 4}})
    assert result.is_error is types.UNSET
    assert result.structured_content == {"x": 1.0, "y": 2.0}
    assert isinstance(result.content[0], types.TextContent)
    assert json.loads(result.content[0].text) == {"x": 1.0, "y": 2.0}


async def test_sync_tool_runs_in_a_worker_thread(transport: str) -> None:
    async with connect(transport) as client:
        result = await client.call_tool("blocking_sum", {"values": [1.5, 2.5]})
    assert result.structured_content == {"result": 4.0}


async def test_invalid_arguments_become_a_tool_error_naming_the_problem(transport: str) -> None:
    async with connect(transport) as client:
        wrong_type = await client.call_tool("add", {"a": "one", "b": 2})
        missing = await client.call_tool("add", {"a": 1})
        constraint = await client.call_tool("echo", {"text": ""})
        assert (await client.call_tool("add", {"a": 1, "b": 1})).structured_content == {"result": 2}
    for result, detail in [
        (wrong_type, "Expected `int`, got `str` - at `$.a`"),
        (missing, "missing required field `b`"),
        (constraint, "Expected `str` of length >= 1 - at `$.text`"),
    ]:
        assert result.is_error is True
        assert isinstance(result.content[0], types.TextContent)
        assert detail in result.content[0].text


async def test_unknown_tool_is_a_protocol_error(transport: str) -> None:
    async with connect(transport) as client:
        with pytest.raises(McpError) as raised:
            await client.call_tool("no_such_tool", {})
    assert raised.value.code == errors.INVALID_PARAMS
    assert "no_such_tool" in raised.value.message


async def test_a_raising_tool_becomes_an_error_result_and_the_session_goes_on(
    transport: str,
) -> None:
    async with connect(transport) as client:
        failed = await client.call_tool("fail", {"message": "kaboom"})
        after = await client.call_tool("add", {"a": 20, "b": 22})
    assert failed.is_error is True
    assert failed.content == [types.TextContent(text="Tool 'fail' failed: RuntimeError: kaboom")]
    assert after.structured_content == {"result": 42}


async def test_a_deliberate_mcp_error_reaches_the_client_as_is(transport: str) -> None:
    async with connect(transport) as client:
        with pytest.raises(McpError) as raised:
            await client.call_tool("fail_protocol")
        await client.ping()
    assert (raised.value.code, raised.value.message) == (-32001, "deliberate protocol error")
    assert raised.value.data == {"why": "testing"}


async def test_progress_is_monotonic_and_arrives_before_the_result(transport: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with connect(transport) as client:
        result = await client.call_tool("slow", {"steps": 4}, on_progress=on_progress)
    assert result.content == [types.TextContent(text="done after 4 steps")]
    assert seen, "no progress arrived"
    assert seen[-1] == (4, 4, "step 4")
    values = [progress for progress, _, _ in seen]
    assert values == sorted(set(values))


async def test_the_final_progress_arrives_before_call_tool_returns(transport: str) -> None:
    """Progress coalesces (latest wins), but the latest report always precedes the result.

    The callback waits a little, as a real one might (a redraw): the last report and
    the response then arrive while it runs, and must still be delivered in order.
    Repeated, because the interleaving that lost the last report was a race.
    """
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)
        await trio.sleep(0.001)

    async with connect(transport) as client:
        for _ in range(50):
            seen.clear()
            result = await client.call_tool("progress_burst", on_progress=on_progress)
            assert result.content == [types.TextContent(text="done")]
            assert seen and seen[-1] == 100, f"the final progress was lost: saw {seen}"


async def test_no_progress_without_a_progress_token(transport: str) -> None:
    async with connect(transport) as client:
        result = await client.call_tool("slow", {"steps": 2})
        stats = client.session.statistics()
    assert result.content == [types.TextContent(text="done after 2 steps")]
    assert stats.messages_received >= 2


async def test_cancelling_the_caller_cancels_the_handler(transport: str, events_file: Path) -> None:
    async with connect(transport) as client:
        async with trio.open_nursery() as nursery:

            async def call() -> None:
                await client.call_tool("wait_forever", {"tag": "abandoned"})

            nursery.start_soon(call)
            await wait_for_event(events_file, "started abandoned")
            nursery.cancel_scope.cancel()
        await wait_for_event(events_file, "cancelled abandoned")
        # The session is unharmed: it still answers, and nothing is left in flight.
        await client.ping()
        assert client.session.statistics().outbound_calls == 0


async def test_timeout_raises_and_cancels_the_handler(transport: str, events_file: Path) -> None:
    async with connect(transport) as client:
        with pytest.raises(RequestTimeout) as raised:
            await client.call_tool("wait_forever", {"tag": "timed"}, timeout=0.3)
        await wait_for_event(events_file, "cancelled timed")
        assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {"result": 3}
    assert raised.value.method == "tools/call"
    assert "0.3" in str(raised.value)


async def test_requests_of_one_session_run_concurrently(transport: str, events_file: Path) -> None:
    async with connect(transport) as client, trio.open_nursery() as nursery:
        nursery.start_soon(client.call_tool, "wait_forever", {"tag": "blocker"})
        await wait_for_event(events_file, "started blocker")
        results = []

        async def add(n: int) -> None:
            results.append((await client.call_tool("add", {"a": n, "b": n})).structured_content)

        async with trio.open_nursery() as adders:
            for n in range(20):
                adders.start_soon(add, n)
        assert sorted(r["result"] for r in results if r) == [2 * n for n in range(20)]
        nursery.cancel_scope.cancel()


@pytest.mark.needs("server_requests")
async def test_server_to_client_request_from_a_handler(transport: str) -> None:
    async with connect(transport) as client:
        result = await client.call_tool("ping_client")
    assert result.content == [types.TextContent(text="client answered")]


async def test_client_ping(transport: str) -> None:
    async with connect(transport) as client:
        for _ in range(3):
            await client.ping()


@pytest.mark.needs("sessions")
async def test_log_messages_respect_the_session_level(transport: str) -> None:
    received: list[types.LoggingMessageParams] = []
    handlers = ClientHandlers(on_log=received.append)
    async with connect(transport, handlers=handlers) as client:
        await client.request("logging/setLevel", types.SetLevelParams(level="warning"))
        await client.call_tool("log_levels")
        with trio.fail_after(5):
            while len(received) < 2:
                await trio.sleep(0.01)
    assert [(m.level, m.data, m.logger) for m in received] == [
        ("warning", {"level": "warning"}, "sample"),
        ("error", {"level": "error"}, "sample"),
    ]


@pytest.mark.needs("sessions")
async def test_tool_list_changes_are_announced(transport: str) -> None:
    announced: list[str] = []
    handlers = ClientHandlers(on_list_changed=announced.append)
    async with connect(transport, handlers=handlers) as client:
        await client.call_tool("toggle_extra_tool", {"present": True})
        try:
            with trio.fail_after(5):
                while not announced:
                    await trio.sleep(0.01)
            assert "extra" in {tool.name for tool in await client.list_tools()}
            assert (await client.call_tool("extra")).content == [types.TextContent(text="extra")]
        finally:
            await client.call_tool("toggle_extra_tool", {"present": False})
        with trio.fail_after(5):
            while len(announced) < 2:
                await trio.sleep(0.01)
        assert "extra" not in {tool.name for tool in await client.list_tools()}
    assert announced == ["notifications/tools/list_changed"] * 2
