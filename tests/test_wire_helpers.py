"""The wire validator accepts what each revision allows and rejects what it does not."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from mcp_actors import MessageStream, Outgoing, TransportClosed
from mcp_actors.testing.wire import (
    REVISIONS,
    WireRecorder,
    assert_all_valid,
    definition_for_method,
    is_valid,
    methods,
    validate_message,
)

HANDSHAKE = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN = ("2026-07-28",)


def request_meta(revision: str, **extra: Any) -> dict[str, Any]:
    """The per-request ``_meta`` a revision requires (2026-07-28 made it mandatory)."""
    meta: dict[str, Any] = dict(extra)
    if revision in MODERN:
        meta["io.modelcontextprotocol/protocolVersion"] = revision
        meta["io.modelcontextprotocol/clientCapabilities"] = {}
    return meta


def opening_request(revision: str) -> dict[str, Any]:
    if revision in MODERN:
        return {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "server/discover",
            "params": {"_meta": request_meta(revision)},
        }
    return {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": revision,
            "capabilities": {},
            "clientInfo": {"name": "mcp-actors-tests", "version": "0.1.0"},
        },
    }


def call_request(revision: str, **params: Any) -> dict[str, Any]:
    p: dict[str, Any] = {"name": "add", "arguments": {"a": 2, "b": 3}, **params}
    if meta := request_meta(revision):
        p["_meta"] = meta
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": p}


def call_response(revision: str) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": "5"}], "isError": False}
    if revision in MODERN:
        result["resultType"] = "complete"
    return {"jsonrpc": "2.0", "id": 7, "result": result}


def rejected(revision: str, message: Any, *, needle: str = "", **kwargs: Any) -> str:
    with pytest.raises(AssertionError) as info:
        validate_message(revision, message, **kwargs)
    text = str(info.value)
    assert revision in text
    assert needle in text, text
    return text


@pytest.fixture(params=REVISIONS)
def revision(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# --------------------------------------------------------------------------- accepts


def test_opening_request_is_valid(revision: str) -> None:
    message = opening_request(revision)
    validate_message(revision, message)
    validate_message(revision, json.dumps(message).encode())  # encoded form too
    validate_message(revision, message, allow_unknown_methods=False)


def test_tools_call_request_and_response_are_valid(revision: str) -> None:
    validate_message(revision, call_request(revision))
    validate_message(revision, call_response(revision), in_reply_to="tools/call")
    validate_message(revision, call_response(revision), in_reply_to=call_request(revision))


def test_notifications_and_errors_are_valid(revision: str) -> None:
    progress = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": 7, "progress": 1, "total": 3},
    }
    cancelled = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
    error = {"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": "Method not found"}}
    for message in (progress, cancelled, error):
        validate_message(revision, message)


def test_vendor_methods_pass_unless_strict(revision: str) -> None:
    message = {"jsonrpc": "2.0", "method": "notifications/x-vendor/thing", "params": {}}
    validate_message(revision, message)
    rejected(revision, message, needle="not defined", allow_unknown_methods=False)


def test_method_definitions_are_found(revision: str) -> None:
    assert definition_for_method(revision, "tools/call") == ("CallToolRequest",)
    assert definition_for_method(revision, "notifications/progress") == ("ProgressNotification",)
    # 2026-07-28 has a one-member ClientNotification union with a method const: not picked.
    assert definition_for_method(revision, "notifications/cancelled") == ("CancelledNotification",)
    assert ("initialize" in methods(revision)) == (revision in HANDSHAKE)
    assert ("server/discover" in methods(revision)) == (revision in MODERN)


# --------------------------------------------------------------------------- rejects


def test_wrong_jsonrpc_version_is_rejected(revision: str) -> None:
    for message in (
        {**opening_request(revision), "jsonrpc": "1.0"},
        {**call_response(revision), "jsonrpc": "2"},
    ):
        rejected(revision, message, needle="jsonrpc")
    no_version = dict(call_request(revision))
    del no_version["jsonrpc"]
    rejected(revision, no_version, needle="jsonrpc")


def test_response_without_id_is_rejected(revision: str) -> None:
    response = call_response(revision)
    del response["id"]
    rejected(revision, response, needle="'id' is a required property")


def test_tools_call_without_name_is_rejected(revision: str) -> None:
    message = call_request(revision)
    del message["params"]["name"]
    text = rejected(revision, message, needle="CallToolRequest")
    assert "'name' is a required property" in text


def test_result_and_error_together_are_rejected(revision: str) -> None:
    message = {**call_response(revision), "error": {"code": 1, "message": "x"}}
    rejected(revision, message, needle="both 'result' and 'error'")


def test_error_code_must_be_an_integer(revision: str) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "error": {"code": "-32600", "message": "bad"}}
    rejected(revision, message, needle="$.error.code")


def test_notification_sent_as_request_is_rejected(revision: str) -> None:
    message = {"jsonrpc": "2.0", "id": 3, "method": "notifications/progress", "params": {}}
    rejected(revision, message, needle="but was sent as a request")


def test_tools_call_result_without_content_is_rejected(revision: str) -> None:
    message = call_response(revision)
    del message["result"]["content"]
    validate_message(revision, message)  # without context, any result object is a valid response
    rejected(revision, message, needle="'content' is a required property", in_reply_to="tools/call")


def test_not_json_and_not_object_are_rejected(revision: str) -> None:
    rejected(revision, b'{"jsonrpc": "2.0",', needle="not valid JSON")
    rejected(revision, b'"hello"', needle="must be an object")
    rejected(revision, [], needle="empty batch")


def test_batches_only_in_2025_03_26(revision: str) -> None:
    batch = [call_request(revision), {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    if revision == "2025-03-26":
        validate_message(revision, batch)
        bad = [
            call_request(revision),
            {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {}},
        ]
        rejected(revision, bad, needle="[1]")
    else:
        rejected(revision, batch, needle="batches are not valid")


def test_revision_specific_rules() -> None:
    # 2026-07-28 requires per-request _meta and resultType; earlier revisions do not.
    legacy_call = call_request("2025-11-25")
    assert is_valid("2025-11-25", legacy_call)
    rejected("2026-07-28", legacy_call, needle="_meta")
    legacy_result = call_response("2025-11-25")
    assert is_valid("2025-11-25", legacy_result, in_reply_to="tools/call")
    rejected("2026-07-28", legacy_result, needle="resultType", in_reply_to="tools/call")
    # initialize does not exist in 2026-07-28.
    assert not is_valid("2026-07-28", opening_request("2025-11-25"), allow_unknown_methods=False)
    # 2024-11-05 errors must carry an id; 2025-11-25 allows omitting it (parse errors).
    no_id_error = {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}}
    rejected("2024-11-05", no_id_error, needle="'id' is a required property")
    validate_message("2025-11-25", no_id_error)


def test_unknown_revision_is_an_assertion() -> None:
    with pytest.raises(AssertionError, match="no schema"):
        validate_message("1999-01-01", call_request("2025-11-25"))


# --------------------------------------------------------------------------- recorder


class LoopbackStream(MessageStream):
    """Inbound messages come from a list; outbound ones are collected."""

    def __init__(self, inbound: Sequence[bytes]) -> None:
        self.inbound = list(inbound)
        self.out: list[Outgoing] = []
        self.closed = False

    async def receive(self) -> bytes:
        if not self.inbound:
            raise TransportClosed
        return self.inbound.pop(0)

    async def send_all(self, messages: Sequence[Outgoing]) -> None:
        self.out.extend(messages)

    async def aclose(self) -> None:
        self.closed = True


def enc(message: Any) -> bytes:
    return json.dumps(message).encode()


async def test_recorder_records_and_validates() -> None:
    rev = "2025-11-25"
    inner = LoopbackStream([enc(opening_request(rev)), enc(call_request(rev))])
    async with WireRecorder(inner) as stream:
        assert await stream.receive() == enc(opening_request(rev))
        initialize_result = {
            "protocolVersion": rev,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "mcp-actors", "version": "0.1.0"},
        }
        await stream.send(Outgoing(enc({"jsonrpc": "2.0", "id": 0, "result": initialize_result})))
        await stream.receive()
        progress = {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": 1, "progress": 1},
        }
        await stream.send_all(
            [
                Outgoing(enc(progress), related_request=7),
                Outgoing(enc(call_response(rev)), related_request=7, closes_request=True),
            ]
        )
    assert inner.closed
    assert isinstance(stream, WireRecorder)
    assert len(stream.sent) == 3 and stream.sent_payloads == [o.payload for o in inner.out]
    assert stream.sent[2].closes_request
    assert len(stream.received) == 2
    assert_all_valid(stream, rev)

    # A result that does not fit the request it answers is caught via the recorded inbound side.
    await stream.send(
        Outgoing(enc({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": rev}}))
    )
    with pytest.raises(AssertionError, match="InitializeResult") as info:
        assert_all_valid(stream, rev)
    assert "second response for request id 0" in str(info.value)


async def test_recorder_checks_ids() -> None:
    rev = "2025-06-18"
    stream = WireRecorder(LoopbackStream([]))
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    await stream.send(Outgoing(enc(ping)))
    assert_all_valid(stream, rev)
    await stream.send(Outgoing(enc(ping)))
    with pytest.raises(AssertionError, match="request id 1 reused"):
        assert_all_valid(stream, rev)
    assert_all_valid(stream, rev, check_ids=False)


async def test_recorder_flags_responses_to_unknown_ids_and_bad_payloads() -> None:
    rev = "2026-07-28"
    stream = WireRecorder(LoopbackStream([enc(call_request(rev))]))
    await stream.receive()
    await stream.send(Outgoing(enc({**call_response(rev), "id": 99})))
    await stream.send(Outgoing(b"not json"))
    with pytest.raises(AssertionError) as info:
        assert_all_valid(stream, rev)
    text = str(info.value)
    assert "2 invalid outgoing message(s) of 2" in text
    assert "no inbound request had" in text and "not valid JSON" in text


def test_input_required_results_in_2026() -> None:
    rev = "2026-07-28"
    ok = {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {"resultType": "input_required", "requestState": "abc"},
    }
    validate_message(rev, ok, in_reply_to="tools/call")
    empty = {"jsonrpc": "2.0", "id": 7, "result": {"resultType": "input_required"}}
    rejected(rev, empty, needle="at least one of", in_reply_to="tools/call")
    # tools/list may not answer input_required: judged as a ListToolsResult.
    rejected(rev, ok, needle="ListToolsResult", in_reply_to="tools/list")


async def test_the_peer_view_validates_what_the_other_side_sent() -> None:
    """A server we cannot wrap (a process) is checked through the client's recorder."""
    rev = "2025-11-25"
    bad_result = {"jsonrpc": "2.0", "id": 7, "result": {"content": "not a list"}}
    client = WireRecorder(LoopbackStream([enc(bad_result)]))
    await client.send(Outgoing(enc(call_request(rev))))
    await client.receive()
    peer = client.peer()
    assert [out.payload for out in peer.sent] == [enc(bad_result)]
    with pytest.raises(AssertionError, match="does not match CallToolResult"):
        assert_all_valid(peer, rev)
    assert_all_valid(client, rev)  # the client's own request is fine
