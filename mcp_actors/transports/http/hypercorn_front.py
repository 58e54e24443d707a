"""The hypercorn front end, with this package's connection limits around it.

hypercorn parses and serves each connection (HTTP/1.1, HTTP/2) but has no
connection caps and no send timeout: its writes wait, shielded, for as long as the
peer does not read. So connections are accepted here, by the same
:class:`~.connection_gate.ConnectionGate` as the lean front end's (global and
per-client caps, a reserve for health checks and new clients, a send timeout, a reset
cancelling what the connection serves), and each admitted one is handed to hypercorn's
own per-connection server (``hypercorn.trio.tcp_server.TCPServer``) on a
:class:`~.connection_gate.GuardedStream`. Connections restricted by a cap are served
by the lean server's :meth:`~.lean.LeanHttpServer.serve_restricted` (one health
check, else 503). hypercorn itself is not patched.

Graceful shutdown is hypercorn's own (its worker's steps): stop accepting, tell the
connections the worker is terminating (idle ones close, a response in progress says
``Connection: close``), and cancel what is left after the graceful timeout.
"""

from __future__ import annotations

import socket
from collections.abc import Awaitable, Callable, MutableMapping
from functools import partial
from typing import Any, cast

import trio
from hypercorn.config import Config
from hypercorn.trio.tcp_server import TCPServer
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import ConnectionState
from hypercorn.utils import wrap_app

from .connection_gate import ConnectionGate, GuardedStream
from .lean import LeanHttpServer

#: Bytes hypercorn reads at a time (it asks for 64 KiB): while it serves a request it
#: keeps what the connection pipelined behind it, up to one read, in h11's buffer.
HYPERCORN_READ_SIZE = 16 * 1024

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]


async def serve_hypercorn(
    app: Any,
    config: Config,
    gate: ConnectionGate,
    restricted: LeanHttpServer,
    host: str,
    port: int,
    sock: socket.socket | None,
    shutdown: trio.Event,
    *,
    task_status: trio.TaskStatus[list[tuple[str, int]]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the ASGI ``app`` with hypercorn on ``host:port`` (or the listening
    ``sock``) until ``shutdown`` is set, then shut down gracefully
    (``config.graceful_timeout``); ``task_status.started`` reports the bound addresses."""
    if sock is None:
        listeners = await trio.open_tcp_listeners(port, host=host)
    else:
        listeners = [trio.SocketListener(trio.socket.from_stdlib_socket(sock))]
    context = WorkerContext(None)

    async def serve_connection(stream: GuardedStream) -> None:
        wrapped = wrap_app(_until_gone(app, stream), config.wsgi_max_body_size, "asgi")
        state = ConnectionState({})
        await TCPServer(wrapped, config, context, state, cast(Any, stream)).run()

    async with trio.open_nursery() as connections:
        accepting = trio.CancelScope()

        async def accept() -> None:
            with accepting:
                await gate.serve(
                    listeners, serve_connection, restricted.serve_restricted, connections
                )

        connections.start_soon(accept)
        task_status.started([_address(listener.socket.getsockname()) for listener in listeners])
        await shutdown.wait()
        accepting.cancel()
        for listener in listeners:
            await listener.aclose()
        await restricted.shutdown()
        await context.terminated.set()
        connections.cancel_scope.deadline = trio.current_time() + config.graceful_timeout


def _until_gone(app: Any, stream: GuardedStream) -> Any:
    """``app`` as one connection's requests reach it: once the peer is gone
    (:attr:`GuardedStream.gone`: hypercorn, not reading a connection whose pipelined
    requests wait, would not notice), ``receive()`` says ``http.disconnect`` and the
    requests still queued are not run."""

    async def guarded(scope: Scope, receive: Receive, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
        elif not stream.gone.is_set():
            await app(scope, partial(_receive_until_gone, receive, stream.gone), send)

    return guarded


async def _receive_until_gone(receive: Receive, gone: trio.Event) -> Message:
    """What ``receive()`` returns, or ``http.disconnect`` once ``gone`` is set first."""
    if gone.is_set():
        return {"type": "http.disconnect"}
    received: list[Message] = []
    async with trio.open_nursery() as racing:

        async def first() -> None:
            received.append(await receive())
            racing.cancel_scope.cancel()

        async def until_gone() -> None:
            await gone.wait()
            racing.cancel_scope.cancel()

        racing.start_soon(first)
        racing.start_soon(until_gone)
    return received[0] if received else {"type": "http.disconnect"}


def _address(name: Any) -> tuple[str, int]:
    return str(name[0]), int(name[1])
