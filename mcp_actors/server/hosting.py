"""Serving a Server over a transport chosen by name: ``stdio``, ``http``, ``sse`` or ``ws``.

One entry point for the ways a server is put on the air, so that
``server.run()``, ``mcp_actors.aio.serve``, ``mcp_actors.sync.serve`` and the
CLI agree: :func:`serve` runs until cancelled and reports an :class:`Endpoint`
(with the URL a client connects to) once it is listening; :func:`open_hosted`
is the same as an async context manager. ``http`` serves Streamable HTTP at
``path`` and legacy SSE at ``/sse``; ``sse`` is that server announced by its
legacy URL; ``ws`` is WebSocket. Network transports bind to 127.0.0.1 unless
told otherwise, and their modules (hypercorn, trio_websocket) are imported only
when chosen.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, Literal, get_args

import attrs
import trio

from .protocols import HostedServer
from .serve import check_port, run_until_interrupted, serve_stdio

TransportName = Literal["stdio", "http", "sse", "ws"]
TRANSPORTS: tuple[str, ...] = get_args(TransportName)
#: The largest TCP port number.


@attrs.frozen
class Endpoint:
    """Where a served server can be reached."""

    transport: TransportName
    #: The URL clients connect to (None over stdio).
    url: str | None


def check_transport(transport: str) -> TransportName:
    """``transport`` if it names a known transport, else a ValueError listing them."""
    if transport not in TRANSPORTS:
        raise ValueError(
            f"unknown transport {transport!r} (expected one of {', '.join(TRANSPORTS)})"
        )
    return transport  # type: ignore[return-value]


async def serve(
    server: HostedServer,
    transport: TransportName = "stdio",
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    task_status: trio.TaskStatus[Endpoint] = trio.TASK_STATUS_IGNORED,
    **options: Any,
) -> None:
    """Serve ``server`` over ``transport`` until cancelled (stdio: until stdin closes).

    ``options`` go to :func:`~.serve_http.serve_http` (``path``, ``stateless``,
    ``json_response``, ``config``...) or :func:`~.serve_websocket.serve_websocket`.
    ``port``: see :func:`check_port` (a ValueError before anything starts).
    """
    check_transport(transport)
    if transport != "stdio":
        check_port(port)
    if transport == "stdio":
        task_status.started(Endpoint("stdio", None))
        await serve_stdio(server)
        return
    async with trio.open_nursery() as nursery:
        if transport == "ws":
            from .serve_websocket import serve_websocket

            ws = await nursery.start(
                partial(serve_websocket, server, host=host, port=port, **options)
            )
            task_status.started(Endpoint("ws", ws.url))
        else:
            from .serve_http import serve_http

            http = await nursery.start(partial(serve_http, server, host=host, port=port, **options))
            task_status.started(
                Endpoint(transport, http.sse_url if transport == "sse" else http.url)
            )


@asynccontextmanager
async def open_hosted(
    server: HostedServer, transport: TransportName = "http", **options: Any
) -> AsyncIterator[Endpoint]:
    """Serve ``server`` for the duration of the block; yields its :class:`Endpoint`.
    A bad ``transport`` or ``port`` is a ValueError before anything starts."""
    check_transport(transport)
    if transport != "stdio" and "port" in options:
        check_port(options["port"])
    async with trio.open_nursery() as nursery:
        endpoint: Endpoint = await nursery.start(partial(serve, server, transport, **options))
        yield endpoint
        nursery.cancel_scope.cancel()


def run(
    server: HostedServer,
    transport: TransportName = "stdio",
    *,
    announce: bool = True,
    **options: Any,
) -> None:
    """Blocking: serve ``server`` until stdin closes (stdio) or Ctrl-C; quiet on Ctrl-C.

    Over a network transport, ``announce`` prints the URL to stderr once listening
    (how a caller learns the port picked for ``port=0``).
    """

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            endpoint: Endpoint = await nursery.start(partial(serve, server, transport, **options))
            if announce and endpoint.url is not None:
                print(
                    f"mcp-actors: serving {server.name} at {endpoint.url}",
                    file=sys.stderr,
                    flush=True,
                )

    check_transport(transport)
    run_until_interrupted(main)
