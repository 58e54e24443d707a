"""The bench's lean HTTP wire reads every valid HTTP/1.1 response and event stream.

A scripted server on loopback answers MCP requests with responses framed in the
ways HTTP/1.1 and Server-Sent Events allow but a hand-made parser easily misses:
a body that ends when the server closes, a JSON body in several chunks, chunked
trailers, an interim ``100 Continue``, event streams with CR line ends. The bench
must open its session and call through each, and count a failed tool call as an
error however the server spaces its JSON.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio
from test_bench_defaults import bench

from mcp_actors.bench.http import http_connector
from mcp_actors.bench.loops import Budget, ClosedLoop, Tally
from mcp_actors.bench.wire import open_peer, request_template

#: How one answer is framed: (the JSON-RPC reply, or None for a notification's 202)
#: -> (the raw HTTP response, whether the server closes the connection after it).
Style = Callable[[bytes | None], tuple[bytes, bool]]

ACCEPTED = b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"
SESSION = b"Mcp-Session-Id: s1\r\n"


def _head(status: bytes, *headers: bytes) -> bytes:
    return b"HTTP/1.1 " + status + b"\r\n" + SESSION + b"".join(headers) + b"\r\n"


def close_delimited(reply: bytes | None) -> tuple[bytes, bool]:
    """No length, no chunks: the body ends when the server closes the connection."""
    if reply is None:
        return ACCEPTED, False
    head = _head(b"200 OK", b"Content-Type: application/json\r\n", b"Connection: close\r\n")
    return head + reply, True


def json_in_chunks(reply: bytes | None) -> tuple[bytes, bool]:
    """A JSON body in three chunks, one with an extension, and a trailer after them."""
    if reply is None:
        return ACCEPTED, False
    third = len(reply) // 3
    parts = [reply[:third], reply[third : 2 * third], reply[2 * third :]]
    chunks = [b"%x\r\n%s\r\n" % (len(part), part) for part in parts]
    chunks[1] = chunks[1].replace(b"\r\n", b";note=1\r\n", 1)
    head = _head(
        b"200 OK",
        b"Content-Type: application/json\r\n",
        b"Transfer-Encoding: chunked\r\n",
        b"Trailer: X-Done\r\n",
    )
    return head + b"".join(chunks) + b"0\r\nX-Done: yes\r\n\r\n", False


def after_100_continue(reply: bytes | None) -> tuple[bytes, bool]:
    """An interim ``100 Continue`` before the real response."""
    if reply is None:
        return ACCEPTED, False
    head = _head(
        b"200 OK", b"Content-Type: application/json\r\n", b"Content-Length: %d\r\n" % len(reply)
    )
    return b"HTTP/1.1 100 Continue\r\n\r\n" + head + reply, False


def events_with_cr_line_ends(reply: bytes | None) -> tuple[bytes, bool]:
    """An event stream whose lines end in a lone CR, after a priming event and a comment."""
    if reply is None:
        return ACCEPTED, False
    body = b"id: 1\rdata:\r\r: keep-alive\r\rid: 2\rdata: " + reply + b"\r\r"
    head = _head(
        b"200 OK", b"Content-Type: text/event-stream\r\n", b"Content-Length: %d\r\n" % len(body)
    )
    return head + body, False


def events_with_split_data(reply: bytes | None) -> tuple[bytes, bool]:
    """An event whose JSON is spread over several ``data`` lines (joined with newlines)."""
    if reply is None:
        return ACCEPTED, False
    lines = reply.replace(b", ", b",\n").split(b"\n")
    body = b"".join(b"data:" + line + b"\r\n" for line in lines) + b"\r\n"
    head = _head(
        b"200 OK", b"Content-Type: text/event-stream\r\n", b"Content-Length: %d\r\n" % len(body)
    )
    return head + body, False


STYLES = [
    close_delimited,
    json_in_chunks,
    after_100_continue,
    events_with_cr_line_ends,
    events_with_split_data,
]


def answer(request: dict[str, Any]) -> bytes | None:
    """The scripted MCP server, writing JSON with spaces as Python's ``json`` does."""
    if "id" not in request:
        return None
    method = request["method"]
    if method == "initialize":
        result: Any = {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "scripted", "version": "1"},
        }
    elif method == "tools/call" and request["params"]["name"] == "fail":
        result = {"content": [{"type": "text", "text": "no"}], "isError": True}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "3"}], "structuredContent": {"sum": 3}}
    else:
        result = {}
    return json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode()


async def _read_request(
    stream: trio.SocketStream, buffer: bytearray, heads: list[bytes]
) -> bytes | None:
    """One request's body (the bench always sends ``Content-Length``), its head noted
    in ``heads``; None at EOF."""
    while (end := buffer.find(b"\r\n\r\n")) < 0:
        if not (data := await stream.receive_some(65536)):
            return None
        buffer += data
    head = bytes(buffer[:end]).lower()
    heads.append(head)
    length = int(head.split(b"content-length:")[1].split(b"\r\n")[0])
    while len(buffer) < end + 4 + length:
        if not (data := await stream.receive_some(65536)):
            return None
        buffer += data
    body = bytes(buffer[end + 4 : end + 4 + length])
    del buffer[: end + 4 + length]
    return body


