"""Streamable HTTP in the 2026-07-28 era, on the same endpoint as the legacy era.

Real HTTP on loopback (``serve_http`` under hypercorn, ``httpx`` as the client,
raw so that every header is exactly what the test says):

- the validation ladder's order, codes and HTTP statuses (``_meta`` -32602 →
  headers -32020 → version -32022 → ``Mcp-Param-*`` -32020 → dispatch 404);
- routing headers, ``=?base64?…?=`` values and their strict decoding;
- a reply is JSON until the request emits a notification, then an event stream
  without ids, priming event or ``retry:``;
- closing the connection cancels the request's handler;
- GET and DELETE in this era, and both eras on one endpoint at once;
- every message the server writes is valid against the 2026-07-28 schema.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import httpx
import msgspec
import pytest
import trio

from mcp_actors import Context, Server, UrlTarget, open_client
from mcp_actors.protocol import errors
from mcp_actors.protocol.versions import ALL, LATEST
from mcp_actors.runtime.supervisor import SupervisorStatistics
from mcp_actors.server.serve_http import HttpServerHandle, serve_http
from mcp_actors.server.tools import RegisteredTool
from mcp_actors.testing.wire import validate_message
from mcp_actors.transports.http.config import HttpConfig
from mcp_actors.transports.http.sse import SSEDecoder

MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
}
ACCEPT_BOTH = "application/json, text/event-stream"


def make_server(versions: tuple[str, ...] = ALL) -> tuple[Server, dict[str, trio.Event]]:
    """A server of ``versions`` (both eras by default) with the tools the tests drive,
    and the events they watch (``wait_forever`` started, then cancelled)."""
    server = Server("modern-http", version="1.0.0", supported_versions=versions)
    seen = {"started": trio.Event(), "cancelled": trio.Event()}

    @server.tool
    async def add(a: int, b: int) -> int:
        return a + b

    @server.tool
    async def count(ctx: Context, steps: int) -> str:
        for step in range(steps):
            await ctx.report_progress(step + 1, steps)
            await trio.sleep(0.02)
        return f"counted {steps}"

    @server.tool
    async def wait_forever(ctx: Context) -> str:
        seen["started"].set()
        try:
            await trio.sleep_forever()
        finally:
            seen["cancelled"].set()
        return "never"

    @server.tool
    async def echo(region: str, level: int = 0, loud: bool = False) -> str:
        return f"{region}/{level}/{loud}"

    # ``echo`` mirrors its arguments into Mcp-Param-* headers.
    registered = server.tools["echo"]
    schema = json.loads(json.dumps(registered.definition.input_schema))
    schema["properties"]["region"]["x-mcp-header"] = "Region"
    schema["properties"]["level"]["x-mcp-header"] = "Level"
    schema["properties"]["loud"]["x-mcp-header"] = "Loud"
    definition = msgspec.structs.replace(registered.definition, input_schema=schema)
    server.add_tool(
        RegisteredTool(definition, registered.function, registered.signature), replace=True
    )
    return server, seen


@asynccontextmanager
async def modern_server(
    **options: Any,
) -> AsyncIterator[tuple[httpx.AsyncClient, HttpServerHandle, dict[str, trio.Event]]]:
    server, seen = make_server()
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(partial(serve_http, server, port=0, **options))
        async with httpx.AsyncClient(timeout=10) as http:
            yield http, handle, seen
        nursery.cancel_scope.cancel()


def headers_for(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    headers = {"accept": ACCEPT_BOTH, "mcp-protocol-version": MODERN, "mcp-method": method}
    if name is not None:
        headers["mcp-name"] = name
    headers.update(extra)
    return headers


def request(method: str, params: Any, request_id: int = 7) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


async def send(
    http: httpx.AsyncClient,
    url: str,
    message: Any,
    headers: dict[str, str] | list[tuple[str, str]],
    *,
    latin1: bool = False,
) -> tuple[httpx.Response, list[dict[str, Any]]]:
    """POST ``message``; the reply and the JSON-RPC messages it carried, each checked
    against the 2026-07-28 schema (a result against the request's result type)."""
    content = message if isinstance(message, bytes) else json.dumps(message).encode()
    pairs = [("content-type", "application/json"), *_pairs(headers)]
    encoding = "utf-8" if latin1 else "ascii"  # a raw non-ASCII value, as bytes
    raw = [(name.encode(), value.encode(encoding)) for name, value in pairs]
    reply = await http.post(url, content=content, headers=raw)
    kind = reply.headers.get("content-type", "")
    if kind.startswith("text/event-stream"):
        messages = [json.loads(e.data) for e in SSEDecoder().feed(reply.content) if e.data]
    elif reply.content:
        messages = [reply.json()]
    else:
        messages = []
    in_reply_to = message if isinstance(message, dict) and "method" in message else None
    for sent in messages:
        answers = "method" not in sent
        validate_message(MODERN, sent, in_reply_to=in_reply_to if answers else None)
    return reply, messages


def _pairs(headers: dict[str, str] | list[tuple[str, str]]) -> list[tuple[str, str]]:
    return list(headers.items()) if isinstance(headers, dict) else headers


def error_of(messages: list[dict[str, Any]]) -> dict[str, Any]:
    assert len(messages) == 1, messages
    assert "error" in messages[0], messages[0]
    return messages[0]


# -- the ladder -----------------------------------------------------------------------

NO_VERSION = {"io.modelcontextprotocol/clientCapabilities": {}}
NO_CAPABILITIES = {"io.modelcontextprotocol/protocolVersion": MODERN}
V999 = {**META, "io.modelcontextprotocol/protocolVersion": "v999.0.0"}


@pytest.mark.parametrize(
    ("label", "method", "params", "headers", "code", "status"),
    [
        ("no _meta", "server/discover", {}, headers_for("server/discover"), -32602, 400),
        ("no params", "tools/list", None, headers_for("tools/list"), -32602, 400),
        ("no version", "tools/list", {"_meta": NO_VERSION}, headers_for("tools/list"), -32602, 400),
        (
            "no capabilities",
            "tools/list",
            {"_meta": NO_CAPABILITIES},
            headers_for("tools/list"),
            -32602,
            400,
        ),
        # rung 1 before rung 2: the missing key wins over a wrong header
        (
            "no version, wrong method header",
            "tools/list",
            {"_meta": NO_VERSION},
            headers_for("prompts/list"),
            -32602,
            400,
        ),
        # rung 2 before rung 3: header and body disagree, though the body's version is unknown
        ("version mismatch", "tools/list", {"_meta": V999}, headers_for("tools/list"), -32020, 400),
        (
            "unsupported version",
            "tools/list",
            {"_meta": V999},
            headers_for("tools/list", **{"mcp-protocol-version": "v999.0.0"}),
            -32022,
            400,
        ),
        (
            "method mismatch",
            "tools/list",
            {"_meta": META},
            headers_for("prompts/list"),
            -32020,
            400,
        ),
        (
            "method case",
            "tools/list",
            {"_meta": META},
            headers_for("TOOLS/LIST"),
            -32020,
            400,
        ),
        (
            "no method header",
            "tools/list",
            {"_meta": META},
            {"accept": ACCEPT_BOTH, "mcp-protocol-version": MODERN},
            -32020,
            400,
        ),
        (
            "no name header",
            "tools/call",
            {"_meta": META, "name": "add", "arguments": {"a": 1, "b": 2}},
            headers_for("tools/call"),
            -32020,
            400,
        ),
        (
            "wrong name header",
            "tools/call",
            {"_meta": META, "name": "add", "arguments": {"a": 1, "b": 2}},
            headers_for("tools/call", "wrong_tool_name"),
            -32020,
            400,
        ),
        (
            "wrong uri header",
            "resources/read",
            {"_meta": META, "uri": "test://a"},
            headers_for("resources/read", "test://b"),
            -32020,
            400,
        ),
        # rung 3 before rung 4: an unsupported version wins over a bad Mcp-Param header
        (
            "unsupported version, bad param header",
            "tools/call",
            {"_meta": V999, "name": "echo", "arguments": {"region": "eu"}},
            headers_for(
                "tools/call",
                "echo",
                **{"mcp-protocol-version": "v999.0.0", "mcp-param-region": "us"},
            ),
            -32022,
            400,
        ),
        (
            "param header mismatch",
            "tools/call",
            {"_meta": META, "name": "echo", "arguments": {"region": "eu"}},
            headers_for("tools/call", "echo", **{"mcp-param-region": "us"}),
            -32020,
            400,
        ),
        (
            "unknown method",
            "unknown/method",
            {"_meta": META},
            headers_for("unknown/method"),
            -32601,
            404,
        ),
        ("initialize", "initialize", {"_meta": META}, headers_for("initialize"), -32601, 404),
        ("ping", "ping", {"_meta": META}, headers_for("ping"), -32601, 404),
        (
            "setLevel",
            "logging/setLevel",
            {"_meta": META, "level": "debug"},
            headers_for("logging/setLevel"),
            -32601,
            404,
        ),
    ],
)
async def test_the_ladder_answers_the_first_failing_rung(
    label: str, method: str, params: Any, headers: dict[str, str], code: int, status: int
) -> None:
    async with modern_server() as (http, handle, _):
        reply, messages = await send(http, handle.url, request(method, params, 101), headers)
    error = error_of(messages)
    assert (reply.status_code, error["error"]["code"]) == (status, code), (label, error)
    assert error["id"] == 101  # every error echoes the request's id
    assert reply.headers["content-type"] == "application/json"
    assert "mcp-session-id" not in reply.headers


async def test_an_unsupported_version_names_the_supported_ones() -> None:
    async with modern_server() as (http, handle, _):
        headers = headers_for("server/discover", **{"mcp-protocol-version": "v999.0.0"})
        _, messages = await send(
            http, handle.url, request("server/discover", {"_meta": V999}), headers
        )
    data = error_of(messages)["error"]["data"]
    assert data == {"supported": [MODERN], "requested": "v999.0.0"}


async def test_a_modern_request_without_the_version_header_is_a_header_mismatch() -> None:
    """The header is required in this era: a body that says 2026-07-28 without it gets
    the modern -32020, not the legacy "Mcp-Session-Id header is required"."""
    async with modern_server() as (http, handle, _):
        headers = {"accept": ACCEPT_BOTH, "mcp-method": "tools/list"}
        reply, messages = await send(
            http, handle.url, request("tools/list", {"_meta": META}), headers
        )
    assert reply.status_code == 400
    assert error_of(messages)["error"]["code"] == errors.HEADER_MISMATCH
    assert "MCP-Protocol-Version" in error_of(messages)["error"]["message"]


async def test_a_repeated_routing_header_is_a_mismatch() -> None:
    async with modern_server() as (http, handle, _):
        headers = [
            ("accept", ACCEPT_BOTH),
            ("mcp-protocol-version", MODERN),
            ("mcp-method", "tools/list"),
            ("Mcp-Method", "tools/list"),
        ]
        reply, messages = await send(
            http, handle.url, request("tools/list", {"_meta": META}), headers
        )
    assert reply.status_code == 400
    assert "more than once" in error_of(messages)["error"]["message"]


async def raw_post(handle: HttpServerHandle, header_lines: list[bytes], body: bytes) -> int:
    """POST with header lines exactly as given (httpx refuses values with edge spaces,
    which other clients send); the response's status code."""
    stream = await trio.open_tcp_stream("127.0.0.1", handle.port)
    async with stream:
        head = [
            b"POST " + handle.config.path.encode() + b" HTTP/1.1",
            b"host: 127.0.0.1",
            b"content-type: application/json",
            b"content-length: " + str(len(body)).encode(),
            b"connection: close",
            *header_lines,
        ]
        await stream.send_all(b"\r\n".join(head) + b"\r\n\r\n" + body)
        received = b""
        with trio.fail_after(10):
            while chunk := await stream.receive_some():
                received += chunk
    return int(received.split(b" ", 2)[1])


async def test_whitespace_around_the_name_header_is_not_part_of_its_value() -> None:
    params = {"_meta": META, "name": "add", "arguments": {"a": 2, "b": 40}}
    body = json.dumps(request("tools/call", params)).encode()
    lines = [
        b"accept: " + ACCEPT_BOTH.encode(),
        b"mcp-protocol-version: " + MODERN.encode(),
        b"mcp-method: tools/call",
    ]
    async with modern_server() as (_, handle, _):
        padded = await raw_post(handle, [*lines, b"Mcp-Name:   add   "], body)
        wrong = await raw_post(handle, [*lines, b"Mcp-Name:   ad d   "], body)
    assert (padded, wrong) == (200, 400)


@pytest.mark.parametrize(
    ("name_header", "accepted"),
    [("add", True), ("=?base64?YWRk?=", True), ("=?base64?YWRk?", False), ("Add", False)],
)
async def test_the_name_header_is_compared_after_decoding(name_header: str, accepted: bool) -> None:
    """A base64 wrapper is decoded; a broken wrapper is a literal that does not match;
    values are case-sensitive."""
    async with modern_server() as (http, handle, _):
        params = {"_meta": META, "name": "add", "arguments": {"a": 2, "b": 40}}
        reply, messages = await send(
            http,
            handle.url,
            request("tools/call", params),
            headers_for("tools/call", name_header),
        )
    if accepted:
        assert reply.status_code == 200, messages
        assert messages[-1]["result"]["structuredContent"] == {"result": 42}
    else:
        assert reply.status_code == 400
        assert error_of(messages)["error"]["code"] == errors.HEADER_MISMATCH


@pytest.mark.parametrize(
    ("arguments", "param_headers", "accepted"),
    [
        ({"region": "Hello"}, {"mcp-param-region": "Hello"}, True),
        ({"region": "Hello"}, {"mcp-param-region": "=?base64?SGVsbG8=?="}, True),
        ({"region": "Hello"}, {"mcp-param-region": "=?base64?SGVsbG8?="}, False),  # no padding
        ({"region": "Hello"}, {"mcp-param-region": "=?base64?SGVs!!!bG8=?="}, False),
        ({"region": "Hello"}, {"mcp-param-region": "=?base64?SGVsbG9=?="}, False),  # stray bits
        ({"region": "Hello"}, {"mcp-param-region": "=?BASE64?SGVsbG8=?="}, False),  # markers
        ({"region": "SGVsbG8="}, {"mcp-param-region": "SGVsbG8="}, True),  # a literal
        ({"region": "=?base64?SGVsbG8="}, {"mcp-param-region": "=?base64?SGVsbG8="}, True),
        ({"region": "Hello, 世界"}, {"mcp-param-region": "=?base64?SGVsbG8sIOS4lueVjA==?="}, True),
        ({"region": " padded "}, {"mcp-param-region": "=?base64?IHBhZGRlZCA=?="}, True),
        ({"region": "test-value"}, {}, False),  # the body has it, the header is missing
        ({}, {"mcp-param-region": "eu"}, False),  # the header claims what the body lacks
        ({"region": "eu", "level": 42}, {"mcp-param-region": "eu", "mcp-param-level": "42"}, True),
        (
            {"region": "eu", "level": 42},
            {"mcp-param-region": "eu", "mcp-param-level": "42.0"},  # numerically equal
            True,
        ),
        (
            {"region": "eu", "level": 42},
            {"mcp-param-region": "eu", "mcp-param-level": "43"},
            False,
        ),
        (
            {"region": "eu", "loud": True},
            {"mcp-param-region": "eu", "mcp-param-loud": "true"},
            True,
        ),
        (
            {"region": "eu", "loud": True},
            {"mcp-param-region": "eu", "mcp-param-loud": "True"},
            False,
        ),
        ({"region": "eu"}, {"mcp-param-region": "eu", "mcp-param-unknown": "x"}, True),
    ],
)
async def test_param_headers_must_mirror_the_annotated_arguments(
    arguments: dict[str, Any], param_headers: dict[str, str], accepted: bool
) -> None:
    async with modern_server() as (http, handle, _):
        params = {"_meta": META, "name": "echo", "arguments": arguments}
        reply, messages = await send(
            http,
            handle.url,
            request("tools/call", params),
            headers_for("tools/call", "echo", **param_headers),
        )
    if accepted:
        assert reply.status_code == 200, messages
        assert "result" in messages[-1], messages
    else:
        assert reply.status_code == 400, messages
        assert error_of(messages)["error"]["code"] == errors.HEADER_MISMATCH


async def test_a_param_header_with_raw_non_ascii_bytes_is_refused() -> None:
    async with modern_server() as (http, handle, _):
        params = {"_meta": META, "name": "echo", "arguments": {"region": "é"}}
        headers = [*headers_for("tools/call", "echo").items(), ("mcp-param-region", "é")]
        reply, messages = await send(
            http, handle.url, request("tools/call", params), headers, latin1=True
        )
    assert reply.status_code == 400
    assert error_of(messages)["error"]["code"] == errors.HEADER_MISMATCH


# -- bodies that are not one request ---------------------------------------------------


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", errors.PARSE_ERROR),
        (json.dumps([request("tools/list", {"_meta": META})]).encode(), errors.INVALID_REQUEST),
        (json.dumps({"jsonrpc": "2.0", "id": 3, "result": {}}).encode(), errors.INVALID_REQUEST),
    ],
)
async def test_a_body_that_is_not_one_request_is_400(body: bytes, code: int) -> None:
    async with modern_server() as (http, handle, _):
        reply, messages = await send(http, handle.url, body, headers_for("tools/list"))
    assert reply.status_code == 400
    assert error_of(messages)["error"]["code"] == code


