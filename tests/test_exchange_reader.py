"""A one-exchange HTTP session reads nothing while it serves, until it must.

The session of a stateless legacy POST or a 2026-07-28 request serves its request in
the POST's own task (``MessageStream.defer_reading``). A request answered at once
costs no task of the runtime's; one still unanswered after about ``QUICK_REPLY``
seconds gets a reader (``transports/http/slow_replies.py``) that watches the client:
one that leaves has its request cancelled. That reader, and the writer's task that sends
the progress of a request that waits, run as companions in the supervisor, not in a
nursery of the session's (``runtime/companions.py``). A stateless POST of notifications is
answered 202 and served in its own task too — or, when no session of the server would
act on it (no middleware; no roots handler for a roots change), answered 202 with no
session at all; so is a stateless ``initialize``, which the engine answers itself. Both
eras, both front ends.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import partial
from typing import Any

import httpx
import pytest
import trio

from mcp_actors import Context, Server, UrlTarget, open_client
from mcp_actors.runtime.middleware import Call, Middleware, NotifyNext
from mcp_actors.server.serve_http import HttpServerHandle, serve_http
from mcp_actors.testing.wire import validate_message

ERAS = ("modern", "legacy")
#: Requests counted once the server is warm.
REQUESTS = 20


class RuntimeTasks(trio.abc.Instrument):
    """Counts the tasks the runtime (sessions, readers, writers) spawns."""

    def __init__(self) -> None:
        self.spawned: list[str] = []

    def task_spawned(self, task: trio.lowlevel.Task) -> None:
        if task.name.startswith("mcp_actors.runtime"):
            self.spawned.append(task.name)


@contextmanager
def runtime_tasks() -> Iterator[RuntimeTasks]:
    """The runtime's tasks spawned while the block runs."""
    tasks = RuntimeTasks()
    trio.lowlevel.add_instrument(tasks)
    try:
        yield tasks
    finally:
        trio.lowlevel.remove_instrument(tasks)


class Notifications(Middleware):
    def __init__(self) -> None:
        self.seen: list[str] = []

    def on_notification(self, call: Call, call_next: NotifyNext) -> None:
        self.seen.append(call.method)
        call_next(call)


def make_server(state: dict[str, Any]) -> Server:
    server = Server("exchange-reader")

    @server.tool  # not inline: it may wait
    async def add(a: int, b: int) -> int:
        await trio.lowlevel.checkpoint()
        return a + b

    @server.tool
    async def count_slowly(ctx: Context, count: int) -> int:
        for step in range(1, count + 1):
            await ctx.report_progress(step, count)
            await trio.sleep(0.01)  # each report waits for the writer: its task runs meanwhile
        return count

    @server.tool
    async def wait_forever() -> str:
        state["started"].set()
        try:
            await trio.sleep_forever()
        finally:
            state["cancelled"].set()

    return server


HEADERS = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25"}


def notification(method: str) -> dict[str, str]:
    return {"jsonrpc": "2.0", "method": method}


@asynccontextmanager
async def served(era: str, server: Server) -> AsyncIterator[str]:
    async with served_handle(era, server) as handle:
        yield handle.url


@asynccontextmanager
async def served_handle(era: str, server: Server) -> AsyncIterator[HttpServerHandle]:
    async with trio.open_nursery() as nursery:
        serve = partial(serve_http, server, port=0, stateless=era == "legacy")
        yield await nursery.start(serve)
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("era", ERAS)
async def test_a_request_answered_at_once_costs_the_runtime_no_task(
    era: str, http_front_end: str
) -> None:
    state = {"started": trio.Event(), "cancelled": trio.Event()}
    with trio.fail_after(60):  # a hang guard only
        async with (
            served(era, make_server(state)) as url,
            open_client(UrlTarget(url), era=era) as client,  # type: ignore[arg-type]
        ):
            await client.call_tool("add", {"a": 0, "b": 0})  # warm
            with runtime_tasks() as tasks:
                results = [await client.call_tool("add", {"a": i, "b": 1}) for i in range(REQUESTS)]
    assert [r.structured_content for r in results] == [{"result": i + 1} for i in range(REQUESTS)]
    assert tasks.spawned == []


