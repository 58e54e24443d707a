"""The client a user holds: ``async with open_client(target) as client: ...``.

:func:`open_client` connects to a target (a server process, an in-process
Server, any message stream), starts the client's session actor, performs the
``initialize`` handshake and yields a :class:`Client`. Every call is an
outbound-call actor: it has a timeout, may report progress, and when it is
abandoned — timed out, or the awaiting task cancelled — the server is sent
``notifications/cancelled``.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import attrs
import msgspec
import trio
from msgspec import UNSET, UnsetType

from .._version import __version__
from ..protocol import errors
from ..protocol import types as t
from ..protocol.lifecycle import SessionState
from ..protocol.versions import LATEST, SUPPORTED
from ..runtime.config import SessionConfig
from ..runtime.groups import unwrapped
from ..runtime.request import InboundRequest
from ..runtime.session import Session
from .targets import Target, connect

log = logging.getLogger("mcp_actors.client")

T = TypeVar("T")
_encode = msgspec.json.Encoder().encode

#: ``on_progress(progress, total, message)``; may be sync or async.
ProgressHandler = Callable[[float, float | None, str | None], Awaitable[None] | None]
#: ``on_log(params)`` for ``notifications/message``; may be sync or async.
LogHandler = Callable[[t.LoggingMessageParams], Awaitable[None] | None]
#: ``on_list_changed(method)`` for the ``notifications/*/list_changed`` family.
ListChangedHandler = Callable[[str], Awaitable[None] | None]


@attrs.define(eq=False)
class ClientHandlers:
    """The callbacks a client offers the server. Each runs off the reader task."""

    on_log: LogHandler | None = None
    on_list_changed: ListChangedHandler | None = None


@attrs.define(eq=False)
class _ClientDispatcher:
    """Answers what the server sends the client."""

    handlers: ClientHandlers
    session: Session = attrs.field(init=False)

    async def handle_request(self, request: InboundRequest, params: Any) -> Any:
        raise errors.method_not_found(request.method)

    def handle_notification(self, method: str, params: Any) -> None:
        handlers = self.handlers
        if method == "notifications/message" and handlers.on_log is not None:
            on_log = handlers.on_log
            self.session.submit(lambda: _maybe_await(on_log(params)))
        elif method.endswith("/list_changed") and handlers.on_list_changed is not None:
            on_list_changed = handlers.on_list_changed
            self.session.submit(lambda: _maybe_await(on_list_changed(method)))


@attrs.define(eq=False)
class Client:
    """A connected, initialized MCP client session."""

    session: Session
    initialize_result: t.InitializeResult

    @property
    def server_info(self) -> t.Implementation:
        return self.initialize_result.server_info

    @property
    def server_capabilities(self) -> t.ServerCapabilities:
        return self.initialize_result.capabilities

    @property
    def protocol_version(self) -> str:
        return self.session.state.revision.name

    @property
    def instructions(self) -> str | None:
        instructions = self.initialize_result.instructions
        return None if instructions is UNSET else instructions

    async def ping(self, *, timeout: float | UnsetType | None = UNSET) -> None:
        """Round-trip a ``ping``; raises on timeout or error."""
        await self.session.request("ping", timeout=timeout)

    async def list_tools(self, *, timeout: float | UnsetType | None = UNSET) -> list[t.Tool]:
        """Every tool the server offers, following pagination cursors."""
        tools: list[t.Tool] = []
        cursor: str | UnsetType = UNSET
        while True:
            page = await self.session.request(
                "tools/list", t.PaginatedParams(cursor=cursor), timeout=timeout
            )
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | UnsetType | None = UNSET,
        on_progress: ProgressHandler | None = None,
        meta: dict[str, Any] | None = None,
    ) -> t.CallToolResult:
        """Call a tool and return its result (an ``isError`` result is returned, not raised)."""
        params = t.CallToolParams(
            name=name,
            arguments=msgspec.Raw(_encode(arguments)) if arguments is not None else UNSET,
            meta=dict(meta) if meta is not None else UNSET,
        )
        result: t.CallToolResult = await self.session.request(
            "tools/call",
            params,
            timeout=timeout,
            on_progress=_progress_adapter(on_progress) if on_progress is not None else None,
        )
        return result

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        result_type: type[T] | None = None,
        timeout: float | UnsetType | None = UNSET,
    ) -> Any:
        """Send any request (a custom method too) and return its decoded result."""
        return await self.session.request(method, params, result_type=result_type, timeout=timeout)


@asynccontextmanager
async def open_client(
    target: Target,
    *,
    name: str = "mcp-actors",
    version: str = __version__,
    capabilities: t.ClientCapabilities | None = None,
    handlers: ClientHandlers | None = None,
    config: SessionConfig | None = None,
    protocol_version: str = LATEST,
    supported_versions: tuple[str, ...] = SUPPORTED,
    initialize_timeout: float = 30.0,
) -> AsyncIterator[Client]:
    """Connect to ``target``, initialize, and yield a :class:`Client`.

    ``target`` is a server process (``StdioTarget`` or ``"stdio:CMD ARGS"``), an
    in-process ``Server`` (or ``"MODULE:ATTR"``), or any open ``MessageStream``.
    Leaving the block closes the session and shuts the server down (a launched
    process: stdin closed, then SIGTERM, then SIGKILL).
    """
    capabilities = capabilities or t.ClientCapabilities()
    with unwrapped():
        async with trio.open_nursery() as nursery, connect(target, nursery) as stream:
            dispatcher = _ClientDispatcher(handlers or ClientHandlers())
            state = SessionState("client", capabilities, supported_versions)
            session = Session(stream, state, dispatcher, config or SessionConfig())
            dispatcher.session = session
            await nursery.start(session.run)
            try:
                params = t.InitializeParams(
                    protocol_version=protocol_version,
                    capabilities=capabilities,
                    client_info=t.Implementation(name=name, version=version),
                )
                result = await session.request("initialize", params, timeout=initialize_timeout)
                state.receive_initialize_result(result)
                await session.notify("notifications/initialized")
                yield Client(session, result)
            finally:
                session.close()
                nursery.cancel_scope.cancel()


def _progress_adapter(
    on_progress: ProgressHandler,
) -> Callable[[t.ProgressParams], Awaitable[None]]:
    async def deliver(progress: t.ProgressParams) -> None:
        total = None if progress.total is UNSET else progress.total
        message = None if progress.message is UNSET else progress.message
        await _maybe_await(on_progress(progress.progress, total, message))

    return deliver


async def _maybe_await(value: Awaitable[None] | None) -> None:
    if inspect.isawaitable(value):
        await value
