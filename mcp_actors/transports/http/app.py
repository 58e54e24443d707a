"""The ASGI application of an MCP HTTP server: Streamable HTTP at ``/mcp``, legacy SSE beside it.

:class:`McpHttpApp` checks every request's ``Host`` and ``Origin`` (403 when
refused, see :mod:`.security`), then routes it by path: the Streamable
HTTP endpoint, the legacy ``/sse`` and ``/messages`` endpoints, the health
endpoint for load balancers (``/healthz``: 200, or 503 while draining or when a
shared store is unreachable), or 404. With an ``auth`` hook, every request that
passes that check is then admitted by the hook (``401``/``403``, or the
protected-resource metadata it serves; see :mod:`.auth`). It runs
under any ASGI server; :func:`mcp_actors.server.serve_http.serve_http` runs it
under hypercorn's trio worker inside the server's nursery.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import attrs

from ...protocol.health import health_document
from .any_worker import SharedSessions
from .asgi import (
    Receive,
    Request,
    Scope,
    Send,
    lifespan,
    respond,
    respond_answer,
    respond_error,
)
from .auth import HttpAnswer, HttpAuthHook
from .config import HttpConfig
from .directory import Mailbox, SessionDirectory
from .endpoint import StreamableHttpEndpoint
from .event_store import EventStoreStatistics
from .legacy_sse import LegacySseEndpoints
from .modern import InputSchemaOf
from .routing import VERSION_HEADER as VERSION
from .security import HostPolicy
from .sessions import (
    AnswerInitialize,
    HeedsNotifications,
    ServeExchange,
    SessionRegistry,
    StartSession,
    heeds_all,
)

#: Asked by the health endpoint: None when healthy, else the reason it is not.
HealthCheck = Callable[[], Awaitable[str | None]]


def _normal(path: str) -> str:
    return path.rstrip("/") or "/"


@attrs.define(eq=False)
class McpHttpApp:
    """One server's HTTP face. ``registry`` is its session table (expiry runs elsewhere)."""

    config: HttpConfig
    policy: HostPolicy
    start_session: StartSession
    serve_exchange: ServeExchange
    #: A tool's input schema by name (the 2026-07-28 ``Mcp-Param-*`` check; None: none).
    input_schema_of: InputSchemaOf | None = None
    #: Who may call (OAuth resource server, see :mod:`.auth`; None: anyone).
    auth: HttpAuthHook | None = None
    #: What the health endpoint asks besides "not draining": None when healthy, else
    #: why not (say, the shared Redis does not answer). None: nothing to ask.
    health_check: HealthCheck | None = None
    #: The records of the deployment's legacy sessions, for any worker to serve any of
    #: them (see :mod:`.replicas`; None: each session stays on the worker that made it).
    directory: SessionDirectory | None = None
    #: This worker's mailbox among the workers sharing ``directory`` (needed with it).
    mailbox: Mailbox | None = None
    #: Whether a stateless session would act on a POST of notifications (see
    #: :mod:`.endpoint`; the default: always, each is served by a session).
    heeds_notifications: HeedsNotifications = heeds_all
    #: How a stateless ``initialize`` is answered without a session (see :mod:`.endpoint`;
    #: None: by a session, as every other request).
    answer_initialize: AnswerInitialize | None = None
    #: This worker's part of the shared sessions (None without a directory): run
    #: :meth:`~.any_worker.SharedSessions.run` beside the app.
    shared: SharedSessions | None = attrs.field(init=False, default=None)
    #: Set once a graceful shutdown began: the health endpoint says 503 from then on,
    #: so that a load balancer stops sending new work here.
    draining: bool = attrs.field(init=False, default=False)
    registry: SessionRegistry = attrs.field(init=False)
    _streamable: StreamableHttpEndpoint = attrs.field(init=False)
    _legacy: LegacySseEndpoints = attrs.field(init=False)
    #: The configured paths, normalized once: (endpoint, health, SSE, messages).
    _paths: tuple[str, str | None, str | None, str | None] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        config = self.config
        self._paths = (
            _normal(config.path),
            None if config.health_path is None else _normal(config.health_path),
            None if config.sse_path is None else _normal(config.sse_path),
            None if config.sse_path is None else _normal(config.messages_path),
        )
        self.registry = SessionRegistry(
            config.max_sessions,
            config.session_idle_timeout,
            config.max_sessions_per_client,
            config.session_rest_after,
        )
        if self.directory is not None:
            if self.mailbox is None:
                raise ValueError("a session directory needs a mailbox")
            self.shared = SharedSessions(self.directory, self.mailbox, self.registry)
        self._streamable = StreamableHttpEndpoint(
            config,
            self.registry,
            self.start_session,
            self.serve_exchange,
            self.input_schema_of,
            self.auth,
            self.shared,
            heeds_notifications=self.heeds_notifications,
            answer_initialize=self.answer_initialize,
        )
        self._legacy = LegacySseEndpoints(config, self.registry, self.start_session, self.auth)

    def event_store_statistics(self) -> EventStoreStatistics | None:
        """The figures of the event memory all sessions share (None: a custom store)."""
        memory = self._streamable.event_memory
        return None if memory is None else memory.statistics()

    @property
    def session_requests(self) -> int:
        """POSTs carrying requests of legacy Streamable HTTP sessions served so far."""
        return self._streamable.session_requests

    async def _health(self, request: Request, send: Send) -> None:
        """GET: 200 ``{"status": "ok", "sessions": N, "sessionRequests": M}`` (M: see
        :attr:`session_requests`) when this server takes work, else
        503 ``{"status": "unavailable", "reason": ...}`` (draining, or ``health_check``)."""
        if request.method not in ("GET", "HEAD"):
            await respond_error(send, 405, "Method Not Allowed", headers=[("allow", "GET")])
            return
        reason = "shutting down" if self.draining else None
        if reason is None and self.health_check is not None:
            reason = await self.health_check()
        status = 200 if reason is None else 503
        headers = [("cache-control", "no-store")]
        body = health_document(
            reason=reason, sessions=len(self.registry), session_requests=self.session_requests
        )
        payload = body if request.method == "GET" else b""
        await respond(send, status, payload, content_type="application/json", headers=headers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await lifespan(receive, send)
            return
        if kind != "http":
            if kind == "websocket":
                await send({"type": "websocket.close", "code": 1003})
            return
        request = Request.from_scope(scope)
        refused = self.policy.check(
            request.header("host"), request.header("origin"), request.scheme
        )
        if refused is not None:
            await respond_error(send, 403, f"Forbidden: {refused}", version=request.header(VERSION))
            return
        root = scope.get("root_path", "")
        path = _normal(request.path[len(root) :] if request.path.startswith(root) else request.path)
        endpoint, health, sse, messages = self._paths
        if path == health:
            await self._health(request, send)  # load balancers have no token
            return
        if self.auth is not None:
            admitted = await self.auth.check_request(
                request.method, request.path, request.headers, request.query_string
            )
            if isinstance(admitted, HttpAnswer):
                await respond_answer(send, admitted)
                return
            request = request.admitted(admitted)
        if path == endpoint:
            await self._streamable(request, receive, send)
        elif path == sse:
            await self._legacy.stream(request, receive, send, root)
        elif path == messages:
            await self._legacy.message(request, receive, send)
        else:
            version = request.header(VERSION)
            await respond_error(send, 404, f"Not Found: {request.path}", version=version)