class ScriptedServer:
    def __init__(self, url: str) -> None:
        self.url = url
        self.connections = 0
        self.posts = 0
        #: The head of every request, lower-cased.
        self.heads: list[bytes] = []


@asynccontextmanager
async def scripted_server(style: Style) -> AsyncIterator[ScriptedServer]:
    server = ScriptedServer("")

    async def serve(stream: trio.SocketStream) -> None:
        server.connections += 1
        buffer = bytearray()
        async with stream:
            while (body := await _read_request(stream, buffer, server.heads)) is not None:
                server.posts += 1
                response, close = style(answer(json.loads(body)) if body else None)
                await stream.send_all(response)
                if close:
                    return

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, serve, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        server.url = f"http://127.0.0.1:{port}/mcp"
        yield server
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("style", STYLES, ids=lambda style: style.__name__)
async def test_the_http_wire_reads_every_framing_of_an_answer(style: Style) -> None:
    with trio.fail_after(30):  # a hang guard: a misread answer never arrives
        async with scripted_server(style) as server:
            async with open_peer(http_connector(server.url), timeout=20) as peer:
                assert peer.initialize_result["serverInfo"]["name"] == "scripted"
                for _ in range(3):
                    assert bytes(await peer.call("ping")) == b"{}"
                    result = await peer.call_tool("add", {"a": 1, "b": 2})
                    assert result["structuredContent"] == {"sum": 3}
            if style is not close_delimited:  # the kept-alive connection is used again:
                # one for the whole session, as a sequential client has it: the
                # server/discover probe this legacy server refuses, initialize, the
                # ``initialized`` notification (awaited), the calls and the DELETE
                assert (server.posts, server.connections) == (10, 1)


@pytest.mark.parametrize("style", STYLES, ids=lambda style: style.__name__)
async def test_a_failed_tool_call_counts_as_an_error_in_the_loop(style: Style) -> None:
    with trio.fail_after(30):
        async with (
            scripted_server(style) as server,
            open_peer(http_connector(server.url), timeout=20) as peer,
        ):
            for tool, failed in (("add", 0), ("fail", 6)):
                tally = Tally()
                template = request_template("tools/call", {"name": tool, "arguments": {}})
                loop = ClosedLoop(peer, template, 2, Budget(3600, 6), tally)
                await loop.run(drain_timeout=20)
                assert (tally.done, tally.errors) == (6, failed)
            assert tally.first_error is not None and '"isError": true' in tally.first_error


async def test_a_scenario_bearer_token_goes_on_every_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCH_TOKEN", "t0k-from-env")
    for auth, token in (
        ('bearer = "t0k"', b"t0k"),
        ('bearer_env = "BENCH_TOKEN"', b"t0k-from-env"),
    ):
        scenario = tmp_path / "auth.toml"
        scenario.write_text(f'session = "per-iteration"\n[auth]\n{auth}\n[[mix]]\ntool = "add"\n')
        with trio.fail_after(60):
            async with scripted_server(json_in_chunks) as server:
                code, report, stderr = await bench(
                    server.url, "--scenario", str(scenario), "--max-calls", "3"
                )
        assert code == 0, stderr
        assert report["workloads"][0]["calls"] == 3
        assert len(server.heads) >= 3 * 4  # per iteration: discover, initialize, ..., DELETE
        assert all(
            b"\r\nauthorization: bearer " + token + b"\r\n" in head + b"\r\n"
            for head in server.heads
        )
    code, _, stderr = await bench("stdio:true", "--scenario", str(scenario))
    assert code == 2 and "a bearer token or extra headers go to http:// targets only" in stderr


async def test_sessions_one_after_another_hand_on_their_connection() -> None:
    with trio.fail_after(30):
        async with scripted_server(json_in_chunks) as server:
            connect = http_connector(server.url)
            async with open_peer(connect, timeout=20):  # held open, as a run's main session
                for _ in range(3):  # sessions per iteration, as a scenario's user opens them
                    async with open_peer(connect, timeout=20) as peer:
                        await peer.call_tool("add", {"a": 1, "b": 2})
            # the main session's connection, and one the three others hand on (their
            # DELETEs included); closed once the last session is
            assert server.connections == 2


async def test_a_session_cut_by_a_deadline_closes_at_once_without_its_delete() -> None:
    with trio.fail_after(30):  # a hang guard
        async with scripted_server(json_in_chunks) as server:
            connect = http_connector(server.url)
            with trio.CancelScope() as deadline:
                async with open_peer(connect, timeout=20) as peer:
                    await peer.call_tool("add", {"a": 1, "b": 2})
                    deadline.cancel()  # as a run's --duration does, mid-session
                    await trio.sleep_forever()
            assert not any(head.startswith(b"delete ") for head in server.heads)
            async with open_peer(connect, timeout=20) as peer:  # one that ends: polite
                await peer.call_tool("add", {"a": 1, "b": 2})
            assert server.heads[-1].startswith(b"delete ")
