"""Running a server over WebSocket (``trio_websocket``), one session actor per connection.

Each accepted connection becomes a session started in the server's supervisor;
the connection's handler task only waits for that session to end (trio_websocket
closes a connection when its handler returns). Importing this module imports
``trio_websocket``; ``import mcp_actors`` does not.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Sequence
from functools import partial
from typing import Any

import attrs
import trio
import trio_websocket

from ..runtime.supervisor import Supervisor, open_supervisor
from ..transports.http_security import HostPolicy
from ..transports.websocket import accept_mcp_websocket
from .app import Server

log = logging.getLogger("mcp_actors.websocket")


@attrs.frozen
class WebSocketServerHandle:
    """What :func:`serve_websocket` reports once it is listening."""

    host: str
    port: int
    supervisor: Supervisor

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"ws://{host}:{self.port}/mcp"


async def serve_websocket(
    server: Server,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    max_message_size: int | None = None,
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
    task_status: trio.TaskStatus[WebSocketServerHandle] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``server`` over WebSocket until cancelled. ``port=0`` picks a free port.

    Any path is accepted; the URL reported uses ``/mcp``. Messages larger than
    ``max_message_size`` (default: the server's ``config.max_message_size``)
    close the connection with code 1009.
    """
    policy = HostPolicy.for_bind(host, allowed_hosts=allowed_hosts, allowed_origins=allowed_origins)
    limit = max_message_size or server.config.max_message_size

    async with open_supervisor() as supervisor, trio.open_nursery() as nursery:

        async def handle(request: trio_websocket.WebSocketRequest) -> None:
            stream = await accept_mcp_websocket(request, policy)
            if stream is None:
                return
            session = server.create_session(stream)
            await supervisor.start_session(session)
            await session.closed.wait()

        listener = await nursery.start(_serve, handle, host, port, limit, nursery)
        task_status.started(WebSocketServerHandle(host, listener.port, supervisor))


async def _serve(
    handle: Any,
    host: str,
    port: int,
    limit: int,
    nursery: trio.Nursery,
    *,
    task_status: trio.TaskStatus[trio_websocket.WebSocketServer] = trio.TASK_STATUS_IGNORED,
) -> None:
    await trio_websocket.serve_websocket(
        handle,
        host,
        port,
        None,
        handler_nursery=nursery,
        max_message_size=limit,
        task_status=task_status,
    )


def run_websocket(server: Server, *, announce: bool = False, **options: Any) -> None:
    """Blocking entry point: ``trio.run(serve_websocket, server, ...)``, quiet on Ctrl-C.

    ``announce`` prints the URL to stderr once listening.
    """

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            handle = await nursery.start(partial(serve_websocket, server, **options))
            if announce:
                print(
                    f"mcp-actors: serving {server.name} at {handle.url}",
                    file=sys.stderr,
                    flush=True,
                )

    with contextlib.suppress(KeyboardInterrupt):
        trio.run(main)
