"""The protocol engine, sans-IO: bytes in, events out, bytes back — no trio, no transport.

Like h11's tests, two engines (a client's and a server's) are joined by hand: what
one encodes, the other receives. Every exchange is checked on the wire (the bytes
decoded as JSON) and in the events and lifecycle state it produces.
"""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest

from mcp_actors.protocol import types as t
from mcp_actors.protocol.engine import Engine
from mcp_actors.protocol.errors import ConnectionClosed, McpError, ProtocolViolation
from mcp_actors.protocol.events import (
    BatchReceived,
    CancelRequested,
    LogReceived,
    NotificationReceived,
    ProgressReceived,
    Reply,
    RequestReceived,
    ResponseReceived,
)
from mcp_actors.protocol.jsonrpc import RequestId
from mcp_actors.protocol.lifecycle import Phase, ServerDescription, SessionState
from mcp_actors.protocol.methods import MethodSpec
from mcp_actors.protocol.modern import ModernRequest
from mcp_actors.protocol.versions import ALL, Revision


@attrs.define
class Handle:
    """What a test runtime makes of an inbound request: just what it was told."""

    id: RequestId
    method: str
    raw_params: Any
    modern: ModernRequest | None
    params: Any


def open_request(
    request_id: RequestId,
    method: str,
    spec: MethodSpec,
    raw: Any,
    modern: ModernRequest | None,
    params: Any,
) -> Handle:
    return Handle(request_id, method, raw, modern, params)


SERVER_CAPABILITIES = t.ServerCapabilities(tools=t.ToolsCapability(list_changed=True))


def describe(revision: Revision, *, stateless: bool) -> ServerDescription:
    return ServerDescription(
        SERVER_CAPABILITIES, t.Implementation(name="engine-test", version="1"), "be nice"
    )


def server_engine(max_in_flight: int = 4096) -> Engine[Handle, str]:
    # until initialize, what the server would declare; then what describe() says
    state = SessionState("server", t.ServerCapabilities(tools=t.ToolsCapability()), ALL)
    return Engine(state, open_request, describe, max_in_flight=max_in_flight)


def client_engine() -> Engine[Handle, str]:
    return Engine(SessionState("client", t.ClientCapabilities()), open_request)


def message(**fields: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **fields}).encode()


def initialize(request_id: RequestId = 0, version: str = "2025-11-25") -> bytes:
    params = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"},
    }
    return message(id=request_id, method="initialize", params=params)


def reply_of(event: object) -> Any:
    assert isinstance(event, Reply), event
    return json.loads(event.payload)


def operating(version: str = "2025-11-25", max_in_flight: int = 4096) -> Engine[Handle, str]:
    """A server engine past the handshake."""
    engine = server_engine(max_in_flight)
    reply_of(engine.receive(initialize(version=version)))
    engine.receive(message(method="notifications/initialized"))
    assert engine.state.phase is Phase.OPERATING
    return engine


def call_tool(request_id: RequestId) -> bytes:
    return message(id=request_id, method="tools/call", params={"name": "x"})


# -- the handshake --------------------------------------------------------------------


def test_two_engines_complete_the_handshake_on_the_wire() -> None:
    client, server = client_engine(), server_engine()
    params = t.InitializeParams(
        protocol_version="2025-06-18",
        capabilities=t.ClientCapabilities(),
        client_info=t.Implementation(name="c", version="1"),
    )
    request_id, data = client.send_request("initialize", params, "the initialize call")

    answer = server.receive(data)
    assert server.state.phase is Phase.INITIALIZING
    assert server.state.revision.name == "2025-06-18"
    assert server.state.local_capabilities is SERVER_CAPABILITIES
    body = reply_of(answer)
    assert body["id"] == request_id
    assert body["result"]["protocolVersion"] == "2025-06-18"
    assert body["result"]["serverInfo"] == {"name": "engine-test", "version": "1"}
    assert body["result"]["instructions"] == "be nice"

    event = client.receive(answer.payload)  # type: ignore[union-attr]
    assert isinstance(event, ResponseReceived)
    assert event.call == "the initialize call"
    result = client.read_result("initialize", event.response)
    assert isinstance(result, t.InitializeResult)
    assert client.state.phase is Phase.OPERATING
    assert client.state.revision.name == "2025-06-18"
    assert client.state.peer_info == t.Implementation(name="engine-test", version="1")

    notified = server.receive(client.send_notification("notifications/initialized"))
    assert isinstance(notified, NotificationReceived)
    assert notified.method == "notifications/initialized"
    assert server.state.phase is Phase.OPERATING