async def test_a_notification_is_acknowledged_with_202_and_no_body() -> None:
    async with modern_server() as (http, handle, _):
        message = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 1, "_meta": META},
        }
        reply, messages = await send(
            http, handle.url, message, headers_for("notifications/cancelled")
        )
    assert (reply.status_code, reply.content, messages) == (202, b"", [])


# -- JSON or an event stream -------------------------------------------------------------


async def test_a_request_that_emits_nothing_is_answered_with_json() -> None:
    async with modern_server() as (http, handle, _):
        params = {"_meta": META, "name": "add", "arguments": {"a": 1, "b": 2}}
        reply, messages = await send(
            http,
            handle.url,
            request("tools/call", params),
            headers_for("tools/call", "add", **{"mcp-session-id": "stale-session"}),
        )
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "application/json"
    assert "mcp-session-id" not in reply.headers  # ignored, never echoed
    assert messages[0]["result"]["structuredContent"] == {"result": 3}


async def test_a_request_that_emits_notifications_is_answered_with_an_event_stream() -> None:
    async with modern_server() as (http, handle, _):
        meta = {**META, "progressToken": "progress-1"}
        params = {"_meta": meta, "name": "count", "arguments": {"steps": 3}}
        reply, messages = await send(
            http, handle.url, request("tools/call", params), headers_for("tools/call", "count")
        )
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "text/event-stream"
    assert reply.headers["x-accel-buffering"] == "no"
    progress = [m["params"]["progress"] for m in messages if m.get("method")]
    assert progress == [1, 2, 3]
    assert all(m["params"]["progressToken"] == "progress-1" for m in messages[:-1])
    assert messages[-1]["result"]["content"][0]["text"] == "counted 3"
    # nothing of the legacy era's resumable streams: no event ids, no priming, no retry
    for line in reply.text.splitlines():
        assert not line.startswith(("id:", "retry:")), line
    events = SSEDecoder().feed(reply.content)
    assert len(events) == len(messages)  # no empty priming event either


