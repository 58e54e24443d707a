"""Running a server over HTTP: Streamable HTTP (and legacy SSE) on one of two HTTP servers.

:func:`serve_http` opens a supervisor for the sessions, builds the ASGI
application (:class:`~mcp_actors.transports.http.app.McpHttpApp`) and runs an
HTTP server inside the same nursery, so the HTTP server, the idle-session sweeper
and every session actor are children of the caller's task: cancel it and all
of them stop. Session actors live in the supervisor, not in the HTTP request
tasks that created them; a client that disconnects does not end its session.

Two front ends serve the same application (``HttpConfig.front_end``):

- ``"lean"`` (the default): HTTP/1.1 on trio + httptools, one task per connection
  (:mod:`~mcp_actors.transports.http.lean`) — a fraction of hypercorn's cost per
  request;
- ``"hypercorn"``: hypercorn's trio worker, for what the lean one does not do
  (HTTP/2, TLS; to embed the application elsewhere, use ``McpHttpApp`` directly).

Importing this module imports httptools; hypercorn loads only when it serves.
``import mcp_actors`` imports neither.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, cast

import attrs
import trio

from ..protocol.engine import Engine
from ..protocol.events import Reply
from ..protocol.jsonrpc import Message
from ..protocol.lifecycle import SessionState
from ..protocol.methods import ROOTS_CHANGED
from ..protocol.versions import ALL
from ..runtime.gc_policy import apply_serving_gc_policy
from ..runtime.internal_errors import internal_errors
from ..runtime.session import Session
from ..runtime.supervisor import Supervisor, open_supervisor
from ..shared.settings import SharedSettings

if TYPE_CHECKING:
    from ..shared.state import SharedState
from ..transports.abc import MessageStream
from ..transports.http.app import HealthCheck, McpHttpApp
from ..transports.http.config import HttpConfig
from ..transports.http.directory import Mailbox, SessionDirectory
from ..transports.http.lean import LeanHttpServer
from ..transports.http.lean_limits import LeanLimits
from ..transports.http.modern import InputSchemaOf
from ..transports.http.security import HostPolicy
from ..transports.http.sessions import (
    AnswerInitialize,
    CloseSession,
    HeedsNotifications,
    ServeExchange,
)
from .protocols import HostedServer
from .serve import run_until_interrupted

if TYPE_CHECKING:
    from ..auth.server import ResourceServer

log = logging.getLogger("mcp_actors.http")


@attrs.frozen
class HttpServerHandle:
    """What :func:`serve_http` reports once it is listening."""

    host: str
    port: int
    config: HttpConfig
    app: McpHttpApp
    supervisor: Supervisor
    #: Which HTTP server serves: "lean" or "hypercorn".
    front_end: str
    _shutdown: trio.Event

    def shutdown(self) -> None:
        """Shut down gracefully: stop accepting connections, close idle ones, let the
        requests in progress finish (``HttpConfig.graceful_timeout`` at most); then
        :func:`serve_http` returns. The health endpoint says 503 from now on."""
        self.app.draining = True
        self._shutdown.set()

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def url(self) -> str:
        """The Streamable HTTP endpoint."""
        return self.base_url + self.config.path

    @property
    def sse_url(self) -> str | None:
        """The legacy SSE endpoint (None when turned off)."""
        path = self.config.sse_path
        return None if path is None else self.base_url + path

    @property
    def sessions(self) -> int:
        """HTTP sessions open now (stateless exchanges are not sessions)."""
        return len(self.app.registry)


def _session_for(
    server: HostedServer, stream: MessageStream, stateless_version: str | None
) -> Session:
    state = None
    if stateless_version is not None:
        # Stateless HTTP: this session starts operating, the client initialized long
        # ago. It checks requests against every capability, so that what stateless
        # HTTP cannot do (subscribe) reaches its handler and gets its specific error
        # rather than a bare "method not found".
        state = SessionState.stateless(
            "server", server.capabilities(), stateless_version, server.supported_versions
        )
    return server.create_session(stream, state)


def session_starter(server: HostedServer, supervisor: Supervisor) -> Any:
    """The ``start_session`` callback the HTTP endpoints use to make session actors."""

    async def start(stream: MessageStream, stateless_version: str | None) -> CloseSession:
        session = _session_for(server, stream, stateless_version)
        await supervisor.start_session(session)
        return session.close

    return start


def exchange_server(server: HostedServer, supervisor: Supervisor) -> ServeExchange:
    """The ``serve_exchange`` callback: the session of one stateless exchange, served
    in the request's task (see :meth:`~mcp_actors.runtime.supervisor.Supervisor.serve_here`)."""

    async def serve(stream: MessageStream, stateless_version: str | None) -> None:
        await supervisor.serve_here(_session_for(server, stream, stateless_version))

    return serve