def test_a_client_refuses_a_revision_it_does_not_speak() -> None:
    client = client_engine()
    request_id, _ = client.send_request("initialize", None, "call")
    result = {
        "protocolVersion": "1999-01-01",
        "capabilities": {},
        "serverInfo": {"name": "s", "version": "1"},
    }
    event = client.receive(message(id=request_id, result=result))
    assert isinstance(event, ResponseReceived)
    with pytest.raises(McpError, match="Unsupported protocol version"):
        client.read_result("initialize", event.response)
    assert client.state.phase is Phase.NEW


def test_an_unknown_version_is_answered_with_the_latest() -> None:
    server = server_engine()
    body = reply_of(server.receive(initialize(version="2099-01-01")))
    assert body["result"]["protocolVersion"] == "2025-11-25"


def test_initialize_is_accepted_once() -> None:
    server = operating()
    body = reply_of(server.receive(initialize(request_id=9)))
    assert body["id"] == 9
    assert body["error"]["code"] == -32600
    assert "only once" in body["error"]["message"]


def test_initialize_with_bad_params_is_invalid_params_and_changes_nothing() -> None:
    server = server_engine()
    body = reply_of(server.receive(message(id=1, method="initialize", params={"x": 1})))
    assert body["error"]["code"] == -32602
    assert server.state.phase is Phase.NEW


def test_a_client_does_not_serve_initialize() -> None:
    body = reply_of(client_engine().receive(initialize()))
    assert body["error"]["code"] == -32601


def test_requests_before_initialize_are_refused_but_ping_is_answered() -> None:
    server = server_engine()
    refused = reply_of(server.receive(call_tool(1)))
    assert refused["error"]["code"] == -32600
    assert "before initialize" in refused["error"]["message"]
    assert reply_of(server.receive(message(id=2, method="ping"))) == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {},
    }
    assert server.inbound_count == 0


# -- inbound requests -----------------------------------------------------------------


def test_a_request_is_opened_with_the_sessions_state_and_tracked_until_finished() -> None:
    server = operating()
    event = server.receive(call_tool("a"))
    assert isinstance(event, RequestReceived)
    request = event.request
    assert (request.id, request.method, request.modern) == ("a", "tools/call", None)
    assert bytes(request.raw_params) == b'{"name": "x"}'
    assert request.params == t.CallToolParams(name="x")  # decoded once, by the engine
    assert server.inbound == [event.request]
    server.finished("a")
    assert server.inbound_count == 0


def test_a_duplicate_id_is_refused_while_the_first_is_in_flight() -> None:
    server = operating()
    assert isinstance(server.receive(call_tool(7)), RequestReceived)
    body = reply_of(server.receive(call_tool(7)))
    assert body["id"] == 7
    assert body["error"]["code"] == -32600
    assert "already in use" in body["error"]["message"]
    server.finished(7)
    assert isinstance(server.receive(call_tool(7)), RequestReceived)


def test_requests_beyond_max_in_flight_are_rejected() -> None:
    server = operating(max_in_flight=2)
    assert isinstance(server.receive(call_tool(1)), RequestReceived)
    assert isinstance(server.receive(call_tool(2)), RequestReceived)
    body = reply_of(server.receive(call_tool(3)))
    assert body["error"]["code"] == -32000
    assert "limit 2" in body["error"]["message"]


def test_unknown_and_undeclared_methods_are_method_not_found() -> None:
    server = operating()
    unknown = reply_of(server.receive(message(id=1, method="no/such")))
    assert unknown["error"] == {
        "code": -32601,
        "message": "Method not found: no/such",
        "data": {"method": "no/such"},
    }
    # prompts were not declared by this server
    undeclared = reply_of(server.receive(message(id=2, method="prompts/list")))
    assert undeclared["error"]["code"] == -32601


