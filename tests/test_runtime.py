"""The actor runtime's guarantees, shown with a scripted peer on the in-memory transport.

Timeouts run on trio's autojump clock: a test that "waits three seconds" takes
milliseconds and never flakes on a loaded machine.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing

from mcp_actors import (
    Client,
    ConnectionClosed,
    Context,
    McpError,
    MessageStream,
    Outgoing,
    RequestTimeout,
    Server,
    SessionConfig,
    TransportClosed,
    memory_pair,
    open_client,
    open_supervisor,
)
from mcp_actors.protocol import errors
from mcp_actors.transports.memory import MemoryStream


class ScriptedPeer:
    """The far end of a memory pair, driven message by message by the test."""

    def __init__(self, stream: MemoryStream) -> None:
        self.stream = stream

    async def receive(self) -> Any:
        return json.loads(await self.stream.receive())

    async def send(self, message: Any) -> None:
        await self.stream.send(Outgoing(json.dumps(message).encode()))

    async def serve_initialize(self) -> None:
        request = await self.receive()
        assert request["method"] == "initialize"
        await self.send(
            {
                "jsonrpc": "2.0",
                "id": request["id"],
                "result": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "scripted", "version": "0"},
                },
            }
        )
        assert (await self.receive())["method"] == "notifications/initialized"


class Outcome:
    """Runs a call in a task and keeps what it raised, for tests that script the peer meanwhile."""

    def __init__(self) -> None:
        self.error: BaseException | None = None

    async def capture(self, call: Any) -> None:
        try:
            await call()
        except Exception as error:
            self.error = error


@asynccontextmanager
async def client_with_scripted_server(
    config: SessionConfig | None = None,
) -> AsyncIterator[tuple[Client, ScriptedPeer]]:
    client_end, server_end = memory_pair()
    peer = ScriptedPeer(server_end)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(peer.serve_initialize)
        async with open_client(client_end, config=config, era="legacy") as client:
            yield client, peer


async def test_timeout_sends_cancelled_and_drops_the_late_response(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with client_with_scripted_server() as (client, peer):
        outcome = Outcome()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(outcome.capture, lambda: client.call_tool("slow", {}, timeout=5))
            request = await peer.receive()
        assert request["method"] == "tools/call"
        cancelled = await peer.receive()
        assert cancelled == {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": request["id"], "reason": "timed out"},
        }
        assert isinstance(outcome.error, RequestTimeout)
        assert outcome.error.seconds == pytest.approx(5)
        # The response arrives late: it is dropped, and the session goes on.
        await peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {"content": []}})
        async with trio.open_nursery() as nursery:
            nursery.start_soon(client.ping)
            ping = await peer.receive()
            await peer.send({"jsonrpc": "2.0", "id": ping["id"], "result": {}})
        assert client.session.statistics().outbound_calls == 0


@pytest.mark.parametrize("result", [7, {"tools": 7}, {"tools": [{"name": 1}]}])
async def test_a_malformed_result_is_an_mcp_error_naming_the_method(result: Any) -> None:
    """A result that does not fit the method's type raises McpError (as any failed call
    does), not msgspec's ValidationError: a sampling or elicitation handler on the server
    side catches McpError, and nothing of our internals reaches the peer."""
    async with client_with_scripted_server() as (client, peer):
        outcome = Outcome()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(outcome.capture, client.list_tools)
            request = await peer.receive()
            await peer.send({"jsonrpc": "2.0", "id": request["id"], "result": result})
        assert isinstance(outcome.error, McpError), repr(outcome.error)
        assert outcome.error.code == errors.INTERNAL_ERROR
        assert outcome.error.message.startswith("Invalid result of tools/list: ")
        assert "ValidationError" not in outcome.error.message
        async with trio.open_nursery() as nursery:  # the session goes on
            nursery.start_soon(client.ping)
            ping = await peer.receive()
            await peer.send({"jsonrpc": "2.0", "id": ping["id"], "result": {}})


async def test_progress_restarts_the_timeout_but_never_past_the_ceiling(
    autojump_clock: trio.testing.MockClock,
) -> None:
    config = SessionConfig(request_timeout=1.0, max_request_timeout=3.0)
    async with client_with_scripted_server(config) as (client, peer):
        seen: list[float] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append(progress)

        async def keep_reporting(token: Any) -> None:
            for step in range(1, 100):
                await trio.sleep(0.5)
                await peer.send(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/progress",
                        "params": {"progressToken": token, "progress": step},
                    }
                )

        started = trio.current_time()
        outcome = Outcome()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                outcome.capture, lambda: client.call_tool("slow", on_progress=on_progress)
            )
            request = await peer.receive()
            reporter = trio.CancelScope()

            async def report() -> None:
                with reporter:
                    await keep_reporting(request["params"]["_meta"]["progressToken"])

            nursery.start_soon(report)
            while outcome.error is None:
                await trio.sleep(0.1)
            reporter.cancel()
        elapsed = trio.current_time() - started
        assert isinstance(outcome.error, RequestTimeout)
    assert elapsed == pytest.approx(3.0, abs=0.01)  # the ceiling, not the 1 s timeout
    assert seen[:4] == [1, 2, 3, 4]


async def test_without_progress_reset_the_plain_timeout_applies(
    autojump_clock: trio.testing.MockClock,
) -> None:
    config = SessionConfig(request_timeout=1.0, reset_timeout_on_progress=False)
    async with client_with_scripted_server(config) as (client, peer):
        started = trio.current_time()
        outcome = Outcome()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(outcome.capture, lambda: client.call_tool("slow", on_progress=print))
            request = await peer.receive()
            token = request["params"]["_meta"]["progressToken"]
            await trio.sleep(0.5)
            params = {"progressToken": token, "progress": 1}
            await peer.send(
                {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}
            )
        assert isinstance(outcome.error, RequestTimeout)
        assert trio.current_time() - started == pytest.approx(1.0, abs=0.01)


async def test_the_peer_closing_fails_pending_calls_with_connection_closed() -> None:
    async with client_with_scripted_server() as (client, peer):
        outcome = Outcome()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(outcome.capture, lambda: client.call_tool("slow"))
            await peer.receive()
            await peer.stream.aclose()
    assert isinstance(outcome.error, ConnectionClosed)
    assert outcome.error.message == "connection closed before tools/call was answered"


async def test_errors_raised_in_the_client_block_are_not_wrapped_in_groups() -> None:
    server = Server("plain")
    with pytest.raises(KeyError):
        async with open_client(server, era="legacy"):
            raise KeyError("user error")


async def test_in_flight_limit_answers_excess_requests_at_once() -> None:
    server = Server("limited", config=SessionConfig(max_in_flight=2))

    @server.tool
    async def block(ctx: Context) -> str:
        await trio.sleep_forever()
        return "never"

    async with open_client(server, era="legacy") as client, trio.open_nursery() as nursery:
        for _ in range(2):
            nursery.start_soon(client.call_tool, "block")
        with trio.fail_after(5):
            while client.session.statistics().outbound_calls < 2:
                await trio.sleep(0.001)
        await trio.sleep(0.05)
        with pytest.raises(McpError) as raised:
            await client.call_tool("block")
        nursery.cancel_scope.cancel()
    assert raised.value.code == errors.REQUEST_REJECTED
    assert "too many requests in flight (limit 2)" in raised.value.message


class ExplodingStream(MessageStream):
    """A transport with a bug: its receive raises something no transport should."""

    async def receive(self) -> bytes:
        await trio.lowlevel.checkpoint()
        raise RuntimeError("transport bug")

    async def send_all(self, messages: Sequence[Outgoing]) -> None:
        raise TransportClosed("gone")

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


async def test_a_crashing_session_is_contained_by_the_supervisor() -> None:
    server = Server("sturdy")

    @server.tool
    async def add(a: int, b: int) -> int:
        return a + b

    async with open_supervisor() as supervisor:
        client_end, server_end = memory_pair()
        await supervisor.start_session(server.create_session(server_end))
        await supervisor.start_session(server.create_session(ExplodingStream()))
        with trio.fail_after(5):
            while supervisor.statistics().sessions_failed < 1:
                await trio.sleep(0.001)
        async with open_client(client_end, era="legacy") as client:
            assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {
                "result": 3
            }
        stats = supervisor.statistics()
        assert (stats.sessions_started, stats.sessions_failed) == (2, 1)
        with trio.fail_after(5):
            while supervisor.statistics().sessions_active:
                await trio.sleep(0.001)
        assert supervisor.statistics().tasks == 0
