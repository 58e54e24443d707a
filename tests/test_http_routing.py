"""The Streamable HTTP endpoint's decisions, without a server: ``transports.http.routing``.

Each function takes what a request said (method, headers, the facts of its decoded
body) and says what to do; the endpoint only does the I/O around them. The end-to-end
behaviour is in ``test_http_transport.py``; here every branch is one call.
"""

from __future__ import annotations

import json

import pytest

from mcp_actors.protocol.received import Post, read_post
from mcp_actors.transports.http.routing import (
    NO_SESSION_ID,
    STATELESS_405,
    Refusal,
    ReplyMode,
    event_id_shape,
    id_in_use,
    is_handshake_version,
    modern_header,
    modern_without_header,
    refuse_batch,
    refuse_method,
    reply_mode,
    unsupported_version,
)

MODERN = "2026-07-28"
BOTH = "application/json, text/event-stream"
JSON_BODY = {"content-type": "application/json"}
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}


def post_of(message: object) -> Post:
    return read_post(json.dumps(message).encode())


def request(request_id: int, method: str, **params: object) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


@pytest.mark.parametrize(
    ("method", "headers", "stateless", "status", "allow"),
    [
        ("POST", {}, False, None, None),
        ("GET", {}, False, None, None),
        ("DELETE", {}, False, None, None),
        ("GET", {}, True, 405, "POST"),
        ("DELETE", {}, True, 405, "POST"),
        ("PUT", {}, False, 405, "GET, POST, DELETE"),
        ("PUT", {}, True, 405, "POST"),
        ("GET", {"mcp-protocol-version": MODERN}, False, 405, "POST"),
        ("GET", {"mcp-protocol-version": "v999"}, False, 405, "POST"),  # unknown: per request
        ("GET", {"mcp-protocol-version": "2025-06-18"}, False, None, None),
    ],
)
def test_which_methods_are_refused_with_405(
    method: str, headers: dict[str, str], stateless: bool, status: int | None, allow: str | None
) -> None:
    refusal = refuse_method(method, headers, stateless=stateless)
    if status is None:
        assert refusal is None
        return
    assert refusal is not None and refusal.status == status
    assert dict(refusal.headers) == {"allow": allow}
    if "mcp-protocol-version" in headers:
        assert "speaks POST only" in refusal.message


def test_a_stateless_server_refuses_get_with_one_reason() -> None:
    assert refuse_method("GET", {}, stateless=True) is STATELESS_405


@pytest.mark.parametrize(
    ("accept", "content_type", "json_response", "expected"),
    [
        (BOTH, "application/json", False, ReplyMode(json_ok=True, json=False)),
        (BOTH, "application/json", True, ReplyMode(json_ok=True, json=True)),
        ("application/json", "application/json", False, ReplyMode(json_ok=True, json=True)),
        ("text/event-stream", "application/json", True, ReplyMode(json_ok=False, json=False)),
        ("*/*", "application/json; charset=utf-8", False, ReplyMode(json_ok=True, json=False)),
        ("text/html", "application/json", False, 406),
        (None, "application/json", False, 406),
        (BOTH, "text/plain", False, 415),
        (BOTH, None, False, 415),
    ],
)
def test_how_a_post_is_answered_or_refused_by_its_headers(
    accept: str | None, content_type: str | None, json_response: bool, expected: object
) -> None:
    headers = {
        name: value
        for name, value in (("accept", accept), ("content-type", content_type))
        if value is not None
    }
    for _ in range(2):  # the second answer comes from what reply_mode remembers
        mode = reply_mode(headers, json_response=json_response)
        if isinstance(expected, int):
            assert isinstance(mode, Refusal) and mode.status == expected
        else:
            assert mode == expected


def test_a_post_is_answered_by_its_own_headers_whatever_came_before() -> None:
    both = {"accept": BOTH, "content-type": "application/json"}
    for number in range(100):  # past what reply_mode remembers: the oldest answers go
        odd = {"accept": f"text/x-{number}", "content-type": "application/json"}
        assert isinstance(reply_mode(odd, json_response=False), Refusal)
        assert reply_mode(both, json_response=True) == ReplyMode(json_ok=True, json=True)
        assert reply_mode(both, json_response=False) == ReplyMode(json_ok=True, json=False)
    long = {"accept": BOTH + ", text/x-long" * 100, "content-type": "application/json"}
    assert reply_mode(long, json_response=False) == ReplyMode(json_ok=True, json=False)


def test_the_era_of_a_request_by_its_version_header() -> None:
    assert is_handshake_version("2025-06-18") and is_handshake_version("2024-11-05")
    assert not is_handshake_version(MODERN) and not is_handshake_version("v999")
    assert not modern_header({}) and not modern_header({"mcp-protocol-version": "2025-11-25"})
    assert modern_header({"mcp-protocol-version": MODERN})


def test_a_modern_body_without_its_header_goes_to_the_modern_ladder() -> None:
    modern = post_of(request(1, "tools/list", _meta=META))
    assert modern_without_header(modern, {})
    assert not modern_without_header(modern, {"mcp-protocol-version": MODERN})
    legacy = post_of(request(1, "tools/list"))
    assert not modern_without_header(legacy, {})
    initialize = post_of(request(1, "initialize", _meta=META))
    assert not modern_without_header(initialize, {})


def test_batches_are_refused_where_the_revision_has_none() -> None:
    batch = post_of([request(1, "ping"), request(2, "ping")])
    single = post_of(request(1, "ping"))
    assert refuse_batch(single, "2025-06-18", {}) is None
    assert refuse_batch(batch, "2025-03-26", {}) is None
    refusal = refuse_batch(batch, "2025-06-18", {})
    assert refusal is not None and refusal.status == 400 and "2025-06-18" in refusal.message
    # Before the session has a version, the header's, else the HTTP default, decides.
    header = {"mcp-protocol-version": "2025-03-26"}
    assert refuse_batch(batch, None, header) is None
    assert refuse_batch(batch, None, {}) is None  # 2025-03-26
    assert refuse_batch(batch, None, {"mcp-protocol-version": "2025-11-25"}) is not None


def test_versions_ids_and_event_ids() -> None:
    supported = ("2025-06-18", "2025-03-26")
    assert unsupported_version({}, supported) is None
    assert unsupported_version({"mcp-protocol-version": "2025-06-18"}, supported) is None
    refusal = unsupported_version({"mcp-protocol-version": "1999-01-01"}, supported)
    assert refusal is not None and refusal.status == 400 and "1999-01-01" in refusal.message
    assert unsupported_version({}, ("2025-06-18",), default="2025-03-26") is not None
    duplicate = id_in_use(7)
    assert (duplicate.status, duplicate.request_id) == (400, 7)
    assert NO_SESSION_ID.status == 400 and "Mcp-Session-Id" in NO_SESSION_ID.message
    assert event_id_shape("p1:5") and not event_id_shape("x" * 129)
    assert not event_id_shape("caf\u00e9") and not event_id_shape("a\nb")
