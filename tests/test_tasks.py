"""The tasks extension (io.modelcontextprotocol/tasks, 2026-07-28): a tool call as an actor
that outlives its request and its connection.

Over memory, stdio and Streamable HTTP, every message checked against the 2026-07-28
schema and the extension's own (``connect`` validates the wire when the block ends).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import pytest
import trio

from mcp_actors import (
    Client,
    ClientHandlers,
    McpError,
    Supervisor,
    memory_pair,
    open_client,
    open_supervisor,
)
from mcp_actors.client.targets import load_server
from mcp_actors.client.tasks import TaskCancelled
from mcp_actors.protocol import types as t
from mcp_actors.runtime.task_store import MemoryTaskStore, TaskRecord, TaskStoreFull
from mcp_actors.server.serve_http import serve_http
from mcp_actors.testing.wire import WireRecorder, assert_all_valid
from mcp_actors.transports.http.client import open_streamable_http

from conftest import connect

SERVER = "servers.tasks_server:server"
SHORT_LIVED = "servers.tasks_server:short_lived"
TRANSPORTS = ["memory", "stdio", "http"]
WITH_TASKS = t.ClientCapabilities(extensions={t.TASKS_EXTENSION: {}})


def modern(transport: str, spec: str = SERVER, **options: Any) -> Any:
    options.setdefault("capabilities", WITH_TASKS)
    return connect(transport, spec, era="modern", **options)


async def wait_status(client: Client, task_id: str, status: str) -> t.DetailedTask:
    with trio.fail_after(10):
        while True:
            task = await client.tool_task(task_id).status()
            if task.status == status:
                return task
            await trio.sleep(0.01)


async def saw_cancellation(client: Client, token: str) -> None:
    """Wait (bounded) until the tool ``sleeper(token)`` has seen its cancellation."""
    with trio.fail_after(10):
        while True:
            seen = await client.call_tool("cancellation_seen", {"token": token})
            if seen.structured_content == {"result": True}:
                return
            await trio.sleep(0.01)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_call_tool_follows_a_task_to_its_result(transport: str) -> None:
    heard: list[str | None] = []
    results: list[t.CallToolResult] = []
    token = f"follow-{transport}"  # in-process transports share one server's gates
    async with modern(transport) as client:
        assert client.server_capabilities.extensions == {t.TASKS_EXTENSION: {}}

        async def follow() -> None:
            call = client.call_tool(
                "gated",
                {"token": token},
                on_progress=lambda progress, total, message: heard.append(message),
            )
            results.append(await call)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(follow)
            with trio.fail_after(10):  # the task stays working until released
                while not heard:
                    await trio.sleep(0.01)
            await client.call_tool("release", {"token": token})
    assert results[0].content == [t.TextContent(text=f"released {token}")]
    assert heard[0] == "working" and heard[-1] == "completed"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_plain_call_of_a_client_with_the_extension_keeps_its_progress(
    transport: str,
) -> None:
    heard: list[float] = []
    async with modern(transport) as client:
        result = await client.call_tool(
            "stepper", on_progress=lambda progress, total, message: heard.append(progress)
        )
    assert result.content == [t.TextContent(text="stepped")]
    assert heard and heard[-1] == 2  # (a newer report may replace one not yet sent)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_task_handle_and_its_wire_fields(transport: str) -> None:
    async with modern(transport, capabilities=None) as client:  # the extension per request
        handle = await client.start_tool_task("sleeper", {"token": "b", "seconds": 0.2})
        assert handle.task_id is not None and len(handle.task_id) >= 32
        task = await handle.status()
        assert task.status == "working" and task.result_type == "complete"
        assert task.created_at.endswith("Z") and task.ttl_ms == 3_600_000
        assert task.poll_interval_ms == 20
        assert (await handle.result()).content == [t.TextContent(text="slept 0.2 s")]
        # without the extension in the request, the same tool answers at once
        plain = await client.call_tool("sleeper", {"token": "c", "seconds": 0})
        assert plain.content == [t.TextContent(text="slept 0 s")]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_tool_errors_complete_and_protocol_errors_fail(transport: str) -> None:
    async with modern(transport) as client:
        crashed = await client.call_tool("crash")
        assert crashed.is_error is True
        with pytest.raises(McpError) as refused:
            await client.call_tool("refuse")
        assert refused.value.code == -32602 and refused.value.message == "refused on purpose"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_cancelled_task_s_handler_observes_the_cancel(transport: str) -> None:
    async with modern(transport) as client:
        handle = await client.start_tool_task("sleeper", {"token": "d", "seconds": 30})
        assert handle.task_id is not None
        await handle.cancel()
        with pytest.raises(TaskCancelled):
            await handle.result()
        await handle.cancel()  # a finished task: the same ack
        await saw_cancellation(client, "d")


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_caller_that_times_out_cancels_the_task(transport: str) -> None:
    async with modern(transport) as client:
        with pytest.raises(trio.TooSlowError):
            await client.call_tool("sleeper", {"token": "e", "seconds": 30}, timeout=0.3)
        await saw_cancellation(client, "e")


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_input_during_a_task_goes_through_tasks_update(transport: str) -> None:
    capabilities = t.ClientCapabilities(elicitation={}, extensions={t.TASKS_EXTENSION: {}})
    async with modern(transport, capabilities=capabilities) as client:
        handle = await client.start_tool_task("confirm", {"path": "/tmp/x"})
        assert handle.task_id is not None
        task = await wait_status(client, handle.task_id, "input_required")
        assert isinstance(task.input_requests, dict)
        [(key, request)] = task.input_requests.items()
        assert request["method"] == "elicitation/create"
        await handle.answer({"unknown-key": {"action": "decline"}})  # ignored
        assert (await handle.status()).status == "input_required"
        await handle.answer({key: {"action": "accept", "content": {"ok": True}}})
        assert (await handle.result()).content == [t.TextContent(text="deleted /tmp/x")]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_deferred_tool_asks_first_then_runs_as_a_task(transport: str) -> None:
    asked: list[str] = []

    def answer(params: t.ElicitParams) -> t.ElicitResult:
        asked.append(params.message)
        return t.ElicitResult(action="accept", content={"region": "eu-west"})

    handlers = ClientHandlers(elicitation=answer)
    async with modern(transport, handlers=handlers) as client:
        result = await client.call_tool("deploy")
    assert asked == ["Which region?"]  # one input_required round, before the task
    assert result.content == [t.TextContent(text="deployed to eu-west")]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_concurrent_questions_of_a_task_are_outstanding_together(transport: str) -> None:
    capabilities = t.ClientCapabilities(elicitation={}, extensions={t.TASKS_EXTENSION: {}})
    async with modern(transport, capabilities=capabilities) as client:
        handle = await client.start_tool_task("two_askers")
        assert handle.task_id is not None
        with trio.fail_after(10):
            while True:
                task = await wait_status(client, handle.task_id, "input_required")
                if isinstance(task.input_requests, dict) and len(task.input_requests) == 2:
                    break
                await trio.sleep(0.01)
        await handle.answer({"a": {"action": "accept", "content": {"v": "x"}}})
        left = await handle.status()
        assert left.status == "input_required" and list(left.input_requests or {}) == ["b"]
        await handle.answer({"b": {"action": "accept", "content": {"v": "y"}}})
        assert (await handle.result()).content == [t.TextContent(text="xy")]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_call_tool_answers_a_task_s_questions_with_the_client_s_handlers(
    transport: str,
) -> None:
    heard: list[str | None] = []

    def answer(params: t.ElicitParams) -> t.ElicitResult:
        return t.ElicitResult(action="accept", content={"ok": params.message == "Delete /a?"})

    async with modern(transport, handlers=ClientHandlers(elicitation=answer)) as client:
        result = await client.call_tool(
            "confirm", {"path": "/a"}, on_progress=lambda p, total, m: heard.append(m)
        )
    assert result.content == [t.TextContent(text="deleted /a")]
    assert "input_required" in heard and heard[-1] == "completed"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_clients_without_the_extension_get_32021_and_unknown_ids_32602(
    transport: str,
) -> None:
    async with modern(transport, capabilities=None) as client:
        for method, params in [
            ("tasks/get", {"taskId": "gate-test"}),
            ("tasks/cancel", {"taskId": "gate-test"}),
            ("tasks/update", {"taskId": "gate-test", "inputResponses": {}}),
        ]:
            with pytest.raises(McpError) as refused:
                await client.request(method, params)
            assert refused.value.code == -32021, method
            assert refused.value.data == {
                "requiredCapabilities": {"extensions": {t.TASKS_EXTENSION: {}}}
            }
        for tool in ("crash", "deploy"):  # task="always", task="deferred"
            with pytest.raises(McpError) as required:
                await client.call_tool(tool)
            assert required.value.code == -32021
        with pytest.raises(McpError) as unknown:
            await client.tool_task("no-such-task").status()
        assert unknown.value.code == -32602


async def test_an_expired_task_is_gone() -> None:
    async with modern("memory", SHORT_LIVED) as client:
        handle = await client.start_tool_task("sleeper", {"token": "f", "seconds": 0})
        assert handle.task_id is not None
        assert (await handle.result()).content == [t.TextContent(text="slept 0 s")]
        await trio.sleep(0.35)
        with pytest.raises(McpError) as expired:
            await handle.status()
        assert expired.value.code == -32602


@asynccontextmanager
async def _memory_connection(server: Any, supervisor: Supervisor) -> AsyncIterator[Client]:
    """A connection whose session the supervisor runs (as ``serve_*`` do): its tasks
    live in the supervisor, not in the session."""
    client_end, server_end = memory_pair()
    wire = WireRecorder(client_end)
    session = await supervisor.start_session(server.create_session(server_end))
    async with open_client(wire, era="modern", capabilities=WITH_TASKS) as client:
        yield client
    session.close()
    assert_all_valid(wire, "2026-07-28")


async def test_a_task_survives_its_client_over_memory() -> None:
    server = load_server(SERVER)
    before = server.task_statistics()
    async with open_supervisor() as supervisor:
        async with _memory_connection(server, supervisor) as first:
            handle = await first.start_tool_task("sleeper", {"token": "g", "seconds": 0.3})
        assert server.task_statistics().running == 1  # its connection is gone; it is not
        async with _memory_connection(server, supervisor) as second:
            assert handle.task_id is not None
            result = await second.tool_task(handle.task_id).result()
    assert result.content == [t.TextContent(text="slept 0.3 s")]
    after = server.task_statistics()
    assert after.running == 0 and after.started == before.started + 1


@asynccontextmanager
async def _http_connection(url: str) -> AsyncIterator[Client]:
    async with open_streamable_http(url, legacy_fallback=False) as stream:
        wire = WireRecorder(stream)
        async with open_client(wire, era="modern", capabilities=WITH_TASKS) as client:
            yield client
    assert_all_valid(wire, "2026-07-28")


async def test_a_task_survives_its_client_over_http() -> None:
    server = load_server(SERVER)
    async with trio.open_nursery() as nursery:
        http = await nursery.start(partial(serve_http, server, port=0))
        async with _http_connection(http.url) as first:
            handle = await first.start_tool_task("sleeper", {"token": "h", "seconds": 0.3})
        async with _http_connection(http.url) as second:
            assert handle.task_id is not None
            result = await second.tool_task(handle.task_id).result()
        assert result.content == [t.TextContent(text="slept 0.3 s")]
        nursery.cancel_scope.cancel()


async def test_the_store_is_bounded_and_drops_the_oldest_finished_task() -> None:
    now = [1000.0]
    store = MemoryTaskStore(max_tasks=2, clock=lambda: now[0])

    def record(task_id: str) -> TaskRecord:
        return TaskRecord(task_id, now[0], ttl_ms=1000, poll_interval_ms=10, tool="x")

    await store.add(record("a"))
    await store.add(record("b"))
    with pytest.raises(TaskStoreFull):
        await store.add(record("c"))  # both are running
    await store.update("a", status="completed")
    assert await store.update("a", status="working") is not None
    assert (await store.get("a")).status == "completed"  # type: ignore[union-attr]  # finished stays
    await store.add(record("c"))  # evicts finished "a"
    assert await store.get("a") is None and store.live() == 2 and store.running() == 2
    now[0] += 1.0  # b and c expire
    assert await store.get("b") is None
    assert store.purge_expired() == ["c"]
    with pytest.raises(ValueError):
        MemoryTaskStore(max_tasks=0)


async def test_the_store_gives_a_requestor_its_own_unexpired_records_oldest_first() -> None:
    now = [1000.0]
    store = MemoryTaskStore(clock=lambda: now[0])
    for task_id, requestor, ttl_ms in [("a", "r1", 500), ("b", "r2", 5000), ("c", "r1", 5000)]:
        await store.add(TaskRecord(task_id, now[0], ttl_ms, 10, "x", requestor=requestor))
        now[0] += 0.1
    assert [r.task_id for r in await store.of_requestor("r1")] == ["a", "c"]
    now[0] += 0.5  # a expires
    assert [r.task_id for r in await store.of_requestor("r1")] == ["c"]
    assert [r.task_id for r in await store.of_requestor("r2")] == ["b"]
    assert await store.of_requestor("") == []


# -- 2025-11-25: the experimental core tasks (legacy sessions) ---------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_legacy_task_augmented_calls(transport: str) -> None:
    async with connect(transport, SERVER) as client:
        assert client.protocol_version == "2025-11-25"
        assert client.server_capabilities.tasks == {
            "list": {},
            "cancel": {},
            "requests": {"tools": {"call": {}}},
        }
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert tools["sleeper"].execution == {"taskSupport": "optional"}
        assert tools["crash"].execution == {"taskSupport": "required"}

        call = {"name": "sleeper", "arguments": {"token": "l", "seconds": 0.1}}
        created = await client.request(
            "tools/call", {**call, "task": {"ttl": 60_000}}, result_type=t.CreateTaskResult
        )
        task = created.task
        assert task.status == "working" and task.ttl == 60_000 and task.poll_interval == 20
        result = await client.request(
            "tasks/result", {"taskId": task.task_id}, result_type=t.CallToolResult
        )
        assert result.content == [t.TextContent(text="slept 0.1 s")]
        assert result.meta == {"io.modelcontextprotocol/related-task": {"taskId": task.task_id}}
        done = await client.request(
            "tasks/get", {"taskId": task.task_id}, result_type=t.GetTaskResult
        )
        assert done.status == "completed"
        with pytest.raises(McpError) as finished:
            await client.request("tasks/cancel", {"taskId": task.task_id})
        assert finished.value.code == -32602

        with pytest.raises(McpError) as plain:
            await client.call_tool("crash")  # taskSupport "required", called plainly
        assert plain.value.code == -32601
        crashed = await client.request(
            "tools/call", {"name": "crash", "task": {}}, result_type=t.CreateTaskResult
        )
        failed = await client.request(  # what the call would have answered
            "tasks/result", {"taskId": crashed.task.task_id}, result_type=t.CallToolResult
        )
        assert failed.is_error is True
        status = await client.request(
            "tasks/get", {"taskId": crashed.task.task_id}, result_type=t.GetTaskResult
        )
        assert status.status == "failed"  # 2025-11-25: a tool's isError is "failed"

        slow = await client.request(
            "tools/call",
            {"name": "sleeper", "arguments": {"token": "m", "seconds": 30}, "task": {}},
            result_type=t.CreateTaskResult,
        )
        cancelled = await client.request(
            "tasks/cancel", {"taskId": slow.task.task_id}, result_type=t.CancelTaskResult
        )
        assert cancelled.status == "cancelled"
        await saw_cancellation(client, "m")


# -- notifications/tasks on subscriptions/listen streams -----------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_listen_stream_with_task_ids_hears_the_task_change(transport: str) -> None:
    async with modern(transport) as client:
        handle = await client.start_tool_task("sleeper", {"token": "n", "seconds": 0.3})
        assert handle.task_id is not None
        async with client.listen(extra={"taskIds": [handle.task_id]}) as changes:
            assert changes.acknowledged == {"taskIds": [handle.task_id]}
            with trio.fail_after(10):
                async for event in changes:
                    assert event.method == "notifications/tasks"
                    assert event.params.task_id == handle.task_id
                    if event.params.status == "completed":
                        break
        assert event.params.result["content"] == [{"type": "text", "text": "slept 0.3 s"}]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_listen_with_task_ids_needs_the_extension(transport: str) -> None:
    async with modern(transport, capabilities=None) as client:
        with pytest.raises(McpError) as refused:
            async with client.listen(extra={"taskIds": ["some-task"]}):
                pass
        assert refused.value.code == -32021
