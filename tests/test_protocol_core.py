"""The sans-IO core on its own: framing, envelopes, revisions, lifecycle gating. No I/O, no trio."""

from __future__ import annotations

import ast
from pathlib import Path

import msgspec
import pytest

import mcp_actors
from mcp_actors.protocol import errors
from mcp_actors.protocol import types as t
from mcp_actors.protocol.errors import McpError, ProtocolViolation
from mcp_actors.protocol.framing import LineFramer, Oversized
from mcp_actors.protocol.jsonrpc import Envelope, InvalidMessage, decode
from mcp_actors.protocol.lifecycle import Phase, SessionState
from mcp_actors.protocol.methods import METHODS, has_capability
from mcp_actors.protocol.versions import LATEST, REVISIONS, SUPPORTED, accept, negotiate

PROTOCOL = Path(mcp_actors.__file__).parent / "protocol"


def test_the_protocol_package_does_no_io() -> None:
    forbidden = {"trio", "anyio", "asyncio", "socket", "subprocess", "os", "io"}
    for module in PROTOCOL.glob("*.py"):
        tree = ast.parse(module.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module.split(".")[0]]
            else:
                continue
            assert not forbidden & set(names), f"{module.name} imports {names}"


# -- framing --------------------------------------------------------------------------


def drain(framer: LineFramer) -> list[bytes | Oversized]:
    out = []
    while (message := framer.next_message()) is not None:
        out.append(message)
    return out


def test_framer_splits_lines_across_chunks() -> None:
    framer = LineFramer()
    for chunk in [b'{"a":', b"1}\n{", b'"b":2}\r\n\n', b'{"c":3}']:
        framer.feed(chunk)
    assert drain(framer) == [b'{"a":1}', b'{"b":2}']
    assert framer.pending_bytes == len(b'{"c":3}')
    framer.feed(b"\n")
    assert drain(framer) == [b'{"c":3}']


def test_framer_discards_an_oversized_line_without_buffering_it() -> None:
    framer = LineFramer(max_message_size=10)
    framer.feed(b"x" * 8)
    framer.feed(b"y" * 8)  # over the limit: dropped from here on
    assert framer.pending_bytes == 0
    framer.feed(b"z" * 1000)
    assert framer.pending_bytes == 0
    framer.feed(b'zz\n{"ok":1}\n')
    messages = drain(framer)
    assert messages[0] == Oversized(16, 10)
    assert messages[1:] == [b'{"ok":1}']


def test_framer_catches_an_oversized_line_inside_one_chunk() -> None:
    framer = LineFramer(max_message_size=5)
    framer.feed(b'123456\n{"a"}\n')
    assert drain(framer) == [Oversized(6, 5), b'{"a"}']


# -- envelopes ------------------------------------------------------------------------


