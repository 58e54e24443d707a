"""The serving GC policy: the entry points apply it, and requests make no reference cycles.

:mod:`mcp_actors.runtime.gc_policy` freezes what start-up left alive and makes full
collections rare. Three things are checked as a user would see them:

- ``mcp-actors run`` (``run_stdio``, ``run_http`` on both front ends and with workers,
  ``run_websocket``) applies it once listening: a tool of the served process reports
  its collector's settings;
- the policy's premise, that a request leaves no cyclic garbage (what a server holds
  goes by reference counting, so rare full collections leave nothing behind): after
  warm-up, hundreds of requests with the collector off leave nothing for
  :func:`gc.collect` to find, in-process over the memory transport (both eras, a tool
  served inline and one served as a task) and over Streamable HTTP (a legacy
  session, raw HTTP/1.1 on one connection, on each front end);
- and that a session that ends leaves none either: its parts let go of it, so an ended
  legacy HTTP session, and the session of each stateless or 2026-07-28 request, is
  freed by reference counting.
"""

from __future__ import annotations

import gc
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from functools import partial
from types import FrameType
from typing import Any

import pytest
import trio
from test_modern_server import MODERN_VERSION, modern_meta

from mcp_actors import open_client
from mcp_actors.client.targets import load_server
from mcp_actors.runtime.gc_policy import FULL_COLLECTION_EVERY
from mcp_actors.server.serve_http import FRONT_END_VARIABLE, serve_http
from mcp_actors.transports.abc import Outgoing
from mcp_actors.transports.http.config import HttpConfig
from mcp_actors.transports.memory import memory_pair
from mcp_actors.transports.stdio import open_stdio_process

from conftest import HYPERCORN, SAMPLE, TESTS, served_by_cli

GC_STATE = "servers.gc_state:server"
LEGACY = "2025-11-25"
#: Requests measured after the warm-up (caches, first-use imports, pools filled).
REQUESTS = 200
WARM_UP = 50

# -- the entry points apply it ---------------------------------------------------------------


@asynccontextmanager
async def stdio_target() -> AsyncIterator[Any]:
    command = [sys.executable, "-m", "mcp_actors.cli", "run", GC_STATE]
    async with open_stdio_process(command[0], command[1:], cwd=str(TESTS)) as stream:
        yield stream


@asynccontextmanager
async def cli_target(*arguments: str) -> AsyncIterator[Any]:
    async with served_by_cli(*arguments, spec=GC_STATE) as url:
        yield url


TARGETS: dict[str, Callable[[], AbstractAsyncContextManager[Any]]] = {
    "stdio": stdio_target,
    "http": partial(cli_target, "--transport", "http", "--port", "0"),
    "http-hypercorn": partial(cli_target, "--transport", "http", "--port", "0"),
    "http-workers": partial(cli_target, "--transport", "http", "--port", "0", "--workers", "2"),
    "ws": partial(cli_target, "--transport", "ws", "--port", "0"),
}


