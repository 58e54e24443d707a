"""protocol/modern.py and the era-keyed tables, sans I/O: the ladder's rungs one by one."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from mcp_actors.protocol import types as t
from mcp_actors.protocol.errors import McpError
from mcp_actors.protocol.methods import method_table
from mcp_actors.protocol.modern import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
    PROTOCOL_VERSION_KEY,
    admit,
    check_version,
    is_modern_method,
    is_modern_request,
    read_request_meta,
)
from mcp_actors.protocol.versions import (
    ALL,
    MODERN,
    REVISIONS,
    SUPPORTED,
    is_modern,
    negotiate,
)


def raw(params: Any) -> msgspec.Raw:
    return msgspec.Raw(json.dumps(params).encode())


def meta(**extra: Any) -> dict[str, Any]:
    return {
        "_meta": {
            PROTOCOL_VERSION_KEY: "2026-07-28",
            CLIENT_CAPABILITIES_KEY: {"sampling": {}, "roots": {"listChanged": True}},
            **extra,
        }
    }


def test_eras() -> None:
    assert MODERN == ("2026-07-28",) and ALL == MODERN + SUPPORTED
    assert is_modern("2026-07-28")
    assert not any(is_modern(version) for version in SUPPORTED)
    assert not is_modern("v999.0.0")


@pytest.mark.parametrize(
    ("params", "modern"),
    [
        (meta(), True),
        ({"_meta": {PROTOCOL_VERSION_KEY: "x"}}, True),
        ({"_meta": {CLIENT_CAPABILITIES_KEY: {}}}, True),
        ({"_meta": {"progressToken": 1}}, False),
        ({"name": "io.modelcontextprotocol/protocolVersion"}, False),  # not in _meta
        ({"_meta": "io.modelcontextprotocol/protocolVersion"}, False),
        ([1, 2], False),
        ({}, False),
    ],
)
def test_is_modern_request(params: Any, modern: bool) -> None:
    assert is_modern_request(raw(params)) is modern


def test_an_escaped_slash_in_a_key_still_marks_a_modern_request() -> None:
    escaped = b'{"_meta":{"io.modelcontextprotocol\\/protocolVersion":"2026-07-28"}}'
    assert is_modern_request(msgspec.Raw(escaped))
    assert not is_modern_request(msgspec.UNSET)


def test_only_discover_is_a_modern_only_method() -> None:
    assert is_modern_method("server/discover")
    assert not is_modern_method("tools/list")
    assert not is_modern_method("initialize")


def test_read_request_meta_reads_every_key() -> None:
    params = meta(**{CLIENT_INFO_KEY: {"name": "c", "version": "1"}, LOG_LEVEL_KEY: "warning"})
    read = read_request_meta(raw(params))
    assert read.version == "2026-07-28"
    assert read.client_capabilities == t.ClientCapabilities(
        sampling={}, roots=t.RootsCapability(list_changed=True)
    )
    assert read.client_info == t.Implementation(name="c", version="1")
    assert read.log_level == "warning"
    bare = read_request_meta(raw(meta()))
    assert bare.client_info is None and bare.log_level is None


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({}, "params._meta is required"),
        ({"_meta": {CLIENT_CAPABILITIES_KEY: {}}}, PROTOCOL_VERSION_KEY),
        ({"_meta": {PROTOCOL_VERSION_KEY: "2026-07-28"}}, CLIENT_CAPABILITIES_KEY),
        ({"_meta": {PROTOCOL_VERSION_KEY: 7, CLIENT_CAPABILITIES_KEY: {}}}, "must be a string"),
        ({"_meta": {PROTOCOL_VERSION_KEY: "x", CLIENT_CAPABILITIES_KEY: []}}, "Expected `object`"),
        (meta(**{CLIENT_INFO_KEY: {"name": "no version"}}), CLIENT_INFO_KEY),
        (meta(**{LOG_LEVEL_KEY: "loud"}), LOG_LEVEL_KEY),
    ],
)
def test_read_request_meta_names_what_is_wrong(params: Any, named: str) -> None:
    with pytest.raises(McpError) as raised:
        read_request_meta(raw(params))
    assert raised.value.code == -32602
    assert named in raised.value.message


def test_check_version() -> None:
    good = read_request_meta(raw(meta()))
    assert check_version(good, ALL) is REVISIONS["2026-07-28"]
    with pytest.raises(McpError) as raised:
        check_version(read_request_meta(raw(meta(**{PROTOCOL_VERSION_KEY: "v9"}))), ALL)
    assert raised.value.code == -32022
    assert raised.value.data == {"supported": ["2026-07-28"], "requested": "v9"}
    with pytest.raises(McpError) as raised:  # a handshake version sent per request
        check_version(read_request_meta(raw(meta(**{PROTOCOL_VERSION_KEY: "2025-11-25"}))), ALL)
    assert raised.value.code == -32022
    with pytest.raises(McpError) as raised:  # a legacy-only server lists what it has
        check_version(good, SUPPORTED)
    assert raised.value.data == {"supported": list(SUPPORTED), "requested": "2026-07-28"}


def test_the_modern_method_table() -> None:
    modern = method_table(REVISIONS["2026-07-28"])
    legacy = method_table(REVISIONS["2025-11-25"])
    dropped = {
        "initialize",
        "notifications/initialized",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "sampling/createMessage",
        "elicitation/create",
        "roots/list",
        "notifications/roots/list_changed",
        "notifications/elicitation/complete",
    }
    assert dropped <= set(legacy)
    assert not dropped & set(modern)
    assert set(modern) - set(legacy) == {
        "server/discover",
        "subscriptions/listen",
        "notifications/subscriptions/acknowledged",
        "tasks/update",  # the tasks extension: 2026-07-28 only
        "notifications/tasks",
    }
    assert "tasks/result" not in modern and "tasks/list" not in modern  # -32601 there


def test_admit_runs_the_ladder_and_builds_the_request_state() -> None:
    capabilities = t.ServerCapabilities(tools=t.ToolsCapability())
    spec, modern = admit(
        "tools/list", raw(meta()), supported=ALL, local_capabilities=lambda _: capabilities
    )
    assert spec.name == "tools/list"
    state = modern.state
    assert state.revision.name == "2026-07-28" and not state.back_channel
    assert state.peer_capabilities == modern.meta.client_capabilities
    for method in ("initialize", "ping", "prompts/list"):  # no prompts capability: -32601
        with pytest.raises(McpError) as raised:
            admit(method, raw(meta()), supported=ALL, local_capabilities=lambda _: capabilities)
        assert raised.value.code == -32601


def offering(capabilities: t.ServerCapabilities) -> Callable[[Any], t.ServerCapabilities]:
    return lambda _: capabilities


def test_admit_answers_each_servers_capabilities_however_often_asked() -> None:
    """What the ladder admitted before (it remembers) is admitted again only for the same
    capabilities: a server that offers no tools refuses their methods every time."""
    with_tools = t.ServerCapabilities(tools=t.ToolsCapability())
    without = t.ServerCapabilities()
    for _ in range(2):
        spec, _ = admit(
            "tools/list", raw(meta()), supported=ALL, local_capabilities=lambda _: with_tools
        )
        assert spec.name == "tools/list"
        with pytest.raises(McpError) as raised:
            admit("tools/list", raw(meta()), supported=ALL, local_capabilities=lambda _: without)
        assert raised.value.code == -32601
    for number in range(300):  # past what it remembers: it starts over, and stays right
        with pytest.raises(McpError):
            admit(f"x/{number}", raw(meta()), supported=ALL, local_capabilities=lambda _: without)
        fresh = offering(t.ServerCapabilities(tools=t.ToolsCapability()))
        assert admit("tools/call", raw(meta()), supported=ALL, local_capabilities=fresh)


def test_negotiate_picks_among_legacy_versions_only() -> None:
    assert negotiate("2026-07-28", ALL).name == "2025-11-25"
    assert negotiate("2025-03-26", ALL).name == "2025-03-26"
    with pytest.raises(McpError) as raised:
        negotiate("2025-11-25", MODERN)
    assert raised.value.code == -32022
    assert raised.value.data == {"supported": ["2026-07-28"], "requested": "2025-11-25"}