def test_decode_classifies_the_four_kinds() -> None:
    request = decode(b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
    notification = decode(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    response = decode(b'{"jsonrpc":"2.0","id":"a","result":{"x":1}}')
    error = decode(b'{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"nope"}}')
    assert isinstance(request, Envelope) and request.id == 1 and request.method == "ping"
    assert isinstance(notification, Envelope) and notification.id is msgspec.UNSET
    assert isinstance(response, Envelope) and bytes(response.result) == b'{"x":1}'  # type: ignore[arg-type]
    assert isinstance(error, Envelope) and error.error.code == -32601  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("data", "code", "request_id"),
    [
        (b"{not json", errors.PARSE_ERROR, None),
        (b"", errors.PARSE_ERROR, None),
        (b"[]", errors.INVALID_REQUEST, None),
        (b"3", errors.INVALID_REQUEST, None),
        (b'{"id":4,"method":"ping"}', errors.INVALID_REQUEST, 4),
        (b'{"jsonrpc":"1.0","id":"x","method":"ping"}', errors.INVALID_REQUEST, "x"),
        (b'{"jsonrpc":"2.0","id":5,"method":7}', errors.INVALID_REQUEST, 5),
        (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', errors.INVALID_REQUEST, None),
        (b'{"jsonrpc":"2.0","id":6}', errors.INVALID_REQUEST, 6),
        (b'{"jsonrpc":"2.0","id":6,"result":{},"error":{"code":1,"message":""}}', -32600, 6),
    ],
)
def test_decode_names_the_error_and_the_id_to_answer(
    data: bytes, code: int, request_id: object
) -> None:
    with pytest.raises(InvalidMessage) as raised:
        decode(data)
    assert raised.value.code == code
    assert raised.value.request_id == request_id


def test_a_batch_keeps_valid_items_and_reports_invalid_ones() -> None:
    items = decode(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}, 5, {"id":2,"method":"x"}]')
    assert isinstance(items, list)
    assert isinstance(items[0], Envelope)
    assert isinstance(items[1], InvalidMessage) and items[1].request_id is None
    assert isinstance(items[2], InvalidMessage) and items[2].request_id == 2


# -- revisions ------------------------------------------------------------------------


def test_negotiation_follows_the_lifecycle_page() -> None:
    for version in SUPPORTED:
        assert negotiate(version).name == version
    assert negotiate("2023-01-01").name == LATEST
    assert negotiate("2026-07-28").name == LATEST  # known, but not spoken yet


def test_the_client_refuses_a_revision_it_does_not_speak() -> None:
    with pytest.raises(McpError) as raised:
        accept("2023-01-01")
    assert raised.value.code == errors.INVALID_PARAMS
    assert raised.value.message == "Unsupported protocol version"
    assert raised.value.data == {"supported": list(SUPPORTED), "requested": "2023-01-01"}


def test_revision_flags() -> None:
    assert [v for v in SUPPORTED if REVISIONS[v].batches] == ["2025-03-26"]
    assert not REVISIONS["2025-03-26"].elicitation and REVISIONS["2025-06-18"].elicitation
    assert not REVISIONS["2026-07-28"].handshake


def test_the_method_table_knows_each_methods_revisions() -> None:
    elicit = METHODS["elicitation/create"]
    assert not elicit.available_in(REVISIONS["2025-03-26"])
    assert elicit.available_in(REVISIONS["2025-11-25"])
    completion = METHODS["completion/complete"]
    assert completion.capability_required(REVISIONS["2024-11-05"]) == ()
    assert completion.capability_required(REVISIONS["2025-03-26"]) == ("completions",)


def test_has_capability_walks_structs_and_objects() -> None:
    capabilities = t.ServerCapabilities(resources=t.ResourcesCapability(subscribe=True), logging={})
    assert has_capability(capabilities, ("resources",))
    assert has_capability(capabilities, ("resources", "subscribe"))
    assert not has_capability(capabilities, ("resources", "list_changed"))
    assert has_capability(capabilities, ("logging",))
    assert not has_capability(capabilities, ("tools",))


# -- lifecycle ------------------------------------------------------------------------


def server_state() -> SessionState:
    return SessionState("server", t.ServerCapabilities(tools=t.ToolsCapability()))


def initialize_params(version: str = LATEST, **capabilities: object) -> t.InitializeParams:
    return t.InitializeParams(
        protocol_version=version,
        capabilities=t.ClientCapabilities(**capabilities),  # type: ignore[arg-type]
        client_info=t.Implementation(name="c", version="1"),
    )


def test_only_ping_and_initialize_before_initialization() -> None:
    state = server_state()
    assert state.check_inbound("ping").name == "ping"
    with pytest.raises(McpError) as raised:
        state.check_inbound("tools/list")
    assert raised.value.code == errors.INVALID_REQUEST
    state.receive_initialize(initialize_params())
    assert state.phase is Phase.INITIALIZING
    assert state.check_inbound("tools/list").name == "tools/list"
    state.receive_initialized()
    assert state.phase is Phase.OPERATING


def test_initialize_twice_is_refused() -> None:
    state = server_state()
    state.receive_initialize(initialize_params())
    with pytest.raises(McpError):
        state.receive_initialize(initialize_params())


def test_inbound_methods_are_gated_by_role_revision_and_our_capabilities() -> None:
    state = server_state()
    state.receive_initialize(initialize_params("2025-03-26"))
    for method in ("prompts/list", "sampling/createMessage", "no/such", "elicitation/create"):
        with pytest.raises(McpError) as raised:
            state.check_inbound(method)
        assert raised.value.code == errors.METHOD_NOT_FOUND


def test_outbound_requests_need_the_peers_capability() -> None:
    state = server_state()
    state.receive_initialize(initialize_params("2025-06-18", sampling={}))
    assert state.check_outbound("sampling/createMessage") is not None
    with pytest.raises(ProtocolViolation, match="roots"):
        state.check_outbound("roots/list")
    with pytest.raises(ProtocolViolation, match="sent by the client"):
        state.check_outbound("tools/call")
    with pytest.raises(ProtocolViolation, match="needs our own capability 'logging'"):
        state.check_outbound("notifications/message")
    older = server_state()
    older.receive_initialize(initialize_params("2025-03-26", elicitation={}))
    with pytest.raises(ProtocolViolation, match="does not exist in protocol revision 2025-03-26"):
        older.check_outbound("elicitation/create")
