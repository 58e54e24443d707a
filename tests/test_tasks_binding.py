"""A task belongs to whoever created it: another caller who learns its id gets nothing.

With OAuth on, principal A's task is invisible to principal B in both tasks forms — the
2026-07-28 extension (``tasks/get``, ``tasks/update``, ``tasks/cancel``, ``taskIds`` on
``subscriptions/listen``) and the 2025-11-25 task-augmented calls (``tasks/get``,
``tasks/result``, ``tasks/cancel``, ``tasks/list``): B is answered exactly as for an id
that never existed, while A (on any connection or session) keeps full use of it.
Without auth a 2025-11-25 task belongs to its session. Two workers sharing a real Redis
keep the binding. Every message is checked against its revision's schema.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial
from typing import Any

import httpx
import pytest
import trio

from mcp_actors import Client, McpError, MessageStream, Server, open_client
from mcp_actors.auth.server import InvalidToken, ResourceServer
from mcp_actors.protocol import types as t
from mcp_actors.server.serve_http import HttpServerHandle, serve_http
from mcp_actors.server.serve_websocket import serve_websocket
from mcp_actors.server.tasks import TaskSettings
from mcp_actors.shared.settings import SharedSettings
from mcp_actors.testing.wire import WireRecorder, assert_all_valid
from mcp_actors.transports.http.auth import Principal
from mcp_actors.transports.http.client import open_streamable_http
from mcp_actors.transports.websocket import open_websocket_client

from deployment import redis_server
from servers.tasks_server import build

WITH_TASKS = t.ClientCapabilities(elicitation={}, extensions={t.TASKS_EXTENSION: {}})
CONFIRMED = {"elicitation-1": {"action": "accept", "content": {"ok": True}}}
#: Tokens, and who they stand for ("alice" and "alice-too": the same principal).
TOKENS = {
    "alice": Principal("alice", client_id="app"),
    "alice-too": Principal("alice", client_id="app"),
    "bob": Principal("bob", client_id="app"),
}


class Tokens:
    """A verifier that knows the tokens of :data:`TOKENS`."""

    async def verify(self, token: str, resource: str) -> Principal:
        principal = TOKENS.get(token)
        if principal is None:
            raise InvalidToken("unknown token")
        return principal


def protected() -> ResourceServer:
    return ResourceServer(verifier=Tokens(), authorization_servers=["https://as.invalid"])


def tasks_server() -> Server:
    return build(TaskSettings(poll_interval_ms=20))


@asynccontextmanager
async def serving(
    *servers: Server, auth: bool = True, shared: SharedSettings | None = None
) -> AsyncIterator[list[HttpServerHandle]]:
    """Each of ``servers`` on its own loopback port (OAuth on unless ``auth`` is False)."""
    async with trio.open_nursery() as nursery:
        handles = [
            await nursery.start(
                partial(
                    serve_http, server, port=0, auth=protected() if auth else None, shared=shared
                )
            )
            for server in servers
        ]
        yield handles
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def over_websocket(server: Server) -> AsyncIterator[str]:
    """``server`` over WebSocket with OAuth (the token at the upgrade); yields its URL."""
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(partial(serve_websocket, server, port=0, auth=protected()))
        yield handle.url
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def served(over: str, server: Server) -> AsyncIterator[str]:
    """``server`` with OAuth ``over`` "http" (``serve_http``) or "websocket"; yields its URL."""
    if over == "websocket":
        async with over_websocket(server) as url:
            yield url
    else:
        async with serving(server) as [http]:
            yield http.url


@asynccontextmanager
async def caller(url: str, token: str | None, era: str) -> AsyncIterator[Client]:
    """A client of ``era`` with ``token`` (over WebSocket for a ``ws://`` URL); what both
    sides sent is validated at the end."""
    headers = {"authorization": f"Bearer {token}"} if token else None
    capabilities = WITH_TASKS if era == "modern" else None
    opener: AbstractAsyncContextManager[MessageStream] = (
        open_websocket_client(url, headers=headers)
        if url.startswith("ws://")
        else open_streamable_http(url, headers=headers, legacy_fallback=False)
    )
    async with opener as stream:
        wire = WireRecorder(stream)
        async with open_client(wire, era=era, capabilities=capabilities) as client:
            yield client
            revision = client.protocol_version
    for recorded in (wire, wire.peer()):
        assert_all_valid(recorded, revision)


async def refusal(attempt: Callable[[str], Awaitable[object]], task_id: str) -> tuple[Any, ...]:
    """The error ``attempt(task_id)`` raises, with the id blanked out (to compare it with
    the error of an unknown id)."""
    with pytest.raises(McpError) as refused:
        await attempt(task_id)
    error = refused.value
    data = {k: "<id>" if v == task_id else v for k, v in (error.data or {}).items()}
    return error.code, error.message.replace(task_id, "<id>"), data


async def same_as_unknown(attempt: Callable[[str], Awaitable[object]], task_id: str) -> None:
    """``attempt`` on ``task_id`` fails exactly as on an id that never existed."""
    unknown = secrets.token_urlsafe(24)
    theirs = await refusal(attempt, task_id)
    assert theirs == await refusal(attempt, unknown)
    assert theirs[0] == -32602


async def asking(client: Client, task_id: str, *, no_more: bool = False) -> None:
    """Wait (bounded) until the task asks its question (``no_more``: no longer asks)."""
    with trio.fail_after(10):
        while ((await client.tool_task(task_id).status()).status == "input_required") == no_more:
            await trio.sleep(0.01)


# -- 2026-07-28: the tasks extension -------------------------------------------------------


@pytest.mark.parametrize("over", ["http", "websocket"])
async def test_another_principal_cannot_reach_a_modern_task(over: str) -> None:
    async with (
        served(over, tasks_server()) as url,
        caller(url, "alice", "modern") as alice,
        caller(url, "bob", "modern") as bob,
    ):
        started = await alice.start_tool_task("confirm", {"path": "/etc"})
        task_id = started.task_id
        assert task_id is not None
        await asking(alice, task_id)

        await same_as_unknown(lambda i: bob.tool_task(i).status(), task_id)
        await same_as_unknown(lambda i: bob.tool_task(i).answer(CONFIRMED), task_id)
        await same_as_unknown(lambda i: bob.tool_task(i).cancel(), task_id)

        mine = await alice.tool_task(task_id).status()
        assert mine.status == "input_required"  # neither answered nor cancelled by Bob
        await alice.tool_task(task_id).answer(CONFIRMED)
        result = await alice.tool_task(task_id).result()
        assert result.content == [t.TextContent(text="deleted /etc")]


async def test_the_same_principal_reaches_its_task_from_another_connection() -> None:
    async with (
        serving(tasks_server()) as [http],
        caller(http.url, "alice", "modern") as first,
        caller(http.url, "alice-too", "modern") as second,
    ):
        started = await first.start_tool_task("sleeper", {"token": "s", "seconds": 0})
        assert started.task_id is not None
        result = await second.tool_task(started.task_id).result()
        assert result.content == [t.TextContent(text="slept 0 s")]


@pytest.mark.parametrize("over", ["http", "websocket"])
async def test_a_listen_stream_hears_only_its_own_principal_s_tasks(over: str) -> None:
    """Bob asks to hear Alice's task and his own: the acknowledgement is the same as for
    any id (no oracle), but only his own task's changes reach him."""
    async with (
        served(over, tasks_server()) as url,
        caller(url, "alice", "modern") as alice,
        caller(url, "bob", "modern") as bob,
    ):
        hers = await alice.start_tool_task("confirm", {"path": "/a"})
        assert hers.task_id is not None
        his = await bob.start_tool_task("confirm", {"path": "/b"})
        assert his.task_id is not None
        await asking(alice, hers.task_id)
        await asking(bob, his.task_id)
        wanted = [hers.task_id, his.task_id]
        async with bob.listen(extra={"taskIds": wanted}) as changes:
            assert changes.acknowledged == {"taskIds": wanted}
            await alice.tool_task(hers.task_id).answer(CONFIRMED)
            await alice.tool_task(hers.task_id).result()  # her task changed twice, and ended
            await bob.tool_task(his.task_id).answer(CONFIRMED)
            heard = []
            with trio.fail_after(10):
                async for event in changes:
                    heard.append(event.params.task_id)
                    if event.params.task_id == his.task_id and event.params.status == "completed":
                        break
        assert set(heard) == {his.task_id}


# -- 2025-11-25: task-augmented requests ----------------------------------------------------


async def legacy_task(client: Client, tool: str, arguments: dict[str, Any]) -> str:
    created = await client.request(
        "tools/call",
        {"name": tool, "arguments": arguments, "task": {}},
        result_type=t.CreateTaskResult,
    )
    return created.task.task_id


async def listed(client: Client) -> list[str]:
    """Every task id ``tasks/list`` gives ``client``, page after page."""
    ids: list[str] = []
    params: dict[str, Any] = {}
    while True:
        page = await client.request("tasks/list", params, result_type=t.ListTasksResult)
        ids += [task.task_id for task in page.tasks]
        if not isinstance(page.next_cursor, str):
            return ids
        params = {"cursor": page.next_cursor}


def legacy_attempts(client: Client) -> list[Callable[[str], Awaitable[object]]]:
    """``tasks/get``, ``tasks/result`` and ``tasks/cancel`` of ``client``, by task id."""
    return [
        partial(lambda method, i: client.request(method, {"taskId": i}), method)
        for method in ("tasks/get", "tasks/result", "tasks/cancel")
    ]


@pytest.mark.parametrize("over", ["http", "websocket"])
async def test_another_principal_cannot_reach_a_legacy_task(over: str) -> None:
    async with (
        served(over, tasks_server()) as url,
        caller(url, "alice", "legacy") as alice,
        caller(url, "alice-too", "legacy") as alice_again,
        caller(url, "bob", "legacy") as bob,
    ):
        assert alice.server_capabilities.tasks == {
            "list": {},
            "cancel": {},
            "requests": {"tools": {"call": {}}},
        }
        slow = await legacy_task(alice, "sleeper", {"token": "l1", "seconds": 30})
        quick = await legacy_task(alice, "sleeper", {"token": "l2", "seconds": 0})
        for attempt in legacy_attempts(bob):
            await same_as_unknown(attempt, slow)
        assert await listed(bob) == []

        done = await alice_again.request(
            "tasks/result", {"taskId": quick}, result_type=t.CallToolResult
        )
        assert done.content == [t.TextContent(text="slept 0 s")]
        assert await listed(alice_again) == [slow, quick]
        still = await alice.request("tasks/get", {"taskId": slow}, result_type=t.GetTaskResult)
        assert still.status == "working"  # Bob's cancel did nothing
        cancelled = await alice.request(
            "tasks/cancel", {"taskId": slow}, result_type=t.CancelTaskResult
        )
        assert cancelled.status == "cancelled"


async def test_without_auth_a_legacy_task_belongs_to_its_session() -> None:
    async with (
        serving(tasks_server(), auth=False) as [http],
        caller(http.url, None, "legacy") as first,
        caller(http.url, None, "legacy") as second,
    ):
        mine = await legacy_task(first, "sleeper", {"token": "n1", "seconds": 30})
        for attempt in legacy_attempts(second):
            await same_as_unknown(attempt, mine)
        assert await listed(second) == []
        assert await listed(first) == [mine]
        got = await first.request("tasks/get", {"taskId": mine}, result_type=t.GetTaskResult)
        assert got.status == "working"


async def test_tasks_list_pages_through_a_caller_s_tasks() -> None:
    server = build(TaskSettings(poll_interval_ms=20, list_page_size=2))
    async with serving(server) as [http], caller(http.url, "alice", "legacy") as alice:
        ids = [
            await legacy_task(alice, "sleeper", {"token": f"p{n}", "seconds": 0}) for n in range(5)
        ]
        assert await listed(alice) == ids
        with pytest.raises(McpError) as bad:
            await alice.request("tasks/list", {"cursor": "not-ours"})
        assert bad.value.code == -32602


async def test_tasks_list_is_not_a_modern_method() -> None:
    """The extension has no ``tasks/list`` (the client does not even send it; a raw POST)."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {t.TASKS_EXTENSION: {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "tasks/list", "params": {"_meta": meta}}
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tasks/list",
        "authorization": "Bearer alice",
    }
    async with serving(tasks_server()) as [http], httpx.AsyncClient(timeout=10) as client:
        answer = (await client.post(http.url, json=body, headers=headers)).json()
    assert answer["error"]["code"] == -32601


# -- two workers sharing Redis --------------------------------------------------------------


async def test_the_binding_holds_across_workers_sharing_redis() -> None:
    async with redis_server() as redis_url:
        shared = SharedSettings(redis_url=redis_url)
        async with (
            serving(tasks_server(), tasks_server(), shared=shared) as [one, other],
            caller(one.url, "alice", "modern") as alice,
            caller(other.url, "alice", "modern") as alice_elsewhere,
            caller(other.url, "bob", "modern") as bob_elsewhere,
            caller(one.url, "alice", "legacy") as alice_legacy,
            caller(other.url, "alice", "legacy") as alice_legacy_elsewhere,
            caller(other.url, "bob", "legacy") as bob_legacy_elsewhere,
        ):
            started = await alice.start_tool_task("confirm", {"path": "/r"})
            assert started.task_id is not None
            await asking(alice, started.task_id)
            await same_as_unknown(lambda i: bob_elsewhere.tool_task(i).status(), started.task_id)
            await same_as_unknown(
                lambda i: bob_elsewhere.tool_task(i).answer(CONFIRMED), started.task_id
            )
            await same_as_unknown(lambda i: bob_elsewhere.tool_task(i).cancel(), started.task_id)
            await alice_elsewhere.tool_task(started.task_id).answer(CONFIRMED)
            await asking(alice_elsewhere, started.task_id, no_more=True)  # crossed the bus
            result = await alice_elsewhere.tool_task(started.task_id).result()
            assert result.content == [t.TextContent(text="deleted /r")]

            legacy = await legacy_task(alice_legacy, "sleeper", {"token": "w", "seconds": 30})
            for attempt in legacy_attempts(bob_legacy_elsewhere):
                await same_as_unknown(attempt, legacy)
            assert await listed(bob_legacy_elsewhere) == []
            # Alice's tasks, whichever era made them (both answer her tasks/get)
            assert await listed(alice_legacy_elsewhere) == [started.task_id, legacy]
            cancelled = await alice_legacy_elsewhere.request(
                "tasks/cancel", {"taskId": legacy}, result_type=t.CancelTaskResult
            )
            assert cancelled.status == "cancelled"


# -- one requestor cannot take every task slot -------------------------------------------


async def test_a_requestor_runs_a_bounded_number_of_tasks_at_once() -> None:
    server = build(TaskSettings(poll_interval_ms=20, max_running_per_requestor=1))
    async with (
        serving(server) as [http],
        caller(http.url, "alice", "modern") as alice,
        caller(http.url, "bob", "modern") as bob,
    ):
        first = await alice.start_tool_task("sleeper", {"token": "b1", "seconds": 30})
        with pytest.raises(McpError) as refused:
            await alice.start_tool_task("sleeper", {"token": "b2", "seconds": 30})
        assert refused.value.code == -32603 and refused.value.data == {"limit": 1}
        theirs = await bob.start_tool_task("sleeper", {"token": "b3", "seconds": 0})
        assert (await theirs.result()).content == [t.TextContent(text="slept 0 s")]
        await first.cancel()
    assert server.task_statistics().refused == 1


@pytest.mark.parametrize("setting", ["max_running_per_requestor", "list_page_size", "max_tasks"])
@pytest.mark.parametrize("value", [0, -1, True, 1.5])
def test_task_bounds_are_positive_integers(setting: str, value: object) -> None:
    with pytest.raises(ValueError, match=setting):
        TaskSettings(**{setting: value})


@pytest.mark.parametrize("setting", ["ttl_ms", "poll_interval_ms"])
@pytest.mark.parametrize("value", [0, True, 1.5, "500"])
def test_task_times_are_positive_integers_not_booleans(setting: str, value: object) -> None:
    with pytest.raises(ValueError, match=setting):
        TaskSettings(**{setting: value})
    assert TaskSettings(ttl_ms=None).ttl_ms is None  # None: kept until the process ends