@pytest.mark.parametrize("transport", sorted(TARGETS))
async def test_the_serving_entry_points_apply_the_gc_policy(
    transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if transport.endswith(HYPERCORN):
        monkeypatch.setenv(FRONT_END_VARIABLE, "hypercorn")
    with trio.fail_after(60):  # a hang guard only
        async with TARGETS[transport]() as target, open_client(target) as client:
            result = await client.call_tool("gc_state", {})
    state = result.structured_content
    assert state["full_collection_every"] == FULL_COLLECTION_EVERY
    assert state["frozen"] > 10_000  # start-up: modules, classes, the server's tools


# -- requests make no reference cycles -------------------------------------------------------


@contextmanager
def cyclic_garbage() -> Iterator[list[str]]:
    """The collector off for the block; then what it finds unreachable, one line per object.

    An empty list means the block made no reference cycle. Each line names the object's
    type (and a frame's function, an exception's message) so a failure says what leaked.
    Every object alive before the block is held through it: one that an earlier test
    left to be let go of later (a thread of trio's cache that ends after its idle
    timeout, say) would otherwise be found here, as a cycle the block did not make.
    """
    gc.collect()
    alive_before = gc.get_objects()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    found: list[str] = []
    try:
        yield found
    finally:
        gc.collect()
        gc.set_debug(0)
        found.extend(describe(garbage) for garbage in gc.garbage)
        gc.garbage.clear()
        del alive_before
        gc.enable()


def describe(garbage: object) -> str:
    if isinstance(garbage, FrameType):
        return f"frame of {garbage.f_code.co_qualname} ({garbage.f_code.co_filename})"
    if isinstance(garbage, BaseException):
        return f"{type(garbage).__qualname__}: {garbage}"
    return type(garbage).__qualname__


def message(request_id: int, method: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


def initialize(request_id: int = 0) -> bytes:
    client = {"name": "raw", "version": "0"}
    params = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": client}
    return message(request_id, "initialize", params).encode()


INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


def tools_call(request_id: int, name: str, modern: bool = False) -> bytes:
    params: dict[str, Any] = {"name": name, "arguments": {"text": "x"} if name == "echo" else {}}
    if name == "add":
        params["arguments"] = {"a": 1, "b": 2}
    if modern:
        params["_meta"] = modern_meta()
    return message(request_id, "tools/call", params).encode()


@pytest.mark.parametrize("transport", ["memory"])
@pytest.mark.parametrize(
    ("era", "tool"),
    [("legacy", "add"), ("legacy", "echo"), ("modern", "add"), ("modern", "echo")],
)
async def test_a_request_in_process_leaves_no_cyclic_garbage(
    transport: str, era: str, tool: str
) -> None:
    """``add`` is served as a task, ``echo`` inline by the reader (the everything server)."""
    server = load_server("mcp_actors_everything.server:create" if tool == "echo" else SAMPLE)
    client_end, server_end = memory_pair()

    async def call(request_id: int) -> None:
        await client_end.send_all([Outgoing(tools_call(request_id, tool, era == "modern"))])
        answer = json.loads(await client_end.receive())
        assert answer["id"] == request_id and "result" in answer, answer

    with trio.fail_after(60):  # a hang guard only
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.serve_session, server_end)
            if era == "legacy":
                await client_end.send_all([Outgoing(initialize())])
                await client_end.receive()
                await client_end.send_all([Outgoing(INITIALIZED)])
            found = await garbage_after(call)
            nursery.cancel_scope.cancel()
    assert found == []


async def calls(call: Callable[[int], Awaitable[None]], first: int) -> None:
    count = WARM_UP if first == 1 else REQUESTS
    for request_id in range(first, first + count):
        await call(request_id)


def post(body: bytes, *headers: str, version: str = LEGACY) -> bytes:
    head = [
        "POST /mcp HTTP/1.1",
        "Host: 127.0.0.1",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        f"MCP-Protocol-Version: {version}",
        f"Content-Length: {len(body)}",
        *headers,
    ]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


async def exchange(stream: trio.SocketStream, request: bytes) -> tuple[bytes, bytes]:
    """Send one request; its response's head and body (``Content-Length`` or chunked)."""
    await stream.send_all(request)
    data = b""
    while b"\r\n\r\n" not in data:
        data += await stream.receive_some(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.lower().split(b"\r\n")
    length = [int(line.split(b":")[1]) for line in lines if line.startswith(b"content-length:")]
    while (len(body) < length[0]) if length else not body.endswith(b"0\r\n\r\n"):
        body += await stream.receive_some(65536)
    return head, body


def session_id(head: bytes) -> str:
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.lower() == b"mcp-session-id":
            return value.strip().decode()
    raise AssertionError(f"no Mcp-Session-Id in {head!r}")


@asynccontextmanager
async def raw_http(
    http_front_end: str, *, stateless: bool | None = None
) -> AsyncIterator[trio.SocketStream]:
    """A raw HTTP/1.1 connection to the sample server on ``http_front_end``."""
    config = HttpConfig(front_end="hypercorn" if http_front_end == "hypercorn" else None)
    async with trio.open_nursery() as nursery:
        serve = partial(serve_http, load_server(SAMPLE), port=0, config=config, stateless=stateless)
        handle = await nursery.start(serve)
        stream = await trio.open_tcp_stream("127.0.0.1", handle.port)
        yield stream
        await stream.aclose()
        nursery.cancel_scope.cancel()


async def garbage_after(call: Callable[[int], Awaitable[None]]) -> list[str]:
    """``call`` warmed up, then made :data:`REQUESTS` times with the collector off: what
    the collector then finds (see :func:`cyclic_garbage`)."""
    await calls(call, 1)
    with cyclic_garbage() as found:
        await calls(call, 1 + WARM_UP)
    return found


async def test_a_legacy_http_request_leaves_no_cyclic_garbage(http_front_end: str) -> None:
    with trio.fail_after(60):  # a hang guard only
        async with raw_http(http_front_end) as stream:
            head, _ = await exchange(stream, post(initialize()))
            session = f"Mcp-Session-Id: {session_id(head)}"
            await exchange(stream, post(INITIALIZED, session))

            async def call(request_id: int) -> None:
                head, body = await exchange(stream, post(tools_call(request_id, "add"), session))
                assert head.startswith(b"HTTP/1.1 200") and b'"result"' in body, (head, body)

            found = await garbage_after(call)
    assert found == []


#: One-exchange HTTP: a stateless server's request and notification, a 2026-07-28
#: request. Each is served by a session of its own that ends with the reply.
ONE_EXCHANGE = ("stateless-call", "stateless-notification", "modern-call")


@pytest.mark.parametrize("workload", ONE_EXCHANGE)
async def test_a_one_exchange_http_request_leaves_no_cyclic_garbage(
    http_front_end: str, workload: str
) -> None:
    """Its session, ended, is freed by reference counting: nothing waits for the rare
    full collection (``add`` is served as a task, beside no reader)."""
    modern = workload == "modern-call"
    headers = ("MCP-Method: tools/call", "MCP-Name: add") if modern else ()
    version = MODERN_VERSION if modern else LEGACY
    with trio.fail_after(60):  # a hang guard only
        async with raw_http(http_front_end, stateless=True) as stream:

            async def call(request_id: int) -> None:
                if workload == "stateless-notification":
                    head, _ = await exchange(stream, post(INITIALIZED))
                    assert head.startswith(b"HTTP/1.1 202"), head
                    return
                body = tools_call(request_id, "add", modern)
                head, body = await exchange(stream, post(body, *headers, version=version))
                assert head.startswith(b"HTTP/1.1 200") and b'"result"' in body, (head, body)

            found = await garbage_after(call)
    assert found == []


def delete(*headers: str) -> bytes:
    head = ["DELETE /mcp HTTP/1.1", "Host: 127.0.0.1", f"MCP-Protocol-Version: {LEGACY}", *headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode()


async def test_an_ended_legacy_http_session_leaves_no_cyclic_garbage(http_front_end: str) -> None:
    """Sessions opened, used and deleted: each is freed by reference counting."""
    with trio.fail_after(60):  # a hang guard only
        async with raw_http(http_front_end) as stream:

            async def session(request_id: int) -> None:
                head, _ = await exchange(stream, post(initialize(request_id)))
                header = f"Mcp-Session-Id: {session_id(head)}"
                await exchange(stream, post(INITIALIZED, header))
                head, body = await exchange(stream, post(tools_call(1, "add"), header))
                assert b'"result"' in body, (head, body)
                head, _ = await exchange(stream, delete(header))
                assert head.startswith(b"HTTP/1.1 200") or head.startswith(b"HTTP/1.1 204"), head

            found = await garbage_after(session)
    assert found == []