def notifications_heeded(server: HostedServer) -> HeedsNotifications:
    """The ``heeds_notifications`` callback: whether a stateless session of ``server`` would
    act on a POST of notifications of these methods. Such a session ends with its POST, so
    of what a client notifies it acts only on a roots change (``on_roots_changed``
    handlers run; see ``ServerSession._take_notification``), and middleware sees every
    notification; ``initialized``, ``cancelled`` (nothing is in flight) and the rest
    change nothing, and such a POST is answered 202 with no session made for it."""

    def heeded(methods: tuple[str, ...]) -> bool:
        if server.middleware:
            return True
        return ROOTS_CHANGED in methods and bool(server.roots_changed_handlers)

    return heeded


def initialize_answerer(server: HostedServer) -> AnswerInitialize:
    """The ``answer_initialize`` callback: a stateless ``initialize`` answered by an engine
    of its own, with no session. The session would end with its POST, and it would not
    act on the request either: the engine answers ``initialize`` itself (negotiating the
    revision and describing the server), no handler or middleware sees it. What it saves
    is a session, its supervision and its writer: a fifth of such a POST's cost. A
    failure (a bug: describing the server raised) is contained as a session's would be:
    logged, and None, so the exchange answers "Internal error"."""

    def answer(message: Message) -> Reply | None:
        try:
            state = SessionState(
                "server",
                server.capabilities(stateless=True),
                server.supported_versions,
                back_channel=False,
            )
            engine: Engine[Any, Any] = Engine(state, _opens_no_request, server.describe)
            reply = engine.receive_message(message)
            if type(reply) is not Reply:  # the endpoint hands over initialize requests only
                raise TypeError(f"not an initialize request: {reply!r}")
        except Exception:
            internal_errors.report(log, "answering a stateless initialize failed")
            return None
        return reply

    return answer


def _opens_no_request(*_: object) -> Any:
    """What an engine answering ``initialize`` alone opens for a request: nothing (it
    answers that request itself, and is given no other)."""
    raise RuntimeError("an engine answering initialize alone opens no request")


def input_schema_lookup(server: HostedServer) -> InputSchemaOf:
    """The input schema of ``server``'s tool by name, as the HTTP endpoint checks
    ``Mcp-Param-*`` headers against it (None: no such tool, or one whose schema mirrors
    no argument into a header — nothing to check)."""

    def input_schema_of(name: str) -> Any:
        tool = server.find_tool(name)
        if tool is None or not tool.mirrors_arguments:
            return None
        return tool.definition.input_schema

    return input_schema_of


#: The environment variable naming the default front end ("lean" or "hypercorn").
FRONT_END_VARIABLE = "MCP_ACTORS_HTTP_FRONT_END"
FRONT_ENDS = ("lean", "hypercorn")


def front_end_of(config: HttpConfig) -> str:
    """The HTTP server ``config`` asks for: its ``front_end``, else the environment's
    ``MCP_ACTORS_HTTP_FRONT_END``, else "lean". A value that is neither is an error."""
    if config.front_end is not None:
        return config.front_end
    chosen = os.environ.get(FRONT_END_VARIABLE, "lean")
    if chosen not in FRONT_ENDS:
        raise ValueError(f"{FRONT_END_VARIABLE} must be 'lean' or 'hypercorn', not {chosen!r}")
    return chosen


def _lean_server(app: McpHttpApp) -> LeanHttpServer:
    """A lean server for ``app`` under the limits of its configuration."""
    http = app.config
    limits = LeanLimits(
        max_header_size=http.max_header_size,
        header_timeout=http.header_timeout,
        keep_alive_timeout=http.keep_alive_timeout,
        graceful_timeout=http.graceful_timeout,
        max_connections=http.max_connections,
        max_connections_per_client=http.max_connections_per_client,
        connection_reserve=http.connection_reserve,
        send_timeout=http.send_timeout,
    )
    return LeanHttpServer(cast(Any, app), limits, health_path=http.health_path)


