"""Bad input over stdio gets the error the spec names, and the session goes on.

These tests speak raw bytes to ``mcp-actors run`` in a child process, so that
nothing in our own client can smooth over what the server really does. Every
reply is validated against the official schema of the revision in use.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio

from mcp_actors.protocol import errors
from mcp_actors.protocol.framing import LineFramer
from mcp_actors.testing.wire import validate_message

from conftest import SAMPLE, TESTS

REVISION = "2025-11-25"


class RawPeer:
    """A test client that writes raw lines and reads decoded replies."""

    def __init__(self, process: trio.Process, revision: str) -> None:
        assert process.stdin is not None and process.stdout is not None
        self._stdin = process.stdin
        self._stdout = process.stdout
        self._framer = LineFramer(max_message_size=64 * 1024 * 1024)
        self.revision = revision

    async def send_line(self, line: bytes) -> None:
        await self._stdin.send_all(line + b"\n")

    async def send(self, message: Any) -> None:
        await self.send_line(json.dumps(message).encode())

    async def receive(self, timeout: float = 10.0) -> Any:
        with trio.fail_after(timeout):
            while (line := self._framer.next_message()) is None:
                data = await self._stdout.receive_some(65536)
                assert data, "the server closed its stdout"
                self._framer.feed(data)
        assert isinstance(line, bytes)
        validate_message(self.revision, line)
        return json.loads(line)

    async def request(self, request_id: int, method: str, params: Any = None) -> Any:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return await self.receive()

    async def initialize(self) -> None:
        reply = await self.request(
            0,
            "initialize",
            {
                "protocolVersion": self.revision,
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        )
        assert reply["result"]["protocolVersion"] == self.revision
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def assert_alive(self) -> None:
        assert await self.request(999, "ping") == {"jsonrpc": "2.0", "id": 999, "result": {}}


@asynccontextmanager
async def raw_server(revision: str = REVISION, initialize: bool = True) -> AsyncIterator[RawPeer]:
    command = [sys.executable, "-m", "mcp_actors.cli", "run", SAMPLE]
    process = await trio.lowlevel.open_process(command, stdin=-1, stdout=-1, cwd=str(TESTS))
    try:
        peer = RawPeer(process, revision)
        if initialize:
            await peer.initialize()
        yield peer
    finally:
        with trio.CancelScope(shield=True):
            process.kill()
            await process.wait()


def error_of(reply: Any) -> tuple[Any, int]:
    return reply.get("id"), reply["error"]["code"]


async def test_invalid_json_is_a_parse_error() -> None:
    async with raw_server() as peer:
        await peer.send_line(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"')
        reply = await peer.receive()
        assert error_of(reply) == (None, errors.PARSE_ERROR)
        assert reply["error"]["message"].startswith("Parse error")
        await peer.assert_alive()


@pytest.mark.parametrize("line", [b"42", b'"a string"', b"null", b"true"])
async def test_a_non_object_is_an_invalid_request(line: bytes) -> None:
    async with raw_server() as peer:
        await peer.send_line(line)
        assert error_of(await peer.receive()) == (None, errors.INVALID_REQUEST)
        await peer.assert_alive()


async def test_missing_jsonrpc_member_is_an_invalid_request_with_its_id() -> None:
    async with raw_server() as peer:
        await peer.send({"id": 7, "method": "ping"})
        reply = await peer.receive()
        assert error_of(reply) == (7, errors.INVALID_REQUEST)
        assert "jsonrpc" in reply["error"]["message"]
        await peer.send({"jsonrpc": "1.0", "id": 8, "method": "ping"})
        assert error_of(await peer.receive()) == (8, errors.INVALID_REQUEST)
        await peer.assert_alive()


async def test_unknown_method_is_method_not_found() -> None:
    async with raw_server() as peer:
        reply = await peer.request(3, "tools/frobnicate", {})
        assert error_of(reply) == (3, errors.METHOD_NOT_FOUND)
        assert reply["error"]["data"] == {"method": "tools/frobnicate"}
        # A method the server did not declare the capability for is not found either.
        assert error_of(await peer.request(4, "prompts/list", {})) == (4, errors.METHOD_NOT_FOUND)
        await peer.assert_alive()


@pytest.mark.parametrize(
    ("method", "params", "detail"),
    [
        ("tools/call", {"name": 5}, "Expected `str`, got `int` - at `$.name`"),
        ("tools/call", {}, "missing required field `name`"),
        ("tools/list", {"cursor": ["not", "a", "string"]}, "at `$.cursor`"),
        ("logging/setLevel", {"level": "loud"}, "at `$.level`"),
    ],
)
async def test_wrong_param_types_are_invalid_params(method: str, params: Any, detail: str) -> None:
    async with raw_server() as peer:
        reply = await peer.request(5, method, params)
        assert error_of(reply) == (5, errors.INVALID_PARAMS)
        assert detail in reply["error"]["message"]
        await peer.assert_alive()


async def test_a_request_before_initialize_is_refused_then_initialize_works() -> None:
    async with raw_server(initialize=False) as peer:
        reply = await peer.request(1, "tools/list")
        assert error_of(reply) == (1, errors.INVALID_REQUEST)
        assert "not initialized" in reply["error"]["message"]
        await peer.assert_alive()  # ping is always allowed
        await peer.initialize()
        tools = await peer.request(2, "tools/list")
        assert "add" in {tool["name"] for tool in tools["result"]["tools"]}


async def test_a_second_initialize_is_refused() -> None:
    async with raw_server() as peer:
        params = {
            "protocolVersion": REVISION,
            "capabilities": {},
            "clientInfo": {"name": "x", "version": "0"},
        }
        reply = await peer.request(1, "initialize", params)
        assert error_of(reply) == (1, errors.INVALID_REQUEST)
        await peer.assert_alive()


async def test_an_unknown_protocol_version_gets_our_latest() -> None:
    async with raw_server(initialize=False) as peer:
        params = {
            "protocolVersion": "1999-01-01",
            "capabilities": {},
            "clientInfo": {"name": "x", "version": "0"},
        }
        reply = await peer.request(1, "initialize", params)
        assert reply["result"]["protocolVersion"] == REVISION


async def test_a_10_mb_line_is_refused_and_the_session_goes_on() -> None:
    async with raw_server() as peer:
        padding = "x" * (10 * 1024 * 1024)
        await peer.send(
            {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": padding}}
        )
        reply = await peer.receive()
        assert error_of(reply) == (None, errors.INVALID_REQUEST)
        assert reply["error"]["data"] == {"limit": 4 * 1024 * 1024}
        assert "exceeds the 4194304-byte limit" in reply["error"]["message"]
        await peer.assert_alive()


async def test_a_duplicate_in_flight_id_is_refused() -> None:
    async with raw_server() as peer:
        call = {
            "jsonrpc": "2.0",
            "id": 11,
            "method": "tools/call",
            "params": {"name": "wait_forever"},
        }
        await peer.send(call)
        await peer.send(call)
        reply = await peer.receive()
        assert error_of(reply) == (11, errors.INVALID_REQUEST)
        assert "already in use" in reply["error"]["message"]
        await peer.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 11}}
        )
        await peer.assert_alive()


async def test_malformed_notifications_are_ignored() -> None:
    async with raw_server() as peer:
        await peer.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": []}}
        )
        await peer.send({"jsonrpc": "2.0", "method": "notifications/unheard_of"})
        await peer.send_line(b"")
        await peer.assert_alive()  # the first reply is the ping's: nothing answered the rest


async def test_a_cancelled_request_gets_no_response() -> None:
    async with raw_server() as peer:
        call = {
            "jsonrpc": "2.0",
            "id": 21,
            "method": "tools/call",
            "params": {"name": "wait_forever"},
        }
        await peer.send(call)
        await peer.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 21, "reason": "test"},
            }
        )
        await peer.assert_alive()
        with pytest.raises(trio.TooSlowError):
            await peer.receive(timeout=0.3)


async def test_batches_are_served_under_2025_03_26_only() -> None:
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 1, "b": 2}},
        },
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": 1, "progress": 1},
        },
        {"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {}},
        17,
    ]
    async with raw_server("2025-03-26") as peer:
        await peer.send(batch)
        replies = await peer.receive()
        assert isinstance(replies, list)
        by_id = {reply.get("id"): reply for reply in replies}
        assert by_id[1]["result"] == {}
        assert by_id[2]["result"]["content"] == [{"type": "text", "text": "3"}]
        assert by_id[3]["error"]["code"] == errors.INVALID_REQUEST
        assert by_id[None]["error"]["code"] == errors.INVALID_REQUEST
        assert len(replies) == 4
    async with raw_server("2025-11-25") as peer:
        await peer.send(batch[:2])
        reply = await peer.receive()
        assert error_of(reply) == (None, errors.INVALID_REQUEST)
        assert "batches are not allowed" in reply["error"]["message"]
        await peer.assert_alive()
