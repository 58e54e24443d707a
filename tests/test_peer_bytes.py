"""No bytes a peer sends can crash us: each gets its precise JSON-RPC error, the session lives.

Driven as a hostile peer would: raw lines to ``mcp-actors run`` over stdio, raw
POSTs to the Streamable HTTP endpoint, raw WebSocket frames. After each bad
input the test asserts that the process or session still answers a ping, and
every reply is validated against the official schema of the revision in use.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
import trio_websocket
import wsproto
import wsproto.events
import wsproto.frame_protocol
from test_http_transport import (
    initialize_message,
    messages,
    open_session,
    raw_client,
    serving,
    websocket_server,
)
from test_stdio_bad_input import RawPeer, error_of

from mcp_actors import McpError, Outgoing, TransportClosed, memory_pair, open_client
from mcp_actors.protocol import errors
from mcp_actors.runtime.internal_errors import InternalErrorLog
from mcp_actors.testing.wire import validate_message
from mcp_actors.transports.websocket import open_websocket

from conftest import SAMPLE, TESTS
from servers.faulty import SECRET

REVISION = "2025-11-25"
DEEP = 5000  # far past any recursion limit
#: Around the interpreter's recursion limit (1000): whether a decode of this much nesting
#: fails depends on how deep the stack it runs on already is.
NEAR_LIMIT = 980


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def tools_call(request_id: int, arguments: bytes, name: bytes = b'"echo"') -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%s,"arguments":%s}}'
        % (request_id, name, arguments)
    )


@asynccontextmanager
async def stdio_server(
    spec: str = SAMPLE,
    revision: str = REVISION,
    *,
    initialize: bool = True,
    stderr: Path | None = None,
) -> AsyncIterator[RawPeer]:
    command = [sys.executable, "-m", "mcp_actors.cli", "run", spec]
    err = None if stderr is None else os.open(stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        process = await trio.lowlevel.open_process(
            command, stdin=-1, stdout=-1, stderr=err, cwd=str(TESTS)
        )
    finally:
        if err is not None:
            os.close(err)
    try:
        peer = RawPeer(process, revision)
        if initialize:
            await peer.initialize()
        yield peer
        assert process.returncode is None, "the server process died"
    finally:
        with trio.CancelScope(shield=True):
            process.kill()
            await process.wait()


# -- 1. invalid UTF-8 ----------------------------------------------------------------------


async def test_invalid_utf8_before_initialize_is_a_parse_error_with_the_id() -> None:
    async with stdio_server(initialize=False) as peer:
        await peer.send_line(b'{"jsonrpc":"2.0","id":1,"method":"pi\xffng"}')
        reply = await peer.receive()
        assert error_of(reply) == (1, errors.PARSE_ERROR)
        assert "invalid UTF-8 at byte 36" in reply["error"]["message"]
        await peer.assert_alive()
        await peer.initialize()


@pytest.mark.parametrize(
    "line",
    [
        tools_call(5, b'{"text":"caf\xe9"}'),  # in a tool's arguments
        tools_call(5, b"{}", name=b'"ech\xc3"'),  # in a method's params
        b'{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"cursor":"\xff"}}',
    ],
)
async def test_invalid_utf8_anywhere_in_a_request_is_answered_with_its_id(line: bytes) -> None:
    async with stdio_server() as peer:
        await peer.send_line(line)
        reply = await peer.receive()
        assert error_of(reply) == (5, errors.PARSE_ERROR)
        assert "UTF-8" in reply["error"]["message"]
        await peer.assert_alive()


async def test_invalid_utf8_in_a_notification_is_ignored() -> None:
    async with stdio_server() as peer:
        note = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"\xfe"}}'
        await peer.send_line(note)
        await peer.assert_alive()  # the first reply is the ping's


async def test_invalid_utf8_over_http_is_400_or_an_error_and_the_session_lives() -> None:
    async with serving() as server, raw_client() as http:
        session = await open_session(http, server.url, REVISION)
        bad_envelope = await http.post(
            server.url, content=b'{"jsonrpc":"2.0","id":3,"method":"pi\xffng"}', headers=session
        )
        assert bad_envelope.status_code == 400
        validate_message(REVISION, bad_envelope.content)
        assert error_of(bad_envelope.json()) == (3, errors.PARSE_ERROR)

        bad_params = await http.post(
            server.url, content=tools_call(4, b'{"text":"\xff"}'), headers=session
        )
        assert bad_params.status_code == 200
        (reply,) = messages(bad_params.content)
        validate_message(REVISION, reply)
        assert error_of(reply) == (4, errors.PARSE_ERROR)
        await assert_http_alive(http, server.url, session)


async def assert_http_alive(http: httpx.AsyncClient, url: str, session: dict[str, str]) -> None:
    ping_request = {"jsonrpc": "2.0", "id": 99, "method": "ping"}
    ping = await http.post(url, json=ping_request, headers=session)
    assert ping.status_code == 200
    assert messages(ping.content) == [{"jsonrpc": "2.0", "id": 99, "result": {}}]


# -- 2. deep nesting -------------------------------------------------------------------------


@pytest.mark.parametrize("depth", range(NEAR_LIMIT - 40, NEAR_LIMIT + 20, 10))
async def test_nesting_near_the_recursion_limit_is_answered_wherever_it_is_decoded(
    depth: int,
) -> None:
    """The envelope, the params and the arguments are decoded at different stack depths."""
    async with stdio_server() as peer:
        meta = b'{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{"x":%s}}}'
        await peer.send_line(meta % nested(depth))
        reply = await peer.receive()
        if "error" in reply:
            assert reply["error"]["code"] == errors.PARSE_ERROR
            assert "nested too deeply" in reply["error"]["message"]
        else:
            assert reply["id"] == 6
        await peer.send_line(tools_call(7, b'{"values":%s}' % nested(depth), b'"blocking_sum"'))
        reply = await peer.receive()
        assert reply.get("id") in (7, None)
        await peer.assert_alive()


async def test_deep_nesting_is_refused_and_the_process_lives() -> None:
    async with stdio_server() as peer:
        await peer.send_line(tools_call(6, nested(DEEP)))
        reply = await peer.receive()
        assert error_of(reply) == (None, errors.PARSE_ERROR)
        assert "nested too deeply" in reply["error"]["message"]
        await peer.send_line(b'{"jsonrpc":"2.0","method":"x","params":' + nested(DEEP) + b"}")
        assert error_of(await peer.receive()) == (None, errors.PARSE_ERROR)
        await peer.send_line(nested(DEEP))  # a "batch" of nothing but nesting
        assert error_of(await peer.receive()) == (None, errors.PARSE_ERROR)
        await peer.assert_alive()


async def test_deep_nesting_over_http_is_400_and_the_session_lives() -> None:
    async with serving() as server, raw_client() as http:
        session = await open_session(http, server.url, REVISION)
        for body in (tools_call(7, nested(DEEP)), nested(DEEP)):
            response = await http.post(server.url, content=body, headers=session)
            assert response.status_code == 400
            validate_message(REVISION, response.content)
            assert response.json()["error"]["code"] == errors.PARSE_ERROR
        await assert_http_alive(http, server.url, session)


async def test_nesting_near_the_limit_over_http_is_answered_and_the_session_lives() -> None:
    """The endpoint decodes a POST in hypercorn's task, the session's reader again in its own."""
    async with serving() as server, raw_client() as http:
        session = await open_session(http, server.url, REVISION)
        for depth in range(NEAR_LIMIT - 60, NEAR_LIMIT + 20, 10):
            body = b'{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{"x":%s}}}'
            with trio.fail_after(10):
                response = await http.post(
                    server.url, content=body % nested(depth), headers=session
                )
            assert response.status_code in (200, 400)
            (reply,) = (
                messages(response.content) if response.status_code == 200 else [response.json()]
            )
            validate_message(REVISION, reply)
            assert reply.get("id") in (6, None)
        await assert_http_alive(http, server.url, session)


async def test_deep_nesting_and_lone_surrogates_over_websocket_keep_the_connection() -> None:
    async with websocket_server() as url, open_websocket(url, subprotocols=["mcp"]) as ws:
        await ws.send_message(json.dumps(initialize_message(REVISION)))
        assert json.loads(await ws.get_message())["id"] == 1
        await ws.send_message(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        for bad in (tools_call(8, nested(DEEP)), b'{"jsonrpc":"2.0","id":9,"method":"\\ud800"}'):
            await ws.send_message(bad.decode())
            reply = await ws.get_message()
            validate_message(REVISION, reply)
            assert json.loads(reply)["error"]["code"] == errors.PARSE_ERROR
        await ws.send_message('{"jsonrpc":"2.0","id":10,"method":"ping"}')
        assert json.loads(await ws.get_message()) == {"jsonrpc": "2.0", "id": 10, "result": {}}


async def test_a_binary_frame_amid_traffic_is_closed_with_1003_not_dropped() -> None:
    """A binary frame ends the connection by design, with its close code: the close
    handshake must finish even though the session is cancelled as the connection closes."""
    async with websocket_server() as url:
        for _ in range(5):
            async with open_websocket(url, subprotocols=["mcp"]) as ws:
                await ws.send_message(json.dumps(initialize_message(REVISION)))
                await ws.get_message()
                for request_id in range(10):  # answers still being written when it closes
                    await ws.send_message(f'{{"jsonrpc":"2.0","id":{request_id},"method":"ping"}}')
                await ws.send_message(b"\x00binary")
                with pytest.raises(trio_websocket.ConnectionClosed) as closed:
                    while True:
                        validate_message(REVISION, await ws.get_message())
                assert closed.value.reason.code == 1003


# -- 3. surrogates, batches, Last-Event-ID, huge integers --------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":12,"method":"\\ud800"}',
        b'{"jsonrpc":"2.0","id":12,"method":"ping","params":{"x":"\\udc00 low"}}',
        b'{"jsonrpc":"2.0","id":12,"method":"ping","params":{"x":"\\ud800\\u0041"}}',
    ],
)
async def test_a_lone_surrogate_is_diagnosed_as_such_with_the_id(line: bytes) -> None:
    async with stdio_server() as peer:
        await peer.send_line(line)
        reply = await peer.receive()
        assert error_of(reply) == (12, errors.PARSE_ERROR)
        assert "lone UTF-16 surrogate" in reply["error"]["message"]
        assert "truncated" not in reply["error"]["message"]
        await peer.assert_alive()


async def test_batch_admission_errors_are_inside_the_one_array_response() -> None:
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 2, "method": "no/such/method"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "add"}},
        {"jsonrpc": "2.0", "id": 3, "method": "ping"},  # id 3 is in use by then
    ]
    async with stdio_server(revision="2025-03-26") as peer:
        await peer.send(batch)
        replies = await peer.receive()
        assert isinstance(replies, list)
        codes = sorted((r["id"], r.get("error", {}).get("code", 0)) for r in replies)
        assert codes == [(1, 0), (2, errors.METHOD_NOT_FOUND), (3, errors.INVALID_REQUEST), (3, 0)]
        await peer.assert_alive()  # nothing was sent outside the array before this


@pytest.mark.parametrize("event_id", [b"p1/" + b"9" * 4300, b"p1/\xb2", b"x" * 10_000])
async def test_a_malformed_last_event_id_is_400(event_id: bytes) -> None:
    async with serving() as server, raw_client() as http:
        session = await open_session(http, server.url, REVISION)
        headers: dict[str, str | bytes] = {**session, "accept": "text/event-stream"}
        headers["last-event-id"] = event_id
        response = await http.get(server.url, headers=headers)
        assert response.status_code == 400
        validate_message(REVISION, response.content)
        await assert_http_alive(http, server.url, session)


async def test_a_tool_fed_4300_digit_integers_gets_a_tool_error_not_an_internal_error() -> None:
    big = b"9" * 4300
    async with stdio_server("servers.faulty:server") as peer:
        await peer.send_line(tools_call(13, b'{"a":%s,"b":%s}' % (big, big), name=b'"add"'))
        reply = await peer.receive()
        assert reply["id"] == 13 and reply["result"]["isError"] is True
        assert "'add' returned a value JSON cannot carry" in reply["result"]["content"][0]["text"]
        await peer.send_line(tools_call(14, b'{"a":%s9,"b":1}' % big, name=b'"add"'))
        reply = await peer.receive()
        assert reply["result"]["isError"] is True
        assert "at `$.a`" in reply["result"]["content"][0]["text"]  # names the argument
        await peer.assert_alive()


# -- 4. HTTP error bodies speak the request's revision -------------------------------------------


@pytest.mark.parametrize(("revision", "has_id"), [("2025-11-25", False), ("2025-03-26", True)])
async def test_http_errors_answering_no_request_follow_the_revision(
    revision: str, has_id: bool
) -> None:
    async with serving() as server, raw_client() as http:
        session = await open_session(http, server.url, revision)
        unknown = {**session, "mcp-session-id": "no-such-session"}
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        bodies = [
            await http.post(server.url, json=ping, headers=unknown),  # 404
            await http.post(server.url, content=b"{not json", headers=session),  # 400
            await http.post(server.url, json=ping, headers={**session, "accept": "text/html"}),
        ]
        for response in bodies:
            assert response.status_code in (400, 404, 406)
            validate_message(revision, response.content)
            assert ("id" in response.json()) is has_id


# -- 15. internal errors: nothing leaks to the peer, the log stays bounded ----------------------


async def test_internal_errors_tell_the_peer_nothing_and_do_not_flood_the_log(
    tmp_path: Path,
) -> None:
    stderr = tmp_path / "stderr"
    calls = 40
    async with stdio_server("servers.faulty:server", stderr=stderr) as peer:
        for request_id in range(100, 100 + calls):
            reply = await peer.request(request_id, "resources/read", {"uri": "bug://always"})
            assert reply["error"] == {"code": errors.INTERNAL_ERROR, "message": "Internal error"}
        await peer.assert_alive()
    log = stderr.read_text()
    assert SECRET in log  # the operator sees what happened...
    assert log.count("Traceback") == InternalErrorLog().burst  # ...within a bound
    assert "held back" in log


def test_the_internal_error_log_counts_what_it_held_back(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    budget = InternalErrorLog(burst=2, interval=10.0, clock=lambda: now[0])
    logger = logging.getLogger("test.internal")
    for _ in range(5):
        try:
            raise ValueError("bug")
        except ValueError:
            budget.report(logger, "failed")
    assert [r.exc_info is not None for r in caplog.records] == [True, True, False]
    assert budget.held_back == 3
    now[0] = 10.0
    try:
        raise ValueError("bug")
    except ValueError:
        budget.report(logger, "failed")
    assert "3 more internal errors were not logged" in caplog.records[3].getMessage()
    assert caplog.records[4].exc_info is not None


# -- 1. (client side) a server's bytes cannot crash our client either ----------------------------


async def test_our_client_survives_a_result_that_is_not_utf8() -> None:
    client_end, server_end = memory_pair()

    async def answer(payload: bytes) -> None:
        await server_end.send_all([Outgoing(payload)])

    async def fake_server() -> None:
        initialize = json.loads(await server_end.receive())
        result = {
            "protocolVersion": REVISION,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake", "version": "0"},
        }
        reply = {"jsonrpc": "2.0", "id": initialize["id"], "result": result}
        await answer(json.dumps(reply).encode())
        while True:
            try:
                message = json.loads(await server_end.receive())
            except TransportClosed:  # the client is done
                return
            if message.get("method") == "tools/call":
                bad = b'{"content":[{"type":"text","text":"caf\xe9"}]}'
                await answer(b'{"jsonrpc":"2.0","id":%d,"result":%s}' % (message["id"], bad))
            elif message.get("method") == "ping":
                await answer(b'{"jsonrpc":"2.0","id":%d,"result":{}}' % message["id"])

    async with trio.open_nursery() as nursery:
        nursery.start_soon(fake_server)
        async with open_client(client_end, era="legacy") as client:
            with pytest.raises(McpError) as invalid:
                await client.call_tool("anything", {})
            assert invalid.value.code == errors.INTERNAL_ERROR  # the peer's fault, not ours
            assert "Invalid result of tools/call" in invalid.value.message
            await client.ping()
        nursery.cancel_scope.cancel()


async def test_an_oversized_message_while_the_server_closes_ends_that_connection_only() -> None:
    """Found by ``benchmarks/fuzz.py``: a message over the size limit that arrives after
    the server began its close makes trio_websocket's reader task raise (wsproto cannot
    send the 1009 close in that state). That ends this connection, never the server."""
    async with websocket_server(max_message_size=1024) as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        client = wsproto.WSConnection(wsproto.ConnectionType.CLIENT)
        handshake = wsproto.events.Request(
            host=f"127.0.0.1:{port}", target="/mcp", subprotocols=["mcp"]
        )
        await stream.send_all(client.send(handshake))
        with trio.fail_after(10):  # hang guard
            events = await _ws_events(stream, client)
            assert isinstance(events[0], wsproto.events.AcceptConnection)
            await stream.send_all(client.send(wsproto.events.BytesMessage(b"\x00binary")))
            while not any(isinstance(e, wsproto.events.CloseConnection) for e in events):
                events = await _ws_events(stream, client)
            # The server is closing (1003); now a text message past its size limit.
            frames = wsproto.frame_protocol.FrameProtocol(client=True, extensions=[])
            await stream.send_all(frames.send_data("x" * 5000, fin=True))
            with contextlib.suppress(trio.BrokenResourceError):  # a reset is a hang-up too
                while await stream.receive_some(65536):  # until the server hangs up
                    pass
        await stream.aclose()
        async with open_client(url, era="legacy") as mcp_client:  # the server still serves
            await mcp_client.ping()


async def _ws_events(stream: trio.SocketStream, connection: wsproto.WSConnection) -> list[Any]:
    data = await stream.receive_some(65536)
    connection.receive_data(data or None)
    return list(connection.events())