def _hypercorn_config(http: HttpConfig) -> Any:
    """hypercorn's settings for the limits of ``http`` (no access log, no Server header)."""
    import hypercorn.config

    config = hypercorn.config.Config()
    config.keep_alive_timeout = http.keep_alive_timeout
    config.accesslog = None
    config.errorlog = logging.getLogger("mcp_actors.http.hypercorn")
    config.graceful_timeout = http.graceful_timeout
    config.include_server_header = False
    config.h11_max_incomplete_size = http.max_header_size
    return config


async def _serve_front_end(
    front_end: str,
    app: McpHttpApp,
    host: str,
    port: int,
    shutdown: trio.Event,
    sock: socket.socket | None,
    *,
    task_status: trio.TaskStatus[list[tuple[str, int]]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``app`` on the ``front_end`` HTTP server until ``shutdown`` is set, then
    shut down gracefully; reports the addresses it listens on.

    The lean server is made either way: behind hypercorn it serves the connections a
    connection cap restricts (to a 503) and holds the gate that counts them.
    """
    lean = _lean_server(app)
    async with trio.open_nursery() as nursery:
        if front_end == "lean":
            task_status.started(await nursery.start(partial(lean.serve, host, port, sock=sock)))
            await shutdown.wait()
            await lean.shutdown()
            return
        from ..transports.http.hypercorn_front import HYPERCORN_READ_SIZE, serve_hypercorn

        gate = lean.limits.gate(read_size=HYPERCORN_READ_SIZE)
        config = _hypercorn_config(app.config)
        serve = partial(serve_hypercorn, app, config, gate, lean, host, port, sock, shutdown)
        task_status.started(await nursery.start(serve))


async def serve_http(
    server: HostedServer,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    config: HttpConfig | None = None,
    stateless: bool | None = None,
    json_response: bool | None = None,
    allowed_origins: Sequence[str] | None = None,
    allowed_hosts: Sequence[str] | None = None,
    sock: socket.socket | None = None,
    shared: SharedSettings | None = None,
    auth: ResourceServer | None = None,
    task_status: trio.TaskStatus[HttpServerHandle] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``server`` over HTTP until cancelled. ``port=0`` picks a free port.

    The endpoint is ``http://HOST:PORT/mcp`` (``path``); legacy clients use
    ``/sse``. ``task_status.started`` reports an :class:`HttpServerHandle` with
    the actual URL. Keyword options override the matching ``config`` fields.

    A ``host`` that is not a loopback address needs ``allowed_hosts`` (the ``Host``
    values clients may use, checked on every request): without it this raises
    :class:`~mcp_actors.transports.http.security.AllowedHostsRequired` before listening.

    ``sock``: accept on this listening socket (bound to ``host:port``) instead of
    opening one: a worker's share of a port (see :func:`~mcp_actors.server.workers.run_workers`).
    ``shared``: share tasks, listen notifications and ``requestState`` keys with the
    other workers of a deployment (through Redis when it has a ``redis_url``; see
    :mod:`mcp_actors.shared`).
    ``auth`` protects the server with OAuth (a
    :class:`~mcp_actors.auth.server.ResourceServer`): every request needs an access
    token, and the scopes declared on tools, resources and prompts are enforced. Its
    ``resource`` defaults to the endpoint URL.
    """
    config = _with_overrides(
        server,
        config or HttpConfig(path=path),
        stateless=stateless,
        json_response=json_response,
        allowed_origins=None if allowed_origins is None else tuple(allowed_origins),
        allowed_hosts=None if allowed_hosts is None else tuple(allowed_hosts),
        path=None if path == "/mcp" else path,
    )
    policy = HostPolicy.for_bind(
        host, allowed_hosts=config.allowed_hosts, allowed_origins=config.allowed_origins
    )
    async with sharing(server, shared) as state:
        if state is not None and state.settings.share_sessions:
            # Shared sessions share their events: any worker resumes any stream.
            config = attrs.evolve(config, event_store_factory=state.event_stores())
        elif state is not None and state.settings.share_events:
            config = attrs.evolve(
                config, event_store_factory=state.event_stores(), replay_unknown_sessions=True
            )
        health = None if state is None else state.unhealthy
        shared_sessions = await _shared_sessions(state)
        await _serve(
            server, host, port, config, policy, sock, health, auth, shared_sessions, task_status
        )


def _with_overrides(server: HostedServer, config: HttpConfig, **given: Any) -> HttpConfig:
    """``config`` with the keyword options :func:`serve_http` was given (None: not
    given), and the server's own protocol versions unless the config names some."""
    overrides = {name: value for name, value in given.items() if value is not None}
    if config.supported_versions is ALL:  # the default: the server's own list
        overrides["supported_versions"] = server.supported_versions
    return attrs.evolve(config, **overrides)


async def _serve(
    server: HostedServer,
    host: str,
    port: int,
    config: HttpConfig,
    policy: HostPolicy,
    sock: socket.socket | None,
    health: HealthCheck | None,
    auth: ResourceServer | None,
    shared_sessions: tuple[SessionDirectory, Mailbox] | None,
    task_status: trio.TaskStatus[HttpServerHandle],
) -> None:
    front_end = front_end_of(config)
    serve = partial(_serve_front_end, front_end)
    shutdown = trio.Event()
    directory, mailbox = shared_sessions or (None, None)
    async with open_supervisor() as supervisor, trio.open_nursery() as nursery:
        await server.mounts.connect(supervisor)  # what they offer is declared: see .mount
        await nursery.start(server.take_over_tasks, supervisor)  # of workers that died
        app = McpHttpApp(
            config,
            policy,
            session_starter(server, supervisor),
            exchange_server(server, supervisor),
            input_schema_lookup(server),
            auth,
            heeds_notifications=notifications_heeded(server),
            answer_initialize=initialize_answerer(server),
            health_check=health,
            directory=directory,
            mailbox=mailbox,
        )
        await nursery.start(app.registry.run_expiry)
        if app.shared is not None:
            await nursery.start(app.shared.run)
        async with trio.open_nursery() as http_nursery:
            bound = await http_nursery.start(serve, app, host, port, shutdown, sock)
            bound_port = bound[0][1]
            log.info(
                "serving %s on %s:%d%s (%s)", server.name, host, bound_port, config.path, front_end
            )
            handle = HttpServerHandle(
                host, bound_port, config, app, supervisor, front_end, shutdown
            )
            if auth is not None:
                auth.protect(server.scopes_needed, handle.url)
            task_status.started(handle)
        nursery.cancel_scope.cancel()  # the HTTP server has shut down: so do the sessions


@asynccontextmanager
async def sharing(
    server: HostedServer, settings: SharedSettings | None
) -> AsyncIterator[SharedState | None]:
    """Share ``server``'s state as ``settings`` say for the duration of the block;
    yields the Redis-backed state (None without a ``redis_url``)."""
    if settings is None:
        yield None
        return
    keys = settings.request_state_keys()
    if settings.redis_url is None:
        server.share_state(state_keys=keys)
        yield None
        return
    from ..shared.fleet import Observed  # imports coredis
    from ..shared.state import open_shared_state

    observed = server if isinstance(server, Observed) else None  # its counters: the fleet's
    opened = open_shared_state(settings, max_tasks=server.tasks.max_tasks, observed=observed)
    async with opened as state:
        server.share_state(bus=state.bus, task_store=state.task_store, state_keys=keys)
        yield state


async def _shared_sessions(
    state: SharedState | None,
) -> tuple[SessionDirectory, Mailbox] | None:
    """The session directory and this worker's mailbox when ``state``'s settings share
    legacy sessions, else None."""
    if state is None or not state.settings.share_sessions:
        return None
    from ..shared.sessions import open_shared_sessions

    return await open_shared_sessions(state)


def run_http(
    server: HostedServer,
    *,
    announce: Literal["http", "sse"] | None = None,
    workers: int = 1,
    **options: Any,
) -> None:
    """Blocking entry point: ``trio.run(serve_http, server, ...)``, quiet on Ctrl-C.

    ``announce`` prints the endpoint URL (Streamable HTTP or legacy SSE) to stderr
    once listening, which is how a caller learns the port picked for ``port=0``.
    Once listening, the serving GC policy applies (start-up frozen, full collections
    rare: :mod:`~mcp_actors.runtime.gc_policy`).
    ``workers`` > 1 serves from that many processes sharing the port (see
    :mod:`.workers`; SIGTERM or Ctrl-C stops them all gracefully).
    """
    if workers != 1:
        from .workers import WorkerPolicy, run_workers

        run_workers(server, WorkerPolicy(workers), serve_http, announce=announce, **options)
        return

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            handle: HttpServerHandle = await nursery.start(partial(serve_http, server, **options))
            apply_serving_gc_policy()
            if announce is not None:
                url = handle.sse_url if announce == "sse" else handle.url
                print(f"mcp-actors: serving {server.name} at {url}", file=sys.stderr, flush=True)

    run_until_interrupted(main)
