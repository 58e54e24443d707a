"""A cancellation is acted on before the messages behind it: the handler sees it first.

When ``notifications/cancelled`` arrives with more messages right behind it (one pipe
read holding both lines, WebSocket frames buffered together), the cancelled handler
must see its ``trio.Cancelled`` before the session's reader serves the next message:
otherwise the cancellation waits behind a request the reader serves itself.

Driven with raw JSON-RPC over each transport whose reader can have the next message at
hand: the ``everything`` server's ``cancellation_probe`` is started, then its
cancellation and a ``last_cancellation`` call (served inline by the reader) are sent in
one write; the call's answer must already carry the time the probe saw its cancellation.
In both eras: a 2026-07-28 handler runs in a task of the supervisor's (it may wait between
two requests), which the request's cancellation must reach at once, not through the
request's own task one pass of the scheduler later.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import pytest
import trio
from test_modern_server import modern_meta

from mcp_actors.client.targets import load_server
from mcp_actors.protocol.jsonrpc import encode_cancellation
from mcp_actors.server.serve_websocket import serve_websocket
from mcp_actors.testing.wire import validate_message
from mcp_actors.transports.abc import MessageStream, Outgoing
from mcp_actors.transports.memory import memory_pair
from mcp_actors.transports.stdio import open_stdio_process
from mcp_actors.transports.websocket import open_websocket_client

REVISION = "2025-11-25"
MODERN = "2026-07-28"
EVERYTHING = "everything"
#: Rounds per transport: where the order would be left to trio's scheduler (which runs
#: each batch of ready tasks in a random order) one round could pass by chance.
ROUNDS = 20


@asynccontextmanager
async def raw_stream(transport: str) -> AsyncIterator[MessageStream]:
    """A raw message stream to the everything server over ``transport``."""
    if transport == "stdio":
        command = [sys.executable, "-m", "mcp_actors.cli", "run", EVERYTHING]
        async with open_stdio_process(command[0], command[1:]) as stream:
            yield stream
        return
    server = load_server("mcp_actors_everything.server:create")
    async with trio.open_nursery() as nursery:
        if transport == "memory":
            client_end, server_end = memory_pair()
            nursery.start_soon(server.serve_session, server_end)
            yield client_end
        else:
            handle = await nursery.start(partial(serve_websocket, server, port=0))
            async with open_websocket_client(handle.url) as stream:
                yield stream
        nursery.cancel_scope.cancel()


def request(request_id: int, method: str, params: Any) -> Outgoing:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return Outgoing(json.dumps(message).encode())


async def receive(stream: MessageStream, revision: str = REVISION) -> dict[str, Any]:
    line = await stream.receive()
    validate_message(revision, line)
    message: dict[str, Any] = json.loads(line)
    return message


async def answer_to(
    stream: MessageStream, request_id: int, revision: str = REVISION
) -> dict[str, Any]:
    """The response to ``request_id``; anything else read first must not be a response."""
    while (message := await receive(stream, revision)).get("id") != request_id:
        assert "method" in message, f"an unexpected response: {message}"
    return message


async def handshake(stream: MessageStream) -> None:
    client = {"name": "raw", "version": "0"}
    params = {"protocolVersion": REVISION, "capabilities": {}, "clientInfo": client}
    await stream.send_all([request(0, "initialize", params)])
    assert (await answer_to(stream, 0))["result"]["protocolVersion"] == REVISION
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    await stream.send_all([Outgoing(json.dumps(initialized).encode())])


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("transport", ["stdio", "memory", "ws"])
async def test_a_cancelled_handler_sees_it_before_the_next_message_is_served(
    transport: str, era: str
) -> None:
    revision = MODERN if era == "modern" else REVISION
    with trio.fail_after(60):  # a hang guard only
        async with raw_stream(transport) as stream:
            if era == "legacy":
                await handshake(stream)
            for round_ in range(ROUNDS):
                probe_id, poll_id = 2 * round_ + 1, 2 * round_ + 2
                token = f"round-{round_}"
                arguments = {"token": token, "seconds": 600}
                meta: dict[str, Any] = {"progressToken": token}
                if era == "modern":
                    meta.update(modern_meta())
                params = {"name": "cancellation_probe", "arguments": arguments, "_meta": meta}
                await stream.send_all([request(probe_id, "tools/call", params)])
                progress = await receive(stream, revision)  # the probe runs
                assert progress["method"] == "notifications/progress", progress
                cancelled = Outgoing(encode_cancellation(probe_id, "test"))
                poll: dict[str, Any] = {"name": "last_cancellation", "arguments": {"token": token}}
                if era == "modern":
                    poll["_meta"] = modern_meta()
                await stream.send_all([cancelled, request(poll_id, "tools/call", poll)])
                # the probe itself never answers
                answer = await answer_to(stream, poll_id, revision)
                observed = answer["result"]["structuredContent"]["observed"]
                assert observed is not None, f"round {round_}: served before the cancellation"