@pytest.mark.parametrize("era", ERAS)
async def test_a_slow_request_s_client_that_leaves_cancels_it(
    era: str, http_front_end: str
) -> None:
    state = {"started": trio.Event(), "cancelled": trio.Event()}
    with trio.fail_after(60):  # a hang guard only
        async with served(era, make_server(state)) as url:
            with runtime_tasks() as tasks:
                async with trio.open_nursery() as nursery:

                    async def call() -> None:
                        async with open_client(UrlTarget(url), era=era) as client:  # type: ignore[arg-type]
                            await client.call_tool("wait_forever")

                    nursery.start_soon(call)
                    await state["started"].wait()
                    await trio.sleep(0.2)  # past QUICK_REPLY: the reader watches the client
                    nursery.cancel_scope.cancel()  # the client leaves
                await state["cancelled"].wait()
    assert tasks.spawned  # the reader that watched the client (the request served in place)


@pytest.mark.parametrize("era", ERAS)
async def test_the_progress_of_a_request_that_waits_travels_in_its_reply(
    era: str, http_front_end: str
) -> None:
    """The reports go out while the handler waits, in the request's own event stream:
    the writer's task that sends them is a companion of the session (no nursery)."""
    state = {"started": trio.Event(), "cancelled": trio.Event()}
    reported: list[float] = []
    with trio.fail_after(60):  # a hang guard only
        async with (
            served(era, make_server(state)) as url,
            open_client(UrlTarget(url), era=era) as client,  # type: ignore[arg-type]
        ):
            with runtime_tasks() as tasks:
                result = await client.call_tool(
                    "count_slowly", {"count": 3}, on_progress=lambda p, total, m: reported.append(p)
                )
    assert result.structured_content == {"result": 3}
    assert reported == [1, 2, 3]
    # The writer's task (and a reader, if the reply was slow) ran in the supervisor.
    assert tasks.spawned
    assert all(name.endswith("Supervisor._contain") for name in tasks.spawned), tasks.spawned


async def test_a_stateless_post_of_notifications_is_served_where_middleware_sees_it(
    http_front_end: str,
) -> None:
    seen = Notifications()
    server = make_server({})
    server.add_middleware(seen)
    initialized = notification("notifications/initialized")
    with trio.fail_after(60):  # a hang guard only
        async with served("legacy", server) as url, httpx.AsyncClient() as http:
            await http.post(url, json=initialized, headers=HEADERS)  # warm
            with runtime_tasks() as tasks:
                replies = [
                    await http.post(url, json=initialized, headers=HEADERS) for _ in range(5)
                ]
    assert [reply.status_code for reply in replies] == [202] * 5
    assert [reply.content for reply in replies] == [b""] * 5
    assert seen.seen == ["notifications/initialized"] * 6
    assert tasks.spawned == []


async def test_a_stateless_notification_no_session_would_act_on_makes_none() -> None:
    server = make_server({})
    methods = ["notifications/initialized", "notifications/cancelled", "notifications/progress"]
    with trio.fail_after(60):  # a hang guard only
        async with served_handle("legacy", server) as handle, httpx.AsyncClient() as http:
            before = handle.supervisor.statistics().sessions_started
            replies = [
                await http.post(handle.url, json=notification(method), headers=HEADERS)
                for method in methods
            ]
            batch = [notification(method) for method in methods]
            replies.append(await http.post(handle.url, json=batch, headers=HEADERS))
            after = handle.supervisor.statistics().sessions_started
            answer = await http.post(
                handle.url,
                json={
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/call",
                    "params": {"name": "add", "arguments": {"a": 1, "b": 2}},
                },
                headers=HEADERS,
            )
    assert [(reply.status_code, reply.content) for reply in replies] == [(202, b"")] * 4
    assert after == before
    assert b'"result"' in answer.content  # requests are served as ever


