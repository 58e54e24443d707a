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

from mcp_actors import Server
from mcp_actors.protocol.versions import MODERN, SUPPORTED
from mcp_actors.server.caching import CacheHint
from mcp_actors.testing.wire import WireRecorder, validate_message
from mcp_actors.transports.abc import MessageStream, Outgoing
from mcp_actors.transports.memory import memory_pair
from mcp_actors.transports.stdio import open_stdio_process
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
    # no subscriptions/listen yet: nothing may promise list_changed or subscribe
    assert "tasks" not in capabilities
    assert capabilities["tools"] == {} and capabilities["prompts"] == {}
    assert capabilities["resources"] == {}


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
        "subscriptions/listen",
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
