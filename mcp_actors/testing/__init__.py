"""A pytest plugin for testing MCP servers: a connected client, the wire checked against the spec.

Installed with mcp-actors (entry point ``pytest11``), so pytest loads it by itself;
its fixtures need ``pip install 'mcp-actors[testing]'`` (pytest-trio, jsonschema),
and async tests run under pytest-trio (``trio_mode = true`` in the pytest
configuration, or ``@pytest.mark.trio`` on each test); without either, pytest stops
with a usage error saying what to add (:mod:`.prerequisites`). Tell it your server with a
fixture named ``mcp_server``::

    # conftest.py
    import pytest
    from my_server import server

    @pytest.fixture
    def mcp_server():
        return server  # a Server, or a target: "my_module:server", "path/to/file.py"

    # test_my_server.py
    async def test_add(mcp_client):
        result = await mcp_client.call_tool("add", {"a": 1, "b": 2})
        assert result.structured_content == {"result": 3}

Fixtures:

- ``mcp_client``: a :class:`~mcp_actors.client.client.Client` connected to
  ``mcp_server`` over ``mcp_transport``. When the test ends, every message either
  side wrote is validated against the official JSON Schema of the negotiated
  protocol revision (packaged in ``mcp_actors/testing/schemas/``), with JSON-RPC id
  hygiene; a violation fails the test with the message and the schema's complaint.
- ``mcp_transport``: ``"memory"`` by default (the server runs in the test's own
  Trio run); ``"stdio"`` launches ``mcp-actors run TARGET`` as a child process
  (a Server is found by the module attribute holding it); ``"http"`` serves it on
  127.0.0.1, a free port, over Streamable HTTP. Parametrize it to run a test over
  several: ``@pytest.mark.parametrize("mcp_transport", ["memory", "stdio", "http"])``.
- ``mcp_era``: ``"auto"`` by default (the client probes with ``server/discover`` and
  speaks the 2026-07-28 era to a server that answers, else the legacy one);
  ``"modern"`` or ``"legacy"`` pins one. Parametrize it to test both:
  ``@pytest.mark.parametrize("mcp_era", ["modern", "legacy"])``.
- ``mcp_wire``: the :class:`~mcp_actors.testing.wire.WireRecorder` of the client's
  side (``sent_messages()``, ``received``), to assert on what went over the wire.

:func:`open_checked_client` is the same without pytest.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

import attrs
import pytest
import trio

from ..client.client import Client, Era, open_client
from ..client.targets import load_server
from ..server.app import Server
from ..transports.abc import MessageStream
from ..transports.memory import memory_pair
from ..transports.stdio import open_stdio_process
from .prerequisites import check_items

if TYPE_CHECKING:
    from .wire import Recorded, WireRecorder

__all__ = ["CheckedConnection", "open_checked_client"]

TestTransport = Literal["memory", "stdio", "http"]


@attrs.define
class CheckedConnection:
    """A client, and the recorders whose messages are validated when the connection ends."""

    client: Client
    #: What the client sent and received.
    wire: WireRecorder
    #: What the server sent, when it runs in-process (else it is read from ``wire``).
    server_wire: WireRecorder | None = None

    def recorders(self) -> list[Recorded]:
        """Both sides' messages, each as the recorder of what that side sent."""
        return [self.wire, self.server_wire or self.wire.peer()]


@asynccontextmanager
async def open_checked_client(
    server: Server | str, transport: TestTransport = "memory", **client_options: Any
) -> AsyncIterator[CheckedConnection]:
    """Connect to ``server`` over ``transport``, recording the wire; validate it at the end.

    Raises AssertionError when the block ends if a message either side sent is not
    valid for the negotiated revision (see :mod:`.wire`).
    """
    from .wire import assert_all_valid

    async with _connect(server, transport, **client_options) as connection:
        yield connection
        revision = connection.client.protocol_version
    for recorder in connection.recorders():
        assert_all_valid(recorder, revision)