async def test_a_client_that_accepts_only_json_gets_json_without_the_notifications() -> None:
    async with modern_server() as (http, handle, _):
        meta = {**META, "progressToken": "progress-1"}
        params = {"_meta": meta, "name": "count", "arguments": {"steps": 3}}
        headers = headers_for("tools/call", "count", accept="application/json")
        reply, messages = await send(http, handle.url, request("tools/call", params), headers)
    assert reply.headers["content-type"] == "application/json"
    assert [m["result"]["content"][0]["text"] for m in messages] == ["counted 3"]


async def test_an_error_after_the_stream_committed_is_its_last_event() -> None:
    async with modern_server() as (http, handle, _):
        meta = {**META, "progressToken": 5}
        params = {"_meta": meta, "name": "count", "arguments": {"steps": "three"}}
        reply, messages = await send(
            http, handle.url, request("tools/call", params), headers_for("tools/call", "count")
        )
    assert reply.status_code == 200
    assert "isError" in messages[-1]["result"] or "error" in messages[-1]


# -- cancellation --------------------------------------------------------------------------


async def drop_a_call_in_flight(
    http: httpx.AsyncClient,
    handle: HttpServerHandle,
    seen: dict[str, trio.Event],
    accept: str = ACCEPT_BOTH,
) -> SupervisorStatistics:
    """POST a ``wait_forever`` call, close its connection once it runs; the supervisor's
    figures while it ran."""
    params = {"_meta": META, "name": "wait_forever", "arguments": {}}
    headers = headers_for("tools/call", "wait_forever", accept=accept)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(
            partial(http.post, handle.url, json=request("tools/call", params), headers=headers)
        )
        with trio.fail_after(5):
            await seen["started"].wait()
        during = handle.supervisor.statistics()
        nursery.cancel_scope.cancel()  # the client goes away
    return during


