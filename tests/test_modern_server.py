"""The 2026-07-28 ("modern") era, server side, over stdio and the in-memory transport.

A raw JSON-RPC peer speaks to the ``everything`` server the way a modern client does:
no ``initialize``, the version and capabilities in each request's ``_meta``. Every
message the server writes is validated against the official 2026-07-28 schema (legacy
exchanges on the same connection against their revision's).
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio

from mcp_actors import (
    MODERN,
    SUPPORTED,
    CacheHint,
    Context,
    McpError,
    MessageStream,
    Outgoing,
    Server,
    memory_pair,
    types,
)
from mcp_actors.testing.wire import WireRecorder, validate_message
from mcp_actors.transports.stdio import open_stdio_process
from mcp_actors_everything.server import JSON_SCHEMA_2020_12_INPUT
from mcp_actors_everything.server import create as create_everything

TESTS = Path(__file__).parent
MODERN_VERSION = "2026-07-28"
CLIENT_INFO = {"name": "raw-modern-peer", "version": "1.0.0"}
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
TRANSPORTS = ("memory", "stdio")


def modern_meta(
    capabilities: dict[str, Any] | None = None,
    *,
    version: str = MODERN_VERSION,
    log_level: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        **extra,
    }
    if log_level is not None:
        meta["io.modelcontextprotocol/logLevel"] = log_level
    return meta


class RawPeer:
    """A client written by hand: sends JSON-RPC lines, collects what comes back by id.

    Every message received is validated against the schema of the revision the
    request it answers (or relates to) spoke: 2026-07-28 for a modern one.
    """

    def __init__(self, stream: MessageStream) -> None:
        self.stream = stream
        self._ids = itertools.count(1)
        #: id -> revision of the request sent with it (for validation of its answer)
        self._revisions: dict[Any, str] = {}
        self._requests: dict[Any, dict[str, Any]] = {}
        self.received: list[dict[str, Any]] = []

    async def send(self, message: dict[str, Any]) -> None:
        await self.stream.send_all([Outgoing(json.dumps(message).encode())])

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        revision: str = MODERN_VERSION,
        request_id: Any = None,
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Send a request; its response and the notifications that came before it."""
        request_id = next(self._ids) if request_id is None else request_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self._revisions[request_id] = revision
        self._requests[request_id] = message
        await self.send(message)
        notifications = []
        with trio.fail_after(10):
            while True:
                received = json.loads(await self.stream.receive())
                self.received.append(received)
                self._validate(received)
                if "method" in received:
                    notifications.append(received)
                    continue
                if received.get("id") == request_id:
                    return received, notifications

    async def modern(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        capabilities: dict[str, Any] | None = None,
        log_level: str | None = None,
        **meta: Any,
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        params = dict(params or {})
        params["_meta"] = modern_meta(capabilities, log_level=log_level, **meta)
        return await self.request(method, params)

    async def initialize(self, version: str = "2025-11-25") -> dict[str, Any]:
        response, _ = await self.request(
            "initialize",
            {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT_INFO},
            revision=version,
        )
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return response

    def _validate(self, message: dict[str, Any]) -> None:
        related = message.get("id")
        if related is None:  # a notification: validate at the revision of its request
            related = next(reversed(self._revisions), None)
        revision = self._revisions.get(related, MODERN_VERSION)
        validate_message(revision, message, in_reply_to=self._requests.get(related))


@asynccontextmanager
async def raw_peer(transport: str, server: Server | None = None) -> AsyncIterator[RawPeer]:
    """A raw peer talking to ``server`` (default: a fresh ``everything``) over ``transport``."""
    if transport == "stdio":
        assert server is None, "over stdio the server is the everything plugin"
        command = (sys.executable, "-m", "mcp_actors.cli", "run", "everything")
        async with open_stdio_process(command[0], command[1:], cwd=str(TESTS)) as stream:
            yield RawPeer(WireRecorder(stream))
        return
    client_end, server_end = memory_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon((server or create_everything()).serve_session, server_end)
        yield RawPeer(client_end)
        nursery.cancel_scope.cancel()


def result_of(response: dict[str, Any]) -> dict[str, Any]:
    assert "result" in response, f"expected a result, got {response}"
    result: dict[str, Any] = response["result"]
    return result


def error_of(response: dict[str, Any]) -> dict[str, Any]:
    assert "error" in response, f"expected an error, got {response}"
    error: dict[str, Any] = response["error"]
    return error


# -- server/discover ---------------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_discover_answers_the_modern_probe(transport: str) -> None:
    async with raw_peer(transport) as peer:
        response, _ = await peer.modern("server/discover")
    result = result_of(response)
    assert result["resultType"] == "complete"
    assert result["supportedVersions"] == list(MODERN)
    assert result["_meta"][SERVER_INFO_KEY] == {"name": "mcp-actors-everything", "version": "0.1.0"}
    assert result["ttlMs"] == 0 and result["cacheScope"] == "private"
    assert result["instructions"]
    capabilities = result["capabilities"]
    assert {"tools", "prompts", "resources", "completions", "logging"} <= set(capabilities)
    # what subscriptions/listen delivers (tests/test_listen.py)
    assert "tasks" not in capabilities
    assert capabilities["tools"] == {"listChanged": True}
    assert capabilities["prompts"] == {"listChanged": True}
    assert capabilities["resources"] == {"subscribe": True, "listChanged": True}


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_discover_without_client_info_is_served(transport: str) -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    async with raw_peer(transport) as peer:
        response, _ = await peer.request("server/discover", {"_meta": meta})
    assert result_of(response)["supportedVersions"] == list(MODERN)


# -- the validation ladder ---------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_missing_meta_keys_are_named_in_a_32602(transport: str) -> None:
    only_version = {"io.modelcontextprotocol/protocolVersion": MODERN_VERSION}
    only_capabilities = {"io.modelcontextprotocol/clientCapabilities": {}}
    async with raw_peer(transport) as peer:
        no_caps, _ = await peer.request("server/discover", {"_meta": only_version})
        no_version, _ = await peer.request("tools/list", {"_meta": only_capabilities})
    error = error_of(no_caps)
    assert error["code"] == -32602
    assert "io.modelcontextprotocol/clientCapabilities" in error["message"]
    error = error_of(no_version)
    assert error["code"] == -32602
    assert "io.modelcontextprotocol/protocolVersion" in error["message"]


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("params", [{}, None], ids=["empty", "absent"])
async def test_a_bare_discover_is_modern_and_gets_32602(
    transport: str, params: dict[str, Any] | None
) -> None:
    """server/discover exists only in the modern era: without _meta it fails rung 1."""
    async with raw_peer(transport) as peer:
        response, _ = await peer.request("server/discover", params, request_id=101)
    assert response["id"] == 101
    assert error_of(response)["code"] == -32602


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_unsupported_version_is_32022_with_supported_and_requested(transport: str) -> None:
    async with raw_peer(transport) as peer:
        response, _ = await peer.request(
            "server/discover", {"_meta": modern_meta(version="v999.0.0")}, request_id=301
        )
    error = error_of(response)
    assert response["id"] == 301
    assert error["code"] == -32022
    assert error["data"] == {"supported": list(MODERN), "requested": "v999.0.0"}


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize(
    "method",
    [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "unknown/method",
    ],
)
async def test_methods_the_modern_era_lacks_are_32601(transport: str, method: str) -> None:
    async with raw_peer(transport) as peer:
        response, _ = await peer.modern(method, {"uri": "test://static-text", "level": "info"})
    assert error_of(response)["code"] == -32601


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_invalid_log_level_is_32602(transport: str) -> None:
    async with raw_peer(transport) as peer:
        response, _ = await peer.modern("tools/list", log_level="loud")
    error = error_of(response)
    assert error["code"] == -32602
    assert "io.modelcontextprotocol/logLevel" in error["message"]


# -- results of the modern era -----------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_list_results_carry_result_type_cache_hints_and_server_info(transport: str) -> None:
    async with raw_peer(transport) as peer:
        results = {
            method: result_of((await peer.modern(method))[0])
            for method in (
                "tools/list",
                "prompts/list",
                "resources/list",
                "resources/templates/list",
            )
        }
        read = result_of((await peer.modern("resources/read", {"uri": "test://static-text"}))[0])
    for result in (*results.values(), read):
        assert result["resultType"] == "complete"
        assert result["ttlMs"] == 0 and result["cacheScope"] == "private"
        assert result["_meta"][SERVER_INFO_KEY]["name"] == "mcp-actors-everything"
    assert read["contents"][0]["uri"] == "test://static-text"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_tools_list_order_and_schemas_are_as_registered(transport: str) -> None:
    server = create_everything()
    async with raw_peer(transport) as peer:
        listed = result_of((await peer.modern("tools/list"))[0])["tools"]
    names = [tool["name"] for tool in listed]
    assert names == list(server.tools)  # registration order, every time
    assert names[0] == "test_simple_text"
    by_name = {tool["name"]: tool for tool in listed}
    assert by_name["json_schema_2020_12_tool"]["inputSchema"] == JSON_SCHEMA_2020_12_INPUT
    region = by_name["test_header_echo"]["inputSchema"]["properties"]["region"]
    assert region == {"type": "string", "x-mcp-header": "Region"}


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_tool_call_result_is_complete_and_legacy_results_stay_untouched(
    transport: str,
) -> None:
    """One connection, both eras: a modern call before and after a legacy session opens."""
    async with raw_peer(transport) as peer:
        before = result_of((await peer.modern("tools/call", {"name": "test_simple_text"}))[0])
        initialized = result_of(await peer.initialize("2025-11-25"))
        legacy, _ = await peer.request(
            "tools/call", {"name": "test_simple_text"}, revision="2025-11-25"
        )
        legacy_list, _ = await peer.request("tools/list", {}, revision="2025-11-25")
        after = result_of((await peer.modern("tools/call", {"name": "test_simple_text"}))[0])
    assert initialized["protocolVersion"] == "2025-11-25"
    for modern in (before, after):
        assert modern["resultType"] == "complete"
        assert modern["content"][0]["text"] == "This is a simple text response for testing."
        assert SERVER_INFO_KEY in modern["_meta"]
    for result in (result_of(legacy), result_of(legacy_list)):
        assert not {"resultType", "ttlMs", "cacheScope", "_meta"} & set(result)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_progress_reaches_a_modern_request(transport: str) -> None:
    async with raw_peer(transport) as peer:
        response, notifications = await peer.modern(
            "tools/call", {"name": "test_tool_with_progress"}, progressToken="progress-test-1"
        )
    assert result_of(response)["content"][0]["text"] == "progress-test-1"
    progress = [n["params"] for n in notifications if n["method"] == "notifications/progress"]
    assert [p["progress"] for p in progress] == [0, 50, 100]
    assert {p["progressToken"] for p in progress} == {"progress-test-1"}


# -- errors of the revision --------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_undeclared_client_capability_is_32021(transport: str) -> None:
    async with raw_peer(transport) as peer:
        response, notifications = await peer.modern(
            "tools/call", {"name": "test_missing_capability"}, request_id=401
        )
    error = error_of(response)
    assert error["code"] == -32021
    assert error["data"] == {"requiredCapabilities": {"sampling": {}}}
    assert notifications == []  # and no sampling request went out


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_declared_capability_asks_inside_the_result(transport: str) -> None:
    async with raw_peer(transport) as peer:
        response, notifications = await peer.modern(
            "tools/call", {"name": "test_missing_capability"}, capabilities={"sampling": {}}
        )
        elicitation, _ = await peer.modern(
            "tools/call", {"name": "test_streaming_elicitation"}, capabilities={"elicitation": {}}
        )
    asked = result_of(response)
    assert asked["resultType"] == "input_required"  # MRTR: no request is sent to the client
    assert [r["method"] for r in asked["inputRequests"].values()] == ["sampling/createMessage"]
    assert notifications == []
    assert result_of(elicitation)["resultType"] == "input_required"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_unknown_resource_is_32602_with_uri_modern_and_32002_legacy(transport: str) -> None:
    uri = "test://nonexistent-resource-for-conformance-testing"
    async with raw_peer(transport) as peer:
        modern, _ = await peer.modern("resources/read", {"uri": uri})
        await peer.initialize("2025-11-25")
        legacy, _ = await peer.request("resources/read", {"uri": uri}, revision="2025-11-25")
    assert error_of(modern)["code"] == -32602
    assert error_of(modern)["data"]["uri"] == uri
    assert error_of(legacy)["code"] == -32002


# -- logging ---------------------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize(("level", "expected"), [(None, 0), ("info", 2), ("error", 0)])
async def test_log_messages_follow_the_request_log_level(
    transport: str, level: str | None, expected: int
) -> None:
    async with raw_peer(transport) as peer:
        response, notifications = await peer.modern(
            "tools/call", {"name": "test_logging_tool"}, log_level=level
        )
    assert result_of(response)["content"][0]["text"] == "Logging tool executed"
    messages = [n for n in notifications if n["method"] == "notifications/message"]
    assert len(messages) == expected
    assert all(m["params"]["level"] == "info" for m in messages)


# -- server options ----------------------------------------------------------------------


def _small_server(**options: Any) -> Server:
    server = Server("small", "2.0", **options)

    @server.tool
    async def hello() -> str:
        "Say hello."
        return "hello"

    @server.resource("test://one", cache=CacheHint(5_000, "public"))
    async def one() -> str:
        return "one"

    @server.resource("test://two")
    async def two() -> str:
        return "two"

    return server


async def test_cache_hints_per_server_method_and_resource() -> None:
    server = _small_server(cache=CacheHint(1_000, "private"))
    server.set_cache_hint("tools/list", CacheHint(60_000, "public"))
    async with raw_peer("memory", server) as peer:
        tools = result_of((await peer.modern("tools/list"))[0])
        discover = result_of((await peer.modern("server/discover"))[0])
        one = result_of((await peer.modern("resources/read", {"uri": "test://one"}))[0])
        two = result_of((await peer.modern("resources/read", {"uri": "test://two"}))[0])
    assert (tools["ttlMs"], tools["cacheScope"]) == (60_000, "public")
    assert (discover["ttlMs"], discover["cacheScope"]) == (1_000, "private")
    assert (one["ttlMs"], one["cacheScope"]) == (5_000, "public")
    assert (two["ttlMs"], two["cacheScope"]) == (1_000, "private")
    assert discover["_meta"][SERVER_INFO_KEY] == {"name": "small", "version": "2.0"}


def test_cache_hint_settings_are_checked() -> None:
    server = _small_server()
    with pytest.raises(ValueError, match="carry no caching hints"):
        server.set_cache_hint("tools/call", CacheHint())
    with pytest.raises(ValueError, match="ttl_ms"):
        CacheHint(-1)
    with pytest.raises(ValueError, match="scope"):
        CacheHint(0, "shared")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="supported_versions"):
        Server("x", supported_versions=("2099-01-01",))