def _connect(
    server: Server | str, transport: TestTransport, **client_options: Any
) -> AbstractAsyncContextManager[CheckedConnection]:
    if transport == "memory":
        return _memory(
            server if isinstance(server, Server) else load_server(server), client_options
        )
    if transport == "stdio":
        return _stdio(server if isinstance(server, str) else _target_of(server), client_options)
    if transport == "http":
        return _http(server if isinstance(server, Server) else load_server(server), client_options)
    raise ValueError(f"unknown test transport {transport!r} (memory, stdio or http)")


def _target_of(server: Server) -> str:
    """``FILE.py:ATTR`` of the module attribute holding ``server``, for a child process."""
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path is None or not path.endswith(".py"):
            continue
        for attribute, value in list(vars(module).items()):
            if value is server:
                return f"{path}:{attribute}"
    raise TypeError(
        f"over stdio, the server {server.name!r} must be a module attribute (a child process"
        " imports it), or mcp_server must return a target string ('my_module:server')"
    )


@asynccontextmanager
async def _memory(server: Server, options: dict[str, Any]) -> AsyncIterator[CheckedConnection]:
    from .wire import WireRecorder

    client_end, server_end = memory_pair()
    server_wire, client_wire = WireRecorder(server_end), WireRecorder(client_end)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.serve_session, server_wire)
        async with open_client(client_wire, **options) as client:
            yield CheckedConnection(client, client_wire, server_wire)
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def _stdio(target: str, options: dict[str, Any]) -> AsyncIterator[CheckedConnection]:
    command = (sys.executable, "-m", "mcp_actors.cli", "run", target)
    async with (
        open_stdio_process(command[0], command[1:]) as stream,
        _recorded_client(stream, options) as connection,
    ):
        yield connection


@asynccontextmanager
async def _http(server: Server, options: dict[str, Any]) -> AsyncIterator[CheckedConnection]:
    from ..server.serve_http import serve_http
    from ..transports.http.client import open_streamable_http

    async with trio.open_nursery() as nursery:
        http = await nursery.start(partial(serve_http, server, port=0))
        async with (
            open_streamable_http(http.url, legacy_fallback=False) as stream,
            _recorded_client(stream, options) as connection,
        ):
            yield connection
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def _recorded_client(
    stream: MessageStream, options: dict[str, Any]
) -> AsyncIterator[CheckedConnection]:
    from .wire import WireRecorder

    client_wire = WireRecorder(stream)
    async with open_client(client_wire, **options) as client:
        yield CheckedConnection(client, client_wire)


# -- the fixtures ----------------------------------------------------------------------


@pytest.hookimpl(trylast=True)  # after pytest-trio's trio mode marked the async tests
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Stop the run with a usage error if a test uses a fixture it cannot (see
    :mod:`.prerequisites`)."""
    check_items(config, items)


@pytest.fixture
def mcp_server() -> Server | str:
    """The server under test: override this fixture (a Server, or a target string)."""
    raise pytest.UsageError(
        "define a fixture named mcp_server returning your Server (or a target string such as"
        " 'my_module:server') in conftest.py or the test module"
    )


@pytest.fixture
def mcp_transport() -> TestTransport:
    """How ``mcp_client`` reaches the server: "memory" unless parametrized."""
    return "memory"


@pytest.fixture
def mcp_era() -> Era:
    """Which era ``mcp_client`` speaks: "auto" (probe, then fall back) unless parametrized."""
    return "auto"


@pytest.fixture
async def mcp_connection(
    mcp_server: Server | str, mcp_transport: TestTransport, mcp_era: Era
) -> AsyncIterator[CheckedConnection]:
    """The connection behind ``mcp_client`` and ``mcp_wire``; validated at teardown."""
    async with open_checked_client(mcp_server, mcp_transport, era=mcp_era) as connection:
        yield connection


@pytest.fixture
def mcp_client(mcp_connection: CheckedConnection) -> Client:
    """A client connected to ``mcp_server`` (see the module docstring)."""
    return mcp_connection.client


@pytest.fixture
def mcp_wire(mcp_connection: CheckedConnection) -> WireRecorder:
    """What the client sent (``sent_messages()``) and received (``received``)."""
    return mcp_connection.wire