async def no_session_left(handle: HttpServerHandle) -> SupervisorStatistics:
    """The supervisor's figures once no session is active (each ends just after its reply)."""
    with trio.fail_after(5):
        while handle.supervisor.statistics().sessions_active:
            await trio.sleep(0.01)
    return handle.supervisor.statistics()


@pytest.mark.parametrize("accept", [ACCEPT_BOTH, "application/json"])
async def test_closing_the_connection_cancels_the_request(accept: str) -> None:
    config = HttpConfig(keepalive_interval=None)
    async with modern_server(config=config) as (http, handle, seen):
        await drop_a_call_in_flight(http, handle, seen, accept)
        with trio.fail_after(5):
            await seen["cancelled"].wait()
        await no_session_left(handle)


async def test_a_request_in_flight_is_a_supervised_session_until_its_answer() -> None:
    """The session of a modern request runs in the POST's own task, yet the supervisor
    sees it (started, active, its request in flight) and forgets it with the answer."""
    async with modern_server() as (http, handle, seen):
        before = handle.supervisor.statistics()
        during = await drop_a_call_in_flight(http, handle, seen)
        await no_session_left(handle)
        params = {"_meta": META, "name": "add", "arguments": {"a": 2, "b": 3}}
        call = request("tools/call", params)
        reply, messages = await send(http, handle.url, call, headers_for("tools/call", "add"))
        after = await no_session_left(handle)
    assert (during.sessions_active, during.inbound_requests) == (1, 1)
    assert during.sessions_started == before.sessions_started + 1
    assert reply.status_code == 200
    assert messages[-1]["result"]["structuredContent"] == {"result": 5}
    assert (after.sessions_active, after.sessions_failed) == (0, 0)
    assert after.sessions_started == before.sessions_started + 2


