"""Shared fixtures: connect a client to the sample server over each transport, recording the wire.

``connect(transport, server_spec)`` is the one way interaction tests open a
client: it wraps the client's message stream (and, in-process, the server's) in
a :class:`~mcp_actors.testing.wire.WireRecorder`, and when the block ends it validates every message
our code wrote against the official schema of the negotiated revision.

Transports are registered in :data:`CONNECTORS`; a test parametrized with the
``transport`` fixture runs over each of them. Adding a transport = adding a
connector.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio

from mcp_actors import Client, open_client
from mcp_actors.client.targets import load_server
from mcp_actors.testing.wire import Recorded, WireRecorder, assert_all_valid
from mcp_actors.transports.abc import MessageStream
from mcp_actors.transports.memory import memory_pair
from mcp_actors.transports.stdio import open_stdio_process

from servers.authorization_server import AuthorizationServer, start_authorization_server

pytest_plugins = ["pytester"]

TESTS = Path(__file__).parent
SAMPLE = "servers.sample:server"

Connector = Callable[..., AbstractAsyncContextManager[tuple[Client, list[Recorded]]]]


@asynccontextmanager
async def _memory(
    server_spec: str, env: dict[str, str] | None, **client_options: Any
) -> AsyncIterator[tuple[Client, list[Recorded]]]:
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
) -> AsyncIterator[tuple[Client, list[Recorded]]]:
    command = (sys.executable, "-m", "mcp_actors.cli", "run", server_spec)
    async with open_stdio_process(command[0], command[1:], env=env, cwd=str(TESTS)) as stream:
        client_wire = WireRecorder(stream)
        async with open_client(client_wire, **client_options) as client:
            yield client, [client_wire, client_wire.peer()]


#: The HTTP servers ``serve_http`` can run (``HttpConfig.front_end``); every HTTP test
#: runs on each: the ``transport`` kinds below come in both, and a test module that
#: imports ``serve_http`` runs each of its tests once per front end (``http_front_end``).
FRONT_ENDS = ("lean", "hypercorn")
HYPERCORN = "-hypercorn"


def _network(kind: str, front_end: str = "lean") -> Connector:
    """A connector that serves ``server_spec`` in-process on 127.0.0.1, a free port, over
    ``kind``: "http" (SSE replies), "http-json", "http-stateless", "sse" (legacy) or "ws";
    HTTP kinds on ``front_end``."""

    @asynccontextmanager
    async def connector(
        server_spec: str, env: dict[str, str] | None, **client_options: Any
    ) -> AsyncIterator[tuple[Client, list[Recorded]]]:
        from mcp_actors.server.serve_http import serve_http
        from mcp_actors.server.serve_websocket import serve_websocket
        from mcp_actors.transports.http.client import open_streamable_http
        from mcp_actors.transports.http.config import HttpConfig
        from mcp_actors.transports.http.sse_client import open_sse_client
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
                    # The plain kinds leave the choice to MCP_ACTORS_HTTP_FRONT_END (lean
                    # unless a module's ``http_front_end`` parameter says otherwise).
                    "config": HttpConfig(
                        front_end="hypercorn" if front_end == "hypercorn" else None
                    ),
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
                    yield client, [client_wire, client_wire.peer()]
            nursery.cancel_scope.cancel()

    return connector


CONNECTORS: dict[str, Connector] = {
    "memory": _memory,
    "stdio": _stdio,
    **{kind: _network(kind) for kind in ("http", "http-json", "http-stateless", "sse", "ws")},
    **{
        kind + HYPERCORN: _network(kind, "hypercorn")
        for kind in ("http", "http-json", "http-stateless", "sse")
    },
}

#: What a transport cannot do. A test marked ``@pytest.mark.needs("feature", ...)`` is
#: skipped over a transport lacking one. "sessions": state kept between requests
#: (log level, subscriptions) and messages sent outside any request (list_changed,
#: resource updates); "server_requests": requests from server to client.
LACKS: dict[str, frozenset[str]] = {
    "http-stateless": frozenset({"sessions", "server_requests"}),
    "http-stateless" + HYPERCORN: frozenset({"sessions", "server_requests"}),
}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "needs(*features): run only over transports that have them (conftest.LACKS)"
    )


def _parametrizes_transport(metafunc: pytest.Metafunc) -> bool:
    """Whether the test names its own transports with ``@pytest.mark.parametrize``."""
    for mark in metafunc.definition.iter_markers("parametrize"):
        names = mark.args[0]
        if isinstance(names, str):
            names = [name.strip() for name in names.split(",")]
        if "transport" in names:
            return True
    return False


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``transport`` over every connector that can do what the test needs.

    A combination a transport cannot support (a subscription over stateless HTTP) is
    not generated at all, rather than generated and skipped.
    """
    if "transport" not in metafunc.fixturenames:
        if hasattr(metafunc.module, "serve_http"):
            metafunc.parametrize("http_front_end", FRONT_ENDS, indirect=True)
        return
    if _parametrizes_transport(metafunc):
        return
    needed = {f for mark in metafunc.definition.iter_markers("needs") for f in mark.args}
    kinds = [kind for kind in sorted(CONNECTORS) if not LACKS.get(kind, frozenset()) & needed]
    metafunc.parametrize("transport", kinds)