@pytest.mark.parametrize(
    ("version", "expected"),
    [("2025-11-25", {"jsonrpc": "2.0"}), ("2025-06-18", {"jsonrpc": "2.0", "id": None})],
)
def test_a_parse_error_answers_no_id_as_the_revision_writes_it(
    version: str, expected: dict[str, Any]
) -> None:
    body = reply_of(operating(version).receive(b'{"jsonrpc": "2.0", "id": '))
    assert body["error"]["code"] == -32700
    del body["error"]
    assert body == expected


def test_an_invalid_request_is_answered_with_its_id() -> None:
    body = reply_of(operating().receive(b'{"jsonrpc": "1.0", "id": 5, "method": "ping"}'))
    assert body["id"] == 5
    assert body["error"]["code"] == -32600


def test_an_oversized_message_is_answered_with_the_limit() -> None:
    body = reply_of(operating().receive_oversized("too big", 1024))
    assert body["error"] == {"code": -32600, "message": "too big", "data": {"limit": 1024}}


# -- notifications, cancellation, progress --------------------------------------------


def test_a_cancellation_names_the_request_in_flight() -> None:
    server = operating()
    opened = server.receive(call_tool(3))
    assert isinstance(opened, RequestReceived)
    cancel = message(method="notifications/cancelled", params={"requestId": 3, "reason": "bored"})
    event = server.receive(cancel)
    assert isinstance(event, CancelRequested)
    assert event.request is opened.request
    assert event.reason == "bored"
    server.finished(3)
    assert server.receive(cancel) is None  # over: nothing to cancel


def test_a_notification_with_bad_params_or_not_for_us_is_dropped() -> None:
    server = operating()
    assert server.receive(message(method="notifications/progress", params={"x": 1})) is None
    assert server.receive(message(method="notifications/tools/list_changed")) is None
    event = server.receive(message(method="notifications/roots/list_changed"))
    assert isinstance(event, NotificationReceived)
    assert event.method == "notifications/roots/list_changed"


def test_progress_reaches_the_call_that_asked_for_it_until_its_response() -> None:
    client = client_engine()
    client.state.phase = Phase.OPERATING
    client.state.peer_capabilities = SERVER_CAPABILITIES
    params = t.CallToolParams(name="x")
    request_id, data = client.send_request("tools/call", params, "tool call", progress=True)
    sent = json.loads(data)
    token = sent["params"]["_meta"]["progressToken"]
    assert token == request_id

    progress = message(
        method="notifications/progress", params={"progressToken": token, "progress": 0.5}
    )
    event = client.receive(progress)
    assert isinstance(event, ProgressReceived)
    assert event.call == "tool call"
    assert event.progress.progress == 0.5
    unknown = message(method="notifications/progress", params={"progressToken": 99, "progress": 1})
    assert client.receive(unknown) is None

    response = client.receive(message(id=request_id, result={"content": []}))
    assert isinstance(response, ResponseReceived)
    assert client.receive(progress) is None  # answered: progress no longer routed
    assert client.receive(message(id=request_id, result={"content": []})) is None  # no repeat


def _log(data: str) -> bytes:
    return message(method="notifications/message", params={"level": "info", "data": data})


def test_a_log_message_reaches_the_call_whose_stream_carried_it() -> None:
    client = client_engine()
    client.state.phase = Phase.OPERATING
    client.state.peer_capabilities = t.ServerCapabilities(tools=t.ToolsCapability(), logging={})
    first, _ = client.send_request("tools/call", t.CallToolParams(name="x"), "first", logs=True)
    second, _ = client.send_request("tools/call", t.CallToolParams(name="y"), "second", logs=True)
    quiet, _ = client.send_request("tools/call", t.CallToolParams(name="z"), "quiet")

    event = client.receive(_log("about the second"), related_to=second)
    assert isinstance(event, LogReceived)
    assert (event.call, event.params.data) == ("second", "about the second")
    # a call that did not ask for its logs, and two that could be meant: the whole session's
    assert isinstance(client.receive(_log("q"), related_to=quiet), NotificationReceived)
    assert isinstance(client.receive(_log("either")), NotificationReceived)

    client.receive(message(id=second, result={"content": []}))
    # one call left that wants logs: a message naming no stream is its
    event = client.receive(_log("only the first"))
    assert isinstance(event, LogReceived)
    assert event.call == "first"
    client.call_finished(first)
    assert isinstance(client.receive(_log("nobody's")), NotificationReceived)