async def test_a_modern_only_server_refuses_initialize_naming_its_versions() -> None:
    async with raw_peer("memory", _small_server(supported_versions=MODERN)) as peer:
        refused = await peer.initialize("2025-11-25")
        served = result_of((await peer.modern("tools/call", {"name": "hello"}))[0])
        discover = result_of((await peer.modern("server/discover"))[0])
    error = error_of(refused)
    assert error["code"] == -32022
    assert error["data"] == {"supported": list(MODERN), "requested": "2025-11-25"}
    assert "2026-07-28" in error["message"]
    assert served["content"][0]["text"] == "hello"
    assert discover["supportedVersions"] == list(MODERN)


async def test_a_legacy_only_server_refuses_modern_requests_naming_its_versions() -> None:
    async with raw_peer("memory", _small_server(supported_versions=SUPPORTED)) as peer:
        refused, _ = await peer.modern("server/discover")
        initialized = result_of(await peer.initialize("2025-06-18"))
    error = error_of(refused)
    assert error["code"] == -32022
    assert error["data"] == {"supported": list(SUPPORTED), "requested": MODERN_VERSION}
    assert initialized["protocolVersion"] == "2025-06-18"


async def test_handlers_cannot_reach_the_client_from_a_modern_request() -> None:
    server = Server("asks")
    outcomes: list[str] = []

    @server.tool
    async def ask(ctx: Context) -> str:
        for call in (ctx.list_roots, lambda: ctx.request("custom/method")):
            try:
                await call()
            except McpError as error:
                outcomes.append(f"{error.code}")
        return "done"

    async with raw_peer("memory", server) as peer:
        response, notifications = await peer.modern("tools/call", {"name": "ask"})
    assert result_of(response)["content"][0]["text"] == "done"
    assert outcomes == ["-32021", "-32600"]
    assert notifications == []


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_notifications_cancelled_stops_a_modern_request(transport: str) -> None:
    async with raw_peer(transport) as peer:
        params = {"name": "cancellable_job", "arguments": {"job": "j1", "seconds": 30}}
        params["_meta"] = modern_meta()
        await peer.send({"jsonrpc": "2.0", "id": 77, "method": "tools/call", "params": params})
        status: dict[str, Any] = {}
        with trio.fail_after(10):
            while status.get("state") != "running":
                response, _ = await peer.modern(
                    "tools/call", {"name": "job_status", "arguments": {"job": "j1"}}
                )
                status = result_of(response)["structuredContent"]
            await peer.send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": 77, "reason": "changed my mind"},
                }
            )
            while status.get("state") == "running":
                response, _ = await peer.modern(
                    "tools/call", {"name": "job_status", "arguments": {"job": "j1"}}
                )
                status = result_of(response)["structuredContent"]
    assert status == {"job": "j1", "state": "cancelled", "leases_held": 0}
    assert all(message.get("id") != 77 for message in peer.received)  # never answered


async def test_structured_content_may_be_any_json_value_only_in_the_modern_era() -> None:
    server = Server("lists")

    @server.tool
    async def numbers() -> types.CallToolResult:
        "Numbers, structured as a list."
        return types.CallToolResult(
            content=[types.TextContent(text="1 2")], structured_content=[1, 2]
        )

    async with raw_peer("memory", server) as peer:
        modern, _ = await peer.modern("tools/call", {"name": "numbers"})
        await peer.initialize("2025-11-25")
        legacy, _ = await peer.request("tools/call", {"name": "numbers"}, revision="2025-11-25")
    assert result_of(modern)["structuredContent"] == [1, 2]
    error = error_of(legacy)
    assert error["code"] == -32603 and "only a JSON object" in error["message"]