async def test_a_stateless_roots_change_reaches_the_server_s_handlers() -> None:
    server = make_server({})
    changed = trio.Event()

    @server.on_roots_changed
    async def roots_changed(server_session: Any) -> None:
        changed.set()

    with trio.fail_after(60):  # a hang guard only
        async with served_handle("legacy", server) as handle, httpx.AsyncClient() as http:
            initialized = notification("notifications/initialized")
            quiet = await http.post(handle.url, json=initialized, headers=HEADERS)
            before = handle.supervisor.statistics().sessions_started
            roots = notification("notifications/roots/list_changed")
            reply = await http.post(handle.url, json=roots, headers=HEADERS)
            await changed.wait()
            after = handle.supervisor.statistics().sessions_started
    assert (quiet.status_code, reply.status_code) == (202, 202)
    assert after == before + 1


def initialize(request_id: int, version: str, **params: Any) -> dict[str, Any]:
    client = {"name": "probe", "version": "1"}
    fields = {"protocolVersion": version, "capabilities": {}, "clientInfo": client, **params}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": fields}


def json_rpc(reply: httpx.Response) -> Any:
    """The one JSON-RPC message of a reply: its JSON body, or its event stream's data."""
    if reply.headers["content-type"].startswith("application/json"):
        return reply.json()
    data = [line[5:].strip() for line in reply.text.splitlines() if line.startswith("data:")]
    return json.loads(next(line for line in data if line))


@pytest.mark.parametrize("accept", ["application/json", "application/json, text/event-stream"])
async def test_a_stateless_initialize_is_answered_with_no_session(accept: str) -> None:
    server = make_server({})
    headers = {"accept": accept}
    with trio.fail_after(60):  # a hang guard only
        async with served_handle("legacy", server) as handle, httpx.AsyncClient() as http:
            before = handle.supervisor.statistics().sessions_started
            with runtime_tasks() as tasks:
                replies = [
                    await http.post(handle.url, json=initialize(1, "2025-06-18"), headers=headers),
                    await http.post(handle.url, json=initialize(2, "2099-01-01"), headers=headers),
                    await http.post(handle.url, json=initialize(3, 42), headers=headers),
                ]
            after = handle.supervisor.statistics().sessions_started
    assert [reply.status_code for reply in replies] == [200, 200, 200]
    negotiated, newest, invalid = (json_rpc(reply) for reply in replies)
    validate_message("2025-06-18", negotiated, in_reply_to="initialize")
    assert negotiated["id"] == 1
    result = negotiated["result"]
    assert result["protocolVersion"] == "2025-06-18"
    assert result["serverInfo"]["name"] == "exchange-reader"
    # stateless: nothing to deliver a list change on (tools: no listChanged)
    assert result["capabilities"]["tools"] == {}
    # an unknown revision is answered with the newest we speak
    assert newest["id"] == 2 and newest["result"]["protocolVersion"] == "2025-11-25"
    validate_message("2025-11-25", newest, in_reply_to="initialize")
    assert invalid["id"] == 3 and invalid["error"]["code"] == -32602
    assert after == before  # no session was made for any of them
    assert tasks.spawned == []


async def test_a_stateless_initialize_that_fails_is_an_internal_error_and_nothing_more(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = make_server({})

    def describe_fails(*_: Any, **__: Any) -> Any:
        raise RuntimeError("a bug while describing the server")

    with trio.fail_after(60):  # a hang guard only
        async with served_handle("legacy", server) as handle, httpx.AsyncClient() as http:
            monkeypatch.setattr(Server, "describe", describe_fails)
            failed = await http.post(handle.url, json=initialize(1, "2025-06-18"), headers=HEADERS)
            monkeypatch.undo()
            call = {"name": "add", "arguments": {"a": 1, "b": 2}}
            request = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}
            served = await http.post(handle.url, json=request, headers=HEADERS)
            again = initialize(3, "2025-06-18")
            answered = await http.post(handle.url, json=again, headers=HEADERS)
    assert failed.status_code == 200
    error = json_rpc(failed)
    assert error["id"] == 1 and error["error"]["code"] == -32603
    assert json_rpc(served)["result"]["structuredContent"] == {"result": 3}
    assert json_rpc(answered)["result"]["protocolVersion"] == "2025-06-18"