# -- GET, DELETE and both eras at once --------------------------------------------------------


@pytest.mark.parametrize("method", ["GET", "DELETE"])
async def test_get_and_delete_are_405_in_the_modern_era(method: str) -> None:
    async with modern_server() as (http, handle, _):
        reply = await http.request(
            method,
            handle.url,
            headers={"accept": "text/event-stream", "mcp-protocol-version": MODERN},
        )
        legacy = await http.request(method, handle.url, headers={"accept": "text/event-stream"})
    assert reply.status_code == 405
    assert reply.headers["allow"] == "POST"
    validate_message(MODERN, reply.content)  # a JSON-RPC error without an id
    assert legacy.status_code == 400  # the legacy era still asks for its session
    assert "Mcp-Session-Id" in legacy.text


async def test_both_eras_share_one_endpoint_at_once() -> None:
    async with (
        modern_server() as (http, handle, _),
        open_client(UrlTarget(handle.url, "streamable"), era="legacy") as legacy,
    ):
        assert legacy.protocol_version == LATEST
        params = {"_meta": META, "name": "add", "arguments": {"a": 20, "b": 22}}
        headers = headers_for("tools/call", "add")
        async with trio.open_nursery() as nursery:
            results: dict[str, Any] = {}

            async def modern() -> None:
                _, messages = await send(http, handle.url, request("tools/call", params), headers)
                results["modern"] = messages[-1]["result"]["structuredContent"]

            async def old() -> None:
                called = await legacy.call_tool("add", {"a": 1, "b": 1})
                results["legacy"] = called.structured_content

            nursery.start_soon(modern)
            nursery.start_soon(old)
        assert results == {"modern": {"result": 42}, "legacy": {"result": 2}}
        assert handle.sessions == 1  # the modern request opened none
        again = await legacy.call_tool("add", {"a": 2, "b": 2})
        assert again.structured_content == {"result": 4}