def test_giving_up_on_a_call_sends_a_cancellation_and_drops_the_late_answer() -> None:
    client = client_engine()
    request_id, _ = client.send_request("ping", None, "ping call")
    cancel = client.cancel_request(request_id, "ping", "timed out")
    assert cancel is not None
    assert json.loads(cancel) == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request_id, "reason": "timed out"},
    }
    assert client.receive(message(id=request_id, result={})) is None
    assert client.outbound_count == 0


def test_initialize_is_never_cancelled() -> None:
    client = client_engine()
    request_id, _ = client.send_request("initialize", None, "call")
    assert client.cancel_request(request_id, "initialize", "timed out") is None


def test_no_request_once_the_peer_is_gone() -> None:
    client = client_engine()
    client.send_request("ping", None, "pending")
    client.peer_closed()
    assert client.outbound == ["pending"]
    with pytest.raises(ConnectionClosed):
        client.send_request("ping", None, "late")


def test_what_we_may_not_send_is_refused_before_any_byte() -> None:
    client = client_engine()
    with pytest.raises(ProtocolViolation, match="sent by the server"):
        client.send_request("sampling/createMessage", None, "call")
    with pytest.raises(ProtocolViolation, match="capability"):
        client.send_notification("notifications/roots/list_changed")


def test_an_error_answer_is_raised_and_a_bad_result_is_the_peers_fault() -> None:
    client = client_engine()
    request_id, _ = client.send_request("ping", None, "call")
    error = client.receive(message(id=request_id, error={"code": -32001, "message": "nope"}))
    assert isinstance(error, ResponseReceived)
    with pytest.raises(McpError, match="nope") as raised:
        client.read_result("ping", error.response)
    assert raised.value.code == -32001

    client.state.phase = Phase.OPERATING
    client.state.peer_capabilities = SERVER_CAPABILITIES
    request_id, _ = client.send_request("tools/list", None, "call")
    bad = client.receive(message(id=request_id, result={"tools": 3}))
    assert isinstance(bad, ResponseReceived)
    with pytest.raises(McpError, match="Invalid result of tools/list") as raised:
        client.read_result("tools/list", bad.response)
    assert raised.value.code == -32603


# -- batches --------------------------------------------------------------------------


def test_a_batch_is_an_event_per_element_in_2025_03_26() -> None:
    server = operating("2025-03-26")
    batch = json.dumps(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}},
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}},
            {"jsonrpc": "2.0", "id": 2, "method": "ping"},
            {"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {}},
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
            {"jsonrpc": "2.0", "id": 4},
        ]
    ).encode()
    event = server.receive(batch)
    assert isinstance(event, BatchReceived)
    kinds = [type(item).__name__ for item in event.events]
    assert kinds == ["RequestReceived", "Reply", "Reply", "Reply", "CancelRequested", "Reply"]
    first, cancelled = event.events[0], event.events[4]
    assert isinstance(first, RequestReceived) and isinstance(cancelled, CancelRequested)
    assert cancelled.request is first.request  # the batch's own request, cancelled in it
    duplicate, ping, refused, invalid = (reply_of(event.events[i]) for i in (1, 2, 3, 5))
    assert duplicate["error"]["code"] == -32600 and duplicate["id"] == 1
    assert ping == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert refused["id"] == 3 and "must not be batched" in refused["error"]["message"]
    assert invalid["id"] == 4 and invalid["error"]["code"] == -32600
    assert server.encode_batch([b"1", b"2"]) == b"[1,2]"


def test_a_batch_is_refused_whole_where_the_revision_has_none() -> None:
    server = operating("2025-06-18")
    body = reply_of(server.receive(b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]'))
    assert body["id"] is None
    assert "batches are not allowed" in body["error"]["message"]


# -- the modern era: each request on its own ------------------------------------------


def modern_request(request_id: RequestId, method: str, version: str = "2026-07-28") -> bytes:
    meta = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
    }
    return message(id=request_id, method=method, params={"_meta": meta})


