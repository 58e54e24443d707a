"""Running a server over WebSocket (``trio_websocket``), one session actor per connection.

Each accepted connection becomes a session started in the server's supervisor;
the connection's handler task only waits for that session to end. A connection is
served in a nursery of its own (:func:`_serve_connection`): trio_websocket runs a
reader task per connection, and whatever that task raises ends that connection
only — never the listener, never another client's session. Importing this module
imports ``trio_websocket``; ``import mcp_actors`` does not.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import attrs
import trio
import trio_websocket

from ..runtime.gc_policy import apply_serving_gc_policy
from ..runtime.internal_errors import internal_errors
from ..runtime.supervisor import Supervisor, open_supervisor
from ..transports.http.auth import token_deadline
from ..transports.http.security import HostPolicy
from ..transports.http.sessions import (
    RETRY_AFTER,
    ConnectionBound,
    SessionRegistry,
    mint_session_id,
)
from ..transports.websocket import accept_mcp_websocket
from .protocols import HostedServer
from .serve import run_until_interrupted

if TYPE_CHECKING:
    from ..auth.server import ResourceServer

log = logging.getLogger("mcp_actors.websocket")

#: Seconds a new connection has to complete its opening handshake before it is dropped.
HANDSHAKE_TIMEOUT = 10.0


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
    server: HostedServer,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    max_message_size: int | None = None,
    allowed_origins: Sequence[str] | None = None,
    max_sessions: int | None = 1000,
    max_sessions_per_client: int | None = 100,
    auth: ResourceServer | None = None,
    task_status: trio.TaskStatus[WebSocketServerHandle] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``server`` over WebSocket until cancelled. ``port=0`` picks a free port.

    Any path is accepted; the URL reported uses ``/mcp``. Messages larger than
    ``max_message_size`` (default: the server's ``config.max_message_size``)
    close the connection with code 1009. At most ``max_sessions`` connections
    at once, ``max_sessions_per_client`` from one IP address (None: no cap);
    beyond them the handshake is refused with 503 and ``Retry-After``.

    ``auth`` protects the server with OAuth (a
    :class:`~mcp_actors.auth.server.ResourceServer`): the upgrade request must carry an
    access token (else the handshake is refused with its ``401``); the connection's
    caller is the token's, and the scopes declared on tools, resources and prompts are
    enforced on each call (a JSON-RPC error, there being no HTTP status per message).
    A connection lives no longer than the token it was opened with: when the token
    expires the session ends (the client connects again with a fresh one).
    ``resource`` defaults to the ``ws://`` URL. The WebSocket listener answers upgrades
    only, so it does not serve the protected resource metadata document: serve it from
    an HTTP server (``serve_http`` with the same ``ResourceServer`` does).
    """
    policy = HostPolicy.origins_for_bind(host, allowed_origins=allowed_origins)
    limit = max_message_size or server.config.max_message_size
    # A WebSocket session is its connection: never idle, so counted but never evicted.
    registry = SessionRegistry(max_sessions, max_sessions_per_client=max_sessions_per_client)

    async with open_supervisor() as supervisor, trio.open_nursery() as nursery:
        await server.mounts.connect(supervisor)  # what they offer is declared: see .mount

        async def handle(request: trio_websocket.WebSocketRequest) -> None:
            slot = mint_session_id()
            if not registry.admit(slot, ConnectionBound(), _peer_address(request)):
                await request.reject(
                    503,
                    extra_headers=[(b"retry-after", str(RETRY_AFTER).encode())],
                    body=b"Service Unavailable: too many sessions, try again later",
                )
                return
            try:
                stream = await accept_mcp_websocket(request, policy, auth)
                if stream is None:
                    return
                stream.client_address = _peer_address(request)
                session = server.create_session(stream)
                await supervisor.start_session(session)
                registry.started(slot, session.close)
                try:
                    with trio.move_on_at(token_deadline(stream.principal)):
                        await session.closed.wait()
                finally:  # the connection failed under the session: end the session too
                    session.close()
            finally:
                registry.discard(slot)

        async def connection(stream: trio.SocketStream) -> None:
            await _serve_connection(stream, handle, limit)

        listeners = await trio.open_tcp_listeners(port, host=host)
        bound_port = listeners[0].socket.getsockname()[1]
        listening = WebSocketServerHandle(host, bound_port, supervisor)
        if auth is not None:
            auth.protect(server.scopes_needed, listening.url)
        await nursery.start(partial(trio.serve_listeners, connection, listeners))
        task_status.started(listening)


def _peer_address(request: trio_websocket.WebSocketRequest) -> str | None:
    remote = request.remote
    return str(remote.address) if isinstance(remote, trio_websocket.Endpoint) else None


async def _serve_connection(
    stream: trio.SocketStream,
    handle: Callable[[trio_websocket.WebSocketRequest], Awaitable[None]],
    max_message_size: int,
) -> None:
    """One WebSocket connection, its failures contained: logged (rate-limited), not raised."""
    try:
        async with trio.open_nursery() as connection_nursery:
            request: trio_websocket.WebSocketRequest | None = None
            with trio.move_on_after(HANDSHAKE_TIMEOUT):
                request = await trio_websocket.wrap_server_stream(
                    connection_nursery, stream, max_message_size=max_message_size
                )
            if request is not None:
                await handle(request)
            connection_nursery.cancel_scope.cancel()  # the reader task, if still reading
    except Exception:
        internal_errors.report(log, "a WebSocket connection failed")
    finally:
        with trio.CancelScope(shield=True):
            await stream.aclose()


def run_websocket(server: HostedServer, *, announce: bool = False, **options: Any) -> None:
    """Blocking entry point: ``trio.run(serve_websocket, server, ...)``, quiet on Ctrl-C.

    ``announce`` prints the URL to stderr once listening. Once listening, the serving
    GC policy applies (:mod:`~mcp_actors.runtime.gc_policy`).
    """

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            handle = await nursery.start(partial(serve_websocket, server, **options))
            apply_serving_gc_policy()
            if announce:
                print(
                    f"mcp-actors: serving {server.name} at {handle.url}",
                    file=sys.stderr,
                    flush=True,
                )

    run_until_interrupted(main)