@asynccontextmanager
async def connect(
    transport: str,
    server_spec: str = SAMPLE,
    *,
    env: dict[str, str] | None = None,
    validate: bool = True,
    **client_options: Any,
) -> AsyncIterator[Client]:
    """A client connected to ``server_spec`` over ``transport``; the wire is checked at the end.

    The client speaks the legacy era unless the test asks for another (``era=`` or
    ``protocol_version=``): these tests cover what a session offers (subscriptions,
    requests from the server, the log level), which the 2026-07-28 era does not have in
    that form; ``test_modern_*.py`` cover the modern era.
    """
    if "era" not in client_options and "protocol_version" not in client_options:
        client_options["era"] = "legacy"
    async with CONNECTORS[transport](server_spec, env, **client_options) as (client, recorders):
        yield client
        revision = client.protocol_version
    if validate:
        for recorder in recorders:
            assert_all_valid(recorder, revision)


@pytest.fixture(autouse=True)
def http_front_end(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str | None:
    """The HTTP front end ``serve_http`` runs in this test (None: not parametrized), set
    through ``MCP_ACTORS_HTTP_FRONT_END`` so that servers started in subprocesses use it too."""
    front_end: str | None = getattr(request, "param", None)
    if front_end is not None:
        monkeypatch.setenv("MCP_ACTORS_HTTP_FRONT_END", front_end)
    return front_end


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


@pytest.fixture(scope="session")
def oauth() -> Iterator[AuthorizationServer]:
    """A real OAuth authorization server (oidc-provider), one for the whole run."""
    server = start_authorization_server()
    try:
        yield server
    finally:
        server.stop()


# -- raw HTTP over a socket (the front ends' own tests) -------------------------------------


async def read_until(stream: trio.SocketStream, count: int, marker: bytes) -> bytes:
    """What the server sends until ``marker`` was seen ``count`` times, or EOF."""
    data = b""
    with trio.fail_after(10):
        while data.count(marker) < count:
            chunk = await stream.receive_some(65536)
            if not chunk:
                break
            data += chunk
    return data


async def read_to_eof(stream: trio.SocketStream) -> bytes:
    """Everything the server sends until it closes the connection."""
    data = b""
    with trio.fail_after(10):
        while chunk := await stream.receive_some(65536):
            data += chunk
    return data


@asynccontextmanager
async def served_by_cli(*arguments: str, spec: str = SAMPLE) -> AsyncIterator[str]:
    """``mcp-actors run SPEC ARGUMENTS...`` as a child process: the URL it announces on
    stderr (read within 20 s); the process is terminated when the block ends."""
    command = [sys.executable, "-m", "mcp_actors.cli", "run", spec, *arguments]
    async with trio.open_nursery() as nursery:
        process: trio.Process = await nursery.start(
            partial(
                trio.run_process,
                command,
                stderr=subprocess.PIPE,
                cwd=str(TESTS),
                check=False,
            )
        )
        try:
            assert process.stderr is not None
            line = b""
            with trio.fail_after(20):
                while b"\n" not in line:
                    line += await process.stderr.receive_some(4096)
            yield line.decode().split(" at ", 1)[1].split()[0]
        finally:
            process.terminate()
