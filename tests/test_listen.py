"""``subscriptions/listen`` (2026-07-28): the stream actor, the change bus, ``client.listen``.

Over the in-memory transport, stdio and Streamable HTTP, a modern client opens listen
streams on the ``everything`` server; every message either side writes is validated
against the 2026-07-28 schema (``connect`` in conftest, or ``assert_all_valid``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import pytest
import trio
from test_modern_server import error_of, raw_peer, result_of

from mcp_actors import Client, McpError, Server, memory_pair, open_client
from mcp_actors.protocol.errors import ProtocolViolation
from mcp_actors.runtime.bus import Change, Mailbox, MemoryBus
from mcp_actors.testing.wire import WireRecorder, assert_all_valid, validate_message
from mcp_actors_everything.server import create as create_everything

from conftest import connect

EVERYTHING = "mcp_actors_everything.server:create"
TRANSPORTS = ("memory", "stdio", "http")
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
WATCHED = "test://watched-resource"
MODERN = "2026-07-28"


async def next_event(events: AsyncIterator[Any], seconds: float = 5.0) -> Any:
    with trio.fail_after(seconds):
        return await events.__anext__()


async def next_notification(peer: Any) -> dict[str, Any]:
    """The next notification the raw peer receives outside a request of its own."""
    with trio.fail_after(5):
        while True:
            message: dict[str, Any] = json.loads(await peer.stream.receive())
            validate_message(MODERN, message)
            if "method" in message:
                return message


async def wait_until(predicate: Any, seconds: float = 5.0) -> None:
    with trio.fail_after(seconds):
        while not predicate():
            await trio.sleep(0.01)


# -- the server's stream, on the wire ------------------------------------------------------


@pytest.mark.parametrize("transport", ["memory", "stdio"])
async def test_the_acknowledgement_comes_first_with_the_honoured_filter(transport: str) -> None:
    """The first message is the ack, tagged with the listen id; an unknown URI and an
    unknown key are left out of it; a cancel ends the stream with no answer."""
    async with raw_peer(transport) as peer:
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        params = {
            "_meta": meta,
            "notifications": {
                "toolsListChanged": True,
                "promptsListChanged": False,
                "resourceSubscriptions": [WATCHED, "test://no-such-resource"],
                "somethingElse": True,
            },
        }
        await peer.send(
            {"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen", "params": params}
        )
        with trio.fail_after(10):
            first = json.loads(await peer.stream.receive())
        validate_message(MODERN, first)
        assert first["method"] == "notifications/subscriptions/acknowledged"
        assert first["params"]["_meta"] == {SUBSCRIPTION_ID: "listen-1"}
        assert first["params"]["notifications"] == {
            "toolsListChanged": True,
            "resourceSubscriptions": [WATCHED],
        }
        # A change arrives tagged; one not asked for (a prompt change) never does.
        _, sent = await peer.modern("tools/call", {"name": "test_trigger_prompt_change"})
        _, more = await peer.modern("tools/call", {"name": "test_trigger_tool_change"})
        sent += more
        if not sent:  # not in before the call's answer: it comes after
            sent.append(await next_notification(peer))
        assert sent == [
            {
                "jsonrpc": "2.0",
                "method": "notifications/tools/list_changed",
                "params": {"_meta": {SUBSCRIPTION_ID: "listen-1"}},
            }
        ]
        await peer.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": "listen-1"},
            }
        )
        # Cancelled: a later change is not delivered, and the listen is never answered.
        _, sent = await peer.modern("tools/call", {"name": "test_trigger_tool_change"})
        assert sent == []
        with trio.move_on_after(0.3):
            late = await next_notification(peer)
            raise AssertionError(f"sent after the cancel: {late}")
    assert all(message.get("id") != "listen-1" for message in peer.received)


@pytest.mark.parametrize("transport", ["memory", "stdio"])
async def test_a_bad_filter_is_a_32602_and_listen_is_modern_only(transport: str) -> None:
    async with raw_peer(transport) as peer:
        response, notes = await peer.modern(
            "subscriptions/listen", {"notifications": {"toolsListChanged": "yes"}}
        )
        assert notes == []
        error = error_of(response)
        assert error["code"] == -32602 and "toolsListChanged" in error["message"]
        response, _ = await peer.modern(
            "subscriptions/listen", {"notifications": {"resourceSubscriptions": "x"}}
        )
        assert error_of(response)["code"] == -32602
        await peer.initialize()
        # A session of the legacy era: the request is read as a modern one, lacking _meta.
        response, _ = await peer.request(
            "subscriptions/listen", {"notifications": {}}, revision="2025-11-25"
        )
        error = error_of(response)
        assert error["code"] == -32602 and "_meta" in error["message"]


async def test_discover_advertises_what_listen_delivers() -> None:
    async with raw_peer("memory") as peer:
        response, _ = await peer.modern("server/discover")
    capabilities = result_of(response)["capabilities"]
    assert capabilities["tools"] == {"listChanged": True}
    assert capabilities["prompts"] == {"listChanged": True}
    assert capabilities["resources"] == {"subscribe": True, "listChanged": True}


# -- client.listen over every transport ----------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_client_listen_receives_only_what_it_asked_for(transport: str) -> None:
    async with connect(transport, EVERYTHING, era="modern") as client:
        async with client.listen(
            tools_list_changed=True, resource_subscriptions=[WATCHED]
        ) as changes:
            assert changes.acknowledged == {
                "toolsListChanged": True,
                "resourceSubscriptions": [WATCHED],
            }
            events = changes
            await client.call_tool("test_trigger_prompt_change")  # not asked for
            await client.call_tool("update_watched_resource", {"text": "new"})
            await client.call_tool("test_trigger_tool_change")
            first, second = await next_event(events), await next_event(events)
        assert [first.method, second.method] == [
            "notifications/resources/updated",
            "notifications/tools/list_changed",
        ]
        assert first.uri == WATCHED
        for event in (first, second):
            assert event.params.meta[SUBSCRIPTION_ID] is not None


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_two_listens_on_one_connection_are_kept_apart(transport: str) -> None:
    async with connect(transport, EVERYTHING, era="modern") as client:
        async with (
            client.listen(tools_list_changed=True) as tools,
            client.listen(prompts_list_changed=True) as prompts,
        ):
            await client.call_tool("test_trigger_prompt_change")
            await client.call_tool("test_trigger_tool_change")
            tool_event = await next_event(tools)
            prompt_event = await next_event(prompts)
        assert tool_event.method == "notifications/tools/list_changed"
        assert prompt_event.method == "notifications/prompts/list_changed"
        assert tool_event.params.meta[SUBSCRIPTION_ID] != prompt_event.params.meta[SUBSCRIPTION_ID]


async def test_a_legacy_client_cannot_listen_and_keeps_subscribe() -> None:
    async with connect("memory", EVERYTHING) as client:
        assert client.era == "legacy"
        with pytest.raises(ProtocolViolation, match="subscribe"):
            async with client.listen(tools_list_changed=True):
                pass  # pragma: no cover
        async with client.subscribe(WATCHED) as updates:
            await client.call_tool("update_watched_resource", {"text": "legacy"})
            with trio.fail_after(5):
                update = await updates.receive()
        assert update.uri == WATCHED


# -- one server, several connections -------------------------------------------------------


@asynccontextmanager
async def memory_clients(server: Server, count: int) -> AsyncIterator[list[Client]]:
    """``count`` modern clients of one in-process ``server``, their wire validated."""
    recorders: list[WireRecorder] = []
    async with trio.open_nursery() as nursery:
        clients: list[Client] = []
        async with _opened(server, count, nursery, recorders, clients):
            yield clients
        nursery.cancel_scope.cancel()
    for recorder in recorders:
        assert_all_valid(recorder, MODERN)


@asynccontextmanager
async def _opened(
    server: Server,
    count: int,
    nursery: trio.Nursery,
    recorders: list[WireRecorder],
    clients: list[Client],
) -> AsyncIterator[None]:
    if count == 0:
        yield
        return
    client_end, server_end = memory_pair()
    server_wire = WireRecorder(server_end)
    recorders.append(server_wire)
    nursery.start_soon(server.serve_session, server_wire)
    async with open_client(client_end, era="modern") as client:
        clients.append(client)
        async with _opened(server, count - 1, nursery, recorders, clients):
            yield


async def test_a_change_made_on_another_connection_reaches_every_listener() -> None:
    server = create_everything()
    async with memory_clients(server, 3) as (first, second, publisher):
        async with (
            first.listen(tools_list_changed=True) as a,
            second.listen(tools_list_changed=True, resource_subscriptions=[WATCHED]) as b,
        ):
            assert server.listen_statistics().active == 2
            await publisher.call_tool("test_trigger_tool_change")
            assert server.notify_resource_updated(WATCHED) == 1  # b's stream only
            a_event = await next_event(a)
            b_events = b
            b_first, b_second = await next_event(b_events), await next_event(b_events)
        assert a_event.method == "notifications/tools/list_changed"
        assert {b_first.method, b_second.method} == {
            "notifications/tools/list_changed",
            "notifications/resources/updated",
        }
        await wait_until(lambda: server.listen_statistics().active == 0)
    assert server.listen_statistics().opened == 2


async def test_a_change_reaches_a_listener_on_another_http_request() -> None:
    from mcp_actors.server.serve_http import serve_http
    from mcp_actors.transports.http.client import open_streamable_http

    server = create_everything()
    async with trio.open_nursery() as nursery:
        http = await nursery.start(partial(serve_http, server, port=0))
        async with (
            open_streamable_http(http.url, legacy_fallback=False) as listen_stream,
            open_streamable_http(http.url, legacy_fallback=False) as call_stream,
        ):
            listen_wire = WireRecorder(listen_stream)
            async with (
                open_client(listen_wire, era="modern") as listener,
                open_client(call_stream, era="modern") as caller,
                listener.listen(prompts_list_changed=True) as changes,
            ):
                assert server.listen_statistics().active == 1
                await caller.call_tool("test_trigger_prompt_change")
                event = await next_event(changes, 1.5)
            assert event.method == "notifications/prompts/list_changed"
            # Leaving the block closed the response stream: the actor is gone.
            await wait_until(lambda: server.listen_statistics().active == 0)
        nursery.cancel_scope.cancel()
    assert_all_valid(listen_wire, MODERN)
    assert_all_valid(listen_wire.peer(), MODERN)


async def test_a_slow_listener_never_blocks_the_publisher_and_coalesces() -> None:
    server = create_everything()
    async with (
        memory_clients(server, 1) as (client,),
        client.listen(tools_list_changed=True, inbox_size=4) as changes,
    ):
        for _ in range(1000):  # no checkpoint: the stream's actor cannot run meanwhile
            server.add_tool(server.tools["test_trigger_tool_change"], replace=True)
        events = changes
        assert (await next_event(events)).method == "notifications/tools/list_changed"
        with trio.move_on_after(0.2):
            await events.__anext__()  # at most one more (one may have been in flight)
        stats = server.listen_statistics()
        assert stats.coalesced >= 998 and stats.delivered <= 2
        assert stats.dropped == 0


async def test_a_full_mailbox_drops_and_counts() -> None:
    server = Server("uris", listen_mailbox_size=3)
    uris = [f"test://r/{index}" for index in range(10)]
    for uri in uris:
        server.resource(uri)(lambda: "x")
    async with (
        memory_clients(server, 1) as (client,),
        client.listen(resource_subscriptions=uris) as changes,
    ):
        for uri in uris:
            server.notify_resource_updated(uri)
        events = changes
        seen = [(await next_event(events)).uri for _ in range(3)]
        assert seen == uris[:3]
        assert server.listen_statistics().dropped == 7


async def test_the_stream_count_is_bounded() -> None:
    server = Server("bounded", max_listen_streams=1)
    server.tool(lambda: "x", name="noop")
    async with memory_clients(server, 2) as (first, second):
        async with first.listen(tools_list_changed=True):
            with pytest.raises(McpError) as refused:
                async with second.listen(tools_list_changed=True):
                    pass  # pragma: no cover
            assert refused.value.code == -32000 and refused.value.data == {"limit": 1}
        assert server.listen_statistics().refused == 1


async def test_one_client_cannot_take_every_stream() -> None:
    """Each connection is a client (no address, no caller): one at its own bound is
    refused with that bound in ``data.limit``, while another still listens and calls."""
    server = Server("bounded", max_listen_streams=3, max_listen_streams_per_client=2)
    server.tool(lambda: "x", name="noop")
    async with memory_clients(server, 2) as (first, second):
        async with (
            first.listen(tools_list_changed=True),
            first.listen(tools_list_changed=True),
        ):
            with pytest.raises(McpError) as refused:
                async with first.listen(tools_list_changed=True):
                    pass  # pragma: no cover
            assert refused.value.code == -32000 and refused.value.data == {"limit": 2}
            assert "from this client" in refused.value.message
            async with second.listen(tools_list_changed=True):
                assert server.listen_statistics().active == 3
                assert not (await second.call_tool("noop")).is_error
        assert server.listen_statistics().refused == 1
        # The streams that ended gave their client's places back.
        async with first.listen(tools_list_changed=True), first.listen(tools_list_changed=True):
            assert server.listen_statistics().active == 2


async def test_websocket_connections_from_one_address_are_one_client() -> None:
    from mcp_actors.server.serve_websocket import serve_websocket

    server = Server("bounded", max_listen_streams_per_client=1)
    server.tool(lambda: "x", name="noop")
    async with trio.open_nursery() as nursery:
        ws = await nursery.start(partial(serve_websocket, server, port=0))
        async with (
            open_client(ws.url, era="modern") as first,
            open_client(ws.url, era="modern") as second,
            first.listen(tools_list_changed=True),
        ):
            with pytest.raises(McpError) as refused:
                async with second.listen(tools_list_changed=True):
                    pass  # pragma: no cover
            assert refused.value.code == -32000 and refused.value.data == {"limit": 1}
            assert not (await second.call_tool("noop")).is_error
        nursery.cancel_scope.cancel()


def test_the_per_client_bound_is_checked() -> None:
    with pytest.raises(ValueError, match="max_listen_streams_per_client"):
        Server("bad", max_listen_streams_per_client=0)
    with pytest.raises(TypeError, match="max_listen_streams_per_client"):
        Server("bad", max_listen_streams_per_client=2.5)  # type: ignore[arg-type]


@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_the_server_ends_streams_gracefully(transport: str) -> None:
    server = create_everything()
    opened = memory_clients(server, 1) if transport == "memory" else http_clients(server)
    async with opened as (client,):
        async with client.listen(tools_list_changed=True) as changes:
            assert server.end_listen_streams() == 1
            with trio.fail_after(5):
                remaining = [event async for event in changes]
        assert remaining == []
        await wait_until(lambda: server.listen_statistics().active == 0)


@asynccontextmanager
async def http_clients(server: Server) -> AsyncIterator[list[Client]]:
    from mcp_actors.server.serve_http import serve_http
    from mcp_actors.transports.http.client import open_streamable_http

    async with trio.open_nursery() as nursery:
        http = await nursery.start(partial(serve_http, server, port=0))
        async with open_streamable_http(http.url, legacy_fallback=False) as stream:
            wire = WireRecorder(stream)
            async with open_client(wire, era="modern") as client:
                yield [client]
        nursery.cancel_scope.cancel()
    assert_all_valid(wire, MODERN)
    assert_all_valid(wire.peer(), MODERN)


async def test_the_client_listens_again_after_the_server_restarts() -> None:
    from mcp_actors.server.serve_http import serve_http
    from mcp_actors.transports.http.client import open_streamable_http

    async with trio.open_nursery() as nursery:
        first_server = create_everything()
        scope = trio.CancelScope()

        async def serve(server: Server, port: int, *, task_status: Any) -> None:
            with scope:
                await serve_http(server, port=port, task_status=task_status)

        http = await nursery.start(serve, first_server, 0)
        async with (
            open_streamable_http(http.url, legacy_fallback=False) as stream,
            open_client(stream, era="modern") as client,
            client.listen(tools_list_changed=True) as changes,
        ):
            scope.cancel()  # the server goes away: the stream drops
            await trio.sleep(0.2)
            scope = trio.CancelScope()
            second_server = create_everything()
            await nursery.start(serve, second_server, http.port)
            await wait_until(lambda: second_server.listen_statistics().active == 1, 10)
            assert changes.relistens >= 1
            second_server.add_tool(second_server.tools["test_simple_text"], replace=True)
            event = await next_event(changes)
            assert event.method == "notifications/tools/list_changed"
        nursery.cancel_scope.cancel()


# -- the bus and the mailbox ---------------------------------------------------------------


async def test_the_mailbox_coalesces_by_key_bounds_and_closes() -> None:
    mailbox = Mailbox(capacity=2)
    tools = Change("notifications/tools/list_changed")
    mailbox.offer(Change("notifications/resources/updated", "a", 1))
    mailbox.offer(tools)
    mailbox.offer(Change("notifications/resources/updated", "a", 2))  # replaces, in place
    mailbox.offer(Change("notifications/resources/updated", "b", 3))  # full: dropped
    assert (mailbox.coalesced, mailbox.dropped, mailbox.waiting) == (1, 1, 2)
    assert await mailbox.get() == Change("notifications/resources/updated", "a", 2)
    assert await mailbox.get() == tools
    mailbox.offer(tools)
    mailbox.close()
    assert await mailbox.get() is None
    mailbox.offer(tools)
    assert mailbox.waiting == 0


def test_the_memory_bus_counts_takers_and_unsubscribes() -> None:
    bus = MemoryBus()
    taken: list[Change] = []
    unsubscribe = bus.subscribe(lambda change: taken.append(change) or 1)
    bus.subscribe(lambda change: 0)
    change = Change("notifications/prompts/list_changed")
    assert bus.publish(change) == 1
    unsubscribe()
    unsubscribe()
    assert bus.publish(change) == 0
    assert taken == [change]
    assert bus.statistics().receivers == 1 and bus.statistics().published == 2


# -- the HTTP stream itself ----------------------------------------------------------------


async def test_an_http_listen_is_an_event_stream_with_keepalive_comments() -> None:
    import httpx

    from mcp_actors.server.serve_http import serve_http
    from mcp_actors.transports.http.config import HttpConfig

    server = create_everything()
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "subscriptions/listen",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
            "notifications": {"toolsListChanged": True},
        },
    }
    headers = {
        "content-type": "application/json",
        "mcp-protocol-version": MODERN,
        "mcp-method": "subscriptions/listen",
    }
    config = HttpConfig(keepalive_interval=0.05, json_response=True)
    async with trio.open_nursery() as nursery:
        http = await nursery.start(partial(serve_http, server, port=0, config=config))
        async with httpx.AsyncClient() as client:
            refused = await client.post(
                http.url, json=body, headers={**headers, "accept": "application/json"}
            )
            assert refused.status_code == 406 and refused.json()["id"] == 7
            accept = {**headers, "accept": "application/json, text/event-stream"}
            async with client.stream("POST", http.url, json=body, headers=accept) as response:
                assert response.status_code == 200
                assert response.headers["content-type"].startswith("text/event-stream")
                lines = response.aiter_lines()
                with trio.fail_after(5):
                    first = await anext(lines)
                    assert first.startswith("data: ")
                    ack = json.loads(first.removeprefix("data: "))
                    validate_message(MODERN, ack)
                    assert ack["method"] == "notifications/subscriptions/acknowledged"
                    while (line := await anext(lines)) == "":
                        pass
                    assert line.startswith(":")  # a keep-alive comment, nothing else
                    server.add_tool(server.tools["test_simple_text"], replace=True)
                    while not (line := await anext(lines)).startswith("data: "):
                        pass
                change = json.loads(line.removeprefix("data: "))
                validate_message(MODERN, change)
                assert change["params"]["_meta"] == {SUBSCRIPTION_ID: 7}
                # json_response=True does not turn a listen into one JSON body
                assert server.listen_statistics().active == 1
        await wait_until(lambda: server.listen_statistics().active == 0)
        nursery.cancel_scope.cancel()