async def test_a_session_id_on_a_modern_request_leaves_that_session_alone() -> None:
    initialize = {
        "protocolVersion": LATEST,
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    }
    legacy_headers = {"accept": ACCEPT_BOTH, "content-type": "application/json"}
    async with modern_server() as (http, handle, _):
        opened = await http.post(
            handle.url, json=request("initialize", initialize, 1), headers=legacy_headers
        )
        session_id = opened.headers["mcp-session-id"]
        params = {"_meta": META, "name": "add", "arguments": {"a": 20, "b": 22}}
        headers = headers_for("tools/call", "add", **{"mcp-session-id": session_id})
        reply, messages = await send(http, handle.url, request("tools/call", params), headers)
        assert "mcp-session-id" not in reply.headers
        assert messages[-1]["result"]["structuredContent"] == {"result": 42}
        session = {**legacy_headers, "mcp-session-id": session_id, "mcp-protocol-version": LATEST}
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await http.post(handle.url, json=initialized, headers=session)).status_code == 202
        call = request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}, 2)
        answer = await http.post(handle.url, json=call, headers=session)
        events = [json.loads(e.data) for e in SSEDecoder().feed(answer.content) if e.data]
        assert events[-1]["result"]["structuredContent"] == {"result": 3}


async def test_requests_beyond_the_cap_are_refused_with_503() -> None:
    config = HttpConfig(max_modern_requests=1, keepalive_interval=None)
    async with modern_server(config=config) as (http, handle, seen):
        waiting = {"_meta": META, "name": "wait_forever", "arguments": {}}
        headers = headers_for("tools/call", "wait_forever")
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                partial(http.post, handle.url, json=request("tools/call", waiting), headers=headers)
            )
            with trio.fail_after(5):
                await seen["started"].wait()
            params = {"_meta": META, "name": "add", "arguments": {"a": 1, "b": 2}}
            refused, messages = await send(
                http, handle.url, request("tools/call", params, 9), headers_for("tools/call", "add")
            )
            nursery.cancel_scope.cancel()
        with trio.fail_after(5):
            await seen["cancelled"].wait()
        again, answer = await send(
            http, handle.url, request("tools/call", params, 10), headers_for("tools/call", "add")
        )
    assert refused.status_code == 503
    assert refused.headers["retry-after"]
    assert error_of(messages)["id"] == 9
    assert (again.status_code, answer[-1]["result"]["structuredContent"]) == (200, {"result": 3})
