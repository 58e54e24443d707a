"""Shared fixtures: connect a client to the sample server over each transport, recording the wire.

``connect(transport, server_spec)`` is the one way interaction tests open a
client: it wraps the client's message stream (and, in-process, the server's) in
a :class:`~wire.WireRecorder`, and when the block ends it validates every message
our code wrote against the official schema of the negotiated revision.

Transports are registered in :data:`CONNECTORS`; a test parametrized with the
``transport`` fixture runs over each of them. Adding a transport = adding a
connector.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio

from mcp_actors import Client, open_client
from mcp_actors.client.targets import load_server
from mcp_actors.transports.abc import MessageStream
from mcp_actors.transports.memory import memory_pair
from mcp_actors.transports.stdio import open_stdio_process

from wire import WireRecorder, assert_all_valid

TESTS = Path(__file__).parent
SAMPLE = "servers.sample:server"

Connector = Callable[..., AbstractAsyncContextManager[tuple[Client, list[WireRecorder]]]]


@asynccontextmanager
async def _memory(
    server_spec: str, env: dict[str, str] | None, **client_options: Any
) -> AsyncIterator[tuple[Client, list[WireRecorder]]]:
    server = load_server(server_spec)
    client_end, server_end = memory_pair()
    server_wire, client_wire = WireRecorder(server_end), WireRecorder(client_end)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.serve_session, server_wire)
        async with open_client(client_wire, **client_options) as client:
            yield client, [client_wire, server_wire]
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def _stdio(
    server_spec: str, env: dict[str, str] | None, **client_options: Any
) -> AsyncIterator[tuple[Client, list[WireRecorder]]]:
    command = (sys.executable, "-m", "mcp_actors.cli", "run", server_spec)
    async with open_stdio_process(command[0], command[1:], env=env, cwd=str(TESTS)) as stream:
        client_wire = WireRecorder(stream)
        async with open_client(client_wire, **client_options) as client:
            yield client, [client_wire, _Received(client_wire)]


class _Received(WireRecorder):
    """What the server process sent, seen from the client side (so it is validated too)."""

    def __init__(self, client_side: WireRecorder) -> None:
        self._client_side = client_side

    @property  # type: ignore[override]
    def sent(self) -> list[Any]:
        from mcp_actors.transports.abc import Outgoing

        return [Outgoing(payload) for payload in self._client_side.received]

    @property  # type: ignore[override]
    def received(self) -> list[bytes]:
        return self._client_side.sent_payloads


def _network(kind: str) -> Connector:
    """A connector that serves ``server_spec`` in-process on 127.0.0.1, a free port, over
    ``kind``: "http" (SSE replies), "http-json", "http-stateless", "sse" (legacy) or "ws"."""

    @asynccontextmanager
    async def connector(
        server_spec: str, env: dict[str, str] | None, **client_options: Any
    ) -> AsyncIterator[tuple[Client, list[WireRecorder]]]:
        from mcp_actors.server.serve_http import serve_http
        from mcp_actors.server.serve_websocket import serve_websocket
        from mcp_actors.transports.http_sse_client import open_sse_client
        from mcp_actors.transports.streamable_http_client import open_streamable_http
        from mcp_actors.transports.websocket import open_websocket_client

        server = load_server(server_spec)
        async with trio.open_nursery() as nursery:
            opener: AbstractAsyncContextManager[MessageStream]
            if kind == "ws":
                handle = await nursery.start(partial(serve_websocket, server, port=0))
                opener = open_websocket_client(handle.url)
            else:
                options = {
                    "json_response": kind == "http-json",
                    "stateless": kind == "http-stateless",
                }
                http = await nursery.start(partial(serve_http, server, port=0, **options))
                opener = (
                    open_sse_client(http.sse_url)
                    if kind == "sse"
                    else open_streamable_http(http.url, legacy_fallback=False)
                )
            async with opener as stream:
                client_wire = WireRecorder(stream)
                async with open_client(client_wire, **client_options) as client:
                    yield client, [client_wire, _Received(client_wire)]
            nursery.cancel_scope.cancel()

    return connector


CONNECTORS: dict[str, Connector] = {
    "memory": _memory,
    "stdio": _stdio,
    **{kind: _network(kind) for kind in ("http", "http-json", "http-stateless", "sse", "ws")},
}

#: What a transport cannot do. A test marked ``@pytest.mark.needs("feature", ...)`` is
#: skipped over a transport lacking one. "sessions": state kept between requests
#: (log level, subscriptions) and messages sent outside any request (list_changed,
#: resource updates); "server_requests": requests from server to client.
LACKS: dict[str, frozenset[str]] = {
    "http-stateless": frozenset({"sessions", "server_requests"}),
}
#: Tests written before the ``needs`` marker, and what they need (a name prefix each).
#: Prefer ``@pytest.mark.needs(...)`` on new tests.
NEEDS: dict[str, tuple[str, ...]] = {
    "test_server_to_client_request_from_a_handler": ("server_requests",),
    "test_log_messages_respect_the_session_level": ("sessions",),
    "test_tool_list_changes_are_announced": ("sessions",),
    "test_client_declares_what_its_handlers_imply": ("sessions",),
    "test_explicit_capabilities_take_precedence": ("sessions",),
    "test_read_templates_decode_their_variables": ("sessions",),  # reads the client's name
    "test_subscribe_": ("sessions",),
    "test_a_slow_subscriber_gets_the_latest_update": ("sessions",),
    "test_two_blocks_share_one_server_subscription": ("sessions",),
    "test_resource_list_changes_are_announced": ("sessions",),
    "test_prompt_list_changes_are_announced": ("sessions",),
    "test_python_logging_reaches_the_client_at_its_level": ("sessions",),
    "test_sampling": ("server_requests",),
    "test_elicit": ("server_requests",),
    "test_accepted_content_is_checked_against_the_schema": ("server_requests",),
    "test_enum_forms_are_refused_under_2025_06_18": ("server_requests",),
    "test_a_nested_form_is_refused_before_sending": ("server_requests",),
    "test_url_elicitation": ("server_requests",),
    "test_a_slow_elicitation_does_not_block_other_traffic": ("server_requests",),
    "test_roots_and_their_changes": ("server_requests",),
}


def _needs(node: Any) -> set[str]:
    marker = node.get_closest_marker("needs")
    needed = set(marker.args) if marker else set()
    name = getattr(node, "originalname", node.name)
    for prefix, features in NEEDS.items():
        if name.startswith(prefix):
            needed.update(features)
    return needed


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "needs(*features): skip over transports that lack a feature (conftest.LACKS)"
    )


@pytest.fixture(params=sorted(CONNECTORS))
def transport(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    missing = LACKS.get(name, frozenset()) & _needs(request.node)
    if missing:
        pytest.skip(f"{name} has no {', '.join(sorted(missing))}")
    return name


@asynccontextmanager
async def connect(
    transport: str,
    server_spec: str = SAMPLE,
    *,
    env: dict[str, str] | None = None,
    validate: bool = True,
    **client_options: Any,
) -> AsyncIterator[Client]:
    """A client connected to ``server_spec`` over ``transport``; the wire is checked at the end."""
    async with CONNECTORS[transport](server_spec, env, **client_options) as (client, recorders):
        yield client
        revision = client.protocol_version
    if validate:
        for recorder in recorders:
            assert_all_valid(recorder, revision)


@pytest.fixture
def events_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A file the sample server's handlers append events to (across processes)."""
    path = tmp_path / "events.txt"
    path.touch()
    monkeypatch.setenv("MCP_TEST_EVENTS", str(path))
    return path


async def wait_for_event(path: Path, line: str, timeout: float = 10.0) -> None:
    """Wait (bounded) until ``line`` appears in the events file."""
    with trio.fail_after(timeout):
        while line not in path.read_text().splitlines():
            await trio.sleep(0.01)
