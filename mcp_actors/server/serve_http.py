"""Running a server over HTTP: Streamable HTTP (and legacy SSE) under hypercorn's trio worker.

:func:`serve_http` opens a supervisor for the sessions, builds the ASGI
application (:class:`~mcp_actors.transports.http_app.McpHttpApp`) and runs
hypercorn inside the same nursery, so the HTTP server, the idle-session sweeper
and every session actor are children of the caller's task: cancel it and all
of them stop. Session actors live in the supervisor, not in the HTTP request
tasks that created them; a client that disconnects does not end its session.

Importing this module imports hypercorn; ``import mcp_actors`` does not.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from functools import partial
from typing import Any, Literal, cast

import attrs
import hypercorn.config
import hypercorn.trio
import trio

from ..protocol.lifecycle import SessionState
from ..protocol.versions import ALL
from ..runtime.supervisor import Supervisor, open_supervisor
from ..transports.abc import MessageStream
from ..transports.http_app import McpHttpApp
from ..transports.http_config import HttpConfig
from ..transports.http_security import HostPolicy
from ..transports.http_sessions import CloseSession
from ..transports.streamable_http_modern import InputSchemaOf
from .app import Server
from .serve import run_until_interrupted

log = logging.getLogger("mcp_actors.http")


@attrs.frozen
class HttpServerHandle:
    """What :func:`serve_http` reports once it is listening."""

    host: str
    port: int
    config: HttpConfig
    app: McpHttpApp
    supervisor: Supervisor

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


def session_starter(server: Server, supervisor: Supervisor) -> Any:
    """The ``start_session`` callback the HTTP endpoints use to make session actors."""

    async def start(stream: MessageStream, stateless_version: str | None) -> CloseSession:
        state = None
        if stateless_version is not None:
            # Stateless HTTP: this session starts operating, the client initialized long
            # ago. It checks requests against every capability, so that what stateless
            # HTTP cannot do (subscribe) reaches its handler and gets its specific error
            # rather than a bare "method not found".
            state = SessionState.stateless(
                "server", server.capabilities(), stateless_version, server.supported_versions
            )
        session = server.create_session(stream, state)
        await supervisor.start_session(session)
        return session.close

    return start


def input_schema_lookup(server: Server) -> InputSchemaOf:
    """The input schema of ``server``'s tool by name, as the HTTP endpoint checks
    ``Mcp-Param-*`` headers against it (None: no such tool)."""

    def input_schema_of(name: str) -> Any:
        tool = server.tools.get(name)
        return None if tool is None else tool.definition.input_schema

    return input_schema_of


def _hypercorn_config(host: str, port: int, http: HttpConfig) -> hypercorn.config.Config:
    config = hypercorn.config.Config()
    config.keep_alive_timeout = http.keep_alive_timeout
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    config.accesslog = None
    config.errorlog = logging.getLogger("mcp_actors.http.hypercorn")
    config.graceful_timeout = 1.0
    config.include_server_header = False
    return config


async def serve_http(
    server: Server,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    config: HttpConfig | None = None,
    stateless: bool | None = None,
    json_response: bool | None = None,
    allowed_origins: Sequence[str] | None = None,
    allowed_hosts: Sequence[str] | None = None,
    task_status: trio.TaskStatus[HttpServerHandle] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``server`` over HTTP until cancelled. ``port=0`` picks a free port.

    The endpoint is ``http://HOST:PORT/mcp`` (``path``); legacy clients use
    ``/sse``. ``task_status.started`` reports an :class:`HttpServerHandle` with
    the actual URL. Keyword options override the matching ``config`` fields.

    A ``host`` that is not a loopback address needs ``allowed_hosts`` (the ``Host``
    values clients may use, checked on every request): without it this raises
    :class:`~mcp_actors.transports.http_security.AllowedHostsRequired` before listening.
    """
    config = config or HttpConfig(path=path)
    overrides: dict[str, Any] = {}
    if stateless is not None:
        overrides["stateless"] = stateless
    if json_response is not None:
        overrides["json_response"] = json_response
    if allowed_origins is not None:
        overrides["allowed_origins"] = tuple(allowed_origins)
    if allowed_hosts is not None:
        overrides["allowed_hosts"] = tuple(allowed_hosts)
    if path != "/mcp":
        overrides["path"] = path
    if config.supported_versions is ALL:  # the default: the server's own list
        overrides["supported_versions"] = server.supported_versions
    config = attrs.evolve(config, **overrides)
    policy = HostPolicy.for_bind(
        host, allowed_hosts=config.allowed_hosts, allowed_origins=config.allowed_origins
    )
    async with open_supervisor() as supervisor, trio.open_nursery() as nursery:
        app = McpHttpApp(
            config, policy, session_starter(server, supervisor), input_schema_lookup(server)
        )
        await nursery.start(app.registry.run_expiry)
        binds = await nursery.start(
            hypercorn.trio.serve, cast(Any, app), _hypercorn_config(host, port, config)
        )
        bound_port = int(binds[0].rsplit(":", 1)[1])
        log.info("serving %s on %s", server.name, binds[0] + config.path)
        task_status.started(HttpServerHandle(host, bound_port, config, app, supervisor))


def run_http(
    server: Server, *, announce: Literal["http", "sse"] | None = None, **options: Any
) -> None:
    """Blocking entry point: ``trio.run(serve_http, server, ...)``, quiet on Ctrl-C.

    ``announce`` prints the endpoint URL (Streamable HTTP or legacy SSE) to stderr
    once listening, which is how a caller learns the port picked for ``port=0``.
    """

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            handle: HttpServerHandle = await nursery.start(partial(serve_http, server, **options))
            if announce is not None:
                url = handle.sse_url if announce == "sse" else handle.url
                print(f"mcp-actors: serving {server.name} at {url}", file=sys.stderr, flush=True)

    run_until_interrupted(main)