def test_a_modern_request_is_served_with_a_state_of_its_own_before_any_handshake() -> None:
    server = server_engine()
    event = server.receive(modern_request(1, "tools/list"))
    assert isinstance(event, RequestReceived)
    modern = event.request.modern
    assert modern is not None
    assert modern.state is not server.state
    assert modern.state.revision.name == "2026-07-28"
    assert modern.state.back_channel is False
    assert modern.state.peer_capabilities == t.ClientCapabilities(sampling={})
    assert modern.state.local_capabilities == SERVER_CAPABILITIES
    assert server.state.phase is Phase.NEW  # the connection's own lifecycle is untouched
    assert server.inbound_count == 1  # and its limits apply
    assert reply_of(server.receive(modern_request(1, "tools/list")))["error"]["code"] == -32600


def test_a_modern_request_climbs_the_ladder() -> None:
    server = server_engine()
    unsupported = reply_of(server.receive(modern_request(1, "tools/list", "2099-01-01")))
    assert unsupported["error"]["code"] == -32022
    assert unsupported["error"]["data"]["requested"] == "2099-01-01"
    no_ping = reply_of(server.receive(modern_request(2, "ping")))  # not in the modern table
    assert no_ping["error"]["code"] == -32601
    bare = reply_of(server.receive(message(id=3, method="server/discover")))
    assert bare["error"]["code"] == -32602


def test_a_modern_only_engine_takes_every_request_up_the_modern_ladder() -> None:
    """Over a transport that carries only 2026-07-28 requests, a request without the
    modern ``_meta`` gets that era's -32602, not the legacy "before initialize" error."""
    state = SessionState("server", SERVER_CAPABILITIES, ALL)
    server = Engine(state, open_request, describe, modern_only=True)
    event = server.receive(modern_request(1, "tools/list"))
    assert isinstance(event, RequestReceived) and event.request.modern is not None
    bare = reply_of(server.receive(message(id=2, method="tools/list", params={})))
    assert bare["error"]["code"] == -32602
    legacy = server_engine()  # the same request on a connection of both eras
    assert (
        reply_of(legacy.receive(message(id=2, method="tools/list", params={})))["error"]["code"]
        == -32600
    )


def test_a_client_never_takes_a_request_for_modern() -> None:
    client = client_engine()
    body = reply_of(client.receive(modern_request(1, "tools/list")))
    assert body["error"]["code"] == -32601  # a client serves no tools/list in any era


def test_the_initialize_answer_holds_only_what_the_revision_defines() -> None:
    def titled(revision: Revision, *, stateless: bool) -> ServerDescription:
        info = t.Implementation(name="s", version="1", title="A title")
        return ServerDescription(SERVER_CAPABILITIES, info)

    old = Engine(SessionState("server", SERVER_CAPABILITIES), open_request, titled)
    assert (
        "title"
        not in reply_of(old.receive(initialize(version="2024-11-05")))["result"]["serverInfo"]
    )
    new = Engine(SessionState("server", SERVER_CAPABILITIES), open_request, titled)
    assert reply_of(new.receive(initialize()))["result"]["serverInfo"]["title"] == "A title"


def test_a_modern_request_on_an_initialized_session_is_still_modern() -> None:
    server = operating()
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    data = message(id=5, method="tools/call", params={"name": "x", "_meta": meta})
    event = server.receive(data)
    assert isinstance(event, RequestReceived)
    assert event.request.modern is not None
    assert event.request.modern.state.revision.name == "2026-07-28"
    legacy = server.receive(call_tool(6))
    assert isinstance(legacy, RequestReceived)
    assert legacy.request.modern is None


def test_a_modern_request_with_bad_params_is_still_modern() -> None:
    server = operating()
    meta = {"io.modelcontextprotocol/protocolVersion": "2099-01-01"}
    bad = message(id=7, method="tools/call", params={"name": 3, "_meta": meta})
    body = reply_of(server.receive(bad))
    assert body["error"]["code"] == -32602  # rung 1: the capabilities key is missing
    assert "clientCapabilities" in body["error"]["message"]
