"""Our client in the 2026-07-28 ("modern") era: finding the era, and what it sends.

- era detection (``basic/versioning.mdx``): against the official SDK 2.3's
  ``MCPServer`` (modern) over stdio and Streamable HTTP, against our own server,
  and against legacy-only servers (a -32601 or -32602 answer to the probe, no
  answer at all, a -32022 naming only legacy versions), plus pinning an era or a
  version;
- the wire: every message we write validated against the 2026-07-28 schema,
  ``_meta`` on every request, the HTTP routing headers (``MCP-Protocol-Version``,
  ``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*`` from ``x-mcp-header``) as a scripted
  HTTP server receives them, tools with invalid annotations dropped;
- answers: the retry after -32022, ``resultType``, caching hints, a JSON-RPC error
  in an HTTP 400 body.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import hypercorn.config
import hypercorn.trio
import pytest
import trio
from mcp.server.mcpserver import MCPServer

from mcp_actors import (
    MODERN,
    SUPPORTED,
    ClientHandlers,
    Context,
    McpError,
    RequestTimeout,
    Server,
    StdioTarget,
    open_client,
    types,
)
from mcp_actors.client.era import EraChoice
from mcp_actors.client.targets import load_server
from mcp_actors.protocol.routing_headers import ToolHeaders, encode_header_value, sent
from mcp_actors.testing.wire import WireRecorder, assert_all_valid, validate_message
from mcp_actors.transports.http.client import open_streamable_http
from mcp_actors.transports.stdio import open_stdio_process

from conftest import SAMPLE

TESTS = Path(__file__).parent
MODERN_VERSION = MODERN[0]
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_INFO = "io.modelcontextprotocol/clientInfo"

SDK_SERVER_LEAKS = pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <function MemoryObject(Send|Receive)Stream.__del__"
    ":pytest.PytestUnraisableExceptionWarning"
)


# -- value encoding and x-mcp-header (protocol/routing_headers.py) ---------------------


@pytest.mark.parametrize(
    ("value", "header"),
    [
        ("us-west1", "us-west1"),
        ("us west 1", "us west 1"),
        ("", ""),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("\tindented", "=?base64?CWluZGVudGVk?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    ],
)
def test_header_values_are_encoded_as_the_spec_shows(value: str, header: str) -> None:
    assert encode_header_value(value) == header


def test_annotated_arguments_become_param_headers() -> None:
    schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "where": {
                "type": "object",
                "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}},
            },
            "query": {"type": "string"},
        },
    }
    table = ToolHeaders()
    assert table.learn([("run", schema)]) == set()
    arguments = {
        "region": "eu-1",
        "priority": 42,
        "verbose": None,  # null: no header
        "where": {"zone": " b "},
        "query": "SELECT 1",
    }
    headers = table.for_call("run", json.dumps(arguments).encode())
    assert headers == {
        "Mcp-Param-Region": "eu-1",
        "Mcp-Param-Priority": "42",
        "Mcp-Param-Zone": "=?base64?IGIg?=",
    }
    assert table.for_call("run", b'{"verbose": false}') == {"Mcp-Param-Verbose": "false"}
    assert table.for_call("other", b'{"region": "x"}') == {}


@pytest.mark.parametrize(
    ("properties", "reason"),
    [
        ({"v": {"type": "string", "x-mcp-header": ""}}, "token"),
        ({"v": {"type": "string", "x-mcp-header": "Has Space"}}, "token"),
        ({"v": {"type": "string", "x-mcp-header": "a:b"}}, "token"),
        ({"v": {"type": "string", "x-mcp-header": "Grüße"}}, "token"),
        ({"v": {"type": "number", "x-mcp-header": "V"}}, "type"),
        ({"v": {"type": "object", "x-mcp-header": "V"}}, "type"),
        ({"v": {"type": "null", "x-mcp-header": "V"}}, "type"),
        (
            {
                "a": {"type": "string", "x-mcp-header": "Same"},
                "b": {"type": "string", "x-mcp-header": "same"},
            },
            "repeats",
        ),
        ({"v": {"type": "array", "items": {"type": "string", "x-mcp-header": "V"}}}, "only"),
    ],
)
def test_tools_with_invalid_annotations_are_dropped_with_the_reason_logged(
    properties: dict[str, Any], reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    table = ToolHeaders()
    good = {"properties": {"r": {"type": "string", "x-mcp-header": "R"}}}
    bad = {"type": "object", "properties": properties}
    assert table.learn([("good", good), ("bad", bad)]) == {"bad"}
    assert "dropped tool 'bad'" in caplog.text and reason in caplog.text
    assert table.for_call("good", b'{"r": "x"}') == {"Mcp-Param-R": "x"}
    assert table.for_call("bad", b'{"v": "x"}') == {}


def test_the_transport_learns_what_an_outgoing_message_is() -> None:
    """From what the runtime handed the engine (method, id, params), not from the bytes."""
    params = types.CallToolParams(name="run", arguments={"a": 1}, meta={META_VERSION: "2026-07-28"})
    seen = sent("tools/call", 4, params)
    assert (seen.request_ids, seen.method, seen.protocol_version, seen.name) == (
        (4,),
        "tools/call",
        "2026-07-28",
        "run",
    )
    assert seen.arguments == {"a": 1}
    assert sent("resources/read", "r", {"uri": "f:/x"}).uri == "f:/x"
    cancel = {"requestId": 4, "reason": "gave up"}
    assert sent("notifications/cancelled", None, cancel).cancels == 4
    odd = sent("tools/call", 1, {"name": 5, "_meta": []})
    assert (odd.request_ids, odd.name, odd.protocol_version) == ((1,), None, None)
    assert sent(None, None, None).request_ids == ()  # a response of ours


# -- choosing the era ------------------------------------------------------------------


def test_era_and_version_options_are_checked() -> None:
    assert EraChoice.of("auto", None) == EraChoice("auto", MODERN_VERSION, SUPPORTED[0])
    assert EraChoice.of("legacy", None) == EraChoice("legacy", None, SUPPORTED[0])
    assert EraChoice.of("auto", "2025-06-18") == EraChoice("legacy", None, "2025-06-18")
    assert EraChoice.of("modern", MODERN_VERSION) == EraChoice("modern", MODERN_VERSION, None)
    with pytest.raises(ValueError, match="era must be one of"):
        EraChoice.of("newest", None)
    with pytest.raises(ValueError, match="none of ours"):
        EraChoice.of("auto", "1999-01-01")
    with pytest.raises(ValueError, match="legacy era, not modern"):
        EraChoice.of("modern", "2025-11-25")


def sdk_stdio_server() -> StdioTarget:
    return StdioTarget(sys.executable, (str(TESTS / "peers" / "sdk_server.py"),))


@asynccontextmanager
async def recorded_stdio(target: StdioTarget, **options: Any) -> AsyncIterator[Any]:
    """Our client over stdio to ``target``; yields (client, wire) and checks the wire at the
    end against the schema of the era the client ended in."""
    async with open_stdio_process(target.command, target.args, env=target.env) as stream:
        wire = WireRecorder(stream)
        async with open_client(wire, **options) as client:
            yield client, wire
            revision = client.protocol_version
    assert_all_valid(wire, revision)


async def test_our_client_speaks_the_modern_era_with_the_sdk_server_over_stdio() -> None:
    async with recorded_stdio(sdk_stdio_server()) as (client, wire):
        assert client.era == "modern"
        assert client.protocol_version == MODERN_VERSION
        assert client.discover_result is not None
        assert client.discover_result.supported_versions == [MODERN_VERSION]
        assert client.server_info == types.Implementation(name="sdk-peer", version="1.0.0")
        tools = await client.list_tools()
        assert {tool.name for tool in tools} == {"add", "echo", "slow"}
        assert (tools.ttl_ms, tools.cache_scope) == (0, "private")
        added = await client.call_tool("add", {"a": 2, "b": 3})
        assert added.content == [types.TextContent(text="5")]
        seen: list[float] = []
        done = await client.call_tool(
            "slow",
            {"steps": 2, "delay": 0.01},
            on_progress=lambda progress, total, message: seen.append(progress),
        )
        assert done.content == [types.TextContent(text="done after 2 steps")]
        assert seen == [1, 2]
        with pytest.raises(RequestTimeout):
            await client.call_tool("slow", {"steps": 50, "delay": 0.05}, timeout=0.2)
        again = await client.call_tool("echo", {"text": "still here"})
        assert again.content == [types.TextContent(text="still here")]
        sent = wire.sent_messages()
    requests = [m for m in sent if "id" in m and "method" in m]
    assert requests[0]["method"] == "server/discover"
    assert not [m for m in sent if m.get("method") in ("initialize", "notifications/initialized")]
    for request in requests:
        meta = request["params"]["_meta"]
        assert meta[META_VERSION] == MODERN_VERSION
        assert meta[META_CAPABILITIES] == {}
        assert meta[META_INFO] == {"name": "mcp-actors", "version": meta[META_INFO]["version"]}


async def test_our_client_speaks_the_modern_era_with_our_own_server() -> None:
    server = load_server(SAMPLE)
    async with open_client(server) as client:
        assert (client.era, client.protocol_version) == ("modern", MODERN_VERSION)
        assert client.server_info is not None and client.server_info.name == "sample"
        result = await client.call_tool("add", {"a": 1, "b": 2})
        assert result.structured_content == {"result": 3}


@pytest.mark.parametrize("mode", ["method-not-found", "invalid-params", "silent"])
async def test_any_other_answer_to_the_probe_means_legacy(mode: str, tmp_path: Path) -> None:
    log = tmp_path / "received.jsonl"
    target = StdioTarget(
        sys.executable,
        (str(TESTS / "peers" / "legacy_stdio_server.py"), mode),
        env={"LEGACY_PEER_LOG": str(log)},
    )
    async with recorded_stdio(target, discover_timeout=0.5) as (client, _):
        assert (client.era, client.protocol_version) == ("legacy", "2025-11-25")
        assert client.initialize_result is not None and client.discover_result is None
        assert client.server_info == types.Implementation(name="legacy-peer", version="0.1")
        result = await client.call_tool("echo", {"text": "hi"})
        assert result.content == [types.TextContent(text="hi")]
    received = [json.loads(line) for line in log.read_text().splitlines()]
    methods = [message.get("method") for message in received]
    assert methods[0] == "server/discover"
    assert methods.index("initialize") > 0
    assert "_meta" not in received[methods.index("tools/call")]["params"]


async def test_a_server_naming_only_legacy_versions_in_its_32022_gets_initialize() -> None:
    legacy_only = Server("legacy-only", supported_versions=SUPPORTED)

    @legacy_only.tool
    def hello() -> str:
        return "hello"

    async with open_client(legacy_only) as client:
        assert (client.era, client.protocol_version) == ("legacy", SUPPORTED[0])
        assert (await client.call_tool("hello")).content == [types.TextContent(text="hello")]


async def test_pinning_an_era_or_a_version() -> None:
    async with recorded_stdio(sdk_stdio_server(), era="legacy") as (client, wire):
        assert (client.era, client.protocol_version) == ("legacy", "2025-11-25")
        first = wire.sent_messages()[0]
        assert first["method"] == "initialize"  # no probe at all
    async with recorded_stdio(sdk_stdio_server(), protocol_version="2025-06-18") as (client, _):
        assert (client.era, client.protocol_version) == ("legacy", "2025-06-18")
    async with recorded_stdio(sdk_stdio_server(), era="modern") as (client, _):
        assert client.era == "modern"
    legacy_only = StdioTarget(
        sys.executable, (str(TESTS / "peers" / "legacy_stdio_server.py"), "method-not-found")
    )
    with pytest.raises(McpError, match="does not speak the modern era"):
        async with open_client(legacy_only, protocol_version=MODERN_VERSION):
            pass
    with pytest.raises(ValueError, match="none of ours"):
        async with open_client(legacy_only, protocol_version="2030-01-01"):
            pass


async def test_the_modern_log_level_travels_in_each_requests_meta() -> None:
    server = Server("logs")
    logs: list[types.LoggingMessageParams] = []

    @server.tool
    async def chatty(ctx: Context) -> str:
        await ctx.info("a message")
        return "done"

    async with open_client(server, handlers=ClientHandlers(on_log=logs.append)) as client:
        assert client.era == "modern"
        await client.call_tool("chatty")
        await trio.sleep(0.05)
        assert logs == []  # no level in _meta: the server sends none
        await client.set_logging_level("info")
        await client.call_tool("chatty")
        with trio.fail_after(5):
            while not logs:
                await trio.sleep(0.01)
    assert logs[0].data == "a message"


# -- Streamable HTTP: the SDK's server, and a scripted one ----------------------------


class _Started:
    def __init__(self, status: trio.TaskStatus[str]) -> None:
        self._status = status

    def started(self, binds: list[str]) -> None:
        self._status.started(binds[0])


async def _serve(app: Any, *, task_status: trio.TaskStatus[str]) -> None:
    config = hypercorn.config.Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    config.errorlog = logging.getLogger("modern-client-test.hypercorn")
    await hypercorn.trio.serve(app, config, task_status=_Started(task_status))


@asynccontextmanager
async def serving(app: Any) -> AsyncIterator[str]:
    async with trio.open_nursery() as nursery:
        yield await nursery.start(_serve, app)
        nursery.cancel_scope.cancel()


sdk_http_server = MCPServer("sdk-http-modern", version="2.0.0", log_level="WARNING")


@sdk_http_server.tool()
def shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper()


@SDK_SERVER_LEAKS
async def test_our_client_speaks_the_modern_era_with_the_sdk_server_over_http() -> None:
    async with (
        serving(sdk_http_server.streamable_http_app()) as base,
        open_streamable_http(base + "/mcp") as stream,
    ):
        wire = WireRecorder(stream)
        async with open_client(wire) as client:
            assert (client.era, client.protocol_version) == ("modern", MODERN_VERSION)
            assert client.server_info is not None and client.server_info.name == "sdk-http-modern"
            assert [tool.name for tool in await client.list_tools()] == ["shout"]
            shouted = await client.call_tool("shout", {"text": "héllo"})
            assert shouted.content == [types.TextContent(text="HÉLLO")]
        assert stream.session_id is None  # no session in this era
        assert_all_valid(wire, MODERN_VERSION)


Answer = Callable[[dict[str, Any], dict[str, str]], tuple[int, Any]]


class ScriptedServer:
    """An ASGI app that answers each POSTed JSON-RPC message with ``answer(message,
    headers) -> (status, body)`` and records what came (GET and DELETE: 405)."""

    def __init__(self, answer: Answer, session_id: str | None = None) -> None:
        self.answer = answer
        #: Sent as ``Mcp-Session-Id`` on every answer (a legacy server's session).
        self.session_id = session_id
        #: A method answered with an event stream that never ends, until the client
        #: disconnects (then :attr:`disconnected` is set).
        self.hold: str | None = None
        self.disconnected = trio.Event()
        self.received: list[tuple[dict[str, str], dict[str, Any]]] = []

    def methods(self) -> list[str]:
        return [message.get("method", "") for _, message in self.received]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        headers: dict[str, str] = {}
        for name, value in scope["headers"]:
            key = name.decode("latin-1").lower()
            assert key not in headers or key == "accept", f"header {key} sent twice"
            headers[key] = value.decode("latin-1")
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        if scope["method"] != "POST":
            await self._respond(send, 405, None)
            return
        message = json.loads(body)
        self.received.append((headers, message))
        if message.get("method") == self.hold:
            stream = [(b"content-type", b"text/event-stream")]
            await send({"type": "http.response.start", "status": 200, "headers": stream})
            await send({"type": "http.response.body", "body": b": open\n\n", "more_body": True})
            while (await receive())["type"] != "http.disconnect":
                pass
            self.disconnected.set()
            return
        status, reply = self.answer(message, headers)
        await self._respond(send, status, reply)

    async def _respond(self, send: Any, status: int, reply: Any) -> None:
        body = b"" if reply is None else json.dumps(reply).encode()
        headers = [(b"content-type", b"application/json")] if reply is not None else []
        if self.session_id is not None:
            headers.append((b"mcp-session-id", self.session_id.encode()))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def result(message: dict[str, Any], value: dict[str, Any]) -> tuple[int, Any]:
    return 200, {"jsonrpc": "2.0", "id": message["id"], "result": value}


def error(message: dict[str, Any], status: int, code: int, text: str, data: Any = None) -> Any:
    body: dict[str, Any] = {"code": code, "message": text}
    if data is not None:
        body["data"] = data
    return status, {"jsonrpc": "2.0", "id": message["id"], "error": body}


DISCOVERED = {
    "supportedVersions": [MODERN_VERSION],
    "capabilities": {"tools": {}, "resources": {}},
    "ttlMs": 60000,
    "cacheScope": "public",
}
ANNOTATED = {
    "name": "execute_sql",
    "inputSchema": {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "limit": {"type": "integer", "x-mcp-header": "Limit"},
            "dry": {"type": "boolean", "x-mcp-header": "Dry"},
            "query": {"type": "string"},
        },
    },
}
INVALID = {
    "name": "broken",
    "inputSchema": {"properties": {"ratio": {"type": "number", "x-mcp-header": "Ratio"}}},
}


def modern_server(message: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
    """A modern server that leaves ``resultType`` out, as servers before it did."""
    method, params = message.get("method"), message.get("params", {})
    if "id" not in message:
        return 202, None
    if method == "server/discover":
        return result(message, {**DISCOVERED, "serverInfo": {"name": "scripted", "version": "1"}})
    if method == "tools/list":
        if params.get("cursor") is None:
            page = {"tools": [ANNOTATED], "nextCursor": "2", "ttlMs": 5000, "cacheScope": "public"}
            return result(message, page)
        return result(message, {"tools": [INVALID], "ttlMs": 1000, "cacheScope": "private"})
    if method == "tools/call":
        text = json.dumps(params.get("arguments"))
        return result(message, {"content": [{"type": "text", "text": text}]})
    if method == "resources/read":
        contents = [{"uri": params["uri"], "text": "x"}]
        return result(message, {"contents": contents, "ttlMs": 10, "cacheScope": "private"})
    return error(message, 404, -32601, f"Method not found: {method}")


async def test_routing_headers_and_meta_on_every_modern_post(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = ScriptedServer(modern_server)
    async with serving(app) as base, open_client(base + "/mcp", era="modern") as client:
        assert client.server_info == types.Implementation(name="scripted", version="1")
        assert client.discover_result is not None
        assert (client.discover_result.ttl_ms, client.discover_result.cache_scope) == (
            60000,
            "public",
        )
        tools = await client.list_tools()
        assert [tool.name for tool in tools] == ["execute_sql"]  # "broken" is dropped
        assert (tools.ttl_ms, tools.cache_scope) == (1000, "private")
        await client.call_tool(
            "execute_sql", {"region": "Zürich", "limit": 10, "dry": None, "query": "SELECT 1"}
        )
        await client.call_tool("execute_sql", {"region": "us-west1", "dry": False})
        read = await client.read_resource("file:///a b.txt")
        assert (read.ttl_ms, read.cache_scope) == (10, "private")
    assert "dropped tool 'broken'" in caplog.text and "needs type" in caplog.text
    assert app.methods() == [
        "server/discover",
        "tools/list",
        "tools/list",
        "tools/call",
        "tools/call",
        "resources/read",
    ]
    for headers, message in app.received:
        assert headers["mcp-protocol-version"] == MODERN_VERSION
        assert headers["mcp-method"] == message["method"]
        assert "mcp-session-id" not in headers
        assert "application/json" in headers["accept"] and "text/event-stream" in headers["accept"]
        assert message["params"]["_meta"][META_VERSION] == MODERN_VERSION
        validate_message(MODERN_VERSION, message)
    (first_call, _), (second_call, _) = app.received[3], app.received[4]
    assert first_call["mcp-name"] == "execute_sql"
    assert first_call["mcp-param-region"] == "=?base64?WsO8cmljaA==?="
    assert first_call["mcp-param-limit"] == "10"
    assert "mcp-param-dry" not in first_call  # null: omitted
    assert second_call["mcp-param-dry"] == "false" and "mcp-param-limit" not in second_call
    assert not any(key.startswith("mcp-param-") for key in app.received[5][0])
    assert app.received[5][0]["mcp-name"] == "file:///a b.txt"
    assert "mcp-name" not in app.received[1][0]


async def test_a_32022_earns_one_retry_at_a_version_we_speak() -> None:
    refused: set[str] = set()

    def picky(message: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
        method = message["method"]
        if method not in refused:  # the first request of each method: "try again"
            refused.add(method)
            data = {"supported": ["1999-01-01", MODERN_VERSION], "requested": MODERN_VERSION}
            return error(message, 400, -32022, "Unsupported protocol version", data)
        return modern_server(message, headers)

    app = ScriptedServer(picky)
    async with serving(app) as base, open_client(base + "/mcp") as client:
        assert client.era == "modern"
        result_ = await client.call_tool("execute_sql", {"query": "x"})
        assert result_.content[0] == types.TextContent(text='{"query": "x"}')
    assert app.methods() == ["server/discover"] * 2 + ["tools/call"] * 2


async def test_a_32022_without_a_version_of_ours_is_an_error_not_a_fallback() -> None:
    def foreign(message: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
        data = {"supported": ["2099-01-01"], "requested": MODERN_VERSION}
        return error(message, 400, -32022, "Unsupported protocol version", data)

    app = ScriptedServer(foreign)
    async with serving(app) as base:
        with pytest.raises(McpError, match="none of our versions") as raised:
            async with open_client(base + "/mcp"):
                pass
    assert raised.value.code == -32022
    assert app.methods() == ["server/discover"]  # no initialize, no GET


@pytest.mark.parametrize(
    ("result_type", "problem"),
    [
        ("input_required", "without inputRequests or requestState"),
        ("task_maybe", "unknown resultType"),
    ],
)
async def test_a_result_that_is_not_complete_is_refused(result_type: str, problem: str) -> None:
    def incomplete(message: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
        if message["method"] == "tools/call":
            return result(message, {"resultType": result_type, "content": []})
        return modern_server(message, headers)

    async with serving(ScriptedServer(incomplete)) as base, open_client(base + "/mcp") as client:
        with pytest.raises(McpError, match=problem):
            await client.call_tool("execute_sql", {})


async def test_cancelling_a_modern_http_request_closes_its_stream_and_posts_nothing() -> None:
    app = ScriptedServer(modern_server)
    app.hold = "tools/call"
    async with serving(app) as base, open_client(base + "/mcp") as client:
        with pytest.raises(RequestTimeout):
            await client.call_tool("execute_sql", {}, timeout=0.3)
        with trio.fail_after(5):
            await app.disconnected.wait()  # the server saw the response stream close
        assert (await client.read_resource("file:///x")).contents[0].text == "x"
    assert "notifications/cancelled" not in app.methods()


async def test_a_json_rpc_error_in_a_400_to_initialize_is_what_the_caller_sees() -> None:
    def refusing(message: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
        return error(message, 400, -32602, "Unsupported protocol version 2025-11-25: use 1.0")

    app = ScriptedServer(refusing)
    async with serving(app) as base:
        with pytest.raises(McpError, match=r"use 1\.0") as raised:
            async with open_client(base + "/mcp", era="legacy"):
                pass
    assert raised.value.code == -32602
    assert app.methods() == ["initialize"]


async def test_a_modern_refusal_of_initialize_is_not_a_reason_to_try_http_sse() -> None:
    def modern_only(message: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
        return error(message, 404, -32601, "Method not found: initialize (speaks 2026-07-28)")

    async with serving(ScriptedServer(modern_only)) as base:
        with pytest.raises(McpError, match="speaks 2026-07-28") as raised:
            async with open_client(base + "/mcp", era="legacy"):
                pass
    assert raised.value.code == -32601


def legacy_server(message: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
    """A Streamable HTTP server of 2025-11-25: a session first, and no server/discover."""
    method = message.get("method")
    if "id" not in message:
        return 202, None
    if method == "initialize":
        initialized = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "legacy-http", "version": "1"},
        }
        return result(message, initialized)
    if "mcp-session-id" not in headers:
        return 400, {"jsonrpc": "2.0", "error": {"code": -32600, "message": "no session"}}
    return modern_server(message, headers)


async def test_a_legacy_http_server_gets_initialize_after_the_probe() -> None:
    app = ScriptedServer(legacy_server, session_id="s-1")
    async with serving(app) as base, open_client(base + "/mcp") as client:
        assert (client.era, client.protocol_version) == ("legacy", "2025-11-25")
        called = await client.call_tool("execute_sql", {"region": "x"})
        assert called.content == [types.TextContent(text='{"region": "x"}')]
    assert app.methods() == [
        "server/discover",
        "initialize",
        "notifications/initialized",
        "tools/call",
    ]
    call_headers = app.received[-1][0]
    assert call_headers["mcp-session-id"] == "s-1"
    assert call_headers["mcp-protocol-version"] == "2025-11-25"
    assert "mcp-method" not in call_headers and "mcp-name" not in call_headers
    assert "_meta" not in app.received[-1][1]["params"]


async def test_our_client_and_our_http_server_agree_on_every_routing_header() -> None:
    from mcp_actors.server.serve_http import serve_http
    from mcp_actors_everything.server import create

    async with trio.open_nursery() as nursery:
        handle = await nursery.start(partial(serve_http, create(), port=0))
        async with open_streamable_http(handle.url) as stream:
            wire = WireRecorder(stream)
            async with open_client(wire) as client:
                assert (client.era, client.protocol_version) == ("modern", MODERN_VERSION)
                tools = {tool.name for tool in await client.list_tools()}
                assert "test_header_echo" in tools
                # the server refuses (-32020) a call whose Mcp-Param-Region is missing or wrong
                for region in ("us-west1", " padded ", "Zürich", "=?base64?x?=", ""):
                    echoed = await client.call_tool("test_header_echo", {"region": region})
                    assert echoed.content == [types.TextContent(text=region)]
                assert stream.session_id is None
            assert_all_valid(wire, MODERN_VERSION)
            assert_all_valid(wire.peer(), MODERN_VERSION)
        nursery.cancel_scope.cancel()


def test_the_sync_and_asyncio_fronts_say_the_era_and_pass_the_options() -> None:
    import asyncio

    from mcp_actors import aio, sync

    with sync.open_client(load_server(SAMPLE)) as client:
        assert (client.era, client.protocol_version) == ("modern", MODERN_VERSION)
        tools = client.list_tools()
        assert (tools.ttl_ms, tools.cache_scope) == (0, "private")

    async def pinned() -> tuple[str, str]:
        async with aio.open_client(load_server(SAMPLE), protocol_version="2025-06-18") as client:
            return client.era, client.protocol_version

    assert asyncio.run(pinned()) == ("legacy", "2025-06-18")
